// The slot plan cache: see run_binding.h.
#include "runtime/run_binding.h"

#include <cstring>

#include "runtime/bindings.h"
#include "runtime/kernel_stages.h"
#include "tessel/error.h"
#include "tessel/tensor.h"

namespace tessel {

namespace {

/// Walks an assignment's facts into a word sink.
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
      sink.word(n.tensor.id());  // a variable's type, dims and format never change
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
    case ExprKind::Abs:
      walkExpr(n.a, sink);
      break;
    case ExprKind::Apply:  // the operator, and a user-declared one's name and C text
      sink.word(static_cast<uint64_t>(n.op.kind));
      if (n.op.kind == BinaryOpKind::Custom) {
        sink.word(std::hash<std::string>{}(n.op.name));
        sink.word(std::hash<std::string>{}(n.op.cExpr));
      }
      walkExpr(n.a, sink);
      walkExpr(n.b, sink);
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
  sink.word(static_cast<uint64_t>(a.semiring.add.kind) * 64 + static_cast<uint64_t>(a.semiring.mul.kind));
  for (const BinaryOp* op : {&a.semiring.add, &a.semiring.mul})
    if (op->kind == BinaryOpKind::Custom) {
      sink.word(std::hash<std::string>{}(op->name));
      sink.word(std::hash<std::string>{}(op->cExpr));
    }
  walkExpr(a.lhs, sink);
  walkExpr(a.rhs, sink);
  const OutputMask& m = a.mask;  // a mask's variable and kind change the slots
  sink.word(m.defined() ? 1 + (m.valued ? 2 : 0) + (m.complement ? 4 : 0) + (m.replace ? 8 : 0) : 0);
  if (m.defined()) walkExpr(m.access, sink);
}

struct Recorder {
  std::vector<uint64_t>& words;
  void word(uint64_t w) { words.push_back(w); }
};

struct Matcher {
  const std::vector<uint64_t>& words;
  size_t w = 0;
  bool same = true;
  void word(uint64_t x) { same = same && w < words.size() && words[w++] == x; }
};

/// The analysis' slots for `a`, checked against the compiled ones.
SlotPlan planSlots(const Assignment& a, const KernelSlots& compiled, const StagePlanner& planner) {
  KernelSlots args = planner.slotsOf(a);
  if (args.size() != compiled.size())
    throw UserError("kernel was compiled for a different expression: " + a.str());
  for (size_t s = 0; s < args.size(); s++)
    if (!(args[s].format == compiled[s].format) || args[s].tensor.datatype() != compiled[s].tensor.datatype())
      throw UserError("kernel was compiled for other formats or types than " + args[s].tensor.name() + "'s");
  // Every input slot's variable is accessed in `a` (a transposed input has two slots,
  // its own format's and the one the kernel reads: both are filled from its storage).
  std::vector<const ExprNode*> accesses = rhsAccesses(a);
  if (a.mask.defined()) accesses.push_back(a.mask.access.get());
  for (const KernelSlot& slot : args) {
    if (slot.isOutput || slot.snapshotOfOutput) continue;
    bool found = false;
    for (const ExprNode* n : accesses) found = found || n->tensor == slot.tensor;
    if (!found) throw InternalError("slot of " + slot.tensor.name() + " in " + a.str() + " has no access");
  }
  return SlotPlan{std::move(args)};
}

}  // namespace

AssignmentFacts::AssignmentFacts(const Assignment& a) {
  Recorder r{words_};
  walkAssignment(a, r);
}

bool AssignmentFacts::matches(const Assignment& a) const {
  Matcher m{words_};
  walkAssignment(a, m);
  return m.same && m.w == words_.size();
}

BoundSlots SlotPlanCache::bind(const Assignment& a, const KernelSlots& compiled, const StagePlanner& planner,
                               const RunBindings& storage) {
  std::shared_ptr<const Entry> entry;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    entry = last_;
  }
  if (!entry || !entry->facts.matches(a)) {
    auto fresh = std::make_shared<Entry>(Entry{AssignmentFacts(a), std::make_shared<SlotPlan>(planSlots(a, compiled, planner))});
    std::lock_guard<std::mutex> lock(mutex_);
    last_ = fresh;
    entry = std::move(fresh);
  }
  const SlotPlan& plan = *entry->plan;
  BoundSlots b{entry->plan, std::vector<std::shared_ptr<TensorImpl>>(plan.slots.size())};
  for (size_t s = 0; s < plan.slots.size(); s++) {
    const KernelSlot& slot = plan.slots[s];
    if (slot.isOutput) b.tensors[s] = storage.at(a.lhsNode().tensor);
    else if (!slot.snapshotOfOutput) b.tensors[s] = storage.at(slot.tensor);
  }
  return b;
}

}  // namespace tessel
