// Deterministic generators: determinism, exact counts, structure, and spec errors.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tessel/generate.h"

namespace tessel {
namespace {

bool sameData(const CooData& a, const CooData& b) {
  return a.dims == b.dims && a.coords == b.coords && a.values == b.values;
}

/// Number of distinct coordinates.
size_t distinct(const CooData& c) {
  std::set<std::vector<int64_t>> s;
  int o = c.order();
  for (int64_t e = 0; e < c.nnz(); e++)
    s.insert(std::vector<int64_t>(c.coords.begin() + e * o, c.coords.begin() + (e + 1) * o));
  return s.size();
}

void expectInBounds(const CooData& c) {
  int o = c.order();
  ASSERT_EQ(c.coords.size(), static_cast<size_t>(c.nnz() * o));
  for (int64_t e = 0; e < c.nnz(); e++)
    for (int m = 0; m < o; m++) {
      ASSERT_GE(c.coords[e * o + m], 0);
      ASSERT_LT(c.coords[e * o + m], c.dims[m]);
    }
}

bool sortedRowMajor(const CooData& c) {
  int o = c.order();
  for (int64_t e = 1; e < c.nnz(); e++)
    if (!std::lexicographical_compare(c.coords.begin() + (e - 1) * o, c.coords.begin() + e * o,
                                      c.coords.begin() + e * o, c.coords.begin() + (e + 1) * o))
      return false;
  return true;
}

/// Non-zeros per index of mode m.
std::vector<int64_t> sliceSizes(const CooData& c, int m) {
  std::vector<int64_t> n(c.dims[m], 0);
  for (int64_t e = 0; e < c.nnz(); e++) n[c.coords[e * c.order() + m]]++;
  return n;
}

const std::vector<std::string> kSpecs = {"uniform:50,40,3.5", "density:30,20,0.1", "density:6,7,8,0.3",
                                         "banded:40,2",       "rmat:8,8",          "skewed:30,40,50,500",
                                         "skewed:30,40,50,500,1.5", "dense:3,4,5", "rmat:6,4,0.45,0.15,0.15"};

TEST(Generate, SameSeedSameDataDifferentSeedDifferentData) {
  for (const auto& spec : kSpecs) {
    CooData a = generateFromSpec(spec, 7), b = generateFromSpec(spec, 7), c = generateFromSpec(spec, 8);
    EXPECT_TRUE(sameData(a, b)) << spec;
    EXPECT_FALSE(sameData(a, c)) << spec;
    expectInBounds(a);
    EXPECT_EQ(distinct(a), static_cast<size_t>(a.nnz())) << spec << ": duplicate coordinates";
  }
}

/// FNV-1a over dims, coordinates and value bits.
uint64_t checksum(const CooData& c) {
  uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&](uint64_t x) {
    for (int k = 0; k < 8; k++) {
      h ^= (x >> (8 * k)) & 0xff;
      h *= 0x100000001b3ULL;
    }
  };
  for (auto d : c.dims) mix(static_cast<uint64_t>(d));
  for (auto x : c.coords) mix(static_cast<uint64_t>(x));
  for (double v : c.values) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    mix(bits);
  }
  return h;
}

TEST(Generate, OutputIsPinned) {
  // The same (spec, seed) must give these exact tensors on every machine and after any
  // refactoring; a change here changes every generated benchmark input.
  const std::vector<std::pair<std::string, uint64_t>> pinned = {
      {"uniform:50,40,3.5", 0x2f033b39a68b5563ULL},
      {"density:30,20,0.1", 0xb49ab0b7fe78683fULL},
      {"density:6,7,8,0.3", 0xf39b07b27651071fULL},
      {"banded:40,2", 0xbf51aee63c42afbeULL},
      {"rmat:8,8", 0x6224d6f6016d3b86ULL},
      {"skewed:30,40,50,500", 0x0e77b6eee2d46e19ULL},
      {"skewed:30,40,50,500,1.5", 0x3ed3caa5b003ff67ULL},
      {"dense:3,4,5", 0x62db48ae9821e827ULL},
      {"rmat:6,4,0.45,0.15,0.15", 0xfefccf8ebccf3313ULL},
  };
  for (const auto& [spec, sum] : pinned) EXPECT_EQ(checksum(generateFromSpec(spec, 42)), sum) << spec;
}

TEST(Generate, ExactCountsAndDims) {
  CooData u = generateFromSpec("uniform:100,50,4", 1);
  EXPECT_EQ(u.dims, (std::vector<int64_t>{100, 50}));
  EXPECT_EQ(u.nnz(), 400);
  CooData d = generateFromSpec("density:100,200,0.05", 1);
  EXPECT_EQ(d.dims, (std::vector<int64_t>{100, 200}));
  EXPECT_EQ(d.nnz(), 1000);
  EXPECT_TRUE(sortedRowMajor(d));
  CooData d3 = generateFromSpec("density:10,20,30,0.9", 2);  // dense-ish path
  EXPECT_EQ(d3.nnz(), 5400);
  EXPECT_TRUE(sortedRowMajor(d3));
  EXPECT_EQ(distinct(d3), 5400u);
  EXPECT_EQ(generateFromSpec("density:10,10,0", 1).nnz(), 0);
  EXPECT_EQ(generateFromSpec("density:10,10,1", 1).nnz(), 100);
  CooData dense = generateFromSpec("dense:3,4,5", 1);
  EXPECT_EQ(dense.nnz(), 60);
  CooData s = generateFromSpec("skewed:100,80,60,2000,1.2", 3);
  EXPECT_EQ(s.dims, (std::vector<int64_t>{100, 80, 60}));
  EXPECT_EQ(s.nnz(), 2000);
  EXPECT_TRUE(sortedRowMajor(s));
  CooData g = generateFromSpec("rmat:10,16", 1);
  EXPECT_EQ(g.dims, (std::vector<int64_t>{1024, 1024}));
  EXPECT_LE(g.nnz(), 16 * 1024);
  EXPECT_GT(g.nnz(), 8 * 1024);  // duplicates removed, but most edges are distinct
  EXPECT_TRUE(sortedRowMajor(g));
  for (double v : g.values) EXPECT_EQ(v, 1.0);
  for (double v : u.values) {
    EXPECT_GE(v, -1.0);
    EXPECT_LT(v, 1.0);
  }
}

TEST(Generate, BandedStructure) {
  int64_t n = 50, h = 3;
  CooData b = generateBandedMatrix(n, h, 5);
  EXPECT_EQ(b.dims, (std::vector<int64_t>{n, n}));
  EXPECT_EQ(b.nnz(), n * (2 * h + 1) - h * (h + 1));
  EXPECT_TRUE(sortedRowMajor(b));
  std::vector<int64_t> perRow(n, 0);
  for (int64_t e = 0; e < b.nnz(); e++) {
    int64_t i = b.coords[2 * e], j = b.coords[2 * e + 1];
    EXPECT_LE(std::abs(i - j), h);
    perRow[i]++;
  }
  for (int64_t i = h; i < n - h; i++) EXPECT_EQ(perRow[i], 2 * h + 1) << "row " << i;
  // Weak scaling: doubling n with the same band doubles the non-zeros (to within the corners).
  CooData b2 = generateBandedMatrix(2 * n, h, 5);
  EXPECT_EQ(b2.nnz() - b.nnz(), n * (2 * h + 1));
  EXPECT_EQ(generateBandedMatrix(3, 10, 1).nnz(), 9);  // band wider than the matrix: dense
}

TEST(Generate, RmatDegreesAreSkewed) {
  CooData g = generateRmat(14, 16, 0.57, 0.19, 0.19, 3);
  auto deg = sliceSizes(g, 0);
  int64_t maxDeg = *std::max_element(deg.begin(), deg.end());
  double mean = static_cast<double>(g.nnz()) / static_cast<double>(deg.size());
  EXPECT_GT(maxDeg, 20 * mean) << "max " << maxDeg << " mean " << mean;
  int64_t isolated = std::count(deg.begin(), deg.end(), 0);
  EXPECT_GT(isolated, 0);  // power-law graphs have many zero-out-degree vertices
  // Self-loops are kept.
  bool loop = false;
  for (int64_t e = 0; e < g.nnz(); e++) loop |= g.coords[2 * e] == g.coords[2 * e + 1];
  EXPECT_TRUE(loop);
  // a = b = c = 0.25 is uniform: far less skew.
  CooData u = generateRmat(14, 16, 0.25, 0.25, 0.25, 3);
  auto udeg = sliceSizes(u, 0);
  EXPECT_LT(*std::max_element(udeg.begin(), udeg.end()), 4 * 16);
}

TEST(Generate, SkewedSliceSizesAreSkewed) {
  CooData s = generateSkewedTensor({2000, 1500, 1000}, 100000, 1.0, 11);
  for (int m = 0; m < 3; m++) {
    auto sizes = sliceSizes(s, m);
    std::sort(sizes.rbegin(), sizes.rend());
    double mean = 100000.0 / static_cast<double>(sizes.size());
    EXPECT_GT(static_cast<double>(sizes[0]), 20 * mean) << "mode " << m;
    // The top 10% of slices hold most of the non-zeros.
    int64_t top = 0;
    for (size_t k = 0; k < sizes.size() / 10; k++) top += sizes[k];
    EXPECT_GT(top, 50000) << "mode " << m;
    // Heavy slices are scattered (not all at index 0).
    auto raw = sliceSizes(s, m);
    EXPECT_NE(std::max_element(raw.begin(), raw.end()) - raw.begin(), 0) << "mode " << m;
  }
  // skew 0: roughly uniform.
  CooData u = generateSkewedTensor({200, 200, 200}, 20000, 0.0, 11);
  auto sizes = sliceSizes(u, 0);
  EXPECT_LT(*std::max_element(sizes.begin(), sizes.end()), 3 * 100);
}

TEST(Generate, MalformedSpecs) {
  struct Case {
    std::string spec, mention;
  };
  std::vector<Case> cases = {
      {"", "unknown kind"},
      {"nope:1,2", "unknown kind 'nope'"},
      {"uniform", "uniform:ROWS,COLS,NNZ_PER_ROW"},
      {"uniform:", "uniform:ROWS,COLS,NNZ_PER_ROW"},
      {"uniform:10,10", "uniform:ROWS,COLS,NNZ_PER_ROW"},
      {"uniform:10,10,1,1", "uniform:ROWS,COLS,NNZ_PER_ROW"},
      {"uniform:10,x,1", "uniform:ROWS,COLS,NNZ_PER_ROW"},
      {"uniform:10,-3,1", "negative"},
      {"uniform:10,10,abc", "NNZ_PER_ROW"},
      {"uniform:10,,1", "uniform:ROWS,COLS,NNZ_PER_ROW"},
      {"uniform:1.5,10,1", "not an integer"},
      {"density:10", "density:D1,D2[,D3...],DENSITY"},
      {"density:10,10,1.5", "above 1"},
      {"density:10,10,nan", "density:D1,D2[,D3...],DENSITY"},
      {"banded:10", "banded:N,HALF_BANDWIDTH"},
      {"banded:10,2,3", "banded:N,HALF_BANDWIDTH"},
      {"rmat:10", "rmat:SCALE,EDGE_FACTOR[,A,B,C]"},
      {"rmat:40,16", "SCALE"},
      {"rmat:10,16,0.5,0.5", "rmat:SCALE,EDGE_FACTOR[,A,B,C]"},
      {"rmat:10,16,0.5,0.5,0.5", "A+B+C"},
      {"skewed:10,10,10", "skewed:D1,D2,D3,NNZ[,SKEW]"},
      {"skewed:10,10,10,5,1,2", "skewed:D1,D2,D3,NNZ[,SKEW]"},
      {"skewed:10,10,10,5,-1", "negative"},
      {"dense:", "dense:D1[,D2...]"},
      {"dense:3,,4", "dense:D1[,D2...]"},
  };
  for (const auto& c : cases) {
    try {
      generateFromSpec(c.spec, 1);
      ADD_FAILURE() << "no error for '" << c.spec << "'";
    } catch (const GenerateError& e) {
      EXPECT_NE(std::string(e.what()).find(c.mention), std::string::npos) << c.spec << ": " << e.what();
    }
  }
}

TEST(Generate, AbsurdSizesFailBeforeAllocating) {
  std::vector<std::string> specs = {
      "uniform:100000000,100000000,100",  // 1e10 non-zeros
      "density:1000000,1000000,0.5",      // 5e11
      "density:10,10,1e-300",             // fine: 0 non-zeros (checked below)
      "banded:10000000000,100",
      "rmat:31,64",
      "dense:100000,100000",
      "skewed:1000,1000,1000,2000000000",
      "skewed:1000,1000,1000,1001,0",  // fine
      "uniform:4,4,5",                 // fine: capped at 4 per row
  };
  for (const auto& spec : specs) {
    if (spec == "density:10,10,1e-300" || spec == "skewed:1000,1000,1000,1001,0" || spec == "uniform:4,4,5") {
      EXPECT_NO_THROW(generateFromSpec(spec, 1)) << spec;
      continue;
    }
    EXPECT_THROW(generateFromSpec(spec, 1), GenerateError) << spec;
  }
  // More non-zeros than the tensor holds.
  EXPECT_THROW(generateFromSpec("skewed:2,2,2,9", 1), GenerateError);
  EXPECT_THROW(generateUniformTensor({2, 2}, 5, 1), UserError);
  // Too many for the skew: the heavy slices fill up.
  EXPECT_THROW(generateSkewedTensor({10, 10, 10}, 1000, 3.0, 1), GenerateError);
  EXPECT_EQ(generateSkewedTensor({10, 10, 10}, 1000, 0.0, 1).nnz(), 1000);
}

}  // namespace
}  // namespace tessel
