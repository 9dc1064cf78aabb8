// Operators are values: a binary operator carries its algebra (identity, annihilator,
// idempotence), and a semiring pairs the operator that reduces (add) with the one that
// combines operands (mul). Lowering reads these values, so plus_times is the default
// semiring, not a special case:
//   - a product is computed where all its operands are stored (intersection), a sum
//     where any is (union), absent operands of a sum contributing add's identity;
//   - a reduction starts at add's identity and folds with add (`acc = min(acc, v)`);
//   - a dense output starts at add's identity (0 for plus_times, +inf for min_plus).
//
//   Assignment a = ...;  a.semiring = Semiring::minPlus();   // y(i) = min_j A(i,j) + x(j)
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tessel {

/// The computations a BinaryOp can name (the code generator maps each to an operation).
/// Or and And are logical (operands nonzero or not; the result 1 or 0), Pair is 1
/// whatever its operands (structure only), First and Second give one operand, Any gives
/// its right operand unless that is the identity (0), else its left: any present value.
/// Lt .. Ne compare (the result 1 or 0); Custom is a user-declared operator
/// (BinaryOp::custom: a C expression for kernels, a function for the reference).
enum class BinaryOpKind { Add, Mul, Min, Max, Or, And, Pair, First, Second, Any, Lt, Le, Gt, Ge, Eq, Ne, Custom };

/// A binary operator with its algebra.
struct BinaryOp {
  BinaryOpKind kind = BinaryOpKind::Add;
  std::string name;                   ///< "plus", "times", "min", "max"
  std::string symbol;                 ///< how the text syntax writes it ("+", "*"; "min" for min)
  double identity = 0;                ///< op(identity, x) == x
  std::optional<double> annihilator;  ///< op(annihilator, x) == annihilator, where one exists
  bool idempotent = false;            ///< op(x, x) == x
  bool commutative = true;
  bool hasIdentity = true;            ///< false: `identity` is a stand-in, never an identity
  /// Custom: the operation as a C expression over the doubles `a` and `b`, e.g.
  /// "(a > b ? a - b : b - a)"; kernels compute it (it is part of the kernel's source,
  /// so of its JIT cache key).
  std::string cExpr;
  /// Custom: the same operation for the reference evaluator and apply().
  std::function<double(double, double)> fn;
  /// The operator applied to two doubles (min/max as std::fmin/fmax would not be: a nan
  /// operand propagates only from the right, as the generated `a < b ? a : b` does).
  double apply(double a, double b) const;
  /// Same operation: the kind, and for Custom also the name and the C expression.
  bool operator==(const BinaryOp& o) const {
    return kind == o.kind && (kind != BinaryOpKind::Custom || (name == o.name && cExpr == o.cExpr));
  }
  /// Whether the operator compares (Lt .. Ne): its result is 1 or 0.
  bool isComparison() const;

  static BinaryOp plus();   ///< +, identity 0, no annihilator
  static BinaryOp times();  ///< *, identity 1, annihilator 0
  static BinaryOp min();    ///< min, identity +inf, annihilator -inf, idempotent
  static BinaryOp max();    ///< max, identity -inf, annihilator +inf, idempotent
  static BinaryOp lor();    ///< logical or, identity 0, annihilator 1, idempotent
  static BinaryOp land();   ///< logical and, identity 1, annihilator 0, idempotent
  static BinaryOp pair();   ///< 1 (GraphBLAS's PAIR/ONEB): no identity, no annihilator
  static BinaryOp first();  ///< its left operand; not commutative
  static BinaryOp second(); ///< its right operand; not commutative
  static BinaryOp any();    ///< any operand that is present: identity 0, idempotent
  static BinaryOp lt();     ///< a < b as 1 or 0 (likewise le, gt, ge, eq, ne): no identity
  static BinaryOp le();
  static BinaryOp gt();
  static BinaryOp ge();
  static BinaryOp eq();
  static BinaryOp ne();
  /// A user-declared operator. `name`: a C identifier (it names the operator in
  /// printing, in semiring names and in the kernel); `cExpr`: a C expression in `a` and
  /// `b` (doubles); `fn`: the same function for the reference evaluator; `identity`:
  /// op(identity, x) == x == op(x, identity), if one exists; `annihilator`:
  /// op(z, x) == z == op(x, z). These two must be true: they decide where an
  /// element-wise use computes (see ElementwiseSupport) and which products a semiring
  /// skips. Throws NotationError for an empty or non-identifier name or an empty cExpr.
  static BinaryOp custom(const std::string& name, const std::string& cExpr, std::function<double(double, double)> fn,
                         std::optional<double> identity = std::nullopt,
                         std::optional<double> annihilator = std::nullopt, bool commutative = true);
  /// The built-in operator written `text` in `@(add,mul)`: a symbol ("+", "*") or a
  /// name ("plus", "times", "min", "max", "or", "and", "pair", "first", "second",
  /// "any"). Throws NotationError listing the known ones.
  static BinaryOp byName(const std::string& text);
};

/// Where an element-wise op(x, y) has entries when an absent entry reads as `fill`
/// (the semiring's zero), from op's algebra:
///  - Union: fill is op's identity: an absent operand drops out (op(x, fill) = x), like `+`;
///  - Intersection: fill annihilates op (op(x, fill) = fill), like `*`;
///  - Fill: otherwise: op is computed over the union with fill for the absent operand,
///    and, where op(fill, fill) != fill, everywhere (both absent gives a value).
enum class ElementwiseSupport { Union, Intersection, Fill };
ElementwiseSupport elementwiseSupport(const BinaryOp& op, double fill);

/// A semiring (add, mul). The text syntax writes mul as `*` and add as `+` whatever the
/// semiring; a reduction (implicit or `sum`) folds with add. Semirings other than
/// plus_times have no additive or multiplicative inverse: `-` (binary or unary) and `/`
/// are refused with them (checkSemiringFits).
struct Semiring {
  std::string name = "plus_times";
  BinaryOp add = BinaryOp::plus();
  BinaryOp mul = BinaryOp::times();

  /// The value of an absent entry: add's identity (0, +inf for min_plus).
  double zero() const { return add.identity; }
  /// Whether this is the ordinary arithmetic (which has `-` and `/`).
  bool isPlusTimes() const { return add.kind == BinaryOpKind::Add && mul.kind == BinaryOpKind::Mul; }
  /// add's identity annihilates mul (0*x = 0, inf+x = inf): reading an absent operand of
  /// a product as zero() gives the same result as skipping the product. Not so for
  /// max_times (-inf * -2 = +inf), whose products are skipped structurally.
  bool zeroAnnihilatesMul() const { return mul.annihilator && *mul.annihilator == add.identity; }
  bool operator==(const Semiring& o) const { return add == o.add && mul == o.mul; }

  /// Ordinary arithmetic: sum of products. The default.
  static Semiring plusTimes();
  /// min over products taken as sums: shortest paths. add = min (identity +inf),
  /// mul = + (annihilator +inf).
  static Semiring minPlus();
  /// max over products: most reliable paths. add = max with identity -inf (values may
  /// be negative, as GraphBLAS's GrB_MAX_TIMES_SEMIRING_FP64), mul = *.
  static Semiring maxTimes();
  /// add = max, mul = + (annihilator -inf): longest paths, critical paths.
  static Semiring maxPlus();
  /// A semiring of two operators, named "<add>_<mul>" (GraphBLAS's naming).
  static Semiring of(const BinaryOp& add, const BinaryOp& mul);
  /// The semiring named `name`: plus_times, min_plus, max_plus, min_times, max_times,
  /// or_and, and_or, plus_pair, any_pair, min_first, min_second, max_first, max_second,
  /// plus_min. Throws NotationError listing the known names.
  static Semiring byName(const std::string& name);
  /// The names byName() knows, in order.
  static std::vector<std::string> names();
};

}  // namespace tessel
