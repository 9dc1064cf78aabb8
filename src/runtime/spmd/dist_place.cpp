// Placing a tensor from the shares of its entries that the ranks read (SuperTaco §4.5):
// every entry goes, by one all-to-all, to the ranks whose piece holds it, and the pieces
// come out exactly as DistTensor::setFromCoo places the whole tensor.
//
// Dense: the boxes are known; duplicates arrive in rank order (file order) and are
// summed in it, as setFromCoo sums them.
// Sparse: setFromCoo packs the whole tensor (summing duplicates), then places its
// entries in lexicographic order (format/sparse_placement). Here the entries first move
// to row blocks balanced by entries (every duplicate of a coordinate on one rank, in
// file order), each rank packs its block the same way, so the row blocks in rank order
// are the packed entries in that order, and entry number s is known from a scan of the
// blocks' sizes. A placement summary (counts per coordinate of a dimension partitioned
// by non-zeros, the spans of fused parts) is reduced over ranks and decides every box;
// then each entry goes to its ranks. Memory per rank: its share of the entries, and the
// summary's O(dimension) counters.
#include <algorithm>
#include <climits>

#include "format/sparse_placement.h"
#include "io/io_util.h"
#include "runtime/spmd/box.h"
#include "runtime/spmd/comm.h"
#include "runtime/spmd/dist_files.h"
#include "runtime/spmd/dist_tensor_impl.h"
#include "runtime/spmd/executor.h"
#include "tessel/binary_format.h"
#include "tessel/error.h"

namespace tessel {

namespace {

bool inBox(const spmd::Box& box, const int64_t* c) {
  for (size_t d = 0; d < box.size(); d++)
    if (c[d] < box[d].lo || c[d] >= box[d].hi) return false;
  return true;
}

/// Under a distribution by coordinates: every entry of `share` sent to each rank whose
/// box holds it (duplicates arrive in rank order, each rank's in its order: file order).
/// `pieces`: every rank's box.
CooData toOwnerBoxes(const DistTensor::Impl& t, const CooData& share, std::vector<std::optional<spmd::Box>>& pieces) {
  spmd::TensorUse u;
  u.dims = t.dims;
  u.grid = t.grid;
  u.distribution = t.distribution;
  pieces = spmd::piecesOf(u);
  const int order = share.order();
  return spmd::exchangeEntries(share, [&](int64_t e, std::vector<int>& to) {
    for (int q = 0; q < static_cast<int>(pieces.size()); q++)
      if (pieces[static_cast<size_t>(q)] && inBox(*pieces[static_cast<size_t>(q)], share.coords.data() + e * order))
        to.push_back(q);
  });
}

void placeDense(DistTensor::Impl& t, const CooData& share) {
  std::vector<std::optional<spmd::Box>> pieces;
  CooData mine = toOwnerBoxes(t, share, pieces);
  const int order = share.order();
  std::fill(t.vals.begin(), t.vals.end(), 0.0);
  if (!t.piece) return;
  const spmd::Box& box = *t.piece;
  for (int64_t e = 0; e < mine.nnz(); e++) {
    int64_t off = 0;
    for (int d = 0; d < order; d++)
      off = off * box[static_cast<size_t>(d)].size() + (mine.coords[static_cast<size_t>(e * order + d)] - box[static_cast<size_t>(d)].lo);
    t.vals[static_cast<size_t>(off)] += mine.values[static_cast<size_t>(e)];
  }
}

/// The local pieces from the entries that arrived (global coordinates), packed.
void packPiece(DistTensor::Impl& t, CooData&& mine) {
  const int order = static_cast<int>(t.dims.size());
  t.sparsePiece = TensorBase();
  if (!t.piece) return;
  CooData local;
  for (const Extent& e : *t.piece) local.dims.push_back(e.size());
  local.coords.resize(mine.coords.size());
  local.values = std::move(mine.values);
  for (size_t k = 0; k < local.coords.size(); k++)
    local.coords[k] = mine.coords[k] - (*t.piece)[k % static_cast<size_t>(order)].lo;
  t.sparsePiece = TensorBase(t.name, Datatype::Float64, local.dims, *t.format);
  t.sparsePiece.setFromCoo(local);
}

/// Under a partition by coordinates the boxes are known before the data: each entry goes
/// straight to the ranks whose box holds it, duplicates arriving in file order, and each
/// rank packs its piece (summing them in that order, as packing the whole tensor does).
/// Only for formats whose levels below the first store no implicit zeros (a dense inner
/// level would store other zeros in a piece than in the whole tensor).
bool placeByCoordinates(DistTensor::Impl& t, const CooData& share) {
  if (t.distribution.byNonZeros()) return false;
  for (int k = 1; k < t.format->order(); k++)
    if (t.format->level(k) == LevelKind::Dense) return false;
  std::vector<std::optional<spmd::Box>> pieces;
  CooData mine = toOwnerBoxes(t, share, pieces);
  spmd::agreeOnFailure([&] {
    t.dataPieces.clear();
    t.piece = pieces[static_cast<size_t>(comm::rank())];
    packPiece(t, std::move(mine));
  });
  return true;
}

void placeSparse(DistTensor::Impl& t, const CooData& share) {
  if (placeByCoordinates(t, share)) return;
  const int order = share.order();
  const Grid& grid = t.grid;
  const Distribution& dist = t.distribution;
  // Row blocks, packed as the whole tensor is: duplicates summed in file order.
  CooData block = spmd::toRowBlocks(share);
  spmd::agreeOnFailure([&] {
    TensorBase packed(t.name, Datatype::Float64, t.dims, *t.format);
    packed.setFromCoo(block);
    block = spmd::sortedLexicographically(packed.toCoo());
  });
  // Entry numbers: the blocks in rank order are the packed entries in order.
  const std::vector<int64_t> sizes = comm::allGather(block.nnz());
  int64_t first = 0, nnz = 0;
  for (int q = 0; q < comm::size(); q++) {
    if (q < comm::rank()) first += sizes[static_cast<size_t>(q)];
    nnz += sizes[static_cast<size_t>(q)];
  }
  PlacementSummary sum;
  spmd::agreeOnFailure([&] {
    long double counters = 0;
    if (dist.defined())
      for (const MachineDim& m : dist.levels().at(0).machine)
        if (m.kind == MachineDim::Kind::Partition && m.nonZeros && m.tensorDim != MachineDim::kFused)
          counters += static_cast<long double>(t.dims[static_cast<size_t>(m.tensorDim)]);
    io_detail::requireMemory(counters * 8, "tensor " + t.name + ": counting its non-zeros per coordinate");
    sum = emptySummary(t.dims, dist, grid);
    sum.nnz = nnz;
    for (int64_t k = 0; k < block.nnz(); k++) addToSummary(sum, dist, grid, block.coords.data() + k * order, first + k);
  });
  for (auto& counts : sum.counts) comm::sumOver(counts);
  for (auto& spans : sum.fusedSpans) {
    std::vector<int64_t> lo, hi;
    for (const Extent& e : spans) lo.push_back(e.lo), hi.push_back(e.hi);
    comm::minOver(lo);
    comm::maxOver(hi);
    for (size_t q = 0; q < spans.size(); q++) spans[q] = {lo[q], hi[q]};
  }
  finishSummary(sum);
  const EntryPlacement place = placementFromSummary(t.dims, dist, grid, sum);
  std::vector<std::vector<int>> coordOf;
  for (int q = 0; q < grid.size(); q++) coordOf.push_back(grid.coordOf(q));
  std::vector<int> where(static_cast<size_t>(grid.order()));
  CooData mine = spmd::exchangeEntries(block, [&](int64_t k, std::vector<int>& to) {
    for (int d = 0; d < grid.order(); d++)
      where[static_cast<size_t>(d)] = entryPart(place, t.dims, dist, grid, d, block.coords.data() + k * order, first + k, nnz);
    for (int q = 0; q < grid.size(); q++) {
      bool held = true;
      for (int d = 0; d < grid.order() && held; d++)
        held = where[static_cast<size_t>(d)] < 0 || where[static_cast<size_t>(d)] == coordOf[static_cast<size_t>(q)][static_cast<size_t>(d)];
      if (held) to.push_back(q);
    }
  });
  spmd::agreeOnFailure([&] {
    t.dataPieces.clear();
    for (int q = 0; q < grid.size(); q++) t.dataPieces.push_back(placedBox(place, t.dims, dist, coordOf[static_cast<size_t>(q)]));
    t.piece = t.dataPieces[static_cast<size_t>(comm::rank())];
    packPiece(t, std::move(mine));
  });
}

}  // namespace

void DistTensor::setFromParts(const CooData& share) {
  if (share.dims != impl_->dims)
    throw DimensionError("tensor " + impl_->name + ": the data has other dimensions than the tensor");
  if (sparse())
    placeSparse(*impl_, share);
  else
    placeDense(*impl_, share);
}

void DistTensor::read(const std::string& path) {
  if (isBinaryTensorPath(path) && spmd::readBinaryPieces(*impl_, path)) return;
  TensorFilePart part = readTensorFilePart(path);
  if (part.entries.dims != impl_->dims) {
    auto str = [](const std::vector<int64_t>& d) {
      std::string s;
      for (int64_t n : d) s += (s.empty() ? "" : "x") + std::to_string(n);
      return s;
    };
    throw DimensionError("tensor " + impl_->name + " has dimensions " + str(impl_->dims) + ", but " + path +
                         " holds a tensor of " + str(part.entries.dims));
  }
  setFromParts(part.entries);
}

}  // namespace tessel
