// Fetching the rows of a sparse operand that an iteration needs (SpDISTAL: a distributed
// SpGEMM fetches only the rows of its right operand that the local rows of the left one
// reference). Data-dependent: each rank names its rows, their holders send those rows'
// entries, the rank packs them into a tensor of the operand's format over its box.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/spmd/box.h"
#include "runtime/spmd/program.h"
#include "tessel/tensor.h"

namespace tessel::spmd {

struct SparseFetchStats {
  int64_t bytesSent = 0, bytesReceived = 0, messages = 0;
};

/// Collective over every rank of the program's grid (each passes its own arguments). This
/// rank gets the entries of sparse tensor `u` in `want` (global box) whose first
/// coordinate is in `rows` (sorted, distinct, inside want's first extent), from the ranks
/// holding them (each piece once: replicas along broadcast machine dimensions are asked
/// at their first coordinate), as a tensor of `u`'s format over `want` (coordinates
/// relative to its lo). `piece`/`pieceBox`: what this rank holds, to answer the others.
/// `wanted`: whether this rank asks at all (a rank whose own piece serves asks nothing,
/// but answers).
TensorBase fetchSparseRows(const TensorUse& u, const TensorBase* piece, const std::optional<Box>& pieceBox,
                           bool wanted, const Box& want, const std::vector<int64_t>& rows, SparseFetchStats& stats);

/// The distinct coordinates of dimension `dim` of a sparse piece (plus `lo`), sorted.
std::vector<int64_t> coordinatesOf(const TensorBase& piece, int dim, int64_t lo);

}  // namespace tessel::spmd
