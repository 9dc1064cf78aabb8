// Machines and tensor distribution notation (DISTAL §3).
//
//   Grid g = Grid::parse("2x2");                 // 4 ranks as a 2 x 2 grid
//   Distribution d = Distribution::parse("xy->x");  // rows in blocks over the grid's one dimension
//   d.check("B", 2, Grid(4));                     // DistributionError if invalid
//   d.piece({7, 5}, Grid(4), {3})                 // rank 3's block of a 7 x 5 matrix: rows [6, 7)
//
// A statement T_X -> Y names each dimension of the tensor (X, one letter each) and of the
// machine (Y): a machine dimension named like a tensor dimension partitions it into
// contiguous blocks, a digit fixes the tensor to that coordinate of the machine
// dimension, `*` broadcasts (replicates) it over the dimension. Valid when |X| is the
// tensor's order, |Y| the grid's, neither repeats a name, every name of Y is in X, and
// every fixed coordinate lies in its dimension. A hierarchical distribution lists one
// statement per level of a hierarchical machine: "[xy->xy, xy->x]".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessel {

/// A grid of ranks: Grid(4), Grid(2, 2), Grid(2, 2, 2). Ranks are numbered row-major
/// (the last dimension fastest), as MPI_Cart_create numbers them.
class Grid {
 public:
  Grid() = default;
  explicit Grid(std::vector<int> dims);
  template <typename... D>
  explicit Grid(int first, D... rest) : Grid(std::vector<int>{first, static_cast<int>(rest)...}) {}
  /// "4", "2x2", "2x2x2" (the tool's -m). DistributionError naming the text otherwise.
  static Grid parse(const std::string& text);

  const std::vector<int>& dims() const { return dims_; }
  int order() const { return static_cast<int>(dims_.size()); }
  int dim(int d) const { return dims_.at(d); }
  /// Number of ranks.
  int size() const;
  std::vector<int> coordOf(int rank) const;
  int rankOf(const std::vector<int>& coord) const;
  /// "2x2".
  std::string str() const;
  bool operator==(const Grid& o) const { return dims_ == o.dims_; }

 private:
  std::vector<int> dims_;
};

/// Half-open range [lo, hi) of one tensor dimension.
struct Extent {
  int64_t lo = 0, hi = 0;
  int64_t size() const { return hi > lo ? hi - lo : 0; }
  bool operator==(const Extent& o) const { return lo == o.lo && hi == o.hi; }
};

/// [lo, hi) of piece `p` of `pieces` contiguous blocks of [0, n): blocks of ceil(n /
/// pieces), as divide(i, io, ii, pieces) cuts its loop, so a distribution and the loop
/// that owner-computes over it agree. Trailing pieces may be empty.
Extent blockOf(int64_t n, int pieces, int p);

/// One machine dimension of a statement: partition a tensor dimension, fix, broadcast.
struct MachineDim {
  enum class Kind { Partition, Fix, Broadcast } kind = Kind::Broadcast;
  /// Partition: the tensor dimension it partitions, or kFused: the fused leading dimensions.
  int tensorDim = -1;
  int coord = 0;           ///< Fix: the machine coordinate the tensor lives at
  bool nonZeros = false;   ///< Partition by non-zeros (`~x`): blocks of about equal non-zeros
  static constexpr int kFused = -2;
};

/// One statement T_X -> Y. SpDISTAL's sparse forms: `xy->~x` (rows in contiguous blocks
/// of about equal non-zeros), `(xy)->~f` (the leading dimensions fused into one space of
/// non-zeros, split evenly across row boundaries; `(xy)z->~f` splits tubes, `(xyz)->~f`
/// entries). These depend on the tensor's non-zeros: see sparsePieces (runtime).
struct DistributionStatement {
  std::string tensorNames;        ///< X: one letter per tensor dimension
  int fused = 0;                  ///< the leading tensor dimensions fused, `(xy)`: 0 or >= 2
  char fusedName = 0;             ///< the letter Y names the fused space by
  std::vector<MachineDim> machine;  ///< Y: one per machine dimension
  std::string str() const;
  /// Some machine dimension partitions by non-zeros: pieces depend on the data.
  bool byNonZeros() const;
};

/// A tensor distribution: one statement, or one per level of a hierarchical machine.
class Distribution {
 public:
  Distribution() = default;  ///< none: the tensor is not distributed
  explicit Distribution(std::vector<DistributionStatement> levels) : levels_(std::move(levels)) {}
  /// "xy->xy", "xy->x", "xy->xy0", "xy->xy*", "x->*", "[xy->xy, xy->x]". Throws
  /// DistributionError naming the text and what is wrong with it.
  static Distribution parse(const std::string& text);

  bool defined() const { return !levels_.empty(); }
  const std::vector<DistributionStatement>& levels() const { return levels_; }
  std::string str() const;

  /// The validity rules for `tensor` of order `order` on `grid` (the outermost level;
  /// a hierarchical distribution on a one-level machine is refused). DistributionError
  /// naming the tensor, the statement and the rule.
  void check(const std::string& tensor, int order, const Grid& grid) const;

  /// check() and the rules that need the format: a partition by non-zeros needs a
  /// tensor with a sparse level (every entry of an all-dense one is stored); fused
  /// dimensions must be the leading levels in storage order. `levelIsDense[k]` and
  /// `modeOfLevel[k]` describe the format's levels.
  void checkFormat(const std::string& tensor, const std::vector<bool>& levelIsDense,
                   const std::vector<int>& modeOfLevel) const;
  /// The outermost statement partitions by non-zeros (pieces depend on the data).
  bool byNonZeros() const { return !levels_.empty() && levels_[0].byNonZeros(); }

  /// The block of a tensor of `dims` held by the rank at `coord` of `grid` under the
  /// outermost statement: per tensor dimension, [lo, hi). Nothing when the rank holds
  /// no piece (a fixed dimension at another coordinate). Call check() first. A
  /// partition by non-zeros has no such block: DistributionError (see sparsePieces).
  std::optional<std::vector<Extent>> piece(const std::vector<int64_t>& dims, const Grid& grid,
                                           const std::vector<int>& coord) const;
  /// Ranks of `grid` holding the entry at `coords` (several when broadcast).
  std::vector<int> owners(const std::vector<int64_t>& dims, const Grid& grid,
                          const std::vector<int64_t>& coords) const;

 private:
  std::vector<DistributionStatement> levels_;
};

}  // namespace tessel
