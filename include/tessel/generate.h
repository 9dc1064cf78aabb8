// Deterministic synthetic tensors (same seed, same data on every machine).
//
// Every generator uses only splitmix64 and integer (or exactly rounded, contraction-free)
// arithmetic, never std:: distributions or libm, so a (spec, seed) pair names one tensor
// everywhere. Values are uniform in [-1, 1) unless stated otherwise. Every generator checks
// its arguments and its estimated memory (at most kGenerateMaxBytes) before allocating and
// throws a UserError when they are absurd.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessel/coo.h"
#include "tessel/error.h"

namespace tessel {

/// A malformed generator spec ("KIND:ARGS") or absurd generator arguments.
class GenerateError : public UserError {
 public:
  explicit GenerateError(const std::string& msg) : UserError(msg) {}
};

/// The most memory (bytes) a generated tensor may need: 8 GiB.
inline constexpr int64_t kGenerateMaxBytes = int64_t{8} << 30;

/// rows x cols matrix with about `nnzPerRow` entries per row at uniformly random
/// columns (distinct within a row), values uniform in [-1, 1). Rows in order, columns
/// sorted within a row.
CooData generateUniformMatrix(int64_t rows, int64_t cols, double nnzPerRow, uint64_t seed);
/// n x n banded matrix: entries (i, j) with |i - j| <= halfBandwidth, row-major order.
/// Every interior row has 2*halfBandwidth+1 non-zeros, so growing n with a fixed band is
/// SpDISTAL's weak-scaling SpMV input (constant work per row, neighbour-only communication
/// under a row distribution).
CooData generateBandedMatrix(int64_t n, int64_t halfBandwidth, uint64_t seed);
/// Uniform random tensor of any order with `nnz` distinct entries (insertion order).
CooData generateUniformTensor(const std::vector<int64_t>& dims, int64_t nnz, uint64_t seed);
/// Uniform random tensor of any order with exactly round(density * prod(dims)) distinct
/// entries, sorted row-major (lexicographically by coordinate). density in [0, 1].
CooData generateDensityTensor(const std::vector<int64_t>& dims, double density, uint64_t seed);
/// Fully dense tensor with random values.
CooData generateDense(const std::vector<int64_t>& dims, uint64_t seed);

/// R-MAT / Kronecker power-law graph (Graph500 generator without vertex scrambling):
/// 2^scale vertices, round(edgeFactor * 2^scale) directed edges, each placed by
/// descending `scale` levels of the adjacency matrix and picking a quadrant with
/// probabilities a (top left), b (top right), c (bottom left), 1-a-b-c (bottom right).
/// Duplicate edges are REMOVED (each (i, j) appears once, so nnz <= the edge count);
/// self-loops are KEPT (as in Graph500). Vertex ids are not permuted, so high-degree
/// vertices cluster at small ids (rows/columns near 0). Values are 1 (an adjacency
/// matrix); entries sorted row-major. scale in [0, 31].
CooData generateRmat(int scale, double edgeFactor, double a = 0.57, double b = 0.19, double c = 0.19,
                     uint64_t seed = 1);

/// A tensor (any order, typically 3) shaped like FROSTT data (nell, freebase): `nnz`
/// distinct entries whose index in every mode follows a Zipf law P(k-th most frequent
/// index) ~ 1/k^skew, so slice sizes are heavily skewed. The frequency ranks are mapped to
/// indices by a random permutation per mode, so heavy slices are scattered, not at 0.
/// skew = 0 is uniform; typical 0.5 .. 1.5. Entries sorted row-major. Each dimension is
/// at most 2^27. Throws GenerateError when `nnz` distinct entries cannot be found (too
/// many non-zeros for the skew).
CooData generateSkewedTensor(const std::vector<int64_t>& dims, int64_t nnz, double skew,
                             uint64_t seed);

/// The tool's spelling, "KIND:ARGS" with comma-separated ARGS:
///   uniform:ROWS,COLS,NNZ_PER_ROW        generateUniformMatrix
///   density:D1,D2[,D3...],DENSITY        generateDensityTensor
///   banded:N,HALF_BANDWIDTH              generateBandedMatrix
///   rmat:SCALE,EDGE_FACTOR[,A,B,C]       generateRmat (Graph500 a, b, c by default)
///   skewed:D1,D2,D3,NNZ[,SKEW]           generateSkewedTensor (skew 1 by default)
///   dense:D1[,D2...]                     generateDense
/// Throws GenerateError naming the kind and its expected arguments when malformed, and
/// before allocating when the tensor would be absurdly large.
CooData generateFromSpec(const std::string& spec, uint64_t seed);
/// One line per kind, as above (for help texts).
std::string generateSpecHelp();

}  // namespace tessel
