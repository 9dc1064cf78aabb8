// Index notation: index variables, tensor variables, expressions over tensor accesses,
// assignments.
//
//   IndexVar i("i"), j("j");
//   a(i) = B(i,j) * c(j);          // builds an Assignment stored in `a`
//
// The compiler sees tensor *variables* (TensorVar: name, type, dims, format) only. A
// Tensor (tessel/tensor.h) is a TensorVar bound to storage; an access built from one
// carries that binding, opaque here, for the runtime (see ExprNode::binding).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
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

class Access;

/// A tensor's storage as accesses carry it (ExprNode::binding): opaque outside the
/// runtime, which alone dereferences it.
using TensorBinding = std::shared_ptr<TensorImpl>;

/// A tensor variable: what the compiler knows of a tensor -- its name, element type,
/// dimensions and format -- without storage (TACO's TensorVar). A cheap handle; copies
/// are the same variable. Identity (not name) decides equality: two variables named "B"
/// are different variables. A Tensor (tessel/tensor.h) holds one, plus its storage.
class TensorVar {
 public:
  TensorVar() = default;  ///< undefined
  TensorVar(std::string name, Datatype type, std::vector<int64_t> dims, Format format);

  bool defined() const { return content_ != nullptr; }
  const std::string& name() const { return content_->name; }
  Datatype datatype() const { return content_->type; }
  int order() const { return static_cast<int>(content_->dims.size()); }
  const std::vector<int64_t>& dims() const { return content_->dims; }
  int64_t dim(int mode) const { return content_->dims.at(mode); }
  const Format& format() const { return content_->format; }
  /// Unique per variable (0 when undefined).
  uint64_t id() const { return content_ ? content_->id : 0; }
  /// Printed by name.
  const std::string& str() const { return name(); }

  bool operator==(const TensorVar& o) const { return content_ == o.content_; }
  bool operator!=(const TensorVar& o) const { return content_ != o.content_; }
  bool operator<(const TensorVar& o) const { return id() < o.id(); }

  /// Access without storage: for building assignments that are compiled (emitC,
  /// lowering) but not run; see Assignment.
  template <typename... V>
  Access operator()(const V&... vars) const;
  Access operator()(const std::vector<IndexVar>& vars) const;

 private:
  struct Content {
    std::string name;
    Datatype type = Datatype::Float64;
    std::vector<int64_t> dims;
    Format format;
    uint64_t id = 0;
    // Distribution (a piece of the tensor per rank) will live here: it is part of what
    // the compiler must know of a variable, not of one process's storage.
  };
  std::shared_ptr<const Content> content_;
};

/// Sum is an explicit reduction `sum(j, e)`: e summed over every value of j. Apply is an
/// element-wise binary operator (ExprNode::op) of a and b: `max(a, b)`, `a < b`; Abs is |a|.
enum class ExprKind { Access, Literal, Neg, Add, Sub, Mul, Div, Sum, Apply, Abs };

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

/// A tensor accessed by index variables: B(i,j). Assigning to an Access of a Tensor
/// records an Assignment in the accessed tensor.
class Access : public IndexExpr {
 public:
  /// An access of a tensor: its variable, bound to its storage (for the runtime).
  Access(const TensorBase& t, std::vector<IndexVar> vars);
  /// An access of a variable without storage.
  Access(const TensorVar& t, std::vector<IndexVar> vars);
  /// Copying an Access copies the handle (operator= below records an assignment instead).
  Access(const Access&) = default;
  /// The accessed tensor; throws NotationError for an access of a bare TensorVar.
  const TensorBase& tensor() const;
  const TensorVar& tensorVar() const;
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

/// How an access reads its tensor when it is an output mask's factor (the compiler's
/// form of `C<M> = e`, built by analysis from Assignment::mask; never by users). The
/// access then selects coordinates, and its value is never a factor of the product.
struct MaskRead {
  bool isMask = false;      ///< this access is a mask, not an operand
  bool valued = false;      ///< true where stored and nonzero (else: where stored)
  bool complement = false;  ///< true where the mask is false
};

struct ExprNode {
  ExprKind kind;
  MaskRead mask;  ///< Access: set when the access is an output mask's factor
  int depth = 1;  ///< 1 + the depth of the deepest operand (at most kMaxExpressionDepth)
  // Access
  TensorVar tensor;
  /// Access of a Tensor: the storage it is bound to. Opaque outside src/runtime (the
  /// compiler neither reads nor needs it; rewrites may keep or drop it): a run finds each
  /// variable's storage from the bound accesses of the assignment it is given. An
  /// output's own access holds it without owning it (no cycle through its assignment).
  TensorBinding binding;
  std::vector<IndexVar> vars;  ///< Access: one per mode; Sum: the summed variable

  // Literal
  double value = 0;
  // Neg, Abs (a), binary and Apply (a, b), Sum (body a). In a merge lattice's case
  // expressions (lowering) an undefined operand of Apply is an absent one: the semiring's zero.
  IndexExpr a, b;
  BinaryOp op;  ///< Apply: the element-wise operator
};

IndexExpr operator+(const IndexExpr& a, const IndexExpr& b);
IndexExpr operator-(const IndexExpr& a, const IndexExpr& b);
IndexExpr operator*(const IndexExpr& a, const IndexExpr& b);
IndexExpr operator/(const IndexExpr& a, const IndexExpr& b);
IndexExpr operator-(const IndexExpr& a);
/// `sum(v, e)`: e summed over every value of v (an explicit reduction, placed where it
/// is written). Prints and parses as "sum(v, e)".
IndexExpr sum(const IndexVar& v, const IndexExpr& e);

/// Element-wise functions. Value semantics as everywhere: an absent entry reads as the
/// assignment's semiring's zero (0 for plus_times), and the iteration space follows from
/// op's algebra (elementwiseSupport in tessel/operators.h): under plus_times max(B(i),
/// C(i)) is max(B(i), 0) where only B is stored, and `B(i) == C(i)` is 1 where neither
/// is (a dense result). Text syntax: `min(a, b)`, `max(a, b)`, `abs(a)`, `a < b`,
/// `a <= b`, `a > b`, `a >= b`, `a == b`, `a != b` (comparisons bind looser than `+`,
/// do not chain, and give 1 or 0); a user-declared operator (BinaryOp::custom) prints
/// as `name(a, b)` and does not parse back (the text language does not know it).
IndexExpr apply(const BinaryOp& op, const IndexExpr& a, const IndexExpr& b);
/// |a| (abs below; a plain function would capture abs(int) inside namespace tessel).
IndexExpr absolute(const IndexExpr& a);

/// Operands of the element-wise templates below: at least one is an index expression
/// (an Access, an IndexExpr), so that min(x, y) and x < y on plain numbers keep their
/// usual meaning inside namespace tessel.
template <typename A, typename B>
concept ElementwiseOperands =
    (std::is_base_of_v<IndexExpr, A> || std::is_base_of_v<IndexExpr, B>) &&
    std::is_convertible_v<const A&, IndexExpr> && std::is_convertible_v<const B&, IndexExpr>;

template <typename A> requires std::is_base_of_v<IndexExpr, A>
IndexExpr abs(const A& a) { return absolute(a); }
template <typename A, typename B> requires ElementwiseOperands<A, B>
IndexExpr min(const A& a, const B& b) { return apply(BinaryOp::min(), a, b); }
template <typename A, typename B> requires ElementwiseOperands<A, B>
IndexExpr max(const A& a, const B& b) { return apply(BinaryOp::max(), a, b); }
template <typename A, typename B> requires ElementwiseOperands<A, B>
IndexExpr operator<(const A& a, const B& b) { return apply(BinaryOp::lt(), a, b); }
template <typename A, typename B> requires ElementwiseOperands<A, B>
IndexExpr operator<=(const A& a, const B& b) { return apply(BinaryOp::le(), a, b); }
template <typename A, typename B> requires ElementwiseOperands<A, B>
IndexExpr operator>(const A& a, const B& b) { return apply(BinaryOp::gt(), a, b); }
template <typename A, typename B> requires ElementwiseOperands<A, B>
IndexExpr operator>=(const A& a, const B& b) { return apply(BinaryOp::ge(), a, b); }
/// Element-wise equality (1 or 0), not identity of expressions.
template <typename A, typename B> requires ElementwiseOperands<A, B>
IndexExpr operator==(const A& a, const B& b) { return apply(BinaryOp::eq(), a, b); }
template <typename A, typename B> requires ElementwiseOperands<A, B>
IndexExpr operator!=(const A& a, const B& b) { return apply(BinaryOp::ne(), a, b); }

/// n's kind (and operator, variable) over new operands: for rewrites that rebuild a
/// tree. Leaves (Access, Literal) come back unchanged.
IndexExpr withOperands(const ExprNode& n, const IndexExpr& a, const IndexExpr& b);

template <typename... V>
Access TensorVar::operator()(const V&... vars) const {
  return Access(*this, std::vector<IndexVar>{vars...});
}

/// An access of n's tensor variable (and n's binding, if any) by other variables: for
/// rewrites that rebuild accesses.
IndexExpr accessLike(const ExprNode& n, std::vector<IndexVar> vars);

/// Which form a masked assignment with a reduction runs in (see OutputMask::form).
enum class MaskForm {
  Auto,  ///< chosen by Kernel::compile from the bound tensors' non-zeros
  Pull,  ///< iterate the mask's coordinates first, reduce each entry (dot products)
  Push   ///< iterate the operands (Gustavson), keep only products the mask allows
};

/// An output mask, GraphBLAS's `C<M> = e` (`C<!M>`, `C<M,replace> += e`): the output
/// is written only where the mask is true.
///  - structural (valued = false): true where M stores an entry (a stored zero included;
///    every coordinate of a dense level is stored); valued: where M stores a nonzero;
///  - complement: true where that is false;
///  - `=`: where the mask is false the output has no entry (a dense output holds the
///    semiring's zero there), whatever `replace` says: tessel's `=` replaces the output;
///  - `+=`: where the mask is true the output is old + e; where it is false the old
///    value stays (merge), or, with replace, the entry is removed (zero when dense).
/// The mask has the output's shape, any type and format; it may be an operand too
/// (triangle counting `C<L>(i,j) = L(i,k) * L(k,j)`) but not the output.
/// The kernel does only the work the mask allows: a mask is intersected with the
/// iteration space (pull); in the push form, and when complemented, it is tested where
/// the output's coordinates are bound, before the expression's value is computed: in a
/// row of flags scattered once per row (a mask stored as dense levels over a compressed
/// one: CSR, a sparse vector), else located (dense, bitmap) or binary-searched (DCSR).
struct OutputMask {
  IndexExpr access;         ///< M accessed by the output's variables, e.g. M(i,j); undefined: no mask
  bool valued = false;      ///< test values (nonzero), not just stored entries
  bool complement = false;  ///< `C<!M>`
  bool replace = false;     ///< `+=` only: clear the output where the mask is false
  /// With a reduction (masked SpGEMM): dot products over the mask's entries (Pull) or
  /// Gustavson's row-wise form testing each product in the mask's row (Push). Auto
  /// picks Pull when nnz(M) * (nnz(A)/rows(A) + nnz(B)/cols(B)) < flops + 2 nnz(M),
  /// flops = nnz(A) * nnz(B) / rows(B), for a CSR mask (see src/driver/mask_form.h); a
  /// complemented mask is never iterated (its form is the formats' choice).
  MaskForm form = MaskForm::Auto;

  bool defined() const { return access.defined(); }
  /// "M", "!M", with ",valued" / ",replace": what goes between `<` and `>`.
  std::string str() const;
};

/// A mask of an access of M (a Tensor's or a TensorVar's): `outputMask(M(i,j))`.
OutputMask outputMask(const Access& m, bool valued = false, bool complement = false, bool replace = false);

/// lhs = rhs, or lhs += rhs when accumulate, over a semiring: `*` is the semiring's
/// mul, `+`, `+=` and every reduction its add (see tessel/operators.h). Built from
/// TensorVars it compiles (Kernel::emitC) but cannot run: Kernel::run needs every
/// access bound to a Tensor.
struct Assignment {
  IndexExpr lhs;  ///< always an Access
  IndexExpr rhs;
  bool accumulate = false;
  Semiring semiring = Semiring::plusTimes();
  OutputMask mask;  ///< none unless defined (see OutputMask)

  const ExprNode& lhsNode() const { return lhs.node(); }
  std::string str() const;
};

/// The mask's factor for the right-hand side: an access of the mask's tensor by the
/// output's variables, flagged (ExprNode::mask) as a mask read. Needs a.mask.defined().
IndexExpr maskFactor(const Assignment& a);

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
