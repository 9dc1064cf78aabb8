// Timing compiled CSR SpMV kernels on synthetic rows, for the host CPU's tuning (the
// driver compiles the variants, src/driver/cpu_tuning.cpp; the runtime owns the data).
#pragma once

#include <cstdint>
#include <vector>

#include "tessel/runtime_abi.h"

namespace tessel::runtime {

/// A loaded kernel y(i) = B(i,j) * x(j), y dense, B CSR (int32 indices), x dense, all
/// float64, and the argument slot of each tensor.
struct SpmvKernel {
  tessel_kernel_fn assemble = nullptr;
  tessel_kernel_fn compute = nullptr;
  int ySlot = 0, bSlot = 1, xSlot = 2;
};

/// Rows whose lengths are uniform in [lo, hi], columns distinct within a row: near the
/// diagonal (within `band`, as a mesh's matrix) or anywhere (band 0, a graph's).
struct SyntheticRows {
  int64_t rows = 0, cols = 0;
  int lo = 1, hi = 1;
  int64_t band = 0;
  uint32_t seed = 1;
};

/// The least compute time (seconds) of `reps` runs of each kernel on the same rows and
/// x, the kernels interleaved after one warm-up run each. Throws EnvironmentError when
/// a kernel fails (out of memory).
std::vector<double> leastSpmvTimes(const std::vector<SpmvKernel>& kernels, const SyntheticRows& shape, int reps);

}  // namespace tessel::runtime
