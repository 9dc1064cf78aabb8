// Pieces of a sparse tensor: see sparse_pieces.h.
#include "runtime/spmd/sparse_pieces.h"

#include "format/level_format.h"
#include "format/sparse_placement.h"
#include "runtime/spmd/dist_files.h"
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
  const CooData all = sortedLexicographically(t.toCoo());
  const int64_t nnz = all.nnz();
  const std::vector<int64_t>& coords = all.coords;

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
      local.add(rel, all.values[static_cast<size_t>(k)]);
    }
    p.nnz = local.nnz();
    p.tensor = TensorBase(t.name(), t.datatype(), local.dims, f);
    p.tensor.setFromCoo(local);
  }
  return pieces;
}

}  // namespace tessel::spmd
