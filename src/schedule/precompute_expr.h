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

/// The temporary a sub-expression precompute needs: a dense tensor over these variables.
struct PrecomputeTemporary {
  std::string name;
  Datatype type = Datatype::Float64;
  std::vector<IndexVar> vars;   ///< e's variables used outside e, in order of first appearance in e
  std::vector<int64_t> dims;
};

/// Finds `c.expr` in a's right-hand side, checks that computing it first keeps the
/// result, and returns {t(vars) = e, a with t(vars) in e's place}, t made by `temporary`
/// from its description (a dense tensor of that name, type and dims). A variable summed
/// only inside e may only have products (and negation, and the numerator of a division)
/// between e and the root, since e.g. in `B(i,k)*c(k) + d(i)` the sum over k also adds
/// d(i) once per k. Throws ScheduleError naming the command.
std::pair<Assignment, Assignment> splitPrecompute(
    const Assignment& a, const ScheduleCommand& c,
    const std::function<TensorBase(const PrecomputeTemporary&)>& temporary);

/// A precompute of a sub-expression (not of an output level).
bool precomputesExpr(const ScheduleCommand& c);

}  // namespace tessel
