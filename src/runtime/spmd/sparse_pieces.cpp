// Pieces of a sparse tensor: see sparse_pieces.h.
#include "runtime/spmd/sparse_pieces.h"

#include <algorithm>
#include <numeric>

#include "format/level_format.h"
#include "format/sparse_placement.h"
#include "tessel/error.h"

namespace tessel::spmd {

void checkSparseDistribution(const std::string& tensor, const Distribution& dist, const Format& format) {
  std::vector<bool> dense;
  std::vector<int> modes;
  for (int k = 0; k < format.order(); k++) {
    dense.push_back(levelFormat(format, k).full() && !levelFormat(format, k).hasCrdArray());
    modes.push_back(format.modeOfLevel(k));
  }
  dist.checkFormat(tensor, dense, modes);
}

std::vector<SparsePiece> sparsePieces(const TensorBase& t, const Distribution& dist, const Grid& grid, int only) {
  const Format& f = t.format();
  const int order = t.order();
  dist.check(t.name(), order, grid);
  checkSparseDistribution(t.name(), dist, f);

  // The entries in lexicographic order of their coordinates (storage order of the fused
  // leading dimensions, which checkFormat requires to lead).
  const CooData all = t.toCoo();
  const int64_t nnz = all.nnz();
  std::vector<int64_t> perm(static_cast<size_t>(nnz));
  std::iota(perm.begin(), perm.end(), 0);
  auto c = [&](int64_t e, int m) { return all.coords[static_cast<size_t>(e * order + m)]; };
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
    for (int m = 0; m < order; m++)
      if (c(x, m) != c(y, m)) return c(x, m) < c(y, m);
    return false;
  });
  std::vector<int64_t> coords(static_cast<size_t>(nnz * order));
  for (int64_t k = 0; k < nnz; k++)
    for (int m = 0; m < order; m++) coords[static_cast<size_t>(k * order + m)] = c(perm[static_cast<size_t>(k)], m);

  const EntryPlacement place = placeEntries(t.dims(), coords, dist, grid);
  std::vector<SparsePiece> pieces(static_cast<size_t>(grid.size()));
  for (int q = 0; q < grid.size(); q++) {
    const std::vector<int> at = grid.coordOf(q);
    SparsePiece& p = pieces[static_cast<size_t>(q)];
    p.box = placedBox(place, t.dims(), coords, dist, at);
    if (!p.box || (only >= 0 && q != only)) continue;
    CooData local;
    for (const Extent& e : *p.box) local.dims.push_back(e.size());
    std::vector<int64_t> rel(static_cast<size_t>(order));
    for (int64_t k = 0; k < nnz; k++) {
      if (!place.held(k, at)) continue;
      for (int m = 0; m < order; m++)
        rel[static_cast<size_t>(m)] = coords[static_cast<size_t>(k * order + m)] - (*p.box)[static_cast<size_t>(m)].lo;
      local.add(rel, all.values[static_cast<size_t>(perm[static_cast<size_t>(k)])]);
    }
    p.nnz = local.nnz();
    p.tensor = TensorBase(t.name(), t.datatype(), local.dims, f);
    p.tensor.setFromCoo(local);
  }
  return pieces;
}

}  // namespace tessel::spmd
