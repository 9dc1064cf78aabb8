// Synthetic tensor generators. splitmix64 keeps results identical across platforms
// (std distributions are implementation-defined).
#include "tessel/generate.h"

#include <algorithm>
#include <unordered_set>

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

}  // namespace

CooData generateUniformMatrix(int64_t rows, int64_t cols, double nnzPerRow, uint64_t seed) {
  checkDims({rows, cols});
  if (nnzPerRow < 0) throw UserError("generator: negative non-zeros per row");
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
  long double space = 1;
  for (auto d : dims) space *= static_cast<long double>(d);
  if (static_cast<long double>(nnz) > space)
    throw UserError("generator: " + std::to_string(nnz) + " non-zeros do not fit the tensor");
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

}  // namespace tessel
