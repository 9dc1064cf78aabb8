// Running a compiled Kernel on tensors: binding a run's tensors to each stage's slots,
// assembling and computing. Compiling is the driver's (driver/kernel_compile.cpp).
#include "tessel/kernel.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <utility>

#include <omp.h>

#include "io/io_util.h"
#include "runtime/bindings.h"
#include "runtime/kernel_stages.h"
#include "runtime/run_binding.h"
#include "tessel/error.h"
#include "tessel/runtime_abi.h"
#include "tessel/tensor.h"

namespace tessel {

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

void check(int rc, const std::string& phase, const std::string& output, const Stage& stage) {
  if (rc == TESSEL_OK) return;
  if (rc == TESSEL_ERR_NOMEM && stage.refusedBytes && *stage.refusedBytes > 0)  // over the limit, not malloc
    io_detail::requireMemory(static_cast<long double>(*stage.refusedBytes),
                             phase + " of " + output + ": a workspace or temporary array");
  if (rc == TESSEL_ERR_OVERFLOW)
    throw OverflowError(phase + " of " + output +
                        ": a size does not fit the output format's index width (use 64-bit positions)");
  if (rc == TESSEL_ERR_NOMEM) throw OutOfMemoryError(phase + " of " + output + ": out of memory");
  if (rc == TESSEL_ERR_BOUND)
    throw ScheduleError(phase + " of " + output + ": a bound() of the schedule does not hold for these tensors' sizes");
  throw InternalError(phase + " of " + output + " returned " + std::to_string(rc));
}

}  // namespace

bool Kernel::cacheHit() const {
  for (const Stage& s : impl_->stages)
    if (!s.module->cacheHit()) return false;
  return true;
}

namespace {

/// A sparse `+=` reads the output's entries from before the run in a snapshot: the
/// output's own arrays, moved (not copied) into a tensor of its format. The output then
/// writes into the arrays of its previous snapshot (Storage::spare), when it has them.
TensorBase takeOldEntries(TensorBase& output, const TensorVar& snapshot) {
  if (!output.impl()->pendingVals.empty()) output.pack();
  TensorBase old = arraylessTensor(snapshot);
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

/// The kernel allocates the output's leading dense levels (all its values when every
/// level is dense, else the next level's pos array) at sizes taken from the inputs:
/// check them against the memory limit before the generated code asks malloc.
void requireOutputMemory(const TensorBase& t) {
  const Format& f = t.format();
  long double positions = 1;
  int k = 0;
  for (; k < t.order() && f.level(k) == LevelKind::Dense; k++)
    positions *= static_cast<long double>(t.dims()[static_cast<size_t>(f.modeOfLevel(k))]);
  if (k == 0) return;
  const bool allDense = k == t.order();
  const long double bytes = allDense ? positions * datatypeSize(t.datatype())
                                     : (positions + 1) * (f.posWidth() == IndexWidth::W32 ? 4 : 8);
  if (bytes <= static_cast<long double>(io_detail::memoryLimit())) return;  // no message to build
  char count[32];
  std::snprintf(count, sizeof count, "%.0Lf", positions);
  io_detail::requireMemory(bytes, "output " + t.name() + ": " +
                                      (allDense ? std::string("dense values") : "level " + std::to_string(k) + " pos array") +
                                      " for " + count + " positions");
}

/// Binds `a`'s tensors to a compiled stage, assembles its output and computes it.
RunTimes runStage(const Stage& stage, const Assignment& a, const StagePlanner& planner, const RunBindings& bindings) {
  BoundSlots bound = stage.slotPlans->bind(a, stage.args, planner, bindings);
  const KernelSlots& slots = bound.plan->slots;

  std::vector<TensorBase> temps;   // converted inputs (storage is heap-held)
  std::optional<TensorBase> snapshot;  // the output before a sparse +=
  std::vector<tessel_tensor_t*> ptrs(slots.size());
  TensorBase output(bound.tensors[0]);
  if (output.impl()->storage.external)  // e.g. mapBinary(): read-only, not malloc'd
    throw UserError("tensor " + output.name() +
                    " is mapped read-only from a file and cannot be an output; convert() it first");
  requireOutputMemory(output);
  std::optional<size_t> snapshotSlot;
  for (size_t s = 1; s < slots.size(); s++) {
    const KernelSlot& arg = slots[s];
    if (arg.snapshotOfOutput) {
      snapshotSlot = s;
      continue;
    }
    TensorBase t(bound.tensors[s]);
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
    snapshot = takeOldEntries(output, slots[*snapshotSlot].tensor);
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
  if (stage.memoryLimit) {
    *stage.memoryLimit = io_detail::memoryLimit();
    *stage.refusedBytes = 0;
  }
  int rc = stage.assemble(ptrs.data());
  if (rc != TESSEL_OK) restore();
  check(rc, "assembly", output.name(), stage);
  times.assembleSeconds = secondsSince(t0);
  t0 = std::chrono::steady_clock::now();
  rc = stage.compute(ptrs.data());
  if (rc != TESSEL_OK) restore();
  check(rc, "compute", output.name(), stage);
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
  // Storage by variable: the tensors of `a` (its bound accesses), then the temporaries.
  RunBindings storage = RunBindings::of(a);
  // A failure in an early stage leaves the output as it was: those write temporaries.
  std::vector<std::shared_ptr<TensorImpl>> kept;
  {
    std::lock_guard<std::mutex> lock(impl_->keptMutex);
    kept.swap(impl_->kept);
  }
  std::vector<TensorVar> keptVars;
  for (const auto& t : kept) keptVars.push_back(t->var);
  RunStages st = impl_->planner->split(a, keptVars);
  if (st.assignments.size() != stages.size())
    throw UserError("kernel was compiled for a different expression: " + a.str());
  std::vector<std::shared_ptr<TensorImpl>> temporaries;
  for (const TensorVar& v : st.temporaries) {
    auto same = std::find_if(kept.begin(), kept.end(), [&](const auto& t) { return t->var == v; });
    temporaries.push_back(same != kept.end() ? *same : TensorBase::forVar(v).impl());
    storage.bind(v, temporaries.back());
  }
  RunTimes total;
  for (size_t k = 0; k < stages.size(); k++) {
    RunTimes t = runStage(stages[k], st.assignments[k], *impl_->planner, storage);
    total.assembleSeconds += t.assembleSeconds;
    total.computeSeconds += t.computeSeconds;
  }
  std::lock_guard<std::mutex> lock(impl_->keptMutex);
  impl_->kept = std::move(temporaries);
  return total;
}

}  // namespace tessel
