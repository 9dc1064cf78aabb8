// Merge lattices (TACO): for one index variable, the cases of co-iterating the sparse
// operands of an expression. Each point names the iterators that must all have the
// current coordinate, and the expression that remains when exactly those are present.
// The algebra decides (tessel/operators.h): an absent operand is the semiring's zero
// (add's identity), so a sum keeps its other operand (x+0 is x, min(x,inf) is x: union)
// and a product vanishes (x*0 = 0, x+inf = inf: intersection; max_times has no such
// annihilator and its products are taken over stored operands, as GraphBLAS does).
// Only plus_times has `-` and `/` (x/0 keeps the division).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tessel/notation.h"

namespace tessel::lower {

struct LatticePoint {
  std::vector<int> iterators;  ///< indices of accesses iterated at this variable (sorted)
  IndexExpr expr;              ///< never undefined (zero points are dropped)
};

struct MergeLattice {
  /// Points, supersets before subsets. A point with no iterators means the
  /// expression is nonzero where no sparse operand is: the loop must be dense.
  std::vector<LatticePoint> points;

  bool empty() const { return points.empty(); }
  bool needsDenseLoop() const;
  /// Points whose iterators are a subset of `p`'s (the cases inside p's loop).
  std::vector<LatticePoint> subLattice(const LatticePoint& p) const;
  std::string str() const;
};

/// Most sparse operands one loop may co-iterate (a union of n has 2^n - 1 points).
constexpr int kMaxCoiterated = 6;

/// `iterated(access)` returns the access index if the access is iterated (sparse
/// level) at the variable, or -1 if it is random-access or independent of it.
/// Throws NotationError beyond kMaxCoiterated sparse operands.
MergeLattice buildLattice(const IndexExpr& e, const std::function<int(const ExprNode*)>& iterated,
                          const Semiring& semiring = Semiring::plusTimes());

}  // namespace tessel::lower
