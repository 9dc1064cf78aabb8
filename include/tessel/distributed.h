// Distributed tensor algebra over MPI (DISTAL): the same assignment runs on the ranks of a
// machine grid, each tensor distributed by the tensor distribution notation
// (tessel/distribution.h), the loops distributed by the schedule.
//
//   Machine m{Grid(2, 2)};                                  // under mpirun -np 4
//   DistTensor A("A", {n, n}, "xy->xy", m.grid), B(...), C(...);
//   B.fill([](const std::vector<int64_t>& c) { return ...; });   // each rank its piece
//   auto k = DistributedKernel::compile("A(i,j) = B(i,k) * C(k,j)", {A, B, C}, m,
//       "distribute({i,j},{io,jo},{ii,ji}),split(k,ko,ki,256),reorder(ko,ii,ji,ki),"
//       "communicate(A,jo),communicate({B,C},ko),substitute({ii,ji,ki},blas)");
//   DistRunStats s = k->run({A, B, C});                      // collective
//   CooData all = A.gather();                               // rank 0 gets every entry
//
// Without a launcher the process is a 1-rank machine and needs no MPI. Every call here is
// collective over all ranks unless it says otherwise; errors that every rank sees alike
// (bad notation, distribution, schedule) are thrown on every rank.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessel/coo.h"
#include "tessel/distribution.h"
#include "tessel/format.h"
#include "tessel/tensor.h"

namespace tessel {

namespace spmd {
struct Program;
}

/// The ranks (a grid) and the threads inside each rank.
struct Machine {
  Grid grid;
  int threads = 1;
  /// -m text ("4", "2x2", "2x2x2"); DistributionError if it does not fit the ranks running.
  static Machine parse(const std::string& text, int threads = 1);
  /// Every rank running, as a one-dimensional grid.
  static Machine world(int threads = 1);
  /// DistributionError (on every rank) unless the grid has as many ranks as are running.
  void checkRanks() const;
};

/// This process's rank and the number of ranks (1 without a launcher).
int worldRank();
int worldSize();
/// Ends MPI at the end of main (no-op without MPI).
void finalizeDistributed();
/// Collective: the largest (`largest`) or smallest value over all ranks.
int64_t reduceOverRanks(int64_t v, bool largest);
/// Collective: the sum of `v` over all ranks.
int64_t sumOverRanks(int64_t v);
/// Ends every rank with `code`, printing `message` (one line) from this one. Not collective.
[[noreturn]] void abortAllRanks(int code, const std::string& message);
/// Collective: the sum of `v` over all ranks (added in rank order: the same on every rank).
double sumOverRanks(double v);
/// Collective: the element-wise minimum over all ranks of equally long vectors, in place.
void minOverRanks(std::vector<int64_t>& v);
/// Collective: every rank's `mine` (any lengths) concatenated in rank order, on every rank
/// (MPI's allgatherv).
std::vector<int64_t> allGatherOverRanks(const std::vector<int64_t>& mine);
std::vector<double> allGatherOverRanks(const std::vector<double>& mine);
/// Collective: rank q's `out[r]` arrives as rank r's `result[q]` (MPI's alltoallv; `out`
/// has one vector, of any length, per rank).
std::vector<std::vector<int64_t>> exchangeOverRanks(const std::vector<std::vector<int64_t>>& out);
std::vector<std::vector<double>> exchangeOverRanks(const std::vector<std::vector<double>>& out);
/// Collective: runs `step`, which must not talk to other ranks, then agrees: when any
/// rank failed, every rank throws the lowest failing rank's error (same kind of
/// tessel::Error and message), so that a failure of one rank alone (a bad line in its
/// part of a file, its memory) does not leave the others waiting in a later collective.
void agreeOverRanks(const std::function<void()>& step);

/// A rank's share of a tensor file read in parallel (readTensorFilePart).
struct TensorFilePart {
  CooData entries;           ///< dims: the whole tensor's; entries: this rank's share, in file order
  int64_t totalEntries = 0;  ///< entries over all ranks (duplicates and mirrored symmetric entries counted)
};
/// Collective: reads a .mtx or .tns file in parallel (SuperTaco §4.4). Each rank parses
/// the lines whose first byte lies in its byte range of the file; together, rank by rank,
/// the shares are readTensorFile's entries in its order, and a bad line fails every rank
/// with the serial reader's "path:line" message. .gz, .tsb and .mtx array files are read
/// whole by every rank, which keeps an equal share.
TensorFilePart readTensorFilePart(const std::string& path);

/// A dense float64 tensor whose pieces live on the ranks that own them: this rank holds
/// its piece (row-major over its box) or nothing. A handle: copies share the piece.
class DistTensor {
 public:
  DistTensor() = default;
  /// `distribution` in the notation ("xy->xy", "x->*", ...) over `grid`; empty: every
  /// rank holds the whole tensor. Checked: DistributionError naming the tensor and rule.
  DistTensor(std::string name, std::vector<int64_t> dims, const std::string& distribution, Grid grid);
  DistTensor(std::string name, std::vector<int64_t> dims, Distribution distribution, Grid grid);
  /// A sparse tensor stored in `format` (CSR is Format::parse("ds")): each rank holds its
  /// piece as a tensor of that format, placed by setFromCoo (SpDISTAL). Distributions by
  /// non-zeros (xy->~x, (xy)->~f) are for sparse tensors only; checked against the format.
  DistTensor(std::string name, std::vector<int64_t> dims, const std::string& distribution, Grid grid, Format format);

  /// Stored in a sparse format (the constructor with a Format).
  bool sparse() const;
  /// This rank's piece of a sparse tensor, coordinates relative to piece()'s lo (an
  /// undefined handle when the rank holds none).
  const TensorBase& sparsePiece() const;
  /// The format of a sparse tensor's pieces.
  const Format& sparsePieceFormat() const;

  const std::string& name() const;
  const std::vector<int64_t>& dims() const;
  const Distribution& distribution() const;
  const Grid& grid() const;
  /// This rank's box, nothing when it holds no piece.
  const std::optional<std::vector<Extent>>& piece() const;
  /// Every rank's box (a partition by non-zeros knows them once the data is placed).
  std::vector<std::optional<std::vector<Extent>>> allPieces() const;
  double* data();
  const double* data() const;
  int64_t localSize() const;

  /// This rank's piece from a function of global coordinates (not collective; dense only).
  void fill(const std::function<double(const std::vector<int64_t>&)>& value);
  /// This rank keeps the entries of `global` in its piece (not collective: every rank
  /// passes the same data, e.g. each read the same file). A sparse tensor's pieces follow
  /// its non-zeros under a distribution by non-zeros.
  void setFromCoo(const CooData& global);
  /// Collective: every rank passes a share of the entries; the pieces are those
  /// setFromCoo gives for the shares' concatenation in rank order (duplicates summed in
  /// that order), found by sending each entry to the ranks holding it. A partition by
  /// non-zeros learns the global counts it needs by reductions (O(dimension) counters per
  /// rank), never by holding the whole tensor. DimensionError when dims differ.
  void setFromParts(const CooData& share);
  /// Collective: readTensorFilePart(path), then setFromParts; DimensionError naming the
  /// tensor when the file's dims differ from this tensor's.
  void read(const std::string& path);
  /// Collective: writes the tensor's non-zeros (dense) or stored entries (sparse) to one
  /// .mtx or .tns file, byte for byte what writeTensorFile of the gathered entries
  /// (row-major order) writes: each rank formats its piece (a replicated piece: the lowest
  /// rank holding it) and writes it at its offset (an exclusive scan of byte counts) into a
  /// temporary next to `path`, renamed into place once every rank succeeded; on any
  /// failure every rank throws and neither the temporary nor a partial `path` remains.
  /// Pieces not in row-major order across ranks are first moved to row blocks. .tsb and
  /// scalars are gathered to rank 0 and written there.
  void write(const std::string& path) const;
  /// Collective: rank 0 gets every entry (non-zeros, in row-major order), the others an
  /// empty CooData of the same dims.
  CooData gather() const;

  struct Impl;
  const std::shared_ptr<Impl>& impl() const { return impl_; }

 private:
  std::shared_ptr<Impl> impl_;
};

/// What a distributed run cost: the slowest rank's times, bytes moved.
struct DistRunStats {
  double seconds = 0;         ///< whole run, slowest rank
  double computeSeconds = 0;  ///< leaf kernels, slowest rank
  double commSeconds = 0;     ///< waiting for and packing transfers, slowest rank
  struct PerTensor {
    std::string name;
    int64_t maxBytesReceived = 0;  ///< over ranks (fetches, and reductions into owners)
    int64_t totalBytesSent = 0;    ///< over all ranks
    int64_t formulaBytes = 0;      ///< the schedule's formula: the boxes a rank needs, max over ranks
    int64_t messages = 0;          ///< point-to-point messages, all ranks
    int64_t broadcasts = 0;        ///< MPI broadcasts on sub-communicators (a SUMMA row, ...)
    int64_t reductions = 0;        ///< MPI reductions and all-reductions into owners
  };
  std::vector<PerTensor> tensors;
  int64_t maxBytesSent = 0;  ///< the most any rank sent
};

class DistributedKernel {
 public:
  /// Lower `expr` (index notation over the tensors' names; float64, plus_times) for
  /// `machine` with a distributed schedule (text: divide, split, reorder, distribute,
  /// communicate, rotate, substitute, and for the leaf parallelize, unroll, bound,
  /// precompute, loopfuse). An empty schedule owner-computes by the output's distribution;
  /// one of loopfuse commands alone adds them to that (Schedule::loopfuse). Compiles the
  /// leaf kernel once per node.
  static std::shared_ptr<DistributedKernel> compile(const std::string& expr, const std::vector<DistTensor>& tensors,
                                                    const Machine& machine, const std::string& schedule = "");
  /// Run on tensors with the names, dims and distributions compiled for. Collective.
  DistRunStats run(const std::vector<DistTensor>& tensors) const;
  /// The SPMD program with its communication, and the leaf's C code.
  std::string emit() const;
  /// The schedule used (the given one, or the default).
  const std::string& schedule() const;

  struct Impl;
  ~DistributedKernel();

 private:
  DistributedKernel() = default;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessel
