// The lowering pipeline, in one place: assignment -> problem (checks, argument slots,
// loop order) -> output plan -> concrete index notation -> IR functions
// `assemble` (symbolic phase: allocate / build the output pattern) and
// `compute` (numeric phase: fill values).
#pragma once

#include <string>

#include "ir/ir.h"
#include "lower/output_plan.h"
#include "lower/problem.h"

namespace tessel::lower {

struct LoweredKernel {
  Problem problem;
  OutputPlan plan;
  std::string concrete;  ///< concrete index notation, printed
  ir::Module module;
};

LoweredKernel lower(const Assignment& a);

}  // namespace tessel::lower
