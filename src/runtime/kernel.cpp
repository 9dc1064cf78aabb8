// Kernel: lower -> emit C -> JIT, and running a compiled kernel on tensors.
#include "tessel/kernel.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <utility>

#include <omp.h>

#include "codegen/backend.h"
#include "lower/lower.h"
#include "runtime/run_binding.h"
#include "schedule/precompute_expr.h"
#include "tessel/error.h"
#include "tessel/runtime_abi.h"
#include "tessel/tensor.h"

namespace tessel {

/// One compiled loop nest: its tensor slots (as compiled) and entry points.
struct Stage {
  std::vector<lower::TensorArg> args;
  std::shared_ptr<JitModule> module;
  tessel_kernel_fn assemble = nullptr;
  tessel_kernel_fn compute = nullptr;
  std::shared_ptr<SlotPlanCache> slotPlans = std::make_shared<SlotPlanCache>();
};

struct Kernel::Impl {
  // The stages in order (see Stages): precomputed sub-expressions, the sum of `A += e`
  // with a sum in e, then the assignment itself.
  std::vector<Stage> stages;
  Schedule schedule;  // as compiled: a run splits its assignment the same way
  // The temporaries of the last run, whose arrays the next run writes into (fresh ones
  // would allocate and page-fault every run). Taken out while a run uses them, so
  // concurrent runs never share one.
  std::mutex keptMutex;
  std::vector<TensorBase> kept;
};

Kernel::~Kernel() = default;

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// A failed run leaves no partial result. A sparse `+=` gets its old entries back from
/// the snapshot it read (same format); any other output is left empty and valid (a dense
/// `+=` adds in place, and its old values are not kept anywhere).
void restoreAfterFailure(TensorBase& output, TensorBase* snapshot) {
  Storage& mine = output.impl()->storage;
  if (snapshot) {
    mine.swapArrays(snapshot->impl()->storage);  // the snapshot now owns (and frees) the partial arrays
    output.impl()->packed = true;
    return;
  }
  mine.release();
  output.setFromCoo(CooData{output.dims(), {}, {}});
}

void check(int rc, const std::string& phase, const std::string& output) {
  if (rc == TESSEL_OK) return;
  if (rc == TESSEL_ERR_OVERFLOW)
    throw OverflowError(phase + " of " + output +
                        ": a size does not fit the output format's index width (use 64-bit positions)");
  if (rc == TESSEL_ERR_NOMEM) throw Error(phase + " of " + output + ": out of memory");
  if (rc == TESSEL_ERR_BOUND)
    throw ScheduleError(phase + " of " + output + ": a bound() of the schedule does not hold for these tensors' sizes");
  throw InternalError(phase + " of " + output + " returned " + std::to_string(rc));
}

/// The assignments a kernel runs in order, each with its schedule:
///  - one per precompute of a sub-expression: t(..) = e into a dense temporary t, the
///    assignment then reading t(..) in e's place;
///  - for `A(..) += e` with a sum in e: T(..) = e, then A(..) += T(..), with T a
///    temporary in A's format (A = A_old + e in one loop nest would add A_old once per
///    iteration of the sum);
///  - the assignment itself.
/// The user's other schedule commands apply to the stage that computes the user's sum;
/// the others run on blocks of rows (a parallel schedule runs on any thread count).
/// Built the same way at compile and run time, so the stages' tensor slots match.
struct Stages {
  std::vector<Assignment> assignments;
  std::vector<Schedule> schedules;
  std::vector<std::string> what;        ///< headers of the stages' C code
  std::vector<TensorBase> temporaries;  ///< in order of creation
};

/// A tensor without arrays. (TensorBase's constructor would allocate an empty tensor's:
/// a zeroed pos array per level, all of a dense tensor's values.)
TensorBase arrayless(const std::string& name, Datatype type, const std::vector<int64_t>& dims, const Format& format) {
  if (dims.size() > TESSEL_MAX_ORDER) return TensorBase(name, type, dims, format);  // which says why not
  auto impl = std::make_shared<TensorImpl>();
  impl->name = name;
  impl->type = type;
  impl->dims = dims;
  impl->format = format;
  impl->storage.raw.order = static_cast<int32_t>(dims.size());
  std::copy(dims.begin(), dims.end(), std::begin(impl->storage.raw.dims));
  return TensorBase(impl);
}

/// Temporaries for a run: one from the last run (`kept`, consumed in order) when it
/// fits, else a new one. For compiling (`kept` null): without arrays.
TensorBase temporaryLike(const std::vector<TensorBase>* kept, size_t k, const std::string& name, Datatype type,
                         const std::vector<int64_t>& dims, const Format& format) {
  if (!kept) return arrayless(name, type, dims, format);
  if (k < kept->size()) {
    const TensorBase& t = (*kept)[k];
    if (t.name() == name && t.datatype() == type && t.dims() == dims && t.format() == format) return t;
  }
  return TensorBase(name, type, dims, format);
}

/// `kept`: for a run, the last run's temporaries; null when compiling.
Stages stagesOf(const Assignment& a, const Schedule& schedule, const std::vector<TensorBase>* kept = nullptr) {
  Stages st;
  Assignment rest = a;
  Schedule own;
  for (const ScheduleCommand& c : schedule.commands()) {
    if (!precomputesExpr(c)) {
      own.add(c);
      continue;
    }
    auto [producer, consumer] = splitPrecompute(rest, c, [&](const PrecomputeTemporary& p) {
      return temporaryLike(kept, st.temporaries.size(), p.name, p.type, p.dims,
                           DenseFormat(static_cast<int>(p.dims.size())));
    });
    TensorBase t(producer.lhsNode().tensor);
    st.assignments.push_back(producer);
    st.schedules.push_back(defaultParallelSchedule(producer, 2));
    st.what.push_back("the precomputed sub-expression, " + producer.str());
    st.temporaries.push_back(t);
    rest = consumer;
  }
  if (!accumulatesSum(rest)) {
    st.assignments.push_back(rest);
    st.schedules.push_back(own);
    st.what.push_back(rest.str());
    return st;
  }
  const ExprNode& lhs = rest.lhsNode();
  TensorBase out(lhs.tensor);
  // The temporary takes A's name: a schedule's error about the sum's output then names A.
  TensorBase partial = temporaryLike(kept, st.temporaries.size(), out.name(), out.datatype(), out.dims(), out.format());
  Assignment sum{Access(partial, lhs.vars), rest.rhs, false};
  Assignment add{Access(out, lhs.vars), Access(partial, lhs.vars), true};
  st.assignments.insert(st.assignments.end(), {sum, add});
  st.schedules.insert(st.schedules.end(), {own, defaultParallelSchedule(add, 2)});
  st.what.insert(st.what.end(), {"the sum into a temporary, " + sum.str(), "adding it in, " + rest.lhs.str() + " += (the sum)"});
  st.temporaries.push_back(partial);
  return st;
}

/// Each stage lowered with its schedule, and its C source (headed by what the stage
/// does when there are several).
std::vector<std::pair<lower::LoweredKernel, std::string>> lowerStages(const Assignment& a, const Schedule& schedule) {
  Stages st = stagesOf(a, schedule);
  size_t n = st.assignments.size();
  std::vector<std::pair<lower::LoweredKernel, std::string>> out;
  for (size_t k = 0; k < n; k++) {
    lower::LoweredKernel lk = lower::lower(st.assignments[k], st.schedules[k]);
    std::string head;
    if (n > 1)
      head = "/* ---- stage " + std::to_string(k + 1) + " of " + std::to_string(n) + ": " + st.what[k] + " */\n";
    std::string source = head + codegen::backendNamed("c").emit(lk.module);
    out.emplace_back(std::move(lk), std::move(source));
  }
  return out;
}

}  // namespace

std::vector<IndexVar> Kernel::loopOrder(const Assignment& a) { return lower::analyze(stagesOf(a, {}).assignments[0]).order; }

std::string Kernel::emitC(const Assignment& a, const Schedule& schedule) {
  std::string out;
  for (const auto& [lk, source] : lowerStages(a, schedule)) out += source;
  return out;
}

bool Kernel::cacheHit() const {
  for (const Stage& s : impl_->stages)
    if (!s.module->cacheHit()) return false;
  return true;
}

std::shared_ptr<Kernel> Kernel::compile(const Assignment& a, const Schedule& schedule, const JitOptions& jit) {
  auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<Kernel> k(new Kernel());
  k->impl_ = std::make_unique<Impl>();
  k->impl_->schedule = schedule;
  for (auto& [lk, source] : lowerStages(a, schedule)) {
    Stage st;
    st.module = jitCompile(source, jit);
    st.args = lk.problem.args;
    st.assemble = reinterpret_cast<tessel_kernel_fn>(st.module->symbol("tessel_assemble"));
    st.compute = reinterpret_cast<tessel_kernel_fn>(st.module->symbol("tessel_compute"));
    k->impl_->stages.push_back(std::move(st));
    k->source_ += source;
  }
  k->compileSeconds_ = secondsSince(t0);
  return k;
}

namespace {

/// A tensor like `t`, named `name`, without arrays.
TensorBase arraylessLike(const TensorBase& t, const std::string& name) {
  return arrayless(name, t.datatype(), t.dims(), t.format());
}

/// A sparse `+=` reads the output's entries from before the run in a snapshot: the
/// output's own arrays, moved (not copied) into a tensor of its format. The output then
/// writes into the arrays of its previous snapshot (Storage::spare), when it has them.
TensorBase takeOldEntries(TensorBase& output, const std::string& name) {
  if (!output.impl()->pendingVals.empty()) output.pack();
  TensorBase old = arraylessLike(output, name);
  Storage& mine = output.impl()->storage;
  old.impl()->storage.swapArrays(mine);
  old.impl()->packed = true;
  if (mine.spare) {
    mine.swapArrays(*mine.spare);
    mine.spare.reset();
  }
  return old;
}

/// After a successful `+=`, the snapshot's arrays become the output's spare.
void keepAsSpare(TensorBase& output, TensorBase& snapshot) {
  auto spare = std::make_unique<Storage>();
  spare->swapArrays(snapshot.impl()->storage);
  output.impl()->storage.spare = std::move(spare);
}

/// Binds `a`'s tensors to a compiled stage, assembles its output and computes it.
RunTimes runStage(const Stage& stage, const Assignment& a) {
  BoundSlots bound = stage.slotPlans->bind(a, stage.args);
  const std::vector<lower::TensorArg>& slots = bound.plan->slots;

  std::vector<TensorBase> temps;   // converted inputs (storage is heap-held)
  std::optional<TensorBase> snapshot;  // the output before a sparse +=
  std::vector<tessel_tensor_t*> ptrs(slots.size());
  TensorBase output(bound.tensors[0]);
  if (output.impl()->storage.external)  // e.g. mapBinary(): read-only, not malloc'd
    throw UserError("tensor " + output.name() +
                    " is mapped read-only from a file and cannot be an output; convert() it first");
  std::optional<size_t> snapshotSlot;
  for (size_t s = 1; s < slots.size(); s++) {
    const lower::TensorArg& arg = slots[s];
    TensorBase t(bound.tensors[s]);
    if (arg.snapshotOfOutput) {
      snapshotSlot = s;
      continue;
    }
    if (!t.impl()->pendingVals.empty()) t.pack();
    if (!(arg.format == t.format())) {  // the kernel reads another format (transposed)
      temps.push_back(t.convert(arg.format, t.name() + "_converted"));
      ptrs[s] = &temps.back().raw();
    } else {
      ptrs[s] = &t.raw();
    }
  }
  // Last, once nothing before the kernel can throw: the output's arrays move to it.
  if (snapshotSlot) {
    snapshot = takeOldEntries(output, TensorBase(bound.tensors[*snapshotSlot]).name());
    ptrs[*snapshotSlot] = &snapshot->raw();
  }
  // += into a dense output adds into its values where they are: pack inserted ones.
  if (accumulatesInPlace(a) && !output.impl()->pendingVals.empty()) output.pack();
  output.impl()->pendingCoords.clear();
  output.impl()->pendingVals.clear();
  // The output's arrays stay for the kernel to reuse (tessel_take): an output computed
  // again then neither allocates nor page-faults. Its first result is trimmed to size.
  Storage& storage = output.impl()->storage;
  storage.rebase();  // the kernel takes plain blocks (its arrays may start inside them after)
  ptrs[0] = &output.raw();

  RunTimes times;
  auto t0 = std::chrono::steady_clock::now();
  auto restore = [&] { restoreAfterFailure(output, snapshot ? &*snapshot : nullptr); };
  int rc = stage.assemble(ptrs.data());
  if (rc != TESSEL_OK) restore();
  check(rc, "assembly", output.name());
  times.assembleSeconds = secondsSince(t0);
  t0 = std::chrono::steady_clock::now();
  rc = stage.compute(ptrs.data());
  if (rc != TESSEL_OK) restore();
  check(rc, "compute", output.name());
  times.computeSeconds = secondsSince(t0);
  if (!storage.recomputed) output.shrinkToFit();
  storage.recomputed = true;
  output.impl()->packed = true;
  if (snapshot) keepAsSpare(output, *snapshot);
  return times;
}

}  // namespace

RunTimes Kernel::run(const Assignment& a, int threads) const {
  if (threads < 0) throw UserError("thread count must be positive, got " + std::to_string(threads));
  if (threads > 0) omp_set_num_threads(threads);
  const std::vector<Stage>& stages = impl_->stages;
  // A failure in an early stage leaves the output as it was: those write temporaries.
  std::vector<TensorBase> kept;
  {
    std::lock_guard<std::mutex> lock(impl_->keptMutex);
    kept.swap(impl_->kept);
  }
  Stages st = stagesOf(a, impl_->schedule, &kept);
  if (st.assignments.size() != stages.size())
    throw UserError("kernel was compiled for a different expression: " + a.str());
  RunTimes total;
  for (size_t k = 0; k < stages.size(); k++) {
    RunTimes t = runStage(stages[k], st.assignments[k]);
    total.assembleSeconds += t.assembleSeconds;
    total.computeSeconds += t.computeSeconds;
  }
  std::lock_guard<std::mutex> lock(impl_->keptMutex);
  impl_->kept = std::move(st.temporaries);
  return total;
}

}  // namespace tessel
