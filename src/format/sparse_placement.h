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
  /// Per machine dimension that partitions the fused space: each part's [lo, hi) of the
  /// leading dimension's coordinates its entries span ({0, 0} when it has none).
  std::vector<std::vector<Extent>> fusedSpans;

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

/// What a placement needs to know of all the entries, which ranks that each hold some of
/// them can add up (SpDISTAL's distributed placement): no rank needs every entry.
struct PlacementSummary {
  int64_t nnz = 0;  ///< entries in all
  /// Per machine dimension partitioning tensor dimension t by non-zeros: the number of
  /// entries with each coordinate of t (dims[t] counters); empty otherwise.
  std::vector<std::vector<int64_t>> counts;
  /// Per machine dimension partitioning the fused space: fusedSpans of EntryPlacement.
  std::vector<std::vector<Extent>> fusedSpans;
};

/// An empty summary of the right shape for `dist` on `grid`: counters of zero, spans
/// {hi: -1, lo: max} ready for a min/max over entries (see addToSummary).
PlacementSummary emptySummary(const std::vector<int64_t>& dims, const Distribution& dist, const Grid& grid);
/// Adds entry number `s` (in storage order over all entries; summary.nnz already the
/// total) with coordinates `coord` to the summary.
void addToSummary(PlacementSummary& summary, const Distribution& dist, const Grid& grid, const int64_t* coord,
                  int64_t s);
/// Turns a summary's spans that saw no entry into {0, 0} (after combining summaries).
void finishSummary(PlacementSummary& summary);
/// The blocks of a placement from the summary of all entries (`at` left empty: see
/// entryPart).
EntryPlacement placementFromSummary(const std::vector<int64_t>& dims, const Distribution& dist, const Grid& grid,
                                    const PlacementSummary& summary);
/// The grid coordinate along machine dimension d holding entry number `s` (storage
/// order) with coordinates `coord`; -1: every coordinate (broadcast).
int entryPart(const EntryPlacement& p, const std::vector<int64_t>& dims, const Distribution& dist, const Grid& grid,
              int d, const int64_t* coord, int64_t s, int64_t nnz);

/// The box (per tensor dimension, [lo, hi)) of the piece the rank at `coord` holds: the
/// blocks of its partitioned dimensions; for a fused partition, the leading dimension's
/// coordinates its entries span (empty when it has none). Nothing when a fixed machine
/// dimension puts the tensor elsewhere.
std::optional<std::vector<Extent>> placedBox(const EntryPlacement& p, const std::vector<int64_t>& dims,
                                             const Distribution& dist, const std::vector<int>& coord);
/// The same (the entries' coordinates are no longer needed: the spans are recorded).
inline std::optional<std::vector<Extent>> placedBox(const EntryPlacement& p, const std::vector<int64_t>& dims,
                                                    const std::vector<int64_t>& /*coords*/, const Distribution& dist,
                                                    const std::vector<int>& coord) {
  return placedBox(p, dims, dist, coord);
}

}  // namespace tessel
