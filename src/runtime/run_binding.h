// How a run's tensors fill a compiled stage's slots, kept between runs.
//
// Binding an assignment to a kernel means analyzing it (checks, loop order, output plan):
// microseconds, a quarter of a small SpMV's run. The analysis depends only on the
// assignment's structure and its tensors' types, formats and dimensions, so the last
// binding is reused while those stay the same. The cache holds no tensor: a kernel lives
// in its output tensor, and owning inputs there would keep them alive (or in a cycle).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/kernel_slots.h"
#include "tessel/notation.h"

namespace tessel {

class StagePlanner;

/// What an assignment's analysis depends on, flattened: node kinds, literals, index
/// variables, and per access its tensor's address, type, dims and format.
class AssignmentFacts {
 public:
  explicit AssignmentFacts(const Assignment& a);
  /// The same facts, by walking `a`; `rhs` gets `a`'s rhs accesses in rhsAccesses order
  /// (the walk the binding needs anyway).
  bool matches(const Assignment& a, std::vector<const ExprNode*>& rhs) const;

 private:
  std::vector<uint64_t> words_;
  std::vector<Format> formats_;
};

/// The compiled stage's slots as the analysis filled them. Slot tensors are dropped
/// (the run's own assignment supplies them) except the `+=` snapshot's, which the
/// analysis made.
struct SlotPlan {
  KernelSlots slots;
  std::vector<int> sourceOfSlot;  ///< per slot: the rhs access (rhsAccesses order) holding its tensor
};

/// The tensors of one run, slot by slot.
struct BoundSlots {
  std::shared_ptr<const SlotPlan> plan;
  std::vector<std::shared_ptr<TensorImpl>> tensors;
};

/// The last slot plan of one stage; runs may come from several threads.
class SlotPlanCache {
 public:
  /// `a`'s tensors in the stage's slots. A new plan comes from `planner.slotsOf(a)` and
  /// is checked against the compiled slots (UserError when `a` is not what was compiled).
  BoundSlots bind(const Assignment& a, const KernelSlots& compiled, const StagePlanner& planner);

 private:
  struct Entry {
    AssignmentFacts facts;
    std::shared_ptr<const SlotPlan> plan;
  };
  std::mutex mutex_;
  std::shared_ptr<const Entry> last_;
};

}  // namespace tessel
