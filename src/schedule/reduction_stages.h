// The einsum convention as loop nests: an assignment whose sums do not all wrap its
// whole right-hand side (`a(i) = B(i,j)*c(j) + d(i)`) is split into assignments that
// each reduce at their root, every inner sum computed first into a temporary:
// t(i) = B(i,j)*c(j), then a(i) = t(i) + d(i). Kernels compile and run them as stages.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "schedule/precompute_expr.h"
#include "tessel/notation.h"

namespace tessel {

/// `a` as assignments in run order, the last writing a's output. Each sums over all its
/// variables not on its left-hand side around its whole right-hand side (what one loop
/// nest computes), written as sum nodes at its root. A sum inside an expression is
/// computed into a temporary made by `temporary`: over the sum's unbound variables in
/// order of first appearance, in the output's format when those are exactly the output's
/// variables (so a sparse result stays sparse), else dense. Temporaries are named after
/// the output (`a_sum`, `a_sum2`, ...), never clashing with a's tensors or `taken`.
std::vector<Assignment> splitReductions(const Assignment& a,
                                        const std::function<TensorVar(const PrecomputeTemporary&)>& temporary,
                                        const std::vector<std::string>& taken = {});

/// Of `stages`, the last one whose loop nest has every index variable of `a` and every
/// tensor that `s` names (the one a user's schedule applies to); the last stage when
/// `s` names none. Throws ScheduleError when no stage has them all.
size_t scheduledStage(const std::vector<Assignment>& stages, const Assignment& a, const Schedule& s);

}  // namespace tessel
