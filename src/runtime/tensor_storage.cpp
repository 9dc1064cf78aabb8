// Tensor storage: construction, inserts, packing into level arrays, reading them back.
//
// Packing (see pack()): the pending entries are sorted lexicographically in storage
// order through an index permutation, stably, without moving values (entry_sort.h).
// Equal coordinates are merged into groups (summed into vals at the end), and the
// levels are built top-down. While building, every position of the current level owns
// a contiguous range of the sorted groups; because positions are created in coordinate
// order, the ranges of consecutive positions are adjacent, so one bounds array
// (bnd[p]..bnd[p+1]) of size positions+1 describes them all. Cost: O(nnz * passes +
// storage size).
#include <algorithm>
#include <cmath>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "format/level_format.h"
#include "io/io_util.h"
#include "runtime/array_alloc.h"
#include "runtime/entry_sort.h"
#include "runtime/index_arrays.h"
#include "runtime/matrix_convert.h"
#include "tessel/tensor.h"

namespace tessel {

// ---------------------------------------------------------------------------------------
// Storage

namespace {

void rebaseArray(void*& data, void*& block) {
  if (!block) return;
  data = block;
  block = nullptr;
}

}  // namespace

void Storage::release() {
  recomputed = false;
  spare.reset();
  if (external) {  // arrays owned elsewhere (a file mapping): forget them, do not free
    std::memset(&raw, 0, sizeof raw);
    external.reset();
    return;
  }
  freeRaw(raw);
}

void Storage::rebase() {
  for (int k = 0; k < TESSEL_MAX_ORDER; k++) rebaseArray(raw.crd[k], raw.crd_block[k]);
  rebaseArray(raw.vals, raw.vals_block);
}

void Storage::swapArrays(Storage& o) {
  for (int k = 0; k < TESSEL_MAX_ORDER; k++) {
    std::swap(raw.pos[k], o.raw.pos[k]);
    std::swap(raw.crd[k], o.raw.crd[k]);
    std::swap(raw.pos_size[k], o.raw.pos_size[k]);
    std::swap(raw.crd_size[k], o.raw.crd_size[k]);
    std::swap(raw.crd_block[k], o.raw.crd_block[k]);
  }
  std::swap(raw.vals, o.raw.vals);
  std::swap(raw.vals_size, o.raw.vals_size);
  std::swap(raw.vals_block, o.raw.vals_block);
  std::swap(recomputed, o.recomputed);
}

// ---------------------------------------------------------------------------------------
// Helpers

namespace {

std::string dimsStr(const std::vector<int64_t>& d) {
  std::string s;
  for (size_t i = 0; i < d.size(); i++) {
    if (i) s += "x";
    s += std::to_string(d[i]);
  }
  return d.empty() ? "(scalar)" : s;
}

TensorImpl& checkedImpl(const std::shared_ptr<TensorImpl>& p) {
  if (!p) throw UserError("use of an undefined (default-constructed) tensor");
  return *p;
}

void checkCoordinate(const TensorImpl& t, int mode, int64_t c) {
  int64_t n = t.var.dims()[mode];
  if (c < 0 || c >= n)
    throw DimensionError("tensor " + t.var.name() + ": coordinate " + std::to_string(c) + " of mode " +
                         std::to_string(mode) + " is out of range (extent " + std::to_string(n) +
                         ")");
}

void checkArity(const TensorImpl& t, size_t given) {
  if (given != t.var.dims().size())
    throw DimensionError("tensor " + t.var.name() + " has " + std::to_string(t.var.dims().size()) +
                         " modes but " + std::to_string(given) + " coordinates were given");
}

// ---- element arithmetic (summing duplicates) ----

template <typename T>
T addValues(const TensorImpl& t, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else if constexpr (std::is_integral_v<T>) {
    T r;
    if (__builtin_add_overflow(a, b, &r))
      throw OverflowError("tensor " + t.var.name() + ": summing duplicate entries " +
                          std::to_string(a) + " + " + std::to_string(b) + " overflows " +
                          datatypeName(t.var.datatype()));
    return r;
  } else {
    return a + b;
  }
}

template <typename T>
double valueAsDouble(const void* vals, int64_t p) {
  return static_cast<double>(static_cast<const T*>(vals)[p]);
}

double readValue(Datatype type, const void* vals, int64_t p) {
  switch (type) {
    case Datatype::Bool: return static_cast<const bool*>(vals)[p] ? 1.0 : 0.0;
    case Datatype::Int32: return valueAsDouble<int32_t>(vals, p);
    case Datatype::Int64: return valueAsDouble<int64_t>(vals, p);
    case Datatype::Float32: return valueAsDouble<float>(vals, p);
    case Datatype::Float64: return valueAsDouble<double>(vals, p);
  }
  throw InternalError("readValue: unknown datatype");
}

template <typename T>
void storeFromDouble(const TensorImpl& t, unsigned char* dst, double v) {
  T x;
  if constexpr (std::is_same_v<T, bool>) {
    x = v != 0;
  } else if constexpr (std::is_integral_v<T>) {
    // The range [min, max + 1) is exact in double for 32- and 64-bit integers.
    const double lo = static_cast<double>(std::numeric_limits<T>::min());
    const double hi = -lo;  // 2^(bits-1)
    // +-inf are the type's extremes, the min and max semirings' infinities in integers
    // (what a min_plus output over int64 holds where no path exists).
    if (std::isinf(v)) {
      x = v > 0 ? std::numeric_limits<T>::max() : std::numeric_limits<T>::min();
      std::memcpy(dst, &x, sizeof(T));
      return;
    }
    if (!(v >= lo && v < hi))
      throw OverflowError("tensor " + t.var.name() + ": value " + std::to_string(v) +
                          " does not fit " + datatypeName(t.var.datatype()));
    x = static_cast<T>(v);
  } else {
    x = static_cast<T>(v);
  }
  std::memcpy(dst, &x, sizeof(T));
}

void storeFromDouble(const TensorImpl& t, unsigned char* dst, double v) {
  switch (t.var.datatype()) {
    case Datatype::Bool: return storeFromDouble<bool>(t, dst, v);
    case Datatype::Int32: return storeFromDouble<int32_t>(t, dst, v);
    case Datatype::Int64: return storeFromDouble<int64_t>(t, dst, v);
    case Datatype::Float32: return storeFromDouble<float>(t, dst, v);
    case Datatype::Float64: return storeFromDouble<double>(t, dst, v);
  }
  throw InternalError("storeFromDouble: unknown datatype");
}

/// Coordinate of level k of every group, in sorted order.
void groupColumn(const TensorImpl& t, const SortedEntries& s, int k, std::vector<int64_t>& col) {
  const int64_t nu = s.nu;
  col.resize(nu);
  const int m = t.var.format().modeOfLevel(k);
  const int64_t N = t.var.dims()[m];
  if (s.keyed) {
    const uint64_t st = s.stride[k];
    for (int64_t u = 0; u < nu; u++)
      col[u] = static_cast<int64_t>((s.ukeys[u] / st) % static_cast<uint64_t>(N));
  } else {
    const int r = static_cast<int>(t.var.dims().size());
    const int64_t* c = t.pendingCoords.data();
    for (int64_t u = 0; u < nu; u++) col[u] = c[s.entry(s.groupBegin(u)) * r + m];
  }
}

/// The groups owned by the positions of the level being built: position p owns groups
/// bnd[p] .. bnd[p+1]-1 (consecutive positions own adjacent ranges). Below a
/// CompressedNU level every position owns exactly its own group (identity, not stored).
struct Bounds {
  bool identity = false;
  std::vector<int64_t> b;
  int64_t begin(int64_t p) const { return identity ? p : b[p]; }
  int64_t end(int64_t p) const { return identity ? p + 1 : b[p + 1]; }
};

/// vals[p] = sum of the group owned by position p (0 where none).
template <typename T>
void writeValues(const TensorImpl& t, void* vals, const SortedEntries& s, const Bounds& bnd,
                 int64_t P) {
  T* out = static_cast<T*>(vals);
  const unsigned char* pv = t.pendingVals.data();
  auto load = [&](int64_t e) {
    T v;
    std::memcpy(&v, pv + static_cast<size_t>(e) * sizeof(T), sizeof(T));
    return v;
  };
  for (int64_t p = 0; p < P; p++) {
    const int64_t b = bnd.begin(p), e = bnd.end(p);
    if (b == e) continue;
    TESSEL_CHECK(e - b == 1, "pack: a last-level position owns " + std::to_string(e - b) +
                                 " entries");
    const int64_t g0 = s.groupBegin(b), g1 = s.groupEnd(b);
    T acc = load(s.entry(g0));
    for (int64_t i = g0 + 1; i < g1; i++) acc = addValues<T>(t, acc, load(s.entry(i)));
    out[p] = acc;
  }
}

/// Build a tessel_tensor_t from sorted, merged entries (s.nu == 0: a valid empty tensor).
tessel_tensor_t buildStorage(const TensorImpl& t, const SortedEntries& s) {
  const Format& f = t.var.format();
  const int r = static_cast<int>(t.var.dims().size());
  TESSEL_CHECK(r == f.order(), "tensor order differs from format order");
  TESSEL_CHECK(r <= TESSEL_MAX_ORDER, "order above TESSEL_MAX_ORDER");
  const std::string& name = t.var.name();
  const int64_t nu = s.nu;
  const bool empty = nu == 0;
  const IndexWidth pw = f.posWidth(), cw = f.crdWidth();

  RawGuard g;
  tessel_tensor_t& raw = g.raw;
  raw.order = r;

  int64_t P = 1;  // positions of the level above (the root: 1)
  Bounds bnd;     // groups owned by each of those positions (unless empty)
  bnd.b = {0, nu};
  std::vector<int64_t> col, nb;

  auto checkPos = [&](int k, int64_t count) {
    if (count > widthMax(pw))
      throw OverflowError("tensor " + name + ": level " + std::to_string(k) + " has " +
                          std::to_string(count) + " positions, which does not fit the " +
                          std::to_string(widthBits(pw)) + "-bit pos width");
  };
  auto allocPos = [&](int k) {
    int64_t size;
    if (__builtin_add_overflow(P, int64_t{1}, &size))
      throw OverflowError("tensor " + name + ": pos array of level " + std::to_string(k) +
                          " overflows");
    raw.pos[k] = allocElements(name, size, widthBytes(pw), "pos array", true);
    raw.pos_size[k] = size;
  };
  auto allocCrd = [&](int k, int64_t size) {
    raw.crd[k] = allocElements(name, size, widthBytes(cw), "crd array", true);
    raw.crd_size[k] = size;
  };

  for (int k = 0; k < r; k++) {
    const int64_t N = t.var.dims()[f.modeOfLevel(k)];
    raw.dims[k] = N;
    const bool last = k == r - 1;
    if (!empty) groupColumn(t, s, k, col);
    switch (f.level(k)) {
      case LevelKind::Dense:
      case LevelKind::Bitmap: {
        const bool flags = f.level(k) == LevelKind::Bitmap;
        int64_t P2;
        if (__builtin_mul_overflow(P, N, &P2))
          throw OverflowError("tensor " + name + ": dense level " + std::to_string(k) +
                              " has " + std::to_string(P) + " x " + std::to_string(N) +
                              " positions, which overflows 64-bit integers");
        if (!empty) {
          TESSEL_CHECK(!bnd.identity, "pack: dense level below a non-unique level");
          // Sizes from input: each position holds an 8-byte group bound while packing
          // (the arrays themselves go through allocElements' check).
          io_detail::requireMemory(static_cast<long double>(P2) * 8,
                                   "tensor " + name + ": dense level " + std::to_string(k) + " of " +
                                       std::to_string(P2) + " positions");
          nb.assign(static_cast<size_t>(P2) + 1, 0);
          for (int64_t p = 0; p < P; p++) {
            int64_t idx = bnd.b[p], e = bnd.b[p + 1];
            for (int64_t x = 0; x < N; x++) {
              while (idx < e && col[idx] < x) idx++;
              nb[p * N + x] = idx;
            }
          }
          nb[P2] = nu;
          bnd.b.swap(nb);
        }
        if (flags) {  // slot q is present iff some entry falls in it (its group range is non-empty)
          raw.crd[k] = allocElements(name, P2, 1, "bitmap flags", true);
          raw.crd_size[k] = P2;
          auto* fl = static_cast<uint8_t*>(raw.crd[k]);
          if (!empty)
            for (int64_t q = 0; q < P2; q++) fl[q] = bnd.b[q] < bnd.b[q + 1];
        }
        P = P2;
        break;
      }
      case LevelKind::Compressed: {
        allocPos(k);
        int64_t cnt = 0;
        if (!empty) {
          TESSEL_CHECK(!bnd.identity, "pack: compressed level below a non-unique level");
          const std::vector<int64_t>& pb = bnd.b;
          for (int64_t p = 0; p < P; p++)
            for (int64_t i = pb[p]; i < pb[p + 1]; i++)
              if (i == pb[p] || col[i] != col[i - 1]) cnt++;
          checkPos(k, cnt);
          allocCrd(k, cnt);
          if (!last) nb.resize(static_cast<size_t>(cnt) + 1);
          int64_t q = 0;
          for (int64_t p = 0; p < P; p++) {
            for (int64_t i = pb[p]; i < pb[p + 1]; i++)
              if (i == pb[p] || col[i] != col[i - 1]) {
                writeIndex(raw.crd[k], cw, q, col[i]);
                if (!last) nb[q] = i;
                q++;
              }
            writeIndex(raw.pos[k], pw, p + 1, q);
          }
          if (!last) {
            nb[cnt] = nu;
            bnd.b.swap(nb);
          } else {
            // Last level, all levels above unique: one position per group, in order.
            TESSEL_CHECK(cnt == nu, "pack: last compressed level merged distinct entries");
            bnd.identity = true;
            std::vector<int64_t>().swap(bnd.b);
          }
        } else {
          allocCrd(k, 0);
        }
        P = cnt;
        break;
      }
      case LevelKind::CompressedNU: {
        allocPos(k);
        if (!empty) {
          // Every group becomes a position: the children of p are its groups.
          TESSEL_CHECK(!bnd.identity, "pack: CompressedNU level below a non-unique level");
          checkPos(k, nu);
          for (int64_t p = 0; p <= P; p++) writeIndex(raw.pos[k], pw, p, bnd.b[p]);
          allocCrd(k, nu);
          for (int64_t u = 0; u < nu; u++) writeIndex(raw.crd[k], cw, u, col[u]);
          bnd.identity = true;
          std::vector<int64_t>().swap(bnd.b);
          P = nu;
        } else {
          allocCrd(k, 0);
          P = 0;
        }
        break;
      }
      case LevelKind::Singleton: {
        TESSEL_CHECK(empty ? P == 0 : bnd.identity,
                     "pack: singleton level not below a CompressedNU level");
        allocCrd(k, P);
        for (int64_t q = 0; q < P; q++) writeIndex(raw.crd[k], cw, q, col[q]);
        break;
      }
    }
  }

  const int esize = datatypeSize(t.var.datatype());
  raw.vals = allocElements(name, P, static_cast<size_t>(esize), "values array", true);
  raw.vals_size = P;
  if (!empty) {
    switch (t.var.datatype()) {
      case Datatype::Bool: writeValues<bool>(t, raw.vals, s, bnd, P); break;
      case Datatype::Int32: writeValues<int32_t>(t, raw.vals, s, bnd, P); break;
      case Datatype::Int64: writeValues<int64_t>(t, raw.vals, s, bnd, P); break;
      case Datatype::Float32: writeValues<float>(t, raw.vals, s, bnd, P); break;
      case Datatype::Float64: writeValues<double>(t, raw.vals, s, bnd, P); break;
    }
  }
  g.owned = false;
  return raw;
}

void installStorage(TensorImpl& t, const tessel_tensor_t& raw) {
  t.storage.release();
  t.storage.raw = raw;
}

/// Bounds [begin, end) of the children of parent position p at level k.
void childRange(const TensorImpl& t, int k, int64_t p, int64_t& begin, int64_t& end) {
  const tessel_tensor_t& raw = t.storage.raw;
  switch (t.var.format().level(k)) {
    case LevelKind::Dense:
    case LevelKind::Bitmap: {  // every slot; the caller skips absent bitmap slots
      const int64_t N = t.var.dims()[t.var.format().modeOfLevel(k)];
      begin = p * N;
      end = begin + N;
      return;
    }
    case LevelKind::Compressed:
    case LevelKind::CompressedNU:
      TESSEL_CHECK(raw.pos[k] && p + 1 < raw.pos_size[k],
                   "tensor " + t.var.name() + ": pos array of level " + std::to_string(k) +
                       " is too short for parent position " + std::to_string(p));
      begin = readIndex(raw.pos[k], t.var.format().posWidth(), p);
      end = readIndex(raw.pos[k], t.var.format().posWidth(), p + 1);
      TESSEL_CHECK(0 <= begin && begin <= end && end <= raw.crd_size[k],
                   "tensor " + t.var.name() + ": pos array of level " + std::to_string(k) +
                       " is inconsistent with its crd array");
      return;
    case LevelKind::Singleton:
      begin = p;
      end = p + 1;
      TESSEL_CHECK(raw.crd[k] && end <= raw.crd_size[k],
                   "tensor " + t.var.name() + ": crd array of singleton level " + std::to_string(k) +
                       " is too short");
      return;
  }
}

void shrinkArray(void*& p, size_t bytes) {
  if (!p) return;
  bytes = std::max<size_t>(bytes, 1);
  if (malloc_usable_size(p) < bytes + 4096) return;  // not worth a realloc
  if (void* q = std::realloc(p, bytes)) p = q;
}

/// An array that starts inside its block: moved into an exact-size array only when
/// most of the block is unused (a copy, unlike realloc's trim in place).
void shrinkOffsetArray(void*& p, void*& block, size_t bytes) {
  if (!block) return shrinkArray(p, bytes);
  bytes = std::max<size_t>(bytes, 1);
  if (malloc_usable_size(block) < 2 * bytes + 4096) return;
  void* q = allocArray(bytes);
  if (!q) return;
  std::memcpy(q, p, bytes);
  std::free(block);
  block = nullptr;
  p = q;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// TensorBase

void TensorBase::shrinkToFit() {
  if (impl_->storage.external) return;
  tessel_tensor_t& r = raw();
  const size_t pw = widthBytes(format().posWidth()), cw = widthBytes(format().crdWidth());
  for (int k = 0; k < TESSEL_MAX_ORDER; k++) {
    shrinkArray(r.pos[k], static_cast<size_t>(r.pos_size[k]) * pw);
    const bool flags = k < format().order() && levelFormat(format(), k).hasFlagArray();
    shrinkOffsetArray(r.crd[k], r.crd_block[k], static_cast<size_t>(r.crd_size[k]) * (flags ? 1 : cw));
  }
  shrinkOffsetArray(r.vals, r.vals_block, static_cast<size_t>(r.vals_size) * datatypeSize(impl_->var.datatype()));
}

TensorBase::TensorBase(std::string name, Datatype type, std::vector<int64_t> dims, Format format)
    : TensorBase(forVar(TensorVar(std::move(name), type, std::move(dims), std::move(format)))) {}

TensorBase TensorBase::forVar(const TensorVar& var) {
  if (!var.defined()) throw UserError("a tensor needs a defined tensor variable");
  const std::string& name = var.name();
  const std::vector<int64_t>& dims = var.dims();
  const Format& format = var.format();
  auto impl = std::make_shared<TensorImpl>();
  if (static_cast<int>(dims.size()) != format.order())
    throw FormatError("tensor " + name + " has " + std::to_string(dims.size()) +
                      " modes but format '" + format.str() + "' has " +
                      std::to_string(format.order()) + " levels");
  if (dims.size() > TESSEL_MAX_ORDER)
    throw FormatError("tensor " + name + " has " + std::to_string(dims.size()) +
                      " modes; at most " + std::to_string(TESSEL_MAX_ORDER) + " are supported");
  (void)datatypeSize(var.datatype());  // rejects invalid datatypes
  const IndexWidth cw = format.crdWidth();
  for (size_t m = 0; m < dims.size(); m++) {
    if (dims[m] < 0)
      throw DimensionError("tensor " + name + ": dimension " + std::to_string(dims[m]) +
                           " of mode " + std::to_string(m) + " is negative");
    if (dims[m] > 0 && dims[m] - 1 > widthMax(cw))
      throw OverflowError("tensor " + name + ": dimension " + std::to_string(dims[m]) +
                          " of mode " + std::to_string(m) + " does not fit the " +
                          std::to_string(widthBits(cw)) +
                          "-bit crd width (use 64-bit coordinates)");
  }
  impl->var = var;
  // A valid empty tensor of this format, so that an unpacked tensor can be read.
  SortedEntries none;
  impl->storage.raw = buildStorage(*impl, none);
  return TensorBase(std::move(impl));
}

void TensorBase::insertBytes(const std::vector<int64_t>& coords, const void* value) {
  TensorImpl& t = checkedImpl(impl_);
  checkArity(t, coords.size());
  for (size_t m = 0; m < coords.size(); m++) checkCoordinate(t, static_cast<int>(m), coords[m]);
  t.pendingCoords.insert(t.pendingCoords.end(), coords.begin(), coords.end());
  const auto* b = static_cast<const unsigned char*>(value);
  t.pendingVals.insert(t.pendingVals.end(), b, b + datatypeSize(t.var.datatype()));
  t.packed = false;  // storage no longer reflects every insert
}

void TensorBase::pack() {
  TensorImpl& t = checkedImpl(impl_);
  const int r = order();
  const size_t esize = static_cast<size_t>(datatypeSize(t.var.datatype()));
  TESSEL_CHECK(t.pendingVals.size() % esize == 0, "pending values misaligned");
  const int64_t n = static_cast<int64_t>(t.pendingVals.size() / esize);
  TESSEL_CHECK(t.pendingCoords.size() == static_cast<size_t>(n) * static_cast<size_t>(r),
               "pending coordinates and values disagree");

  SortedEntries sorted = sortEntries(t, n);
  tessel_tensor_t raw = buildStorage(t, sorted);
  installStorage(t, raw);
  std::vector<int64_t>().swap(t.pendingCoords);
  std::vector<unsigned char>().swap(t.pendingVals);
  t.packed = true;
}

CooData TensorBase::toCoo() const {
  std::vector<int64_t> positions;
  return toCoo(positions);
}

CooData TensorBase::toCoo(std::vector<int64_t>& positions) const {
  const TensorImpl& t = checkedImpl(impl_);
  positions.clear();
  const tessel_tensor_t& raw = t.storage.raw;
  const int r = order();
  CooData out;
  out.dims = t.var.dims();
  if (raw.vals_size > 0) TESSEL_CHECK(raw.vals != nullptr, "tensor " + t.var.name() + " has no values");
  if (r == 0) {
    if (raw.vals_size > 0) out.values.push_back(readValue(t.var.datatype(), raw.vals, 0)), positions.push_back(0);
    return out;
  }
  positions.reserve(static_cast<size_t>(raw.vals_size));
  out.values.reserve(static_cast<size_t>(raw.vals_size));
  out.coords.reserve(static_cast<size_t>(raw.vals_size) * r);
  const std::vector<int>& mo = t.var.format().modeOrder();
  const IndexWidth cw = t.var.format().crdWidth();

  std::vector<int64_t> cur(r), end(r), parent(r), mc(r);
  int64_t expect = 0;  // next vals position
  const bool holes = anyFlagLevel(t.var.format());  // absent bitmap slots leave vals positions unvisited
  parent[0] = 0;
  childRange(t, 0, 0, cur[0], end[0]);
  int k = 0;
  while (k >= 0) {
    if (cur[k] >= end[k]) {
      k--;
      if (k >= 0) cur[k]++;
      continue;
    }
    const int64_t q = cur[k];
    const LevelFormat& lf = levelFormat(t.var.format(), k);
    if (lf.hasFlagArray()) {
      TESSEL_CHECK(raw.crd[k] && q < raw.crd_size[k], "tensor " + t.var.name() + ": bitmap flags of level " +
                                                          std::to_string(k) + " are too short");
      if (!static_cast<const uint8_t*>(raw.crd[k])[q]) {
        cur[k]++;
        continue;
      }
    }
    mc[mo[k]] = lf.locatable() ? q - parent[k] * t.var.dims()[mo[k]] : readIndex(raw.crd[k], cw, q);
    if (k == r - 1) {
      TESSEL_CHECK((holes ? q >= expect : q == expect) && q < raw.vals_size,
                   "tensor " + t.var.name() + ": level arrays do not cover the values array in order");
      out.coords.insert(out.coords.end(), mc.begin(), mc.end());
      out.values.push_back(readValue(t.var.datatype(), raw.vals, q));
      positions.push_back(q);
      expect = q + 1;
      cur[k]++;
    } else {
      parent[k + 1] = q;
      childRange(t, k + 1, q, cur[k + 1], end[k + 1]);
      k++;
    }
  }
  return out;
}

void TensorBase::setFromCoo(const CooData& coo) {
  TensorImpl& t = checkedImpl(impl_);
  if (coo.dims != t.var.dims())
    throw DimensionError("tensor " + t.var.name() + " has dimensions " + dimsStr(t.var.dims()) +
                         " but the data has dimensions " + dimsStr(coo.dims));
  const int r = order();
  const int64_t n = coo.nnz();
  if (coo.coords.size() != static_cast<size_t>(n) * static_cast<size_t>(r))
    throw DimensionError("tensor " + t.var.name() + ": data has " + std::to_string(n) +
                         " values but " + std::to_string(coo.coords.size()) +
                         " coordinates (expected " + std::to_string(n * r) + ")");
  for (int64_t e = 0; e < n; e++)
    for (int m = 0; m < r; m++) checkCoordinate(t, m, coo.coords[e * r + m]);
  const size_t esize = static_cast<size_t>(datatypeSize(t.var.datatype()));
  std::vector<unsigned char> vals(static_cast<size_t>(n) * esize);
  for (int64_t e = 0; e < n; e++) storeFromDouble(t, vals.data() + e * esize, coo.values[e]);
  t.pendingCoords = coo.coords;
  t.pendingVals = std::move(vals);
  pack();
}

TensorBase TensorBase::convert(const Format& f, const std::string& newName) const {
  const TensorImpl& t = checkedImpl(impl_);
  TensorBase out(newName.empty() ? t.var.name() + "_" + f.str() : newName, t.var.datatype(), t.var.dims(), f);
  if (isDenseCompressedPair(t.var.format(), f)) {  // CSR <-> CSC: a counting sort, not pack()'s sort
    installStorage(*out.impl_, convertDenseCompressed(t, f));
    out.impl_->packed = true;
    return out;
  }
  std::vector<int64_t> at;  // entry e is vals[at[e]]
  CooData c = toCoo(at);
  const int r = order();
  for (int64_t e = 0; e < c.nnz(); e++)
    for (int m = 0; m < r; m++) checkCoordinate(t, m, c.coords[e * r + m]);
  // Copy the element bytes of each entry (exact for every type).
  // Zeros under a Dense last level are implicit, not stored entries: they are dropped
  // (dense -> CSR stores the non-zeros); zeros stored by a sparse level are kept.
  const size_t esize = static_cast<size_t>(datatypeSize(t.var.datatype()));
  TensorImpl& o = *out.impl_;
  const auto* v = static_cast<const unsigned char*>(t.storage.raw.vals);
  bool dropZeros = r > 0 && levelFormat(t.var.format(), r - 1).full();
  if (!dropZeros && !anyFlagLevel(t.var.format())) {
    o.pendingCoords = std::move(c.coords);
    if (c.nnz() > 0) o.pendingVals.assign(v, v + static_cast<size_t>(c.nnz()) * esize);
  } else {
    // Entry e is vals[at[e]] (bitmap levels skip absent slots); copied byte for byte.
    std::vector<unsigned char> zero(esize, 0);
    for (int64_t e = 0; e < c.nnz(); e++) {
      const unsigned char* ve = v + static_cast<size_t>(at[e]) * esize;
      if (dropZeros && std::memcmp(ve, zero.data(), esize) == 0) continue;
      o.pendingCoords.insert(o.pendingCoords.end(), c.coords.begin() + e * r, c.coords.begin() + (e + 1) * r);
      o.pendingVals.insert(o.pendingVals.end(), ve, ve + esize);
    }
  }
  out.pack();
  return out;
}

double TensorBase::at(const std::vector<int64_t>& coords) const {
  const TensorImpl& t = checkedImpl(impl_);
  checkArity(t, coords.size());
  for (size_t m = 0; m < coords.size(); m++) checkCoordinate(t, static_cast<int>(m), coords[m]);
  const tessel_tensor_t& raw = t.storage.raw;
  const int r = order();
  const Format& f = t.var.format();
  const IndexWidth cw = f.crdWidth();
  // Current candidate positions [lo, hi) of the level just walked (the root: [0, 1)).
  int64_t lo = 0, hi = 1;
  for (int k = 0; k < r && lo < hi; k++) {
    const int64_t c = coords[f.modeOfLevel(k)];
    const LevelKind kind = f.level(k);
    int64_t b, e;
    if (kind == LevelKind::Singleton) {
      b = lo;
      e = hi;
      TESSEL_CHECK(hi <= raw.crd_size[k], "tensor " + t.var.name() + ": singleton crd array too short");
    } else {
      TESSEL_CHECK(hi - lo == 1, "tensor " + t.var.name() + ": ambiguous parent position");
      childRange(t, k, lo, b, e);
      const LevelFormat& lf = levelFormat(f, k);
      if (lf.locatable()) {
        lo = b + c;
        hi = lo + 1;
        if (lf.hasFlagArray() && !static_cast<const uint8_t*>(raw.crd[k])[lo]) hi = lo;  // absent
        continue;
      }
    }
    // Coordinates in [b, e) are sorted (the prefix above is equal): binary search.
    auto crdAt = [&](int64_t q) { return readIndex(raw.crd[k], cw, q); };
    int64_t l = b, h = e;
    while (l < h) {
      int64_t mid = l + (h - l) / 2;
      if (crdAt(mid) < c) l = mid + 1; else h = mid;
    }
    int64_t first = l;
    h = e;
    while (l < h) {
      int64_t mid = l + (h - l) / 2;
      if (crdAt(mid) <= c) l = mid + 1; else h = mid;
    }
    lo = first;
    hi = l;
  }
  double sum = 0;
  for (int64_t p = lo; p < hi; p++) {
    TESSEL_CHECK(p < raw.vals_size, "tensor " + t.var.name() + ": position beyond the values array");
    sum += readValue(t.var.datatype(), raw.vals, p);
  }
  return sum;
}

const Assignment& TensorBase::assignment() const {
  const TensorImpl& t = checkedImpl(impl_);
  if (!t.assignment)
    throw NotationError("tensor " + t.var.name() +
                        " has no assignment (write e.g. A(i,j) = B(i,j) before evaluating)");
  return *t.assignment;
}

void TensorBase::setAssignment(const Assignment& a) {
  TensorImpl& t = checkedImpl(impl_);
  Assignment stored = a;
  // The left-hand side names this tensor; owning it there would make the tensor own
  // itself and never be freed. (checkAssignment keeps the output off the right.)
  if (a.lhs.defined() && a.lhs.node().tensor == t.var) {
    auto lhs = std::make_shared<ExprNode>(a.lhs.node());
    lhs->binding = std::shared_ptr<TensorImpl>(std::shared_ptr<TensorImpl>(), &t);  // aliasing, no owner
    stored.lhs = IndexExpr(std::move(lhs));
  }
  t.assignment = std::move(stored);
}

}  // namespace tessel
