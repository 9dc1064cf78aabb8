// Kernel: lower -> emit C -> JIT, and running a compiled kernel on tensors.
#include "tessel/kernel.h"

#include <chrono>
#include <cstdlib>

#include <omp.h>

#include "codegen/codegen_c.h"
#include "lower/lower.h"
#include "tessel/error.h"
#include "tessel/runtime_abi.h"
#include "tessel/tensor.h"

namespace tessel {

struct Kernel::Impl {
  std::vector<lower::TensorArg> args;  // as compiled
  tessel_kernel_fn assemble = nullptr;
  tessel_kernel_fn compute = nullptr;
};

Kernel::~Kernel() = default;

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// A failed run leaves the output empty and valid: no partial result.
void emptyAfterFailure(TensorBase& output) {
  output.impl()->storage.release();
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

}  // namespace

std::vector<IndexVar> Kernel::loopOrder(const Assignment& a) { return lower::analyze(a).order; }

std::string Kernel::emitC(const Assignment& a, const Schedule& schedule) {
  return codegen::emitC(lower::lower(a, schedule).module);
}

std::shared_ptr<Kernel> Kernel::compile(const Assignment& a, const Schedule& schedule, const JitOptions& jit) {
  auto t0 = std::chrono::steady_clock::now();
  lower::LoweredKernel lk = lower::lower(a, schedule);
  std::shared_ptr<Kernel> k(new Kernel());
  k->source_ = codegen::emitC(lk.module);
  k->module_ = jitCompile(k->source_, jit);
  k->impl_ = std::make_unique<Impl>();
  k->impl_->args = lk.problem.args;
  k->impl_->assemble = reinterpret_cast<tessel_kernel_fn>(k->module_->symbol("tessel_assemble"));
  k->impl_->compute = reinterpret_cast<tessel_kernel_fn>(k->module_->symbol("tessel_compute"));
  k->compileSeconds_ = secondsSince(t0);
  return k;
}

RunTimes Kernel::run(const Assignment& a, int threads) const {
  if (threads < 0) throw UserError("thread count must be positive, got " + std::to_string(threads));
  if (threads > 0) omp_set_num_threads(threads);
  lower::Problem p = lower::analyze(a);
  const auto& compiled = impl_->args;
  if (p.args.size() != compiled.size())
    throw UserError("kernel was compiled for a different expression: " + a.str());
  for (size_t s = 0; s < p.args.size(); s++)
    if (!(p.args[s].format == compiled[s].format) || p.args[s].tensor->type != compiled[s].tensor->type)
      throw UserError("kernel was compiled for other formats or types than " + p.args[s].tensor->name + "'s");

  std::vector<TensorBase> temps;  // converted inputs and the += snapshot (storage is heap-held)
  std::vector<tessel_tensor_t*> ptrs(p.args.size());
  TensorBase output(p.args[0].tensor);
  for (size_t s = 1; s < p.args.size(); s++) {
    const lower::TensorArg& arg = p.args[s];
    TensorBase t(arg.tensor);
    if (arg.snapshotOfOutput) {
      if (!output.impl()->pendingVals.empty()) output.pack();
      temps.push_back(output.convert(output.format(), t.name()));
      ptrs[s] = &temps.back().raw();
      continue;
    }
    if (!t.impl()->pendingVals.empty()) t.pack();
    if (arg.converted()) {
      temps.push_back(t.convert(arg.format, t.name() + "_converted"));
      ptrs[s] = &temps.back().raw();
    } else {
      ptrs[s] = &t.raw();
    }
  }
  if (output.impl()->storage.external)  // e.g. mapBinary(): read-only, not malloc'd
    throw UserError("tensor " + output.name() +
                    " is mapped read-only from a file and cannot be an output; convert() it first");
  output.impl()->pendingCoords.clear();
  output.impl()->pendingVals.clear();
  // The output's arrays stay for the kernel to reuse (tessel_take): an output computed
  // again then neither allocates nor page-faults. Its first result is trimmed to size.
  Storage& storage = output.impl()->storage;
  ptrs[0] = &output.raw();

  RunTimes times;
  auto t0 = std::chrono::steady_clock::now();
  int rc = impl_->assemble(ptrs.data());
  if (rc != TESSEL_OK) emptyAfterFailure(output);
  check(rc, "assembly", output.name());
  times.assembleSeconds = secondsSince(t0);
  t0 = std::chrono::steady_clock::now();
  rc = impl_->compute(ptrs.data());
  if (rc != TESSEL_OK) emptyAfterFailure(output);
  check(rc, "compute", output.name());
  times.computeSeconds = secondsSince(t0);
  if (!storage.recomputed) output.shrinkToFit();
  storage.recomputed = true;
  output.impl()->packed = true;
  return times;
}

}  // namespace tessel
