// CSR <-> CSC by counting sort; see matrix_convert.h.
#include "runtime/matrix_convert.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/array_alloc.h"
#include "runtime/index_arrays.h"
#include "tessel/error.h"

namespace tessel {

namespace {

bool denseOverCompressed(const Format& f) {
  return f.order() == 2 && f.level(0) == LevelKind::Dense && f.level(1) == LevelKind::Compressed;
}

/// Source positions as int64, checked: they start at 0, never decrease, and stay within
/// the crd and vals arrays.
std::vector<int64_t> checkedPositions(const TensorImpl& t, int64_t rows) {
  const tessel_tensor_t& raw = t.storage.raw;
  std::vector<int64_t> pos(static_cast<size_t>(rows) + 1);
  for (int64_t r = 0; r <= rows; r++) pos[r] = readIndex(raw.pos[1], t.var.format().posWidth(), r);
  bool ok = raw.pos_size[1] == rows + 1 && pos[0] == 0 && pos[rows] <= raw.crd_size[1] && pos[rows] <= raw.vals_size;
  for (int64_t r = 0; r < rows && ok; r++) ok = pos[r] <= pos[r + 1];
  if (!ok) throw FormatError("tensor " + t.var.name() + ": its pos array is inconsistent (cannot convert it)");
  return pos;
}

[[noreturn]] void badCoordinate(const TensorImpl& t, int mode, int64_t c) {
  throw FormatError("tensor " + t.var.name() + ": stored coordinate " + std::to_string(c) + " of mode " +
                    std::to_string(mode) + " is out of range (extent " + std::to_string(t.var.dims()[mode]) + ")");
}

/// The entries moved into `out` (allocated: pos zeroed, crd and vals to fill).
/// Src/Dst: crd index types; E: value bytes.
template <typename Src, typename Dst, size_t E>
void moveEntries(const TensorImpl& t, const std::vector<int64_t>& pos, bool transpose, tessel_tensor_t& out,
                 IndexWidth posWidth) {
  const tessel_tensor_t& raw = t.storage.raw;
  const Src* crd = static_cast<const Src*>(raw.crd[1]);
  const auto* vals = static_cast<const unsigned char*>(raw.vals);
  Dst* ocrd = static_cast<Dst*>(out.crd[1]);
  auto* ovals = static_cast<unsigned char*>(out.vals);
  const int64_t rows = static_cast<int64_t>(pos.size()) - 1, nnz = pos[rows], cols = raw.dims[1];
  const int colMode = t.var.format().modeOfLevel(1);
  std::vector<int64_t> next;  // transpose: where the next entry of each new row goes
  if (transpose) {
    next.assign(static_cast<size_t>(cols) + 1, 0);
    for (int64_t p = 0; p < nnz; p++) {
      int64_t c = crd[p];
      if (c < 0 || c >= cols) badCoordinate(t, colMode, c);
      next[c + 1]++;
    }
    for (int64_t c = 0; c < cols; c++) next[c + 1] += next[c];
  }
  const std::vector<int64_t>& opos = transpose ? next : pos;
  for (size_t r = 0; r < opos.size(); r++) writeIndex(out.pos[1], posWidth, static_cast<int64_t>(r), opos[r]);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t p = pos[r]; p < pos[r + 1]; p++) {
      int64_t c = crd[p], q = p;
      if (transpose) {
        q = next[c]++;
        ocrd[q] = static_cast<Dst>(r);
      } else {
        if (c < 0 || c >= cols) badCoordinate(t, colMode, c);
        ocrd[q] = static_cast<Dst>(c);
      }
      std::memcpy(ovals + q * E, vals + p * E, E);
    }
}

template <typename Src, typename Dst>
void moveEntriesOf(size_t esize, const TensorImpl& t, const std::vector<int64_t>& pos, bool transpose,
                   tessel_tensor_t& out, IndexWidth posWidth) {
  switch (esize) {
    case 1: return moveEntries<Src, Dst, 1>(t, pos, transpose, out, posWidth);
    case 4: return moveEntries<Src, Dst, 4>(t, pos, transpose, out, posWidth);
    case 8: return moveEntries<Src, Dst, 8>(t, pos, transpose, out, posWidth);
    default: throw InternalError("convert: values of " + std::to_string(esize) + " bytes");
  }
}

}  // namespace

bool isDenseCompressedPair(const Format& from, const Format& to) {
  return denseOverCompressed(from) && denseOverCompressed(to);
}

tessel_tensor_t convertDenseCompressed(const TensorImpl& t, const Format& to) {
  TESSEL_CHECK(isDenseCompressedPair(t.var.format(), to), "convertDenseCompressed: not a CSR/CSC pair");
  const tessel_tensor_t& raw = t.storage.raw;
  const int64_t rows = raw.dims[0], cols = raw.dims[1];
  const bool transpose = to.modeOfLevel(0) != t.var.format().modeOfLevel(0);
  std::vector<int64_t> pos = checkedPositions(t, rows);
  const int64_t nnz = pos[rows], newRows = transpose ? cols : rows;
  const IndexWidth pw = to.posWidth(), cw = to.crdWidth();
  if (nnz > widthMax(pw))
    throw OverflowError("tensor " + t.var.name() + ": level 1 has " + std::to_string(nnz) +
                        " positions, which does not fit the 32-bit pos width");
  const size_t esize = static_cast<size_t>(datatypeSize(t.var.datatype()));
  RawGuard g;
  tessel_tensor_t& out = g.raw;
  out.order = 2;
  out.dims[0] = newRows;
  out.dims[1] = transpose ? rows : cols;
  out.pos[1] = allocElements(t.var.name(), newRows + 1, widthBytes(pw), "pos array", false);
  out.pos_size[1] = newRows + 1;
  out.crd[1] = allocElements(t.var.name(), nnz, widthBytes(cw), "crd array", false);
  out.crd_size[1] = nnz;
  out.vals = allocElements(t.var.name(), nnz, esize, "values array", false);
  out.vals_size = nnz;
  const bool wideSrc = t.var.format().crdWidth() == IndexWidth::W64, wideDst = cw == IndexWidth::W64;
  if (wideSrc && wideDst) moveEntriesOf<int64_t, int64_t>(esize, t, pos, transpose, out, pw);
  else if (wideSrc) moveEntriesOf<int64_t, int32_t>(esize, t, pos, transpose, out, pw);
  else if (wideDst) moveEntriesOf<int32_t, int64_t>(esize, t, pos, transpose, out, pw);
  else moveEntriesOf<int32_t, int32_t>(esize, t, pos, transpose, out, pw);
  g.owned = false;
  return out;
}

}  // namespace tessel
