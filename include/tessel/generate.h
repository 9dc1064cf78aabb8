// Deterministic synthetic tensors (same seed, same data on every machine).
#pragma once

#include <cstdint>
#include <vector>

#include "tessel/coo.h"

namespace tessel {

/// rows x cols matrix with about `nnzPerRow` entries per row at uniformly random
/// columns (distinct within a row), values uniform in [-1, 1).
CooData generateUniformMatrix(int64_t rows, int64_t cols, double nnzPerRow, uint64_t seed);
/// n x n banded matrix: entries (i, j) with |i - j| <= halfBandwidth.
CooData generateBandedMatrix(int64_t n, int64_t halfBandwidth, uint64_t seed);
/// Uniform random tensor of any order with `nnz` distinct entries.
CooData generateUniformTensor(const std::vector<int64_t>& dims, int64_t nnz, uint64_t seed);
/// Fully dense tensor with random values.
CooData generateDense(const std::vector<int64_t>& dims, uint64_t seed);

}  // namespace tessel
