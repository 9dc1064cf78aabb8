// Kernel's compiler entry points (compile, emitC, loopOrder), implemented by the driver,
// and the StagePlanner a compiled kernel's runs split their assignments with.
#include <chrono>
#include <mutex>
#include <optional>

#include "driver/mask_form.h"
#include "driver/pipeline.h"
#include "driver/stages.h"
#include "runtime/kernel_stages.h"
#include "runtime/run_binding.h"
#include "tessel/kernel.h"
#include "tessel/tuning.h"

namespace tessel {

namespace {

/// The runtime's view of the compiler's argument slots.
KernelSlots slotsFrom(const std::vector<lower::TensorArg>& args) {
  KernelSlots slots;
  slots.reserve(args.size());
  for (const lower::TensorArg& t : args) slots.push_back(KernelSlot{t.tensor, t.format, t.isOutput, t.snapshotOfOutput});
  return slots;
}

/// `e` without storage: the cached split of a run must not keep the run's tensors
/// alive (a kernel lives in its output tensor). A run finds storage by variable anyway.
IndexExpr unbound(const IndexExpr& e) {
  if (!e.defined() || e.kind() == ExprKind::Literal) return e;
  const ExprNode& n = e.node();
  if (n.kind == ExprKind::Access) {
    if (!n.binding) return e;
    auto copy = std::make_shared<ExprNode>(n);
    copy->binding = nullptr;
    return IndexExpr(std::move(copy));
  }
  return withOperands(n, unbound(n.a), unbound(n.b));
}

Assignment unbound(Assignment a) {
  a.lhs = unbound(a.lhs);
  a.rhs = unbound(a.rhs);
  a.mask.access = unbound(a.mask.access);
  return a;
}

/// Splits and analyzes a run's assignment with the code that compiled the kernel.
class DriverPlanner final : public StagePlanner {
 public:
  DriverPlanner(Schedule schedule, MaskForm form) : schedule_(std::move(schedule)), form_(form) {}
  RunStages split(const Assignment& a, const std::vector<TensorVar>& kept) const override {
    // A kernel usually runs the same assignment again and again, which then splits the
    // same way onto the temporaries the last run kept: splitting (precompute, sums,
    // checks) cost a staged kernel about 10 us a run. The split depends on the
    // assignment's structure and variables only (AssignmentFacts), not on storage.
    std::lock_guard<std::mutex> lock(lastMutex_);
    if (last_ && last_->stages.temporaries == kept && last_->facts.matches(a)) return last_->stages;
    Assignment same = a;  // a run's mask takes the form compiled for, whatever its data
    if (same.mask.defined()) same.mask.form = form_;
    driver::Stages st = driver::splitStages(same, schedule_, &kept, driver::StageSchedules::Skip);
    RunStages stages{{}, std::move(st.temporaries)};
    for (const Assignment& x : st.assignments) stages.assignments.push_back(unbound(x));
    last_ = LastSplit{AssignmentFacts(a), std::move(stages)};
    return last_->stages;
  }
  KernelSlots slotsOf(const Assignment& stage) const override { return slotsFrom(lower::analyze(stage).args); }

 private:
  struct LastSplit {
    AssignmentFacts facts;
    RunStages stages;
  };
  Schedule schedule_;  // as compiled: a run splits its assignment the same way
  MaskForm form_;
  mutable std::mutex lastMutex_;
  mutable std::optional<LastSplit> last_;
};

}  // namespace

std::vector<IndexVar> Kernel::loopOrder(const Assignment& a) {
  // Of several stages (sums inside the expression), the one with the most loops.
  std::vector<IndexVar> best;
  const auto stages = driver::splitStages(driver::withMaskForm(a), {}, nullptr, driver::StageSchedules::Skip);
  for (const Assignment& x : stages.assignments) {
    std::vector<IndexVar> order = lower::analyze(x).order;
    if (order.size() > best.size() || best.empty()) best = std::move(order);
  }
  return best;
}

std::string Kernel::emitC(const Assignment& a, const Schedule& schedule) { return emitC(a, schedule, {}); }

std::string Kernel::emitC(const Assignment& a, const Schedule& schedule, const PassObserver& afterEachPass) {
  driver::PipelineOptions opt;
  opt.until = driver::PipelineOptions::Until::Source;
  opt.observe = afterEachPass;
  return driver::compilePipeline(driver::withMaskForm(a), schedule, opt).source;
}

std::shared_ptr<Kernel> Kernel::compile(const Assignment& given, const Schedule& schedule, const JitOptions& jit) {
  auto t0 = std::chrono::steady_clock::now();
  const Assignment a = driver::withMaskForm(given);
  driver::PipelineOptions opt;
  opt.jit = jit;
  // The host CPU's tuning decides the flags unless the caller gave them.
  if (opt.jit.flags.empty()) opt.jit.flags = hostTuning().jitFlags();
  driver::CompiledStages compiled = driver::compilePipeline(a, schedule, opt);
  std::shared_ptr<Kernel> k(new Kernel());
  k->impl_ = std::make_unique<Impl>();
  k->impl_->planner = std::make_shared<DriverPlanner>(schedule, a.mask.form);
  for (driver::CompiledStage& cs : compiled.stages) {
    Stage st;
    st.args = slotsFrom(cs.lowered.problem.args);
    st.module = std::move(cs.module);
    st.assemble = cs.assemble;
    st.compute = cs.compute;
    if (st.module) {
      st.memoryLimit = static_cast<int64_t*>(st.module->symbol("tessel_memory_limit"));
      st.refusedBytes = static_cast<int64_t*>(st.module->symbol("tessel_refused_bytes"));
    }
    k->impl_->stages.push_back(std::move(st));
  }
  k->source_ = std::move(compiled.source);
  k->compileSeconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return k;
}

}  // namespace tessel
