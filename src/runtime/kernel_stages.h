// What a compiled Kernel holds (Kernel::Impl): its loaded stages, and the planner that
// splits a run's assignment into the stages' assignments.
//
// Why an interface: the runtime sits below the compiler (DESIGN.md) and may not call
// it, yet every run has to redo two compile-side steps on the run's own tensors: split
// the assignment into stages (precompute temporaries, `A += sum`) and analyze a
// stage's assignment into argument slots (when its tensors' shapes change). The driver,
// which compiled the kernel, implements StagePlanner with the same code it compiled
// with, so the run's stages and slots match the compiled ones by construction.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/kernel_slots.h"
#include "runtime/run_binding.h"
#include "tessel/jit.h"
#include "tessel/kernel.h"
#include "tessel/runtime_abi.h"

namespace tessel {

/// One run's assignments, a compiled stage each, and the temporaries they write (tensor
/// variables: the run gives them storage).
struct RunStages {
  std::vector<Assignment> assignments;
  std::vector<TensorVar> temporaries;  ///< in order of creation
};

/// The compile-side steps a run needs; see the file comment.
class StagePlanner {
 public:
  virtual ~StagePlanner() = default;
  /// `a` split into stage assignments as at compile time. Temporaries are taken from
  /// `kept` (the last run's variables, in order) where they fit, else made: a kept
  /// variable keeps its storage, whose arrays the run writes into.
  virtual RunStages split(const Assignment& a, const std::vector<TensorVar>& kept) const = 0;
  /// The argument slots of one stage's assignment (analysis: checks, transposed inputs,
  /// the `+=` snapshot), with their tensors.
  virtual KernelSlots slotsOf(const Assignment& stage) const = 0;
};

/// One compiled loop nest: its tensor slots (as compiled) and entry points.
struct Stage {
  KernelSlots args;
  std::shared_ptr<JitModule> module;
  tessel_kernel_fn assemble = nullptr;
  tessel_kernel_fn compute = nullptr;
  /// The object's tessel_memory_limit and tessel_refused_bytes (kernel_helpers.h): set
  /// before each run, read when an allocation failed.
  int64_t* memoryLimit = nullptr;
  int64_t* refusedBytes = nullptr;
  std::shared_ptr<SlotPlanCache> slotPlans = std::make_shared<SlotPlanCache>();
};

struct Kernel::Impl {
  // The stages in order: precomputed sub-expressions, the sum of `A += e` with a sum
  // in e, then the assignment itself.
  std::vector<Stage> stages;
  std::shared_ptr<const StagePlanner> planner;  // splits a run's assignment as compiled
  // The temporaries of the last run, whose arrays the next run writes into (fresh ones
  // would allocate and page-fault every run). Taken out while a run uses them, so
  // concurrent runs never share one.
  std::mutex keptMutex;
  std::vector<std::shared_ptr<TensorImpl>> kept;  // each holds its TensorVar
};

}  // namespace tessel
