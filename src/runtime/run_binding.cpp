// The slot plan cache: see run_binding.h.
#include "runtime/run_binding.h"

#include <cstring>

#include "runtime/kernel_stages.h"
#include "tessel/error.h"
#include "tessel/tensor.h"

namespace tessel {

namespace {

/// Walks an assignment's facts into a sink: word(uint64_t), format(const Format&), and
/// access(const ExprNode&) for each access, rhsBegins() between the lhs and the rhs.
template <typename Sink>
void walkExpr(const IndexExpr& e, Sink& sink) {
  if (!e.defined()) {
    sink.word(~uint64_t{0});
    return;
  }
  const ExprNode& n = e.node();
  sink.word(static_cast<uint64_t>(n.kind));
  switch (n.kind) {
    case ExprKind::Access: {
      const TensorImpl* t = n.tensor.get();
      sink.access(n);
      sink.word(reinterpret_cast<uintptr_t>(t));
      if (t) {
        sink.word(static_cast<uint64_t>(t->type));
        sink.word(t->dims.size());
        for (int64_t d : t->dims) sink.word(static_cast<uint64_t>(d));
        sink.format(t->format);
      }
      sink.word(n.vars.size());
      for (const IndexVar& v : n.vars) sink.word(v.id());
      break;
    }
    case ExprKind::Literal: {
      uint64_t bits;
      std::memcpy(&bits, &n.value, sizeof bits);
      sink.word(bits);
      break;
    }
    case ExprKind::Sum:
      sink.word(n.vars[0].id());
      walkExpr(n.a, sink);
      break;
    case ExprKind::Neg:
      walkExpr(n.a, sink);
      break;
    default:
      walkExpr(n.a, sink);
      walkExpr(n.b, sink);
      break;
  }
}

template <typename Sink>
void walkAssignment(const Assignment& a, Sink& sink) {
  sink.word(a.accumulate ? 1 : 0);
  sink.word(static_cast<uint64_t>(a.semiring.add.kind) * 8 + static_cast<uint64_t>(a.semiring.mul.kind));
  walkExpr(a.lhs, sink);
  sink.rhsBegins();
  walkExpr(a.rhs, sink);
}

struct Recorder {
  std::vector<uint64_t>& words;
  std::vector<Format>& formats;
  void word(uint64_t w) { words.push_back(w); }
  void format(const Format& f) { formats.push_back(f); }
  void access(const ExprNode&) {}
  void rhsBegins() {}
};

/// Compares with recorded facts and lists the rhs accesses on the way (in rhsAccesses
/// order: the caller's slots are filled from them without a second walk).
struct Matcher {
  const std::vector<uint64_t>& words;
  const std::vector<Format>& formats;
  std::vector<const ExprNode*>& accesses;
  size_t w = 0, f = 0;
  bool same = true, inRhs = false;
  void word(uint64_t x) { same = same && w < words.size() && words[w++] == x; }
  void format(const Format& x) { same = same && f < formats.size() && formats[f++] == x; }
  void access(const ExprNode& n) {
    if (inRhs) accesses.push_back(&n);
  }
  void rhsBegins() { inRhs = true; }
};

/// The analysis' slots for `a`, checked against the compiled ones.
SlotPlan planSlots(const Assignment& a, const KernelSlots& compiled, const StagePlanner& planner) {
  KernelSlots args = planner.slotsOf(a);
  if (args.size() != compiled.size())
    throw UserError("kernel was compiled for a different expression: " + a.str());
  for (size_t s = 0; s < args.size(); s++)
    if (!(args[s].format == compiled[s].format) || args[s].tensor->type != compiled[s].tensor->type)
      throw UserError("kernel was compiled for other formats or types than " + args[s].tensor->name + "'s");
  // Each slot is filled from the first rhs access of its tensor (a transposed input has
  // two slots, its own format's and the one the kernel reads).
  std::vector<const ExprNode*> accesses = rhsAccesses(a);
  SlotPlan plan;
  for (const KernelSlot& slot : args) {
    int source = -1;
    for (size_t k = 0; k < accesses.size() && source < 0 && !slot.isOutput && !slot.snapshotOfOutput; k++)
      if (accesses[k]->tensor == slot.tensor) source = static_cast<int>(k);
    if (source < 0 && !slot.isOutput && !slot.snapshotOfOutput)
      throw InternalError("slot of " + slot.tensor->name + " in " + a.str() + " has no access");
    plan.sourceOfSlot.push_back(source);
  }
  plan.slots = std::move(args);
  for (KernelSlot& slot : plan.slots)
    if (!slot.snapshotOfOutput) slot.tensor.reset();
  return plan;
}

}  // namespace

AssignmentFacts::AssignmentFacts(const Assignment& a) {
  Recorder r{words_, formats_};
  walkAssignment(a, r);
}

bool AssignmentFacts::matches(const Assignment& a, std::vector<const ExprNode*>& rhs) const {
  rhs.clear();
  Matcher m{words_, formats_, rhs};
  walkAssignment(a, m);
  return m.same && m.w == words_.size() && m.f == formats_.size();
}

BoundSlots SlotPlanCache::bind(const Assignment& a, const KernelSlots& compiled, const StagePlanner& planner) {
  std::shared_ptr<const Entry> entry;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    entry = last_;
  }
  std::vector<const ExprNode*> accesses;
  if (!entry || !entry->facts.matches(a, accesses)) {
    auto fresh = std::make_shared<Entry>(Entry{AssignmentFacts(a), std::make_shared<SlotPlan>(planSlots(a, compiled, planner))});
    std::lock_guard<std::mutex> lock(mutex_);
    last_ = fresh;
    entry = std::move(fresh);
    accesses = rhsAccesses(a);
  }
  const SlotPlan& plan = *entry->plan;
  BoundSlots b{entry->plan, std::vector<std::shared_ptr<TensorImpl>>(plan.slots.size())};
  for (size_t s = 0; s < plan.slots.size(); s++) {
    int k = plan.sourceOfSlot[s];
    if (plan.slots[s].isOutput) b.tensors[s] = a.lhsNode().tensor;
    else if (plan.slots[s].snapshotOfOutput) b.tensors[s] = plan.slots[s].tensor;
    else if (k < static_cast<int>(accesses.size())) b.tensors[s] = accesses[k]->tensor;
    else throw InternalError("slot plan of " + a.str() + " names access " + std::to_string(k));
  }
  return b;
}

}  // namespace tessel
