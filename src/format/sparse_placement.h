// Where the entries of a sparse tensor go under a distribution (SpDISTAL §III): universe
// partitions (equal coordinate blocks, as divide() cuts loops), partitions by non-zeros
// (`xy->~x`: contiguous coordinate blocks of about equal non-zeros) and fused non-zero
// partitions (`(xy)->~f`: the entries in storage order split evenly, across row
// boundaries). One function decides, so the runtime's pieces and `tessel plot -d` agree.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tessel/distribution.h"

namespace tessel {

/// The part of `parts` holding non-zero number `s` (0-based, in order) of `n` split evenly:
/// floor(s * parts / n), at most parts - 1.
int nonZeroPart(int64_t s, int parts, int64_t n);

/// Where each entry goes along each machine dimension of the outermost statement.
struct EntryPlacement {
  int gridOrder = 0;
  /// Per entry (in the order given), per machine dimension: the grid coordinate that
  /// holds it, or -1 when every coordinate does (broadcast).
  std::vector<int> at;
  /// Per machine dimension that partitions one tensor dimension (universe or by
  /// non-zeros): each part's [lo, hi) of that dimension's coordinates; they cover it.
  std::vector<std::vector<Extent>> blocks;
  /// Per machine dimension that partitions the fused space: each part's [lo, hi) of
  /// entry numbers (in storage order).
  std::vector<std::vector<Extent>> entryBlocks;

  int where(int64_t e, int d) const { return at[static_cast<size_t>(e * gridOrder + d)]; }
  /// The rank at `coord` holds entry e.
  bool held(int64_t e, const std::vector<int>& coord) const;
};

/// Place the `nnz` entries of a tensor of `dims` (`coords`: nnz * order, entry-major, in
/// storage order: sorted by the fused leading dimensions when a statement fuses them)
/// under `dist` (checked for `grid`) on `grid`. A tensor with no distribution is held
/// whole by every rank.
EntryPlacement placeEntries(const std::vector<int64_t>& dims, const std::vector<int64_t>& coords,
                            const Distribution& dist, const Grid& grid);

/// The box (per tensor dimension, [lo, hi)) of the piece the rank at `coord` holds: the
/// blocks of its partitioned dimensions; for a fused partition, the leading dimension's
/// coordinates its entries span (empty when it has none). Nothing when a fixed machine
/// dimension puts the tensor elsewhere.
std::optional<std::vector<Extent>> placedBox(const EntryPlacement& p, const std::vector<int64_t>& dims,
                                             const std::vector<int64_t>& coords, const Distribution& dist,
                                             const std::vector<int>& coord);

}  // namespace tessel
