// Entry placement for sparse distributions: see sparse_placement.h.
#include "format/sparse_placement.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "tessel/error.h"

namespace tessel {

int nonZeroPart(int64_t s, int parts, int64_t n) {
  if (n <= 0 || parts <= 1) return 0;
  auto q = static_cast<int64_t>((static_cast<__int128>(s) * parts) / n);
  return static_cast<int>(std::clamp<int64_t>(q, 0, parts - 1));
}

bool EntryPlacement::held(int64_t e, const std::vector<int>& coord) const {
  for (int d = 0; d < gridOrder; d++) {
    int w = where(e, d);
    if (w >= 0 && w != coord[static_cast<size_t>(d)]) return false;
  }
  return true;
}

namespace {

/// Coordinate blocks of a dimension of n coordinates by non-zeros, from the number of
/// entries with each coordinate: coordinate c goes to the part of the non-zeros before
/// it, nonZeroPart(#entries with coordinate < c), so the blocks are contiguous, cover
/// [0, n), and a coordinate without entries joins the next one's part.
std::vector<Extent> nonZeroBlocks(const std::vector<int64_t>& counts, int64_t n, int parts) {
  int64_t nnz = 0;
  for (int64_t k : counts) nnz += k;
  std::vector<Extent> blocks(static_cast<size_t>(parts));
  if (nnz == 0) {  // nothing to balance: equal coordinate blocks
    for (int q = 0; q < parts; q++) blocks[static_cast<size_t>(q)] = blockOf(n, parts, q);
    return blocks;
  }
  // lo of each part: after the distinct coordinate before the first one reaching it.
  std::vector<int64_t> lo(static_cast<size_t>(parts) + 1, -1);
  lo[0] = 0;
  int64_t prev = -1;  // the previous coordinate with entries
  int64_t s = 0;      // entries before coordinate c
  for (int64_t c = 0; c < static_cast<int64_t>(counts.size()); c++) {
    if (counts[static_cast<size_t>(c)] == 0) continue;
    const int part = nonZeroPart(s, parts, nnz);
    for (int q = 1; q <= part; q++)
      if (lo[static_cast<size_t>(q)] < 0) lo[static_cast<size_t>(q)] = prev + 1;
    prev = c;
    s += counts[static_cast<size_t>(c)];
  }
  for (int q = 1; q < parts; q++)
    if (lo[static_cast<size_t>(q)] < 0) lo[static_cast<size_t>(q)] = prev + 1;  // parts past the last entry
  lo[static_cast<size_t>(parts)] = n;
  for (int q = 0; q < parts; q++) {
    int64_t a = std::min(lo[static_cast<size_t>(q)], n), b = std::min(lo[static_cast<size_t>(q) + 1], n);
    blocks[static_cast<size_t>(q)] = {a, std::max(a, b)};
  }
  blocks[static_cast<size_t>(parts) - 1].hi = n;  // the tail (no entries) is the last part's
  return blocks;
}

/// The block holding coordinate c: the last one starting at or before c (an empty block
/// is followed by one starting where it does).
int partOf(const std::vector<Extent>& blocks, int64_t c) {
  auto it = std::upper_bound(blocks.begin(), blocks.end(), c, [](int64_t v, const Extent& b) { return v < b.lo; });
  return std::max(0, static_cast<int>(it - blocks.begin()) - 1);
}

const DistributionStatement& statementFor(const std::vector<int64_t>& dims, const Distribution& dist,
                                         const Grid& grid) {
  const DistributionStatement& st = dist.levels().at(0);
  if (st.tensorNames.size() != dims.size() || static_cast<int>(st.machine.size()) != grid.order())
    throw InternalError("sparse placement: the distribution does not fit the tensor and grid (check it first)");
  return st;
}

bool fused(const MachineDim& m) { return m.kind == MachineDim::Kind::Partition && m.tensorDim == MachineDim::kFused; }
bool byCounts(const MachineDim& m) {
  return m.kind == MachineDim::Kind::Partition && m.tensorDim != MachineDim::kFused && m.nonZeros;
}

}  // namespace

PlacementSummary emptySummary(const std::vector<int64_t>& dims, const Distribution& dist, const Grid& grid) {
  PlacementSummary sum;
  sum.counts.resize(static_cast<size_t>(grid.order()));
  sum.fusedSpans.resize(static_cast<size_t>(grid.order()));
  if (!dist.defined()) return sum;
  const DistributionStatement& st = statementFor(dims, dist, grid);
  for (int d = 0; d < grid.order(); d++) {
    const MachineDim& m = st.machine[static_cast<size_t>(d)];
    if (byCounts(m)) sum.counts[static_cast<size_t>(d)].assign(static_cast<size_t>(dims[static_cast<size_t>(m.tensorDim)]), 0);
    if (fused(m))
      sum.fusedSpans[static_cast<size_t>(d)].assign(static_cast<size_t>(grid.dim(d)),
                                                    Extent{std::numeric_limits<int64_t>::max(), -1});
  }
  return sum;
}

void addToSummary(PlacementSummary& sum, const Distribution& dist, const Grid& grid, const int64_t* coord, int64_t s) {
  if (!dist.defined()) return;
  const DistributionStatement& st = dist.levels().at(0);
  for (int d = 0; d < grid.order(); d++) {
    const MachineDim& m = st.machine[static_cast<size_t>(d)];
    if (byCounts(m)) sum.counts[static_cast<size_t>(d)][static_cast<size_t>(coord[m.tensorDim])]++;
    if (fused(m)) {
      Extent& span = sum.fusedSpans[static_cast<size_t>(d)][static_cast<size_t>(nonZeroPart(s, grid.dim(d), sum.nnz))];
      span.lo = std::min(span.lo, coord[0]);
      span.hi = std::max(span.hi, coord[0] + 1);
    }
  }
}

void finishSummary(PlacementSummary& sum) {
  for (auto& spans : sum.fusedSpans)
    for (Extent& e : spans)
      if (e.hi < 0) e = {0, 0};
}

EntryPlacement placementFromSummary(const std::vector<int64_t>& dims, const Distribution& dist, const Grid& grid,
                                    const PlacementSummary& sum) {
  EntryPlacement p;
  p.gridOrder = grid.order();
  p.blocks.resize(static_cast<size_t>(p.gridOrder));
  p.entryBlocks.resize(static_cast<size_t>(p.gridOrder));
  p.fusedSpans.resize(static_cast<size_t>(p.gridOrder));
  if (!dist.defined()) return p;
  const DistributionStatement& st = statementFor(dims, dist, grid);
  const int64_t nnz = sum.nnz;
  for (int d = 0; d < grid.order(); d++) {
    const MachineDim& m = st.machine[static_cast<size_t>(d)];
    const int parts = grid.dim(d);
    if (m.kind != MachineDim::Kind::Partition) continue;
    if (fused(m)) {  // entries in storage order, split evenly: part q gets [ceil(q n / P), ceil((q+1) n / P))
      auto& blocks = p.entryBlocks[static_cast<size_t>(d)];
      for (int q = 0; q < parts; q++) {
        auto first = [&](int k) {
          return static_cast<int64_t>((static_cast<__int128>(k) * nnz + parts - 1) / parts);
        };
        Extent b{first(q), first(q + 1)};
        blocks.push_back(b.lo < b.hi ? b : Extent{nnz, nnz});
      }
      p.fusedSpans[static_cast<size_t>(d)] = sum.fusedSpans[static_cast<size_t>(d)];
      continue;
    }
    const int64_t n = dims[static_cast<size_t>(m.tensorDim)];
    auto& blocks = p.blocks[static_cast<size_t>(d)];
    if (m.nonZeros) {
      blocks = nonZeroBlocks(sum.counts[static_cast<size_t>(d)], n, parts);
    } else {
      for (int q = 0; q < parts; q++) blocks.push_back(blockOf(n, parts, q));
    }
  }
  return p;
}

int entryPart(const EntryPlacement& p, const std::vector<int64_t>& dims, const Distribution& dist, const Grid& grid,
              int d, const int64_t* coord, int64_t s, int64_t nnz) {
  if (!dist.defined()) return -1;
  const MachineDim& m = dist.levels().at(0).machine[static_cast<size_t>(d)];
  const int parts = grid.dim(d);
  if (m.kind == MachineDim::Kind::Broadcast) return -1;
  if (m.kind == MachineDim::Kind::Fix) return m.coord;
  if (fused(m)) return nonZeroPart(s, parts, nnz);
  const int t = m.tensorDim;
  if (m.nonZeros) return partOf(p.blocks[static_cast<size_t>(d)], coord[t]);
  const int64_t size = std::max<int64_t>(1, (dims[static_cast<size_t>(t)] + parts - 1) / parts);
  return static_cast<int>(coord[t] / size);
}

EntryPlacement placeEntries(const std::vector<int64_t>& dims, const std::vector<int64_t>& coords,
                            const Distribution& dist, const Grid& grid) {
  const auto order = static_cast<int64_t>(dims.size());
  const int64_t nnz = order == 0 ? 0 : static_cast<int64_t>(coords.size()) / order;
  PlacementSummary sum = emptySummary(dims, dist, grid);
  sum.nnz = nnz;
  for (int64_t e = 0; e < nnz; e++) addToSummary(sum, dist, grid, coords.data() + e * order, e);
  finishSummary(sum);
  EntryPlacement p = placementFromSummary(dims, dist, grid, sum);
  p.at.assign(static_cast<size_t>(nnz * p.gridOrder), -1);
  for (int64_t e = 0; e < nnz; e++)
    for (int d = 0; d < p.gridOrder; d++)
      p.at[static_cast<size_t>(e * p.gridOrder + d)] = entryPart(p, dims, dist, grid, d, coords.data() + e * order, e, nnz);
  return p;
}

std::optional<std::vector<Extent>> placedBox(const EntryPlacement& p, const std::vector<int64_t>& dims,
                                             const Distribution& dist, const std::vector<int>& coord) {
  std::vector<Extent> box;
  for (int64_t n : dims) box.push_back({0, n});
  if (!dist.defined()) return box;
  const DistributionStatement& st = dist.levels().at(0);
  for (int d = 0; d < p.gridOrder; d++) {
    const MachineDim& m = st.machine[static_cast<size_t>(d)];
    const int c = coord[static_cast<size_t>(d)];
    if (m.kind == MachineDim::Kind::Fix && c != m.coord) return std::nullopt;
    if (m.kind != MachineDim::Kind::Partition) continue;
    if (m.tensorDim == MachineDim::kFused) {
      box[0] = p.fusedSpans[static_cast<size_t>(d)][static_cast<size_t>(c)];
    } else {
      box[static_cast<size_t>(m.tensorDim)] = p.blocks[static_cast<size_t>(d)][static_cast<size_t>(c)];
    }
  }
  return box;
}

}  // namespace tessel
