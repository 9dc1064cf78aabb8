// The distributed lowering (DISTAL §4-§5): an assignment, its distributed schedule, the
// machine and the tensors' distributions become an SPMD program (runtime/spmd/program.h):
// the loops distributed over the machine grid, the sequential steps above the leaf, where
// each tensor is communicated, and the leaf assignment with its single-node schedule.
#pragma once

#include <map>
#include <string>

#include "runtime/spmd/program.h"
#include "tessel/distributed.h"
#include "tessel/notation.h"

namespace tessel::lower {

/// Where a tensor's data lives: a distribution over a grid (none: on every rank).
struct Placement {
  Grid grid;
  Distribution distribution;
};

/// Owner computes by the output's distribution: the output's variables partitioned over
/// a machine dimension are distributed over it, the other machine dimensions take the
/// next unused variables (output ones first, then summed ones).
/// "distribute({i,j},{io,jo},{ii,ji})".
std::string defaultDistributedSchedule(const Assignment& a, const Machine& m, const Placement& output);

/// The schedule a distributed kernel runs: `schedule` as given; the default when it is
/// empty; when it holds loopfuse commands alone (the leaf's fusions), those followed by
/// the default ("loopfuse(j),distribute({i},{io},{ii})").
std::string distributedScheduleFor(const Assignment& a, const std::string& schedule, const Machine& m,
                                   const Placement& output);

/// Commands: divide, split, reorder, distribute (one divided loop, or the compound
/// distribute({i,j},{io,jo},{ii,ji}[,Grid(2,2)])), communicate(T, v) / communicate({A,B}, v),
/// rotate(t, {u,v}, r), substitute({ii,ji,ki}, blas); parallelize, unroll, loopfuse and
/// the other single-node commands schedule the leaf (loopfuse at a loop that runs in the
/// leaf: one split or distributed after it follows its inner loop; at a distributed or
/// step loop, ScheduleError). ScheduleError naming the command otherwise;
/// DistributionError for a distribution that does not fit its tensor or grid.
spmd::Program distributeLoops(const Assignment& a, const std::string& schedule, const Machine& m,
                              const std::map<std::string, Placement>& placement);

}  // namespace tessel::lower
