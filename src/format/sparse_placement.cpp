// Entry placement for sparse distributions: see sparse_placement.h.
#include "format/sparse_placement.h"

#include <algorithm>
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

/// Coordinate blocks of dimension t by non-zeros: coordinate c goes to the part of the
/// non-zeros before it, nonZeroPart(#entries with coordinate < c), so the blocks are
/// contiguous, cover [0, n), and a coordinate without entries joins the next one's part.
std::vector<Extent> nonZeroBlocks(const std::vector<int64_t>& sortedCoords, int64_t n, int parts) {
  const auto nnz = static_cast<int64_t>(sortedCoords.size());
  std::vector<Extent> blocks(static_cast<size_t>(parts));
  if (nnz == 0) {  // nothing to balance: equal coordinate blocks
    for (int q = 0; q < parts; q++) blocks[static_cast<size_t>(q)] = blockOf(n, parts, q);
    return blocks;
  }
  // lo of each part: after the distinct coordinate before the first one reaching it.
  std::vector<int64_t> lo(static_cast<size_t>(parts) + 1, -1);
  lo[0] = 0;
  int64_t prev = -1;  // the previous distinct coordinate
  for (int64_t s = 0; s < nnz;) {
    const int64_t c = sortedCoords[static_cast<size_t>(s)];
    const int part = nonZeroPart(s, parts, nnz);
    for (int q = 1; q <= part; q++)
      if (lo[static_cast<size_t>(q)] < 0) lo[static_cast<size_t>(q)] = prev + 1;
    prev = c;
    while (s < nnz && sortedCoords[static_cast<size_t>(s)] == c) s++;
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

}  // namespace

EntryPlacement placeEntries(const std::vector<int64_t>& dims, const std::vector<int64_t>& coords,
                            const Distribution& dist, const Grid& grid) {
  const auto order = static_cast<int64_t>(dims.size());
  const int64_t nnz = order == 0 ? 0 : static_cast<int64_t>(coords.size()) / order;
  EntryPlacement p;
  p.gridOrder = grid.order();
  p.at.assign(static_cast<size_t>(nnz * p.gridOrder), -1);
  p.blocks.resize(static_cast<size_t>(p.gridOrder));
  p.entryBlocks.resize(static_cast<size_t>(p.gridOrder));
  if (!dist.defined()) return p;
  const DistributionStatement& st = dist.levels().at(0);
  if (static_cast<int64_t>(st.tensorNames.size()) != order || static_cast<int>(st.machine.size()) != grid.order())
    throw InternalError("placeEntries: the distribution does not fit the tensor and grid (check it first)");
  auto coord = [&](int64_t e, int t) { return coords[static_cast<size_t>(e * order + t)]; };
  for (int d = 0; d < grid.order(); d++) {
    const MachineDim& m = st.machine[static_cast<size_t>(d)];
    const int parts = grid.dim(d);
    auto set = [&](int64_t e, int w) { p.at[static_cast<size_t>(e * p.gridOrder + d)] = w; };
    if (m.kind == MachineDim::Kind::Broadcast) continue;
    if (m.kind == MachineDim::Kind::Fix) {
      for (int64_t e = 0; e < nnz; e++) set(e, m.coord);
      continue;
    }
    if (m.tensorDim == MachineDim::kFused) {  // entries in storage order, split evenly
      auto& blocks = p.entryBlocks[static_cast<size_t>(d)];
      blocks.assign(static_cast<size_t>(parts), Extent{nnz, nnz});
      for (int64_t e = 0; e < nnz; e++) {
        int q = nonZeroPart(e, parts, nnz);
        set(e, q);
        auto& b = blocks[static_cast<size_t>(q)];
        if (b.lo == nnz) b.lo = e;
        b.hi = e + 1;
      }
      for (auto& b : blocks)
        if (b.lo == nnz) b = {nnz, nnz};
      continue;
    }
    const int t = m.tensorDim;
    const int64_t n = dims[static_cast<size_t>(t)];
    auto& blocks = p.blocks[static_cast<size_t>(d)];
    if (m.nonZeros) {
      std::vector<int64_t> cs(static_cast<size_t>(nnz));
      for (int64_t e = 0; e < nnz; e++) cs[static_cast<size_t>(e)] = coord(e, t);
      std::sort(cs.begin(), cs.end());
      blocks = nonZeroBlocks(cs, n, parts);
      for (int64_t e = 0; e < nnz; e++) set(e, partOf(blocks, coord(e, t)));
    } else {
      for (int q = 0; q < parts; q++) blocks.push_back(blockOf(n, parts, q));
      const int64_t size = std::max<int64_t>(1, (n + parts - 1) / parts);
      for (int64_t e = 0; e < nnz; e++) set(e, static_cast<int>(coord(e, t) / size));
    }
  }
  return p;
}

std::optional<std::vector<Extent>> placedBox(const EntryPlacement& p, const std::vector<int64_t>& dims,
                                             const std::vector<int64_t>& coords, const Distribution& dist,
                                             const std::vector<int>& coord) {
  std::vector<Extent> box;
  for (int64_t n : dims) box.push_back({0, n});
  if (!dist.defined()) return box;
  const DistributionStatement& st = dist.levels().at(0);
  const auto order = static_cast<int64_t>(dims.size());
  for (int d = 0; d < p.gridOrder; d++) {
    const MachineDim& m = st.machine[static_cast<size_t>(d)];
    const int c = coord[static_cast<size_t>(d)];
    if (m.kind == MachineDim::Kind::Fix && c != m.coord) return std::nullopt;
    if (m.kind != MachineDim::Kind::Partition) continue;
    if (m.tensorDim == MachineDim::kFused) {
      const Extent entries = p.entryBlocks[static_cast<size_t>(d)][static_cast<size_t>(c)];
      if (entries.size() == 0) {
        box[0] = {0, 0};
      } else {
        box[0] = {coords[static_cast<size_t>(entries.lo * order)], coords[static_cast<size_t>((entries.hi - 1) * order)] + 1};
      }
    } else {
      box[static_cast<size_t>(m.tensorDim)] = p.blocks[static_cast<size_t>(d)][static_cast<size_t>(c)];
    }
  }
  return box;
}

}  // namespace tessel
