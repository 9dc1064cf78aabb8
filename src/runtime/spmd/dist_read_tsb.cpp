// .tsb pieces read by ranges (SuperTaco §4.5): each rank reads only its piece's part of
// the file. CSR files under row partitions (xy->x, and xy->~x: its blocks from the pos
// array alone) and dense files under partitions by coordinates; anything else is read
// whole by the caller.
#include <algorithm>
#include <cstdlib>
#include <new>

#include "format/sparse_placement.h"
#include "io/binary_ranges.h"
#include "io/io_util.h"
#include "runtime/spmd/comm.h"
#include "runtime/spmd/dist_files.h"
#include "runtime/spmd/dist_tensor_impl.h"
#include "runtime/spmd/executor.h"
#include "tessel/binary_format.h"
#include "tessel/error.h"

namespace tessel::spmd {

namespace {

bool isCsrFile(const io_detail::BinaryLayout& L) {
  const Format& f = L.format;
  return f.order() == 2 && f.level(0) == LevelKind::Dense && f.level(1) == LevelKind::Compressed &&
         f.modeOfLevel(0) == 0 && f.modeOfLevel(1) == 1;
}

bool isDenseFile(const io_detail::BinaryLayout& L) {
  const Format& f = L.format;
  for (int k = 0; k < f.order(); k++)
    if (f.level(k) != LevelKind::Dense || f.modeOfLevel(k) != k) return false;
  return true;
}

/// The statement partitions the rows only (one machine dimension, universe or by
/// non-zeros, on dimension 0).
bool rowPartition(const Distribution& d) {
  if (!d.defined() || d.levels().size() != 1) return false;
  const auto& m = d.levels()[0].machine;
  return m.size() == 1 && m[0].kind == MachineDim::Kind::Partition && m[0].tensorDim == 0;
}

/// Stores `v` in an index array of width `w` (malloc'd: the tensor's storage frees it).
void* indexArray(const std::vector<int64_t>& v, IndexWidth w, int64_t shift) {
  const size_t n = std::max<size_t>(v.size(), 1);
  if (w == IndexWidth::W32) {
    auto* a = static_cast<int32_t*>(std::malloc(n * 4));
    if (!a) throw std::bad_alloc();
    for (size_t i = 0; i < v.size(); i++) a[i] = static_cast<int32_t>(v[i] - shift);
    return a;
  }
  auto* a = static_cast<int64_t*>(std::malloc(n * 8));
  if (!a) throw std::bad_alloc();
  for (size_t i = 0; i < v.size(); i++) a[i] = v[i] - shift;
  return a;
}

/// This rank's rows [lo, hi) of a CSR file as a tensor of the piece's format: its arrays
/// directly when that format is CSR too, else through coordinates.
TensorBase csrRows(const io_detail::BinaryRanges& f, const std::string& name, const Format& format, int64_t lo,
                   int64_t hi) {
  const io_detail::BinaryLayout& L = f.layout();
  const int64_t cols = L.dims[1];
  const std::vector<int64_t> pos = f.indices(L.pos[1], lo, hi - lo + 1);
  for (size_t r = 1; r < pos.size(); r++)
    if (pos[r] < pos[r - 1] || pos[r] > L.crd[1].count)
      throw FileError(f.where(L.pos[1], lo + static_cast<int64_t>(r)), "corrupted level 1 pos array (decreasing or past its crd)");
  const int64_t first = pos.front(), n = pos.back() - pos.front();
  io_detail::requireMemory(static_cast<long double>(n) * 24, "tensor " + name + ": this rank's rows of " + f.path());
  std::vector<int64_t> crd = f.indices(L.crd[1], first, n);
  for (int64_t r = lo; r < hi; r++)
    for (int64_t p = pos[static_cast<size_t>(r - lo)]; p < pos[static_cast<size_t>(r - lo + 1)]; p++) {
      const int64_t c = crd[static_cast<size_t>(p - first)];
      if (c < 0 || c >= cols || (p > pos[static_cast<size_t>(r - lo)] && c <= crd[static_cast<size_t>(p - first - 1)]))
        throw FileError(f.where(L.crd[1], p), "corrupted level 1 crd array (out of range or not increasing in a row)");
    }
  std::vector<double> vals = f.values(first, n);
  TensorBase piece(name, Datatype::Float64, {hi - lo, cols}, format);
  if (format.level(0) == LevelKind::Dense && format.level(1) == LevelKind::Compressed && format.modeOfLevel(0) == 0) {
    piece.setFromCoo(CooData{{hi - lo, cols}, {}, {}});  // a valid empty tensor, then its arrays
    tessel_tensor_t& raw = piece.impl()->storage.raw;
    std::free(raw.pos[1]);
    raw.pos[1] = indexArray(pos, format.posWidth(), first);
    raw.pos_size[1] = static_cast<int64_t>(pos.size());
    std::free(raw.crd[1]);
    raw.crd[1] = indexArray(crd, format.crdWidth(), 0);
    raw.crd_size[1] = n;
    std::vector<int64_t>().swap(crd);
    std::free(raw.vals);
    raw.vals = std::malloc(static_cast<size_t>(std::max<int64_t>(n, 1)) * 8);
    if (!raw.vals) throw std::bad_alloc();
    std::copy(vals.begin(), vals.end(), static_cast<double*>(raw.vals));
    raw.vals_size = n;
    return piece;
  }
  CooData coo;
  coo.dims = {hi - lo, cols};
  coo.coords.reserve(static_cast<size_t>(2 * n));
  coo.values = std::move(vals);
  for (int64_t r = lo; r < hi; r++)
    for (int64_t p = pos[static_cast<size_t>(r - lo)]; p < pos[static_cast<size_t>(r - lo + 1)]; p++) {
      coo.coords.push_back(r - lo);
      coo.coords.push_back(crd[static_cast<size_t>(p - first)]);
    }
  piece.setFromCoo(coo);
  return piece;
}

/// A dense file's values in `box` (row-major), read run by run of the last dimension.
void denseBox(const io_detail::BinaryRanges& f, const Box& box, std::vector<double>& out) {
  const std::vector<int64_t>& dims = f.layout().dims;
  const int order = static_cast<int>(dims.size());
  out.assign(static_cast<size_t>(volume(box)), 0.0);
  if (out.empty()) return;
  if (order == 0) {
    out = f.values(0, 1);
    return;
  }
  const int64_t run = box[static_cast<size_t>(order - 1)].size();
  std::vector<int64_t> at(static_cast<size_t>(order));
  for (int d = 0; d < order; d++) at[static_cast<size_t>(d)] = box[static_cast<size_t>(d)].lo;
  for (int64_t done = 0; done < volume(box); done += run) {
    int64_t off = 0;
    for (int d = 0; d < order; d++) off = off * dims[static_cast<size_t>(d)] + at[static_cast<size_t>(d)];
    std::vector<double> v = f.values(off, run);
    std::copy(v.begin(), v.end(), out.begin() + done);
    for (int d = order - 1; d-- > 0;) {  // next run: the dimensions before the last
      if (++at[static_cast<size_t>(d)] < box[static_cast<size_t>(d)].hi) break;
      at[static_cast<size_t>(d)] = box[static_cast<size_t>(d)].lo;
    }
  }
}

}  // namespace

bool readBinaryPieces(DistTensor::Impl& t, const std::string& path) {
  bool ranged = false;
  agreeOnFailure([&] {
    io_detail::BinaryRanges f(path);
    const io_detail::BinaryLayout& L = f.layout();
    if (L.dims != t.dims)
      throw DimensionError("tensor " + t.name + " does not have the dimensions of " + path);
    const int me = comm::rank();
    if (t.format && isCsrFile(L) && rowPartition(t.distribution)) {
      const int64_t rows = L.dims[0];
      std::vector<std::optional<Box>> boxes(static_cast<size_t>(t.grid.size()));
      if (t.distribution.byNonZeros()) {  // blocks of about equal non-zeros: from the row counts
        io_detail::requireMemory(static_cast<long double>(rows) * 16, "tensor " + t.name + ": its row counts");
        const std::vector<int64_t> pos = f.indices(L.pos[1], 0, rows + 1);
        PlacementSummary sum = emptySummary(t.dims, t.distribution, t.grid);
        sum.nnz = pos.back();
        for (int64_t r = 0; r < rows; r++) sum.counts.at(0)[static_cast<size_t>(r)] = pos[static_cast<size_t>(r + 1)] - pos[static_cast<size_t>(r)];
        finishSummary(sum);
        const EntryPlacement p = placementFromSummary(t.dims, t.distribution, t.grid, sum);
        for (int q = 0; q < t.grid.size(); q++)
          boxes[static_cast<size_t>(q)] = placedBox(p, t.dims, t.distribution, t.grid.coordOf(q));
        t.dataPieces = boxes;
      } else {
        for (int q = 0; q < t.grid.size(); q++)
          boxes[static_cast<size_t>(q)] = t.distribution.piece(t.dims, t.grid, t.grid.coordOf(q));
      }
      t.piece = boxes[static_cast<size_t>(me)];
      if (t.piece) t.sparsePiece = csrRows(f, t.name, *t.format, (*t.piece)[0].lo, (*t.piece)[0].hi);
      ranged = true;
    } else if (!t.format && isDenseFile(L) && !t.distribution.byNonZeros()) {
      if (t.piece) denseBox(f, *t.piece, t.vals);
      ranged = true;
    }
  });
  return ranged;
}

}  // namespace tessel::spmd
