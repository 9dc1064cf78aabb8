// The lowering pipeline, in one place: assignment -> problem (checks, argument slots,
// loop order) -> output plan -> concrete index notation -> IR functions
// `assemble` (symbolic phase: allocate / build the output pattern) and
// `compute` (numeric phase: fill values).
#pragma once

#include <string>

#include "ir/ir.h"
#include "lower/loop_nest.h"
#include "lower/output_plan.h"
#include "lower/parallel_plan.h"
#include "lower/problem.h"
#include "tessel/schedule.h"

namespace tessel::lower {

struct LoweredKernel {
  Problem problem;
  LoopNest nest;
  OutputPlan plan;
  ParallelPlan parallel;
  std::string concrete;  ///< concrete index notation, printed
  ir::Module module;
};

LoweredKernel lower(const Assignment& a, const Schedule& schedule = {});

}  // namespace tessel::lower
