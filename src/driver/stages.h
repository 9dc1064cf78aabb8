// Splitting an assignment into the stages a kernel compiles and runs in order.
#pragma once

#include <string>
#include <vector>

#include "tessel/notation.h"
#include "tessel/schedule.h"

namespace tessel::driver {

/// The assignments a kernel runs in order, each with its schedule:
///  - one per precompute of a sub-expression: t(..) = e into a dense temporary t, the
///    assignment then reading t(..) in e's place;
///  - for `A(..) += e` with a sum in e: T(..) = e, then A(..) += T(..), with T a
///    temporary in A's format (A = A_old + e in one loop nest would add A_old once per
///    iteration of the sum);
///  - the assignment itself.
/// The user's other schedule commands apply to the stage that computes the user's sum;
/// the others run on blocks of rows (a parallel schedule runs on any thread count).
struct Stages {
  std::vector<Assignment> assignments;
  std::vector<Schedule> schedules;
  std::vector<std::string> what;        ///< headers of the stages' C code
  std::vector<TensorVar> temporaries;  ///< in order of creation (a run gives them storage)
};

/// Whether splitStages picks the schedules of the stages the user's schedule does not
/// cover. Picking one lowers the stage (defaultParallelSchedule tries it), so only a
/// compile asks: a run needs the assignments and temporaries alone, and lowering on every
/// run cost a small two-stage kernel about 40 us a call (MTTKRP then GEMM on kg-kinship:
/// 0.114 ms a run against 0.070 for its two kernels).
enum class StageSchedules { Choose, Skip };

/// Built the same way at compile and run time, so the stages' tensor slots match.
/// `kept`: for a run, the last run's temporaries (reused in order where they fit, so
/// that their storage is too; else new variables); null when compiling. With
/// StageSchedules::Skip, `schedules` holds empty schedules but for the user's.
Stages splitStages(const Assignment& a, const Schedule& schedule, const std::vector<TensorVar>* kept = nullptr,
                   StageSchedules pick = StageSchedules::Choose);

}  // namespace tessel::driver
