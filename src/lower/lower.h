// The steps of lowering one assignment that are not passes of their own files: the
// output plan checked against the schedule, a scheduled workspace, the concrete index
// notation printed, and the generated code's header comment. The driver
// (driver/pipeline.cpp) lists every pass in order; LoweredKernel is what they produce.
#pragma once

#include <string>

#include "ir/ir.h"
#include "lower/loop_nest.h"
#include "lower/output_plan.h"
#include "lower/parallel_plan.h"
#include "lower/problem.h"
#include "tessel/schedule.h"

namespace tessel::lower {

/// One assignment lowered: what each pass produced.
struct LoweredKernel {
  Problem problem;
  LoopNest nest;
  OutputPlan plan;
  ParallelPlan parallel;
  ir::Module module;
};

/// planOutput(p), a FormatError caused by a non-empty schedule reported as a ScheduleError.
OutputPlan planScheduledOutput(const Problem& p, const Schedule& schedule);

/// `precompute(j)` of the nest: the output gathered in a workspace at j (nothing to do
/// without one). A format that cannot take it throws ScheduleError naming the command.
void applyWorkspace(const Problem& p, OutputPlan& plan, const LoopNest& nest);

/// A workspace output plan made concrete: the loops that fill one row of the output
/// become where(forall(j, A(..,j) = w(j)), loops with w(j) += e) in nest.stmt, with one
/// copy of the loops per term of the sum (a sequence) when the plan says termLoops.
/// A temporary at a loop (precompute(e, t, at), loopfuse) under a sparse output needs
/// the output's sparse levels made by the loops down to it: else ScheduleError.
void insertWorkspace(const Problem& p, const OutputPlan& plan, LoopNest& nest);

/// The generated code's header: the assignment, argument slots, schedule, concrete
/// index notation, output plan and notes.
std::string headerComment(const LoweredKernel& k);

}  // namespace tessel::lower
