// How a run's tensors fill a compiled stage's slots, kept between runs.
//
// Binding an assignment to a kernel means analyzing it (checks, loop order, output plan):
// microseconds, a quarter of a small SpMV's run. The analysis depends only on the
// assignment's structure and its tensor variables, so the last binding is reused while
// those stay the same. The cache holds variables, no storage: a kernel lives in its
// output tensor, and owning inputs there would keep them alive (or in a cycle).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/kernel_slots.h"
#include "tessel/notation.h"

namespace tessel {

class StagePlanner;
class RunBindings;

/// What an assignment's analysis depends on, flattened: node kinds, literals, index
/// variables, and per access its tensor variable (whose type, dims and format are fixed).
class AssignmentFacts {
 public:
  explicit AssignmentFacts(const Assignment& a);
  /// The same facts, by walking `a`.
  bool matches(const Assignment& a) const;

 private:
  std::vector<uint64_t> words_;
};

/// The compiled stage's slots as the analysis filled them, by variable (the `+=`
/// snapshot's is the analysis' own; a run makes its storage).
struct SlotPlan {
  KernelSlots slots;
};

/// The tensors of one run, slot by slot (the snapshot's slot null: the run makes it).
struct BoundSlots {
  std::shared_ptr<const SlotPlan> plan;
  std::vector<std::shared_ptr<TensorImpl>> tensors;
};

/// The last slot plan of one stage; runs may come from several threads.
class SlotPlanCache {
 public:
  /// `a`'s tensors in the stage's slots, their storage from `storage`. A new plan comes
  /// from `planner.slotsOf(a)` and is checked against the compiled slots (UserError when
  /// `a` is not what was compiled).
  BoundSlots bind(const Assignment& a, const KernelSlots& compiled, const StagePlanner& planner,
                  const RunBindings& storage);

 private:
  struct Entry {
    AssignmentFacts facts;
    std::shared_ptr<const SlotPlan> plan;
  };
  std::mutex mutex_;
  std::shared_ptr<const Entry> last_;
};

}  // namespace tessel
