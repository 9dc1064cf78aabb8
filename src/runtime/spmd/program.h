// An SPMD program: what every rank of a distributed kernel runs, as data. The distributed
// lowering (lower/distribute_loops) builds it from an assignment, its distributed schedule,
// the machine and the tensors' distributions; the executor (spmd/executor) runs it.
//
//   forall io, jo distributed over the grid          (loops[0..distributedLoops))
//     forall ko in steps                             (loops[distributedLoops..])
//       fetch B(io-block, ko-block), C(ko-block, jo-block) from their owners   (communicate)
//       leaf kernel on the local boxes               (a generated kernel, or BLAS)
//     reduce A's box into its owners
//
// The loops above the leaf only pick blocks of the index spaces; the leaf kernel sees
// dense local tensors exactly the size of its blocks. That is why the outer program is
// data (it runs a few hundred steps at most) and the leaf is compiled code.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessel/distribution.h"
#include "tessel/format.h"

namespace tessel::spmd {

/// One split of an index space: the loop `loop` picks a block of the range left by the
/// splits before it (divide: `amount` near-equal blocks; split: blocks of `amount`).
struct SplitStep {
  int loop = -1;
  bool divide = true;
  int64_t amount = 1;
  /// Set per run when a tensor partitioned by non-zeros (xy->~x) decides the blocks:
  /// block b is dataBlocks[b] (absolute coordinates) instead of an equal division.
  std::vector<Extent> dataBlocks;
};

/// An index variable of the assignment: its extent and the splits the outer loops make.
struct IndexSpace {
  std::string name;
  int64_t extent = 0;
  std::vector<SplitStep> chain;  ///< outer loops in loop order
};

/// A loop above the leaf kernel.
struct Loop {
  std::string name;
  int gridDim = -1;           ///< distributed over this machine dimension; -1: a sequential step
  int64_t count = 1;          ///< iterations
  std::vector<int> rotateBy;  ///< rotate: iteration s uses block (s + sum of these loops) mod count
};

/// A tensor of the assignment as the program moves it.
struct TensorUse {
  std::string name;
  bool output = false;
  std::vector<int> dimSpace;  ///< the index space of each dimension
  std::vector<int64_t> dims;
  int level = -1;             ///< communicated at loops[level] (its box is fetched / reduced there)
  Grid grid;                  ///< the grid its distribution refers to
  Distribution distribution;  ///< none: replicated on every rank
  bool sparse = false;        ///< its pieces are sparse tensors (never copied: owner computes)
  /// A sparse tensor's format (an output's: each rank's leaf assembles its piece in it).
  std::optional<Format> sparseFormat;
  /// When the right-hand side is one product term: another input indexed (in its dimension
  /// rowFilterDim) by this tensor's first index. Only the rows whose coordinates it holds
  /// contribute, so a sparse fetch asks for those alone (SpGEMM's rows of the right operand).
  int rowFilter = -1, rowFilterDim = -1;
  /// Per rank, its piece's box, when the data decides them (a partition by non-zeros);
  /// empty: from the distribution.
  std::vector<std::optional<std::vector<Extent>>> dataPieces;
};

/// A leaf computed by BLAS: out(X, Y) (+)= a(X|K) * b(K|Y), groups of adjacent dimensions.
struct GemmLeaf {
  int out = -1, a = -1, b = -1;       ///< tensor indices
  std::vector<int> x, y, k;           ///< index spaces of each group
  bool transA = false, transB = false;  ///< a is (K, X); b is (Y, K)
};

struct Program {
  Grid grid;
  int threads = 1;
  std::vector<IndexSpace> spaces;
  std::vector<Loop> loops;
  int distributedLoops = 0;
  std::vector<TensorUse> tensors;  ///< the output first
  bool accumulate = false;         ///< `+=`: the output keeps its values
  /// The leaf assignments over local tensors, e.g. "A(i,j) = B(i,k) * C(k,j)". A term
  /// that does not use a summed variable split above the leaf is added once, not once
  /// per block: its variant runs only where each space of `firstBlockOf` is at its
  /// first block (A(i,j) = B(i,k)*C(k,j) + D(i,j) with k split: two variants).
  struct LeafVariant {
    std::string text;
    std::vector<int> firstBlockOf;
    std::string schedule;  ///< its single-node schedule (the leaf commands on its own loops)
    /// How the distributed schedule's loops are named in the leaf ("ii is i"), for errors.
    std::string renamed;
  };
  std::vector<LeafVariant> leaves;
  bool gemm = false;
  GemmLeaf gemmLeaf;
};

/// [lo, hi) of one index space at the loop values `values` (one per loop; only loops
/// <= `level` are read): the block its splits pick.
Extent rangeAt(const Program& p, int space, int level, const std::vector<int64_t>& values);
/// The box of tensor `t` at `level` (its block in each dimension).
std::vector<Extent> boxAt(const Program& p, int t, int level, const std::vector<int64_t>& values);
/// The block index loop `l` picks at iteration `s` of it (rotation applied), given the
/// values of the loops before it.
int64_t blockIndex(const Program& p, int l, int64_t s, const std::vector<int64_t>& values);

/// Pseudo-code of the program with its communication (`tessel emit` with -m).
std::string print(const Program& p);

}  // namespace tessel::spmd
