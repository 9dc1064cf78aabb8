// The compiler pipeline, from an assignment and a schedule to a loaded kernel, in one
// function (compilePipeline) that lists every pass in order, as Halide's Lower.cpp.
// Kernel::compile, Kernel::emitC and `tessel emit --passes` are its callers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lower/lower.h"
#include "tessel/jit.h"
#include "tessel/kernel.h"
#include "tessel/runtime_abi.h"

namespace tessel::driver {

struct PipelineOptions {
  /// Where to stop: after lowering (no C), after the C backend, or loaded.
  enum class Until { Lowered, Source, Loaded } until = Until::Loaded;
  JitOptions jit;
  /// false: `a` is lowered as one stage, as it is (a `+=` with a sum then throws).
  bool splitStages = true;
  /// Called after each pass with its name and the program printed; empty: not called
  /// (and nothing is printed).
  PassObserver observe;
};

/// One stage through the pipeline.
struct CompiledStage {
  lower::LoweredKernel lowered;
  std::string source;                 ///< C, headed by the stage's description when several
  std::shared_ptr<JitModule> module;  ///< Until::Loaded
  tessel_kernel_fn assemble = nullptr;
  tessel_kernel_fn compute = nullptr;
};

struct CompiledStages {
  std::vector<CompiledStage> stages;
  std::string source;  ///< every stage's C, in order
};

/// Every pass, in order; see pipeline.cpp.
CompiledStages compilePipeline(const Assignment& a, const Schedule& schedule, const PipelineOptions& options = {});

/// `a` lowered as one stage, without C (tests, and trial compiles of a schedule).
lower::LoweredKernel lowerAssignment(const Assignment& a, const Schedule& schedule = {});
/// Whether `schedule` lowers for `a` (a trial compile; a UserError means no).
bool lowers(const Assignment& a, const Schedule& schedule);
/// Whether every stage of `schedule` lowers for `a` (its precomputed sub-expressions,
/// the separate kernels, split off first).
bool lowersStaged(const Assignment& a, const Schedule& schedule);

}  // namespace tessel::driver
