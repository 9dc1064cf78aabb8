// The pieces of a sparse tensor on the ranks of a grid (SpDISTAL): each rank's entries
// under a distribution (format/sparse_placement decides), as a tensor in the tensor's
// own format whose coordinates are relative to the rank's box.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runtime/spmd/box.h"
#include "tessel/distributed.h"
#include "tessel/distribution.h"
#include "tessel/tensor.h"

namespace tessel::spmd {

struct SparsePiece {
  std::optional<Box> box;  ///< global [lo, hi) per dimension; none: the rank holds nothing
  TensorBase tensor;       ///< entries inside `box`, coordinates minus box lo; t's name and format
  int64_t nnz = 0;
};

/// Distribution::checkFormat for a tensor stored in `format` (which levels are dense,
/// which mode each stores). DistributionError naming `tensor`.
void checkSparseDistribution(const std::string& tensor, const Distribution& dist, const Format& format);

/// Every rank's piece of `t` (packed) under `dist` on `grid`: every box, and the tensor
/// of rank `only` (of every rank when -1; the others' stay undefined). Checks the
/// distribution against the tensor's order, the grid and its format (DistributionError
/// naming `t`). Every rank derives the same pieces from the same data (the placement is
/// pure), so a rank that read the whole tensor keeps only its own.
std::vector<SparsePiece> sparsePieces(const TensorBase& t, const Distribution& dist, const Grid& grid,
                                      int only = -1);

/// After a run: sparse output `t` holds `piece` (its leaf's result) over `box` on this
/// rank; `all` is every rank's box (kept when `t` is partitioned by non-zeros: its pieces
/// are where its owners computed).
void setSparseOutput(const DistTensor& t, const std::optional<Box>& box, TensorBase piece,
                     std::vector<std::optional<Box>> all);
struct Piece;
/// The same from the executor's output piece (moved from).
void setSparseOutput(const DistTensor& t, Piece& piece, std::vector<std::optional<Box>> all);

}  // namespace tessel::spmd
