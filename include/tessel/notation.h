// Index notation: index variables, expressions over tensor accesses, assignments.
//
//   IndexVar i("i"), j("j");
//   a(i) = B(i,j) * c(j);          // builds an Assignment stored in `a`
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessel/format.h"
#include "tessel/operators.h"

namespace tessel {

class TensorBase;
struct TensorImpl;

/// An index variable. Identity (not name) decides equality; names are for printing.
class IndexVar {
 public:
  IndexVar();  ///< fresh variable with a generated name
  explicit IndexVar(const std::string& name);
  const std::string& name() const;
  bool operator==(const IndexVar& o) const { return id_ == o.id_; }
  bool operator!=(const IndexVar& o) const { return id_ != o.id_; }
  bool operator<(const IndexVar& o) const { return id_ < o.id_; }
  uint64_t id() const { return id_; }

 private:
  std::shared_ptr<const std::string> name_;
  uint64_t id_;
};

/// Sum is an explicit reduction `sum(j, e)`: e summed over every value of j.
enum class ExprKind { Access, Literal, Neg, Add, Sub, Mul, Div, Sum };

struct ExprNode;

/// An index expression (immutable tree; cheap to copy).
class IndexExpr {
 public:
  IndexExpr() = default;
  IndexExpr(double literal);  // NOLINT: literals mix into expressions
  IndexExpr(int literal);     // NOLINT
  explicit IndexExpr(std::shared_ptr<const ExprNode> n) : node_(std::move(n)) {}

  bool defined() const { return node_ != nullptr; }
  const ExprNode& node() const { return *node_; }
  const ExprNode* get() const { return node_.get(); }
  ExprKind kind() const;
  /// Printed in the text syntax: "B(i,j) * c(j)".
  std::string str() const;

 private:
  std::shared_ptr<const ExprNode> node_;
};

/// A tensor accessed by index variables: B(i,j). Assigning to an Access records an
/// Assignment in the accessed tensor.
class Access : public IndexExpr {
 public:
  Access(const TensorBase& t, std::vector<IndexVar> vars);
  /// Copying an Access copies the handle (operator= below records an assignment instead).
  Access(const Access&) = default;
  const TensorBase& tensor() const;
  const std::vector<IndexVar>& vars() const;

  /// `A(i,j) = expr`: store the assignment in A.
  Access& operator=(const IndexExpr& e);
  Access& operator=(const Access& e);
  /// `A(i,j) += expr`: accumulate into A's current values.
  Access& operator+=(const IndexExpr& e);

 private:
  std::shared_ptr<const TensorBase> handle_;  ///< the accessed tensor, for tensor()
};

/// Expressions nest at most this deep (a sum or product of n terms nests n deep): walks
/// over an expression recurse, so building or parsing a deeper one throws NotationError.
inline constexpr int kMaxExpressionDepth = 1000;

struct ExprNode {
  ExprKind kind;
  int depth = 1;  ///< 1 + the depth of the deepest operand (at most kMaxExpressionDepth)
  // Access
  std::shared_ptr<TensorImpl> tensor;
  std::vector<IndexVar> vars;  ///< Access: one per mode; Sum: the summed variable

  // Literal
  double value = 0;
  // Neg (a), binary (a, b), Sum (body a)
  IndexExpr a, b;
};

IndexExpr operator+(const IndexExpr& a, const IndexExpr& b);
IndexExpr operator-(const IndexExpr& a, const IndexExpr& b);
IndexExpr operator*(const IndexExpr& a, const IndexExpr& b);
IndexExpr operator/(const IndexExpr& a, const IndexExpr& b);
IndexExpr operator-(const IndexExpr& a);
/// `sum(v, e)`: e summed over every value of v (an explicit reduction, placed where it
/// is written). Prints and parses as "sum(v, e)".
IndexExpr sum(const IndexVar& v, const IndexExpr& e);

/// lhs = rhs, or lhs += rhs when accumulate, over a semiring: `*` is the semiring's
/// mul, `+`, `+=` and every reduction its add (see tessel/operators.h).
struct Assignment {
  IndexExpr lhs;  ///< always an Access
  IndexExpr rhs;
  bool accumulate = false;
  Semiring semiring = Semiring::plusTimes();

  const ExprNode& lhsNode() const { return lhs.node(); }
  std::string str() const;
};

/// Variables of the assignment: free (in the lhs, in lhs order) then reduction
/// (rhs only, in order of first appearance; summed explicitly or implicitly).
std::vector<IndexVar> freeVars(const Assignment& a);
std::vector<IndexVar> reductionVars(const Assignment& a);

/// Reduction semantics (the einsum convention, as TACO): the right-hand side splits at
/// its top-level `+`, `-` and negations into terms; each term sums over its variables
/// that are neither on the left-hand side nor summed by a `sum` inside it, with the sum
/// around that term alone. So `a(i) = B(i,j)*c(j) + d(i)` is Bc + d, and
/// `a(i) = sum(j, B(i,j)*c(j) + d(i))` adds d(i) once per j. Returns a's right-hand side
/// with every reduction written as a Sum node (the term's variables in order of first
/// appearance, outermost first).
IndexExpr explicitReductions(const Assignment& a);
/// Variables of e not bound by a Sum inside e, in order of first appearance.
std::vector<IndexVar> unboundVars(const IndexExpr& e);
/// True when e contains a Sum node.
bool hasSum(const IndexExpr& e);
/// `A(..) += e` into a tensor stored all dense: the kernel adds into A's values where
/// they are (one loop nest, sums included, no copy of A).
bool accumulatesInPlace(const Assignment& a);
/// `A(..) += e` where e sums over a variable and A has a sparse level. Kernels run it
/// in two stages, T(..) = e then A(..) += T(..): the one loop nest A = A_old + e would
/// add A's old values once per iteration of the sum.
bool accumulatesSum(const Assignment& a);
/// All accesses in the rhs, left to right.
std::vector<const ExprNode*> rhsAccesses(const Assignment& a);

/// Checks an assignment: access arity matches tensor order, no variable repeated in
/// one access, every index variable has one extent, the output does not appear on the
/// right; every `sum(v, e)` has v in e, v not on the left-hand side, not summed again
/// inside e and not used outside the sum in the same term. Throws NotationError /
/// DimensionError naming the tensor and variable.
void checkAssignment(const Assignment& a);

/// Checks that the right-hand side uses only operators the semiring has: semirings
/// other than plus_times have no inverses, so `-` (binary or unary) and `/` are refused
/// with NotationError "semiring min_plus has no '-' (in B(i,j) - C(i,j))". Literals
/// are allowed (a literal is a value stored everywhere). checkAssignment calls it.
void checkSemiringFits(const Assignment& a);

/// Extent of each variable in the assignment (after checkAssignment).
int64_t extentOf(const Assignment& a, const IndexVar& v);

}  // namespace tessel
