// Where the sums of an assignment sit (internal helpers beside the public
// explicitReductions / unboundVars / hasSum of tessel/notation.h).
#pragma once

#include <vector>

#include "tessel/notation.h"

namespace tessel {

/// The checks of `sum` nodes that checkAssignment runs (see there).
void checkSums(const Assignment& a);

/// e as sum(vars[0], sum(vars[1], ... body)): the sums at its root, outermost first.
struct RootReduction {
  std::vector<IndexVar> vars;
  IndexExpr body;
};
RootReduction rootReduction(const IndexExpr& e);

/// explicitReductions(a), with terms that all sum over the same variables merged under
/// one sum (sum(j, X) + sum(j, Y) as sum(j, X + Y)): the form loop nests are cut from.
IndexExpr loopNestForm(const Assignment& a);

/// Every reduction of `a` (implicit and explicit) wraps the whole right-hand side, so
/// one loop nest computing rhs summed over all non-output variables is exact.
bool reducesAtRoot(const Assignment& a);

}  // namespace tessel
