// Runs an SPMD program on this rank: fetches the boxes each step needs from their owners,
// runs the leaf on the local boxes, reduces output boxes into their owners.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/spmd/box.h"
#include "runtime/spmd/program.h"
#include "tessel/error.h"
#include "tessel/tensor.h"

namespace tessel::spmd {

/// The computation at the leaf of the program, on contiguous row-major local blocks (one
/// per program tensor, each exactly its leaf box). It adds its result into data[0].
class Leaf {
 public:
  virtual ~Leaf() = default;
  /// Variant `v` of the program's leaves. With `overwrite`, data[0] holds no values yet
  /// and the leaf writes its result there instead of adding (only when canOverwrite).
  virtual void run(size_t v, const std::vector<Box>& boxes, const std::vector<double*>& data, bool overwrite) = 0;
  /// The leaf can write its result without reading the output first (dgemm's beta = 0):
  /// the executor then skips zeroing the output piece.
  virtual bool canOverwrite() const { return false; }
  /// Program tensor t is sparse: the leaf computes on this piece (kept until the next call).
  virtual void bindSparse(size_t t, const TensorBase& piece) {}
  /// A sparse output's piece over `box`: what the leaf assembled in its one run, or an
  /// empty tensor of the box's shape when it did not run here. Taken: the next run
  /// assembles anew.
  virtual TensorBase takeSparseOutput(const Box& box) { throw InternalError("this leaf computes dense outputs only"); }
};

/// A tensor's piece on this rank (row-major over its box), or none. A sparse tensor's
/// piece is a tensor in its format (coordinates relative to the box), data unused; it
/// is never moved, so every rank's box at its communicate level must be its piece (the
/// caller checks: DistributedKernel's requireSparseOwnerComputes).
struct Piece {
  std::optional<Box> box;
  double* data = nullptr;
  const TensorBase* sparse = nullptr;
  /// A sparse output's piece lands here when `collectSparseOutput` (the leaf assembles
  /// it; it is never reduced).
  bool collectSparseOutput = false;
  TensorBase sparseOutput;
};

struct ExecStats {
  double seconds = 0, computeSeconds = 0, commSeconds = 0;  // this rank
  std::vector<int64_t> bytesSent, bytesReceived, formulaBytes;  // per program tensor, this rank
  /// Per program tensor: point-to-point messages this rank sent, and the collectives it
  /// rooted (broadcasts; reductions and all-reductions, counted at their lowest member).
  std::vector<int64_t> messages, broadcasts, reductions;
};

/// Run `p` on this rank with the pieces of its tensors (in program order); a sparse
/// output's piece lands in pieces[0].sparseOutput. Collective.
ExecStats execute(const Program& p, Leaf& leaf, std::vector<Piece>& pieces);

/// The box of each rank's piece of tensor `t` (nothing for ranks without one).
std::vector<std::optional<Box>> piecesOf(const TensorUse& t);

}  // namespace tessel::spmd
