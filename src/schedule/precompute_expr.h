// precompute(e, t) of a sub-expression: the assignment split into two, t(..) = e and
// the assignment with t(..) in e's place (concrete index notation's `where` at the
// outermost loop). Kernels compile and run the two as stages.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tessel/notation.h"
#include "tessel/schedule.h"

namespace tessel {

/// A temporary that a split of an assignment needs (a precomputed sub-expression, or
/// an inner sum): a tensor over these variables.
struct PrecomputeTemporary {
  std::string name;
  Datatype type = Datatype::Float64;
  std::vector<IndexVar> vars;   ///< the variables it is indexed by, in order of first appearance
  std::vector<int64_t> dims;
  Format format;                ///< dense for a precompute
};

/// Finds `c.expr` in a's right-hand side (its sums made explicit, explicitReductions),
/// checks that computing it first keeps the result, and returns
/// {t(vars) = e, a with t(vars) in e's place}, t made by `temporary` from its
/// description (a dense tensor variable of that name, type and dims). A sum around e over a
/// variable that only e uses moves into t; between that sum and e there may only be
/// products, negations, numerators and sums, since in `sum(k, B(i,k)*c(k) + d(i))` the
/// sum over k also adds d(i) once per k. Both results keep explicit sums where the rest
/// needs them (splitReductions makes loop nests of them). Throws ScheduleError naming
/// the command.
std::pair<Assignment, Assignment> splitPrecompute(
    const Assignment& a, const ScheduleCommand& c,
    const std::function<TensorVar(const PrecomputeTemporary&)>& temporary);

/// A precompute of a sub-expression before all loops (not of an output level, not at a
/// loop: those are the loop nest's).
bool precomputesExpr(const ScheduleCommand& c);

}  // namespace tessel
