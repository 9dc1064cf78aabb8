// How the parallel loop of a scheduled nest may write the output, decided from the
// nest, the output plan and the user's race strategy. Throws ScheduleError for a
// parallel loop whose iterations would race and whose strategy cannot prevent it.
#pragma once

#include "lower/loop_nest.h"
#include "lower/output_plan.h"

namespace tessel::lower {

struct ParallelPlan {
  int loop = -1;            ///< index of the parallel loop in the nest, -1 if none
  bool atomics = false;     ///< output updates are atomic
  bool temporary = false;   ///< each thread updates its own copy of the dense output
  bool privateWorkspace = false;  ///< workspace rows are per thread
};

/// Also sets `plan.scatter` when loops of the nest make the output's values
/// accumulate (a reduction split outside the output's variables), `plan.assignsAll`,
/// and keeps one-pass assembly under a parallel loop only where rows find their own
/// offsets.
ParallelPlan planParallel(const Problem& p, OutputPlan& plan, const LoopNest& nest);

}  // namespace tessel::lower
