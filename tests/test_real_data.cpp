// Differential tests on the real matrices and tensors in ../shared/data.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_support.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

Format F(const std::string& s) { return Format::parse(s); }

std::vector<std::string> files(const std::string& sub, const std::string& ext) {
  std::vector<std::string> r;
  std::string d = dataDir();
  if (d.empty() || !std::filesystem::is_directory(d + "/" + sub)) return r;
  for (auto& e : std::filesystem::directory_iterator(d + "/" + sub))
    if (e.path().extension() == ext) r.push_back(e.path().string());
  std::sort(r.begin(), r.end());
  return r;
}

}  // namespace

TEST(RealData, Matrices) {
  auto mats = files("matrices", ".mtx");
  if (mats.empty()) GTEST_SKIP() << "../shared/data/matrices not found: real-data tests skipped";
  std::mt19937_64 rng(3);
  for (auto& path : mats) {
    SCOPED_TRACE(path);
    CooData B = readMtx(path).data;
    int64_t m = B.dims[0], n = B.dims[1];
    CooData x = randomCoo({n}, 1.0, rng), X = randomCoo({n, 4}, 1.0, rng);
    for (auto f : {"ds", "ds:1,0", "uq"})
      EXPECT_TRUE(matchesReference("y(i) = B(i,j) * x(j)", {{"B", B, F(f)}, {"x", x, F("d")}}, F("d")));
    EXPECT_TRUE(matchesReference("Y(i,k) = B(i,j) * X(j,k)", {{"B", B, F("ds")}, {"X", X, F("dd")}}, F("dd")));
    EXPECT_TRUE(matchesReference("s = B(i,j) * B(i,j)", {{"B", B, F("ds")}}, F("")));
    if (m == n) {
      // B + B^T exercises automatic transposition of the second access.
      EXPECT_TRUE(matchesReference("A(i,j) = B(i,j) + C(j,i)", {{"B", B, F("ds")}, {"C", B, F("ds")}}, F("ds")));
    }
    if (B.nnz() <= 60000) {
      CooData Bt = B;
      Bt.dims = {n, m};
      for (int64_t e = 0; e < B.nnz(); e++) std::swap(Bt.coords[2 * e], Bt.coords[2 * e + 1]);
      EXPECT_TRUE(matchesReference("A(i,j) = B(i,k) * C(k,j)", {{"B", B, F("ds")}, {"C", Bt, F("ds")}}, F("ds")));
    }
  }
}

TEST(RealData, Tensors) {
  auto tns = files("tensors", ".tns");
  if (tns.empty()) GTEST_SKIP() << "../shared/data/tensors not found: real-data tests skipped";
  std::mt19937_64 rng(4);
  for (auto& path : tns) {
    SCOPED_TRACE(path);
    CooData B = readTns(path).data;
    CooData c = randomCoo({B.dims[2]}, 1.0, rng);
    CooData C = randomCoo({B.dims[1], 4}, 1.0, rng), D = randomCoo({B.dims[2], 4}, 1.0, rng);
    EXPECT_TRUE(matchesReference("A(i,j) = B(i,j,k) * c(k)", {{"B", B, F("dss")}, {"c", c, F("d")}}, F("ds")));
    EXPECT_TRUE(matchesReference("A(i,j) = B(i,j,k) * c(k)", {{"B", B, F("uqq")}, {"c", c, F("d")}}, F("ss")));
    EXPECT_TRUE(matchesReference("A(i,l) = B(i,j,k) * C(j,l) * D(k,l)",
                                 {{"B", B, F("sss")}, {"C", C, F("dd")}, {"D", D, F("dd")}}, F("dd")));
  }
}
