// The .tsb binary tensor file: writer, validating copy reader, and mmap reader.
// The layout is documented in include/tessel/binary_format.h.
#include "tessel/binary_format.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "format/level_format.h"
#include "io/file_bytes.h"
#include "io/binary_ranges.h"
#include "io/io_util.h"
#include "runtime/array_alloc.h"
#include "tessel/error.h"

static_assert(std::endian::native == std::endian::little,
              "the .tsb reader/writer assumes a little-endian host");

namespace tessel {

namespace {

constexpr char kMagic[8] = {'T', 'E', 'S', 'S', 'E', 'L', 'T', 'B'};
constexpr int64_t kHeaderSize = 768;
constexpr int64_t kAlign = 64;
// Header field offsets.
constexpr int64_t kOffVersion = 8, kOffHeaderSize = 12, kOffType = 16, kOffOrder = 20,
                  kOffPosWidth = 24, kOffCrdWidth = 28, kOffLevels = 32, kOffModes = 48,
                  kOffDims = 64, kOffArrays = 192, kOffVals = 704, kOffFileSize = 720,
                  kOffPayloadSum = 728, kOffHeaderSum = 736;

// ---- checksum ----------------------------------------------------------------------

constexpr uint64_t P1 = 0x9E3779B185EBCA87ULL, P2 = 0xC2B2AE3D27D4EB4FULL,
                   P3 = 0x165667B19E3779F9ULL, P4 = 0x85EBCA77C2B2AE63ULL,
                   P5 = 0x27D4EB2F165667C5ULL;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t rd64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint32_t rd32(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t mixRound(uint64_t acc, uint64_t w) {
  acc += w * P2;
  acc = rotl(acc, 31);
  return acc * P1;
}
inline uint64_t mergeRound(uint64_t h, uint64_t v) {
  h ^= mixRound(0, v);
  return h * P1 + P4;
}

// ---- little-endian header fields ----------------------------------------------------

void put32(unsigned char* b, int64_t off, uint32_t v) { std::memcpy(b + off, &v, 4); }
void put64(unsigned char* b, int64_t off, uint64_t v) { std::memcpy(b + off, &v, 8); }
uint32_t get32(const unsigned char* b, int64_t off) { return rd32(b + off); }
int64_t get64(const unsigned char* b, int64_t off) { return static_cast<int64_t>(rd64(b + off)); }

uint32_t typeCode(Datatype t) {
  switch (t) {
    case Datatype::Bool: return 0;
    case Datatype::Int32: return 1;
    case Datatype::Int64: return 2;
    case Datatype::Float32: return 3;
    case Datatype::Float64: return 4;
  }
  return 255;
}
const Datatype kTypes[] = {Datatype::Bool, Datatype::Int32, Datatype::Int64, Datatype::Float32,
                           Datatype::Float64};
uint8_t levelCode(LevelKind k) {
  switch (k) {
    case LevelKind::Dense: return 0;
    case LevelKind::Compressed: return 1;
    case LevelKind::CompressedNU: return 2;
    case LevelKind::Singleton: return 3;
    case LevelKind::Bitmap: return 255;  // not in version 1 of the format (writeBinary refuses)
  }
  return 255;
}
const LevelKind kLevels[] = {LevelKind::Dense, LevelKind::Compressed, LevelKind::CompressedNU,
                             LevelKind::Singleton};

int64_t widthBytes(IndexWidth w) { return w == IndexWidth::W32 ? 4 : 8; }
int64_t widthMax(IndexWidth w) { return w == IndexWidth::W32 ? INT32_MAX : INT64_MAX; }
int64_t alignUp(int64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

[[noreturn]] void fail(const std::string& path, int64_t byte, const std::string& msg) {
  throw FileError(path + ":byte " + std::to_string(byte), msg);
}

/// One array of the payload as the header describes it.
struct ArrayDesc {
  int64_t offset = 0, count = 0, elemBytes = 0;
  int64_t field = 0;  // header offset of the offset field (for messages)
  int level = -1;     // -1: vals
  bool isPos = false;
  const char* what() const { return level < 0 ? "vals" : isPos ? "pos" : "crd"; }
  int64_t bytes() const { return count * elemBytes; }
};

/// The header, decoded and validated.
struct Layout {
  Datatype type = Datatype::Float64;
  Format format;
  std::vector<int64_t> dims;  // per mode
  ArrayDesc pos[TESSEL_MAX_ORDER], crd[TESSEL_MAX_ORDER], vals;
  uint64_t payloadSum = 0;
  int64_t fileSize = 0;
  int order() const { return static_cast<int>(dims.size()); }
  /// Arrays in payload order (present ones only).
  std::vector<const ArrayDesc*> arrays() const {
    std::vector<const ArrayDesc*> out;
    for (int k = 0; k < order(); k++) {
      if (pos[k].elemBytes) out.push_back(&pos[k]);
      if (crd[k].elemBytes) out.push_back(&crd[k]);
    }
    out.push_back(&vals);
    return out;
  }
};

std::string levelName(const ArrayDesc& a) {
  return a.level < 0 ? std::string("vals array")
                     : "level " + std::to_string(a.level) + " " + a.what() + " array";
}

/// Validates a decoded header against the actual file size. Nothing is allocated beyond
/// the header's own small vectors.
Layout decodeHeader(const std::string& path, const unsigned char* h, int64_t actualSize) {
  auto corrupt = [&](int64_t byte, const std::string& what) -> void {
    fail(path, byte, "corrupted header: " + what);
  };
  if (std::memcmp(h, kMagic, 8) != 0)
    fail(path, 0, "not a tessel binary tensor file (bad magic; expected \"TESSELTB\")");
  uint32_t version = get32(h, kOffVersion);
  if (version != kBinaryFormatVersion)
    fail(path, kOffVersion,
         "unsupported format version " + std::to_string(version) + " (this tessel reads version " +
             std::to_string(kBinaryFormatVersion) + ")");
  uint64_t storedSum = static_cast<uint64_t>(get64(h, kOffHeaderSum));
  uint64_t sum = binaryChecksum(h, kOffHeaderSum, 0);
  if (storedSum != sum) corrupt(kOffHeaderSum, "checksum mismatch in header");
  for (int64_t i = kOffHeaderSum + 8; i < kHeaderSize; i++)
    if (h[i]) corrupt(i, "reserved byte is not zero");
  if (get32(h, kOffHeaderSize) != kHeaderSize)
    corrupt(kOffHeaderSize, "header size " + std::to_string(get32(h, kOffHeaderSize)) +
                                ", expected " + std::to_string(kHeaderSize));
  Layout L;
  L.fileSize = get64(h, kOffFileSize);
  if (L.fileSize > actualSize)
    fail(path, actualSize,
         "truncated: needs " + std::to_string(L.fileSize) + " bytes, file has " +
             std::to_string(actualSize));
  if (L.fileSize != actualSize)
    corrupt(kOffFileSize, "file size " + std::to_string(L.fileSize) + " but the file has " +
                              std::to_string(actualSize) + " bytes (trailing data)");
  uint32_t tc = get32(h, kOffType);
  if (tc >= 5) corrupt(kOffType, "unknown datatype code " + std::to_string(tc));
  L.type = kTypes[tc];
  uint32_t order = get32(h, kOffOrder);
  if (order > TESSEL_MAX_ORDER)
    corrupt(kOffOrder, "order " + std::to_string(order) + " exceeds " +
                           std::to_string(TESSEL_MAX_ORDER));
  uint32_t pwBits = get32(h, kOffPosWidth), cwBits = get32(h, kOffCrdWidth);
  if (pwBits != 32 && pwBits != 64) corrupt(kOffPosWidth, "pos width " + std::to_string(pwBits));
  if (cwBits != 32 && cwBits != 64) corrupt(kOffCrdWidth, "crd width " + std::to_string(cwBits));
  const IndexWidth pw = pwBits == 32 ? IndexWidth::W32 : IndexWidth::W64;
  const IndexWidth cw = cwBits == 32 ? IndexWidth::W32 : IndexWidth::W64;
  std::vector<LevelKind> levels;
  std::vector<int> modes;
  for (uint32_t k = 0; k < TESSEL_MAX_ORDER; k++) {
    uint8_t lc = h[kOffLevels + k], mc = h[kOffModes + k];
    if (k >= order) {
      if (lc || mc) corrupt(kOffLevels + k, "unused level slot " + std::to_string(k) + " is set");
      if (get64(h, kOffDims + 8 * k))
        corrupt(kOffDims + 8 * k, "unused dimension slot " + std::to_string(k) + " is set");
      continue;
    }
    if (lc >= 4) corrupt(kOffLevels + k, "unknown level kind " + std::to_string(lc));
    if (mc >= order) corrupt(kOffModes + k, "mode " + std::to_string(mc) + " out of range");
    levels.push_back(kLevels[lc]);
    modes.push_back(mc);
    int64_t d = get64(h, kOffDims + 8 * k);
    if (d < 0) corrupt(kOffDims + 8 * k, "negative dimension " + std::to_string(d));
    L.dims.push_back(d);
  }
  try {
    L.format = Format(levels, modes, pw, cw);
  } catch (const FormatError& e) {
    corrupt(kOffLevels, std::string("invalid format: ") + e.what());
  }
  for (uint32_t m = 0; m < order; m++)
    if (L.dims[m] > 0 && L.dims[m] - 1 > widthMax(cw))
      corrupt(kOffDims + 8 * m, "dimension " + std::to_string(L.dims[m]) + " does not fit the " +
                                    std::to_string(cwBits) + "-bit crd width");

  auto checkArray = [&](ArrayDesc& a) {
    std::string nm = levelName(a);
    if (a.count < 0) corrupt(a.field + 8, nm + ": negative count");
    if (a.offset < 0 || a.offset % kAlign != 0 || (a.count > 0 && a.offset < kHeaderSize))
      corrupt(a.field, nm + ": bad offset " + std::to_string(a.offset));
    int64_t bytes, end;
    if (__builtin_mul_overflow(a.count, a.elemBytes, &bytes) ||
        __builtin_add_overflow(a.offset, bytes, &end))
      corrupt(a.field + 8, nm + ": " + std::to_string(a.count) + " elements overflow int64");
    if (end > actualSize)
      fail(path, a.field,
           "truncated: " + nm + " needs " + std::to_string(end) + " bytes, file has " +
               std::to_string(actualSize));
  };
  auto noArray = [&](int64_t field, const std::string& what) {
    if (get64(h, field) || get64(h, field + 8)) corrupt(field, what + " must be empty");
  };

  int64_t P = 1;  // positions of the level above
  for (uint32_t k = 0; k < order; k++) {
    const int64_t base = kOffArrays + 32 * k;
    const int mode = modes[k];
    const int64_t N = L.dims[mode];
    const std::string lv = "level " + std::to_string(k);
    switch (levels[k]) {
      case LevelKind::Dense: {
        noArray(base, lv + " (dense) pos array");
        noArray(base + 16, lv + " (dense) crd array");
        if (__builtin_mul_overflow(P, N, &P))
          corrupt(kOffDims + 8 * mode, lv + ": positions overflow int64 (dimensions too large)");
        break;
      }
      case LevelKind::Compressed:
      case LevelKind::CompressedNU: {
        ArrayDesc& pa = L.pos[k];
        pa = {get64(h, base), get64(h, base + 8), widthBytes(pw), base, static_cast<int>(k), true};
        ArrayDesc& ca = L.crd[k];
        ca = {get64(h, base + 16), get64(h, base + 24), widthBytes(cw), base + 16,
              static_cast<int>(k), false};
        int64_t want;
        if (__builtin_add_overflow(P, int64_t{1}, &want) || pa.count != want)
          corrupt(base + 8, lv + " pos count " + std::to_string(pa.count) + ", expected " +
                                (want == INT64_MIN ? std::string("overflow") : std::to_string(want)) +
                                " (parent positions + 1)");
        checkArray(pa);
        checkArray(ca);
        if (ca.count > widthMax(pw))
          corrupt(base + 24, lv + " crd count " + std::to_string(ca.count) +
                                 " does not fit the pos width");
        P = ca.count;
        break;
      }
      case LevelKind::Singleton: {
        noArray(base, lv + " (singleton) pos array");
        ArrayDesc& ca = L.crd[k];
        ca = {get64(h, base + 16), get64(h, base + 24), widthBytes(cw), base + 16,
              static_cast<int>(k), false};
        if (ca.count != P)
          corrupt(base + 24, lv + " crd count " + std::to_string(ca.count) + ", expected " +
                                 std::to_string(P) + " (one per parent position)");
        checkArray(ca);
        break;
      }
      case LevelKind::Bitmap:  // no level code maps to it (kLevels)
        throw InternalError("readBinary: a bitmap level code in " + std::string(lv));
    }
  }
  for (uint32_t k = order; k < TESSEL_MAX_ORDER; k++) {
    noArray(kOffArrays + 32 * k, "unused level slot");
    noArray(kOffArrays + 32 * k + 16, "unused level slot");
  }
  L.vals = {get64(h, kOffVals), get64(h, kOffVals + 8), datatypeSize(L.type), kOffVals, -1, false};
  if (L.vals.count != P)
    corrupt(kOffVals + 8, "vals count " + std::to_string(L.vals.count) + ", expected " +
                              std::to_string(P) + " (positions of the last level)");
  checkArray(L.vals);
  L.payloadSum = static_cast<uint64_t>(get64(h, kOffPayloadSum));
  return L;
}

uint64_t payloadChecksum(const Layout& L, const std::vector<const unsigned char*>& data) {
  uint64_t h = 0;
  auto arrays = L.arrays();
  for (size_t i = 0; i < arrays.size(); i++) h = binaryChecksum(data[i], static_cast<size_t>(arrays[i]->bytes()), h);
  return h;
}

// ---- structural validation of the payload ---------------------------------------------

template <typename I>
int64_t firstBadPos(const I* p, int64_t n, int64_t last) {
  if (n == 0) return 0;
  if (p[0] != 0) return 0;
  bool bad = false;
  for (int64_t i = 1; i < n; i++) bad |= p[i] < p[i - 1];
  if (bad)
    for (int64_t i = 1; i < n; i++)
      if (p[i] < p[i - 1]) return i;
  if (static_cast<int64_t>(p[n - 1]) != last) return n - 1;
  return -1;
}

template <typename I>
int64_t firstBadCrd(const I* c, int64_t n, int64_t dim) {
  bool bad = false;
  const uint64_t d = static_cast<uint64_t>(dim);
  for (int64_t i = 0; i < n; i++) bad |= static_cast<uint64_t>(static_cast<int64_t>(c[i])) >= d;
  if (bad)
    for (int64_t i = 0; i < n; i++)
      if (static_cast<uint64_t>(static_cast<int64_t>(c[i])) >= d) return i;
  return -1;
}

template <typename P, typename C>
int64_t firstUnsorted(const P* pos, int64_t positions, const C* c, bool strict) {
  for (int64_t p = 0; p < positions; p++) {
    int64_t b = static_cast<int64_t>(pos[p]), e = static_cast<int64_t>(pos[p + 1]);
    bool bad = false;
    if (strict)
      for (int64_t i = b + 1; i < e; i++) bad |= c[i] <= c[i - 1];
    else
      for (int64_t i = b + 1; i < e; i++) bad |= c[i] < c[i - 1];
    if (bad)
      for (int64_t i = b + 1; i < e; i++)
        if (strict ? c[i] <= c[i - 1] : c[i] < c[i - 1]) return i;
  }
  return -1;
}

int64_t readIdx(const void* a, int64_t bytes, int64_t i) {
  return bytes == 4 ? static_cast<const int32_t*>(a)[i] : static_cast<const int64_t*>(a)[i];
}

/// Checks the arrays in `raw` (as laid out by `L`); throws FileError naming the byte.
void validateArrays(const std::string& path, const Layout& L, const tessel_tensor_t& raw) {
  const Format& f = L.format;
  const int64_t pwB = widthBytes(f.posWidth()), cwB = widthBytes(f.crdWidth());
  auto bad = [&](const ArrayDesc& a, int64_t i, const std::string& what) {
    fail(path, a.offset + i * a.elemBytes,
         "corrupted payload: " + levelName(a) + " element " + std::to_string(i) + " " + what);
  };
  for (int k = 0; k < L.order(); k++) {
    LevelKind kind = f.level(k);
    if (kind == LevelKind::Dense) continue;
    const int64_t N = L.dims[f.modeOfLevel(k)];
    if (kind != LevelKind::Singleton) {
      const ArrayDesc& a = L.pos[k];
      int64_t i = pwB == 4 ? firstBadPos(static_cast<const int32_t*>(raw.pos[k]), a.count, L.crd[k].count)
                           : firstBadPos(static_cast<const int64_t*>(raw.pos[k]), a.count, L.crd[k].count);
      if (i >= 0)
        bad(a, i, "= " + std::to_string(readIdx(raw.pos[k], pwB, i)) +
                      " (pos must start at 0, never decrease, and end at the crd count " +
                      std::to_string(L.crd[k].count) + ")");
    }
    const ArrayDesc& c = L.crd[k];
    int64_t i = cwB == 4 ? firstBadCrd(static_cast<const int32_t*>(raw.crd[k]), c.count, N)
                         : firstBadCrd(static_cast<const int64_t*>(raw.crd[k]), c.count, N);
    if (i >= 0)
      bad(c, i, "= " + std::to_string(readIdx(raw.crd[k], cwB, i)) + " is outside [0, " +
                    std::to_string(N) + ")");
    if (kind != LevelKind::Singleton) {
      const bool strict = kind == LevelKind::Compressed;
      const int64_t positions = L.pos[k].count - 1;
      const void* pp = raw.pos[k];
      const void* cp = raw.crd[k];
      if (pwB == 4 && cwB == 4)
        i = firstUnsorted(static_cast<const int32_t*>(pp), positions, static_cast<const int32_t*>(cp), strict);
      else if (pwB == 4)
        i = firstUnsorted(static_cast<const int32_t*>(pp), positions, static_cast<const int64_t*>(cp), strict);
      else if (cwB == 4)
        i = firstUnsorted(static_cast<const int64_t*>(pp), positions, static_cast<const int32_t*>(cp), strict);
      else
        i = firstUnsorted(static_cast<const int64_t*>(pp), positions, static_cast<const int64_t*>(cp), strict);
      if (i >= 0)
        bad(c, i, strict ? "is not above the previous coordinate of its segment (must be sorted and unique)"
                         : "is below the previous coordinate of its segment (must be sorted)");
    }
  }
  if (L.type == Datatype::Bool) {
    const auto* v = static_cast<const unsigned char*>(raw.vals);
    for (int64_t i = 0; i < L.vals.count; i++)
      if (v[i] > 1) bad(L.vals, i, "is not a valid bool (0 or 1)");
  }
}

// ---- file handles ---------------------------------------------------------------------

/// Opens (regular files only), reads and validates the header, and loads the whole file:
/// copied when `copy` and small, else mapped read-only with a fault guard (file_bytes.h).
/// Reads and validates the header of the open file `fd` of `size` bytes into L; closes
/// fd and rethrows on failure.
void readHeader(const std::string& path, int fd, int64_t size, Layout& L) {
  unsigned char h[kHeaderSize];
  std::memset(h, 0, sizeof h);
  int64_t got = 0;
  while (got < std::min<int64_t>(size, kHeaderSize)) {
    ssize_t r = ::pread(fd, h + got, static_cast<size_t>(std::min<int64_t>(size, kHeaderSize) - got), got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int err = errno;
      ::close(fd);
      throw FileError(path, std::string("cannot read: ") + std::strerror(err));
    }
    if (r == 0) break;
    got += r;
  }
  try {
    if (got >= 8 && std::memcmp(h, kMagic, 8) != 0)
      fail(path, 0, "not a tessel binary tensor file (bad magic; expected \"TESSELTB\")");
    if (got < kHeaderSize)
      fail(path, got, "truncated: needs " + std::to_string(kHeaderSize) + " bytes, file has " +
                          std::to_string(size));
    L = decodeHeader(path, h, size);
  } catch (...) {
    ::close(fd);
    throw;
  }
}

std::shared_ptr<io_detail::FileBytes> openAndLoad(const std::string& path, Layout& L, bool populate,
                                                  bool copy) {
  int64_t size = 0;
  const int fd = io_detail::openRegularFile(path, size);
  readHeader(path, fd, size, L);
  return io_detail::FileBytes::load(path, fd, size, copy, populate);  // owns fd from here
}

/// Padding between and after the arrays must be zero (it is not covered by the checksum).
void checkPadding(const std::string& path, const Layout& L, const unsigned char* base) {
  int64_t cursor = kHeaderSize;
  auto zeros = [&](int64_t from, int64_t to) {
    for (int64_t i = from; i < to; i++)
      if (base[i]) fail(path, i, "corrupted payload: nonzero padding byte");
  };
  for (const ArrayDesc* a : L.arrays()) {
    if (a->offset > cursor) zeros(cursor, a->offset);
    cursor = std::max(cursor, a->offset + a->bytes());
  }
  zeros(cursor, L.fileSize);
}

void verifyPayload(const std::string& path, const Layout& L, const unsigned char* base) {
  std::vector<const unsigned char*> data;
  for (const ArrayDesc* a : L.arrays()) data.push_back(base + a->offset);
  uint64_t sum = payloadChecksum(L, data);
  if (sum != L.payloadSum) fail(path, kHeaderSize, "checksum mismatch in payload");
}

std::string defaultName(const std::string& path, const std::string& name) {
  if (!name.empty()) return name;
  std::string stem = std::filesystem::path(path).stem().string();
  return stem.empty() ? "T" : stem;
}

/// Frees a tessel_tensor_t's arrays unless released.
struct RawOwner {
  tessel_tensor_t raw{};
  bool owned = true;
  ~RawOwner() {
    if (!owned) return;
    for (int k = 0; k < TESSEL_MAX_ORDER; k++) {
      std::free(raw.pos[k]);
      std::free(raw.crd[k]);
    }
    std::free(raw.vals);
  }
};

void fillShape(const Layout& L, tessel_tensor_t& raw) {
  raw.order = L.order();
  for (int k = 0; k < L.order(); k++) {
    raw.dims[k] = L.dims[L.format.modeOfLevel(k)];
    raw.pos_size[k] = L.pos[k].count;
    raw.crd_size[k] = L.crd[k].count;
  }
  raw.vals_size = L.vals.count;
}

TensorBase makeTensor(const std::string& path, const std::string& name, const Layout& L) {
  try {
    return TensorBase(name, L.type, L.dims, L.format);
  } catch (const UserError& e) {
    fail(path, kOffDims, std::string("corrupted header: ") + e.what());
  }
}

}  // namespace

uint64_t binaryChecksum(const void* data, size_t n, uint64_t seed) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  const unsigned char* end = p + n;
  uint64_t h;
  if (n >= 32) {
    uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
    while (end - p >= 32) {
      v1 = mixRound(v1, rd64(p));
      v2 = mixRound(v2, rd64(p + 8));
      v3 = mixRound(v3, rd64(p + 16));
      v4 = mixRound(v4, rd64(p + 24));
      p += 32;
    }
    h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
    h = mergeRound(h, v1);
    h = mergeRound(h, v2);
    h = mergeRound(h, v3);
    h = mergeRound(h, v4);
  } else {
    h = seed + P5;
  }
  h += static_cast<uint64_t>(n);
  while (end - p >= 8) {
    h ^= mixRound(0, rd64(p));
    h = rotl(h, 27) * P1 + P4;
    p += 8;
  }
  if (end - p >= 4) {
    h ^= static_cast<uint64_t>(rd32(p)) * P1;
    h = rotl(h, 23) * P2 + P3;
    p += 4;
  }
  while (p < end) {
    h ^= static_cast<uint64_t>(*p) * P5;
    h = rotl(h, 11) * P1;
    p++;
  }
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  h ^= h >> 32;
  return h;
}

bool isBinaryTensorPath(const std::string& path) {
  return path.size() > 4 && io_detail::equalsIgnoreCase(std::string_view(path).substr(path.size() - 4), ".tsb");
}

Format defaultBinaryFormat(int order) {
  if (order == 1) return Format({LevelKind::Compressed});
  std::vector<LevelKind> levels;
  for (int k = 0; k < order; k++) levels.push_back(k == 0 ? LevelKind::Dense : LevelKind::Compressed);
  return Format(levels);
}

void writeBinary(const std::string& path, const TensorBase& t) {
  if (!t.defined()) throw UserError("writeBinary: " + path + ": undefined tensor");
  if (!t.impl()->pendingVals.empty())
    throw UserError("writeBinary: " + path + ": tensor " + t.name() +
                    " has inserted entries that are not packed; call pack() first");
  const tessel_tensor_t& raw = t.raw();
  const Format& f = t.format();
  const int order = t.order();
  for (int k = 0; k < order; k++)
    if (levelFormat(f, k).hasFlagArray())
      throw FormatError("writeBinary: " + path + ": tensor " + t.name() + ": level " + std::to_string(k) +
                        " is " + levelFormat(f, k).name() + "; bitmap levels cannot be written to .tsb yet "
                        "(convert it, e.g. tessel convert -f ds)");
  if (order > TESSEL_MAX_ORDER || (order > 0 && raw.order != order))
    throw UserError("writeBinary: " + path + ": tensor " + t.name() + " has no storage");

  unsigned char h[kHeaderSize];
  std::memset(h, 0, sizeof h);
  std::memcpy(h, kMagic, 8);
  put32(h, kOffVersion, kBinaryFormatVersion);
  put32(h, kOffHeaderSize, kHeaderSize);
  put32(h, kOffType, typeCode(t.datatype()));
  put32(h, kOffOrder, static_cast<uint32_t>(order));
  put32(h, kOffPosWidth, static_cast<uint32_t>(f.posWidth()));
  put32(h, kOffCrdWidth, static_cast<uint32_t>(f.crdWidth()));
  for (int k = 0; k < order; k++) {
    h[kOffLevels + k] = levelCode(f.level(k));
    h[kOffModes + k] = static_cast<unsigned char>(f.modeOfLevel(k));
    put64(h, kOffDims + 8 * k, static_cast<uint64_t>(t.dim(k)));
  }
  // Layout: arrays in payload order, each aligned.
  struct Piece {
    const void* data;
    int64_t bytes;
    int64_t offset;
  };
  std::vector<Piece> pieces;
  int64_t cursor = kHeaderSize;
  auto place = [&](int64_t field, const void* data, int64_t count, int64_t elem) {
    int64_t bytes = count * elem;
    put64(h, field, static_cast<uint64_t>(cursor));
    put64(h, field + 8, static_cast<uint64_t>(count));
    pieces.push_back({data, bytes, cursor});
    cursor = alignUp(cursor + bytes);
  };
  for (int k = 0; k < order; k++) {
    const int64_t base = kOffArrays + 32 * k;
    switch (f.level(k)) {
      case LevelKind::Dense: break;
      case LevelKind::Compressed:
      case LevelKind::CompressedNU:
        place(base, raw.pos[k], raw.pos_size[k], widthBytes(f.posWidth()));
        place(base + 16, raw.crd[k], raw.crd_size[k], widthBytes(f.crdWidth()));
        break;
      case LevelKind::Singleton:
        place(base + 16, raw.crd[k], raw.crd_size[k], widthBytes(f.crdWidth()));
        break;
      case LevelKind::Bitmap: break;  // refused above
    }
  }
  place(kOffVals, raw.vals, raw.vals_size, datatypeSize(t.datatype()));
  const int64_t fileSize = cursor;
  put64(h, kOffFileSize, static_cast<uint64_t>(fileSize));
  uint64_t psum = 0;
  for (const Piece& p : pieces) psum = binaryChecksum(p.data, static_cast<size_t>(p.bytes), psum);
  put64(h, kOffPayloadSum, psum);
  put64(h, kOffHeaderSum, binaryChecksum(h, kOffHeaderSum, 0));
  // The tensor must be self-consistent (what a reader will check).
  Layout check = decodeHeader(path, h, fileSize);
  validateArrays(path, check, raw);

  io_detail::AtomicFileWriter out(path);
  out.write(std::string_view(reinterpret_cast<const char*>(h), kHeaderSize));
  int64_t written = kHeaderSize;
  static const char zeros[kAlign] = {};
  constexpr int64_t kChunk = int64_t(1) << 20;
  for (const Piece& p : pieces) {
    if (p.offset > written) out.write(std::string_view(zeros, static_cast<size_t>(p.offset - written)));
    const char* d = static_cast<const char*>(p.data);
    for (int64_t i = 0; i < p.bytes; i += kChunk)
      out.write(std::string_view(d + i, static_cast<size_t>(std::min(kChunk, p.bytes - i))));
    written = p.offset + p.bytes;
  }
  if (fileSize > written) out.write(std::string_view(zeros, static_cast<size_t>(fileSize - written)));
  out.commit();
}

namespace io_detail {

BinaryLayout openBinaryLayout(const std::string& path, int& fd) {
  int64_t size = 0;
  fd = openRegularFile(path, size);
  Layout L;
  readHeader(path, fd, size, L);  // closes fd when it throws
  BinaryLayout out;
  out.type = L.type;
  out.format = L.format;
  out.dims = L.dims;
  auto range = [](const ArrayDesc& a) { return BinaryArrayRange{a.offset, a.count, a.elemBytes}; };
  for (int k = 0; k < L.order(); k++) {
    out.pos.push_back(range(L.pos[k]));
    out.crd.push_back(range(L.crd[k]));
  }
  out.vals = range(L.vals);
  return out;
}

}  // namespace io_detail

BinaryHeader readBinaryHeader(const std::string& path) {
  int fd = -1;
  io_detail::BinaryLayout L = io_detail::openBinaryLayout(path, fd);
  ::close(fd);
  return BinaryHeader{L.type, L.format, L.dims, L.vals.count};
}

TensorBase readBinary(const std::string& path, const std::string& name) {
  Layout L;
  auto m = openAndLoad(path, L, true, false);  // copied out below: no snapshot needed
  const unsigned char* base = m->data();
#ifdef MADV_SEQUENTIAL
  if (m->mapped()) ::madvise(const_cast<unsigned char*>(base), m->size(), MADV_SEQUENTIAL);
#endif
  verifyPayload(path, L, base);
  checkPadding(path, L, base);
  TensorBase t = makeTensor(path, defaultName(path, name), L);
  RawOwner o;
  fillShape(L, o.raw);
  auto copy = [&](const ArrayDesc& a) -> void* {
    size_t bytes = static_cast<size_t>(a.bytes());
    io_detail::requireMemory(static_cast<long double>(bytes), path + ": the " + levelName(a));
    void* p = allocArray(bytes);  // big ones on huge pages: the copy faults per 2 MiB
    if (!p)
      throw OutOfMemoryError(path + ": cannot allocate " + std::to_string(bytes) + " bytes for the " +
                             levelName(a));
    if (bytes) std::memcpy(p, base + a.offset, bytes);
    return p;
  };
  for (int k = 0; k < L.order(); k++) {
    if (L.pos[k].elemBytes) o.raw.pos[k] = copy(L.pos[k]);
    if (L.crd[k].elemBytes) o.raw.crd[k] = copy(L.crd[k]);
  }
  o.raw.vals = copy(L.vals);
  m->checkIntact();
  validateArrays(path, L, o.raw);
  t.impl()->storage.release();
  t.impl()->storage.raw = o.raw;
  t.impl()->packed = true;
  o.owned = false;
  return t;
}

TensorBase mapBinary(const std::string& path, const std::string& name, bool verify) {
  Layout L;
  auto m = openAndLoad(path, L, verify, true);
  auto* base = const_cast<unsigned char*>(m->data());
  if (verify) verifyPayload(path, L, base);
  checkPadding(path, L, base);
  TensorBase t = makeTensor(path, defaultName(path, name), L);
  tessel_tensor_t raw{};
  fillShape(L, raw);
  for (int k = 0; k < L.order(); k++) {
    if (L.pos[k].elemBytes) raw.pos[k] = base + L.pos[k].offset;
    if (L.crd[k].elemBytes) raw.crd[k] = base + L.crd[k].offset;
  }
  raw.vals = base + L.vals.offset;
  validateArrays(path, L, raw);
  m->checkIntact();  // faults while validating surface here; later ones end the process
  Storage& s = t.impl()->storage;
  s.release();
  s.raw = raw;
  s.external = m;
  t.impl()->packed = true;
  return t;
}

}  // namespace tessel
