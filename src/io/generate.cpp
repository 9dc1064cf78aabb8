// Synthetic tensor generators. splitmix64 keeps results identical across platforms
// (std distributions are implementation-defined).
#include "tessel/generate.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <unordered_set>

#include "io/io_util.h"
#include "tessel/error.h"

namespace tessel {

namespace {

struct SplitMix {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n).
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
  double value() { return static_cast<double>(next() >> 11) * 0x1.0p-53 * 2.0 - 1.0; }
};

void checkDims(const std::vector<int64_t>& dims) {
  for (auto d : dims)
    if (d < 0) throw DimensionError("generator: negative dimension " + std::to_string(d));
}

/// Product of the dims as long double (no overflow).
long double spaceOf(const std::vector<int64_t>& dims) {
  long double space = 1;
  for (auto d : dims) space *= static_cast<long double>(d);
  return space;
}

/// Throws before allocating when `nnz` entries of this order (plus `perEntryExtra` bytes
/// of scratch each) would need more than kGenerateMaxBytes or the memory limit.
void checkMemory(const char* kind, long double nnz, size_t order, long double perEntryExtra = 0) {
  long double bytes = nnz * (8.0L * static_cast<long double>(order) + 8.0L + perEntryExtra);
  if (bytes > static_cast<long double>(kGenerateMaxBytes)) {
    char count[32];
    std::snprintf(count, sizeof count, "%.3g", static_cast<double>(nnz));
    throw GenerateError(std::string("generator ") + kind + ": " + count +
                        " non-zeros would need about " +
                        std::to_string(static_cast<int64_t>(bytes / (1 << 20))) +
                        " MiB, more than the 8 GiB limit");
  }
  io_detail::requireMemory(bytes, std::string("generator ") + kind);
}

/// Entries given as sorted row-major linear indices (space < 2^63) into a CooData, with
/// values drawn in that order.
CooData fromLinear(const std::vector<int64_t>& dims, const std::vector<uint64_t>& lin, SplitMix& r) {
  CooData c;
  c.dims = dims;
  size_t order = dims.size();
  c.coords.resize(lin.size() * order);
  c.values.resize(lin.size());
  for (size_t e = 0; e < lin.size(); e++) {
    uint64_t x = lin[e];
    for (size_t m = order; m-- > 0;) {
      c.coords[e * order + m] = static_cast<int64_t>(x % static_cast<uint64_t>(dims[m]));
      x /= static_cast<uint64_t>(dims[m]);
    }
    c.values[e] = r.value();
  }
  return c;
}

/// Sort the entries of `c` row-major (values follow their coordinates).
void sortRowMajor(CooData& c) {
  size_t order = c.dims.size();
  std::vector<int64_t> perm(c.values.size());
  for (size_t e = 0; e < perm.size(); e++) perm[e] = static_cast<int64_t>(e);
  std::sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
    return std::lexicographical_compare(c.coords.begin() + x * order, c.coords.begin() + (x + 1) * order,
                                        c.coords.begin() + y * order, c.coords.begin() + (y + 1) * order);
  });
  std::vector<int64_t> coords(c.coords.size());
  std::vector<double> values(c.values.size());
  for (size_t e = 0; e < perm.size(); e++) {
    std::copy_n(c.coords.begin() + perm[e] * order, order, coords.begin() + e * order);
    values[e] = c.values[perm[e]];
  }
  c.coords = std::move(coords);
  c.values = std::move(values);
}

// ---- Fixed-point arithmetic for the Zipf weights (integers only: identical everywhere).
// Q61: 1.0 == 2^61, so values below 4 fit in 63 bits.
constexpr uint64_t kOneQ61 = uint64_t{1} << 61;
uint64_t mulQ61(uint64_t a, uint64_t b) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >> 61);
}
/// floor(sqrt(x)) for a 128-bit x whose root fits in 64 bits.
uint64_t isqrt128(unsigned __int128 x) {
  unsigned __int128 res = 0, bit = static_cast<unsigned __int128>(1) << 126;
  while (bit > x) bit >>= 2;
  while (bit != 0) {
    if (x >= res + bit) {
      x -= res + bit;
      res = (res >> 1) + bit;
    } else {
      res >>= 1;
    }
    bit >>= 2;
  }
  return static_cast<uint64_t>(res);
}
/// log2(x) in Q32.32 for 1 <= x < 2^62.
uint64_t log2Q32(uint64_t x) {
  int n = 63 - __builtin_clzll(x);
  uint64_t y = x << (61 - n);  // x / 2^n in Q61, in [1, 2)
  uint64_t result = static_cast<uint64_t>(n) << 32;
  for (int bit = 31; bit >= 0; bit--) {
    y = mulQ61(y, y);
    if (y >= 2 * kOneQ61) {
      y >>= 1;
      result |= uint64_t{1} << bit;
    }
  }
  return result;
}
/// 2^-e in Q61 for e in Q32.32.
uint64_t exp2NegQ61(uint64_t e) {
  static const std::vector<uint64_t> roots = [] {
    // roots[j] = 2^(-2^-(j+1)) in Q61, j = 0..31, by repeated square roots of 1/2.
    std::vector<uint64_t> r;
    uint64_t v = kOneQ61 / 2;
    for (int j = 0; j < 32; j++) {
      v = isqrt128(static_cast<unsigned __int128>(v) << 61);
      r.push_back(v);
    }
    return r;
  }();
  uint64_t whole = e >> 32;
  if (whole >= 61) return 0;
  uint64_t w = kOneQ61;
  for (int j = 0; j < 32; j++)
    if (e & (uint64_t{1} << (31 - j))) w = mulQ61(w, roots[j]);
  return w >> whole;
}

/// Zipf sampler over [0, n): P(rank k) ~ (k+1)^-skew, ranks mapped to indices by a
/// random permutation. Cumulative weights are integers (Q37 per weight).
struct ZipfSampler {
  std::vector<uint64_t> cdf;   // inclusive prefix sums
  std::vector<int64_t> index;  // rank -> index
  ZipfSampler(int64_t n, double skew, SplitMix& r) {
    // skew in Q32.32: multiplication by a power of two and a conversion are exact.
    uint64_t skewQ = static_cast<uint64_t>(skew * 4294967296.0);
    cdf.resize(static_cast<size_t>(n));
    uint64_t sum = 0;
    for (int64_t k = 0; k < n; k++) {
      uint64_t l = log2Q32(static_cast<uint64_t>(k) + 1);
      unsigned __int128 ex = (static_cast<unsigned __int128>(l) * skewQ) >> 32;
      uint64_t w = ex >= (static_cast<unsigned __int128>(61) << 32) ? 0
                                                                     : exp2NegQ61(static_cast<uint64_t>(ex)) >> 24;
      sum += w;
      cdf[static_cast<size_t>(k)] = sum;
    }
    index.resize(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; k++) index[static_cast<size_t>(k)] = k;
    for (int64_t k = n - 1; k > 0; k--) std::swap(index[static_cast<size_t>(k)], index[static_cast<size_t>(r.below(k + 1))]);
  }
  int64_t draw(SplitMix& r) const {
    uint64_t total = cdf.back();
    uint64_t u = static_cast<uint64_t>((static_cast<unsigned __int128>(r.next()) * total) >> 64);
    auto it = std::upper_bound(cdf.begin(), cdf.end(), u);
    return index[static_cast<size_t>(it - cdf.begin())];
  }
};

}  // namespace

CooData generateUniformMatrix(int64_t rows, int64_t cols, double nnzPerRow, uint64_t seed) {
  checkDims({rows, cols});
  if (!(nnzPerRow >= 0)) throw GenerateError("generator uniform: negative non-zeros per row");
  checkMemory("uniform", static_cast<long double>(rows) * std::min<long double>(nnzPerRow, cols), 2);
  CooData c;
  c.dims = {rows, cols};
  SplitMix r{seed};
  int64_t base = static_cast<int64_t>(nnzPerRow);
  double frac = nnzPerRow - static_cast<double>(base);
  std::vector<int64_t> picked;
  for (int64_t i = 0; i < rows; i++) {
    int64_t k = base + ((r.value() + 1) / 2 < frac ? 1 : 0);
    k = std::min(k, cols);
    picked.clear();
    if (k * 4 > cols) {  // dense-ish row: choose by scanning
      for (int64_t j = 0; j < cols && static_cast<int64_t>(picked.size()) < k; j++)
        if (r.below(cols - j) < k - static_cast<int64_t>(picked.size())) picked.push_back(j);
    } else {
      std::unordered_set<int64_t> seen;
      while (static_cast<int64_t>(picked.size()) < k) {
        int64_t j = r.below(cols);
        if (seen.insert(j).second) picked.push_back(j);
      }
      std::sort(picked.begin(), picked.end());
    }
    for (int64_t j : picked) {
      c.coords.push_back(i);
      c.coords.push_back(j);
      c.values.push_back(r.value());
    }
  }
  return c;
}

CooData generateBandedMatrix(int64_t n, int64_t halfBandwidth, uint64_t seed) {
  checkDims({n});
  if (halfBandwidth < 0) throw GenerateError("generator banded: negative half bandwidth");
  checkMemory("banded", static_cast<long double>(n) * (2.0L * std::min(halfBandwidth, n) + 1), 2);
  CooData c;
  c.dims = {n, n};
  SplitMix r{seed};
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = std::max<int64_t>(0, i - halfBandwidth); j <= std::min(n - 1, i + halfBandwidth); j++) {
      c.coords.push_back(i);
      c.coords.push_back(j);
      c.values.push_back(r.value());
    }
  return c;
}

CooData generateUniformTensor(const std::vector<int64_t>& dims, int64_t nnz, uint64_t seed) {
  checkDims(dims);
  CooData c;
  c.dims = dims;
  long double space = spaceOf(dims);
  if (nnz < 0) throw GenerateError("generator: negative number of non-zeros");
  if (static_cast<long double>(nnz) > space)
    throw GenerateError("generator: " + std::to_string(nnz) + " non-zeros do not fit the tensor");
  checkMemory("uniform tensor", static_cast<long double>(nnz), dims.size(), 64 + 8.0L * dims.size());
  SplitMix r{seed};
  std::unordered_set<std::string> seen;
  std::vector<int64_t> coord(dims.size());
  while (c.nnz() < nnz) {
    for (size_t m = 0; m < dims.size(); m++) coord[m] = r.below(dims[m]);
    std::string key(reinterpret_cast<const char*>(coord.data()), coord.size() * sizeof(int64_t));
    if (!seen.insert(key).second) continue;
    c.add(coord, r.value());
  }
  return c;
}

CooData generateDense(const std::vector<int64_t>& dims, uint64_t seed) {
  checkDims(dims);
  CooData c;
  c.dims = dims;
  checkMemory("dense", spaceOf(dims), dims.size());
  SplitMix r{seed};
  int64_t total = 1;
  for (auto d : dims) total *= d;
  std::vector<int64_t> coord(dims.size());
  for (int64_t lin = 0; lin < total; lin++) {
    int64_t x = lin;
    for (int m = static_cast<int>(dims.size()) - 1; m >= 0; m--) {
      coord[m] = x % dims[m];
      x /= dims[m];
    }
    c.add(coord, r.value());
  }
  return c;
}

CooData generateDensityTensor(const std::vector<int64_t>& dims, double density, uint64_t seed) {
  checkDims(dims);
  if (!(density >= 0 && density <= 1))
    throw GenerateError("generator density: density must be in [0, 1], got " + std::to_string(density));
  long double space = spaceOf(dims);
  long double want = static_cast<long double>(density) * space;
  checkMemory("density", want, dims.size(), 16);
  int64_t nnz = static_cast<int64_t>(want + 0.5L);
  if (space >= 9.0e18L) {  // linear indices would overflow: sample coordinates per mode
    CooData c = generateUniformTensor(dims, nnz, seed);
    sortRowMajor(c);
    return c;
  }
  uint64_t total = static_cast<uint64_t>(space);
  SplitMix r{seed};
  std::vector<uint64_t> lin;
  lin.reserve(static_cast<size_t>(nnz));
  if (static_cast<uint64_t>(nnz) * 2 > total) {
    // Dense-ish: selection sampling over every position (exactly nnz, already sorted).
    uint64_t need = static_cast<uint64_t>(nnz);
    for (uint64_t x = 0; x < total && need > 0; x++)
      if (static_cast<uint64_t>(r.below(static_cast<int64_t>(total - x))) < need) {
        lin.push_back(x);
        need--;
      }
  } else {
    std::unordered_set<uint64_t> seen;
    seen.reserve(static_cast<size_t>(nnz));
    while (static_cast<int64_t>(lin.size()) < nnz) {
      uint64_t x = static_cast<uint64_t>(r.below(static_cast<int64_t>(total)));
      if (seen.insert(x).second) lin.push_back(x);
    }
    std::sort(lin.begin(), lin.end());
  }
  return fromLinear(dims, lin, r);
}

CooData generateRmat(int scale, double edgeFactor, double a, double b, double c, uint64_t seed) {
  if (scale < 0 || scale > 31)
    throw GenerateError("generator rmat: SCALE must be in [0, 31], got " + std::to_string(scale));
  if (!(edgeFactor >= 0))
    throw GenerateError("generator rmat: EDGE_FACTOR must be non-negative");
  if (!(a >= 0 && b >= 0 && c >= 0 && a + b + c <= 1))
    throw GenerateError("generator rmat: probabilities A, B, C must be non-negative with A+B+C <= 1");
  int64_t n = int64_t{1} << scale;
  long double edgesL = static_cast<long double>(edgeFactor) * static_cast<long double>(n);
  checkMemory("rmat", edgesL, 2, 8);
  int64_t edges = static_cast<int64_t>(edgesL + 0.5L);
  // Thresholds on a 64-bit uniform draw: exact (scaling by 2^64 is exact, the sums are
  // rounded once each, identically everywhere).
  auto threshold = [](double p) -> uint64_t {
    if (p >= 1) return UINT64_MAX;
    return static_cast<uint64_t>(p * 18446744073709551616.0);
  };
  uint64_t ta = threshold(a), tab = threshold(a + b), tabc = threshold(a + b + c);
  SplitMix r{seed};
  std::vector<uint64_t> keys(static_cast<size_t>(edges));
  for (auto& key : keys) {
    uint64_t i = 0, j = 0;
    for (int level = 0; level < scale; level++) {
      uint64_t u = r.next();
      uint64_t bi = u >= tab ? 1 : 0;                     // bottom half: c or d
      uint64_t bj = (u >= ta && u < tab) || u >= tabc ? 1 : 0;  // right half: b or d
      i = (i << 1) | bi;
      j = (j << 1) | bj;
    }
    key = (i << 32) | j;
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  CooData out;
  out.dims = {n, n};
  out.coords.resize(keys.size() * 2);
  out.values.assign(keys.size(), 1.0);
  for (size_t e = 0; e < keys.size(); e++) {
    out.coords[2 * e] = static_cast<int64_t>(keys[e] >> 32);
    out.coords[2 * e + 1] = static_cast<int64_t>(keys[e] & 0xffffffffu);
  }
  return out;
}

CooData generateSkewedTensor(const std::vector<int64_t>& dims, int64_t nnz, double skew, uint64_t seed) {
  checkDims(dims);
  if (dims.empty()) throw GenerateError("generator skewed: the tensor needs at least one mode");
  if (!(skew >= 0 && skew <= 8))
    throw GenerateError("generator skewed: SKEW must be in [0, 8], got " + std::to_string(skew));
  if (nnz < 0) throw GenerateError("generator skewed: negative number of non-zeros");
  long double dimSum = 0;
  for (auto d : dims) {
    if (d > (int64_t{1} << 27))
      throw GenerateError("generator skewed: dimension " + std::to_string(d) + " is larger than 2^27");
    dimSum += static_cast<long double>(d);
  }
  long double space = spaceOf(dims);
  if (static_cast<long double>(nnz) > space)
    throw GenerateError("generator skewed: " + std::to_string(nnz) + " non-zeros do not fit the tensor");
  // Entries plus hash-set scratch, and 16 bytes per index for the samplers.
  long double bytes = static_cast<long double>(nnz) * (16.0L * dims.size() + 56) + 16 * dimSum;
  if (bytes > static_cast<long double>(kGenerateMaxBytes))
    throw GenerateError("generator skewed: would need about " +
                        std::to_string(static_cast<int64_t>(bytes / (1 << 20))) +
                        " MiB, more than the 8 GiB limit");
  io_detail::requireMemory(bytes, "generator skewed");
  SplitMix r{seed};
  std::vector<ZipfSampler> samplers;
  for (auto d : dims) samplers.emplace_back(std::max<int64_t>(d, 1), skew, r);
  CooData c;
  c.dims = dims;
  if (nnz == 0) return c;
  size_t order = dims.size();
  bool linear = space < 9.0e18L;
  std::unordered_set<uint64_t> seenLin;
  std::unordered_set<std::string> seenKey;
  std::vector<int64_t> coord(order);
  int64_t attempts = 0, maxAttempts = 50 * nnz + 1000;
  c.coords.reserve(static_cast<size_t>(nnz) * order);
  while (c.nnz() < nnz) {
    if (++attempts > maxAttempts)
      throw GenerateError("generator skewed: could not place " + std::to_string(nnz) +
                          " distinct non-zeros with skew " + std::to_string(skew) +
                          " (the heavy slices are full); use fewer non-zeros or a smaller skew");
    for (size_t m = 0; m < order; m++) coord[m] = samplers[m].draw(r);
    bool fresh;
    if (linear) {
      uint64_t x = 0;
      for (size_t m = 0; m < order; m++) x = x * static_cast<uint64_t>(dims[m]) + static_cast<uint64_t>(coord[m]);
      fresh = seenLin.insert(x).second;
    } else {
      fresh = seenKey.insert(std::string(reinterpret_cast<const char*>(coord.data()), order * sizeof(int64_t))).second;
    }
    if (fresh) c.add(coord, 0.0);
  }
  sortRowMajor(c);
  for (auto& v : c.values) v = r.value();
  return c;
}

// ---- Specs.

namespace {

struct SpecKind {
  const char* name;
  const char* args;
};
constexpr SpecKind kSpecKinds[] = {
    {"uniform", "ROWS,COLS,NNZ_PER_ROW"}, {"density", "D1,D2[,D3...],DENSITY"},
    {"banded", "N,HALF_BANDWIDTH"},       {"rmat", "SCALE,EDGE_FACTOR[,A,B,C]"},
    {"skewed", "D1,D2,D3,NNZ[,SKEW]"},    {"dense", "D1[,D2...]"},
};

[[noreturn]] void badSpec(const SpecKind& k, const std::string& spec, const std::string& why) {
  throw GenerateError("generator spec '" + spec + "': " + why + "; expected " + k.name + ":" + k.args);
}

int64_t parseInt(const SpecKind& k, const std::string& spec, const std::string& s, const char* what) {
  int64_t v = 0;
  auto res = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || res.ec != std::errc() || res.ptr != s.data() + s.size())
    badSpec(k, spec, std::string(what) + " '" + s + "' is not an integer");
  if (v < 0) badSpec(k, spec, std::string(what) + " '" + s + "' is negative");
  return v;
}

double parseReal(const SpecKind& k, const std::string& spec, const std::string& s, const char* what) {
  double v = 0;
  auto res = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || res.ec != std::errc() || res.ptr != s.data() + s.size() || !(v == v) ||
      v > 1e300 || v < -1e300)
    badSpec(k, spec, std::string(what) + " '" + s + "' is not a number");
  if (v < 0) badSpec(k, spec, std::string(what) + " '" + s + "' is negative");
  return v;
}

}  // namespace

std::string generateSpecHelp() {
  std::string s;
  for (const auto& k : kSpecKinds) s += std::string(k.name) + ":" + k.args + "\n";
  return s;
}

CooData generateFromSpec(const std::string& spec, uint64_t seed) {
  auto colon = spec.find(':');
  std::string kind = spec.substr(0, colon);
  const SpecKind* k = nullptr;
  for (const auto& cand : kSpecKinds)
    if (kind == cand.name) k = &cand;
  if (!k) {
    std::string kinds;
    for (const auto& cand : kSpecKinds) kinds += (kinds.empty() ? "" : ", ") + std::string(cand.name);
    throw GenerateError("generator spec '" + spec + "': unknown kind '" + kind + "'; expected one of " + kinds);
  }
  if (colon == std::string::npos || colon + 1 == spec.size()) badSpec(*k, spec, "missing arguments");
  std::vector<std::string> args;
  std::string rest = spec.substr(colon + 1);
  size_t start = 0;
  while (true) {
    size_t comma = rest.find(',', start);
    args.push_back(rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  auto count = [&](size_t lo, size_t hi) {
    if (args.size() < lo || args.size() > hi)
      badSpec(*k, spec, std::to_string(args.size()) + " argument" + (args.size() == 1 ? "" : "s") + " given");
  };
  auto dimsOf = [&](size_t n) {
    std::vector<int64_t> dims;
    for (size_t m = 0; m < n; m++) dims.push_back(parseInt(*k, spec, args[m], "dimension"));
    return dims;
  };
  std::string name = k->name;
  if (name == "uniform") {
    count(3, 3);
    auto dims = dimsOf(2);
    return generateUniformMatrix(dims[0], dims[1], parseReal(*k, spec, args[2], "NNZ_PER_ROW"), seed);
  }
  if (name == "density") {
    count(2, 17);
    auto dims = dimsOf(args.size() - 1);
    double d = parseReal(*k, spec, args.back(), "DENSITY");
    if (d > 1) badSpec(*k, spec, "DENSITY '" + args.back() + "' is above 1");
    return generateDensityTensor(dims, d, seed);
  }
  if (name == "banded") {
    count(2, 2);
    auto dims = dimsOf(1);
    return generateBandedMatrix(dims[0], parseInt(*k, spec, args[1], "HALF_BANDWIDTH"), seed);
  }
  if (name == "rmat") {
    if (args.size() != 2 && args.size() != 5)
      badSpec(*k, spec, std::to_string(args.size()) + " arguments given");
    int64_t scale = parseInt(*k, spec, args[0], "SCALE");
    if (scale > 31) badSpec(*k, spec, "SCALE " + args[0] + " is above 31");
    double ef = parseReal(*k, spec, args[1], "EDGE_FACTOR");
    double a = 0.57, b = 0.19, c = 0.19;
    if (args.size() == 5) {
      a = parseReal(*k, spec, args[2], "A");
      b = parseReal(*k, spec, args[3], "B");
      c = parseReal(*k, spec, args[4], "C");
      if (a + b + c > 1) badSpec(*k, spec, "A+B+C is above 1");
    }
    return generateRmat(static_cast<int>(scale), ef, a, b, c, seed);
  }
  if (name == "skewed") {
    count(4, 5);
    auto dims = dimsOf(3);
    int64_t nnz = parseInt(*k, spec, args[3], "NNZ");
    double skew = args.size() == 5 ? parseReal(*k, spec, args[4], "SKEW") : 1.0;
    return generateSkewedTensor(dims, nnz, skew, seed);
  }
  // dense
  count(1, 16);
  return generateDense(dimsOf(args.size()), seed);
}

}  // namespace tessel
