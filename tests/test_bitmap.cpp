// The Bitmap level (b): storage (flags in crd[k], values in every slot), conversion,
// and kernels with bitmap inputs and outputs against the reference evaluator and
// hand-computed values, at 1, 2 and 4 threads.
#include <gtest/gtest.h>

#include "format/level_format.h"
#include "support/test_support.h"
#include "tessel/binary_format.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

std::mt19937_64 rng(20261125);

CooData rnd(std::vector<int64_t> dims, double density) { return randomCoo(dims, density, rng, false); }
Format F(const std::string& s) { return Format::parse(s); }

CooData coo(std::vector<int64_t> dims, std::vector<int64_t> coords, std::vector<double> values) {
  CooData c;
  c.dims = std::move(dims);
  c.coords = std::move(coords);
  c.values = std::move(values);
  return c;
}

const uint8_t* flags(const TensorBase& t, int k) { return static_cast<const uint8_t*>(t.raw().crd[k]); }

/// Runs expr at 1, 2 and 4 threads against the reference evaluator.
void checkThreads(const std::string& expr, const std::vector<Operand>& in, const std::string& out) {
  for (int threads : {1, 2, 4})
    EXPECT_TRUE(matchesReferenceEachRound(expr, {in}, F(out), threads)) << expr << " out " << out << " threads " << threads;
}
/// One thread only: the format sweeps (each case is a JIT compile).
void check(const std::string& expr, const std::vector<Operand>& in, const std::string& out) {
  for (int threads : {1})
    EXPECT_TRUE(matchesReferenceEachRound(expr, {in}, F(out), threads)) << expr << " out " << out << " threads " << threads;
}

}  // namespace

TEST(Bitmap, FormatAndLevelFormat) {
  EXPECT_EQ(F("db").str(), "db");
  EXPECT_EQ(F("b").level(0), LevelKind::Bitmap);
  EXPECT_EQ(levelLetter(LevelKind::Bitmap), 'b');
  const LevelFormat& b = levelFormat(F("db"), 1);
  EXPECT_TRUE(b.locatable());
  EXPECT_TRUE(b.hasFlagArray());
  EXPECT_TRUE(b.supportsInsert());
  EXPECT_FALSE(b.full());
  EXPECT_FALSE(b.compact());
  EXPECT_FALSE(b.hasPosArray());
  EXPECT_EQ(b.positions(3, 5, 0), 15);
  EXPECT_EQ(b.flagArraySize(3, 5), 15);
  EXPECT_THROW(F("ub"), FormatError);  // only singletons follow a non-unique level
}

TEST(Bitmap, PackFlagsValuesAndBack) {
  // x = [1, _, 4, 0(stored)]: slot 1 absent, slot 3 present with an explicit zero.
  CooData x = coo({4}, {0, 2, 3}, {1.0, 4.0, 0.0});
  TensorBase t = makeTensor("x", x, F("b"));
  ASSERT_EQ(t.raw().crd_size[0], 4);
  ASSERT_EQ(t.raw().vals_size, 4);
  const uint8_t* fl = flags(t, 0);
  EXPECT_EQ(fl[0], 1);
  EXPECT_EQ(fl[1], 0);
  EXPECT_EQ(fl[2], 1);
  EXPECT_EQ(fl[3], 1);
  const double* v = static_cast<const double*>(t.raw().vals);
  EXPECT_EQ(v[1], 0.0);  // absent slots hold zero
  EXPECT_EQ(t.at({2}), 4.0);
  EXPECT_EQ(t.at({1}), 0.0);
  CooData back = t.toCoo();
  EXPECT_EQ(back.coords, (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(back.values, (std::vector<double>{1.0, 4.0, 0.0}));
  EXPECT_EQ(storageProblem(t), "");
}

TEST(Bitmap, ConvertToAndFromOtherFormats) {
  CooData A = rnd({7, 5}, 0.3);
  for (auto from : {"ds", "ss", "uq", "dd", "db", "bb", "bs", "ds:1,0"})
    for (auto to : {"db", "bb", "ds", "uq", "dd", "db:1,0"}) {
      TensorBase a = makeTensor("A", A, F(from));
      TensorBase b = a.convert(F(to));
      std::string why;
      EXPECT_TRUE(tensorsClose(A, b.toCoo(), 0, 0, &why)) << from << " -> " << to << ": " << why;
      EXPECT_EQ(storageProblem(b), "") << from << " -> " << to;
    }
}

TEST(Bitmap, EmptyFullAndZeroSized) {
  TensorBase e = makeTensor("e", coo({5}, {}, {}), F("b"));
  EXPECT_EQ(e.toCoo().nnz(), 0);
  for (int64_t q = 0; q < 5; q++) EXPECT_EQ(flags(e, 0)[q], 0);
  TensorBase z = makeTensor("z", coo({0, 3}, {}, {}), F("db"));
  EXPECT_EQ(z.raw().crd_size[1], 0);
  EXPECT_EQ(z.toCoo().nnz(), 0);
  CooData full = rnd({6, 4}, 1.0);
  CooData A = rnd({6, 4}, 0.4);
  for (auto& [name, data] : std::vector<std::pair<std::string, CooData>>{
           {"empty", coo({6, 4}, {}, {})}, {"full", full}, {"zero", coo({0, 4}, {}, {})}}) {
    SCOPED_TRACE(name);
    CooData other = name == "zero" ? coo({0, 4}, {}, {}) : A;
    checkThreads("C(i,j) = A(i,j) + B(i,j)", {{"A", other, F("ds")}, {"B", data, F("db")}}, "db");
    checkThreads("C(i,j) = A(i,j) * B(i,j)", {{"A", other, F("ds")}, {"B", data, F("db")}}, "ds");
  }
  checkThreads("y(i) = A(i,j) * x(j)", {{"A", coo({0, 3}, {}, {}), F("ds")}, {"x", coo({3}, {}, {}), F("b")}}, "b");
  checkThreads("y(i) = A(i,j) * x(j)", {{"A", A, F("ds")}, {"x", coo({4}, {}, {}), F("b")}}, "b");
}

TEST(Bitmap, SpMVHandComputed) {
  // A = [[1 0 2], [0 3 0]] (CSR), x = [1, _, 4] (slot 1 absent): y = [1 + 8, 3 * 0] = [9, 0].
  CooData A = coo({2, 3}, {0, 0, 0, 2, 1, 1}, {1, 2, 3});
  CooData x = coo({3}, {0, 2}, {1, 4});
  for (auto yf : {"b", "d", "s"}) {
    Tensor<double> y("y", {2}, F(yf));
    TensorBase At = makeTensor("A", A, F("ds")), xt = makeTensor("x", x, F("b"));
    IndexVar i("i"), j("j");
    y(i) = At(i, j) * xt(j);
    y.evaluate();
    EXPECT_EQ(y.at({0}), 9.0) << yf;
    EXPECT_EQ(y.at({1}), 0.0) << yf;
  }
  // Union of bitmaps: y = x + z with x = [1, _, 4], z = [_, _, 5] -> [1, _, 9]; slot 1 stays absent.
  Tensor<double> y("y", {3}, F("b"));
  TensorBase xt = makeTensor("x", x, F("b")), zt = makeTensor("z", coo({3}, {2}, {5}), F("b"));
  IndexVar i("i");
  y(i) = xt(i) + zt(i);
  y.evaluate();
  EXPECT_EQ(y.toCoo().coords, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(y.at({2}), 9.0);
  // Intersection: x * z -> only slot 2 present (4 * 5).
  Tensor<double> w("w", {3}, F("b"));
  w(i) = xt(i) * zt(i);
  w.evaluate();
  EXPECT_EQ(w.toCoo().coords, (std::vector<int64_t>{2}));
  EXPECT_EQ(w.at({2}), 20.0);
}

TEST(Bitmap, SpMVAgainstReference) {
  CooData A = rnd({31, 23}, 0.2), x = rnd({23}, 0.4), xd = rnd({23}, 1.0);
  for (auto af : {"ds", "db", "bs", "dd", "uq"})
    for (auto yf : {"b", "d", "s"}) {
      check("y(i) = A(i,j) * x(j)", {{"A", A, F(af)}, {"x", x, F("b")}}, yf);
      check("y(i) = A(i,j) * x(j)", {{"A", A, F(af)}, {"x", xd, F("d")}}, yf);
    }
  checkThreads("y(i) = A(i,j) * x(j)", {{"A", A, F("ds")}, {"x", x, F("b")}}, "b");
  checkThreads("y(i) = A(i,j) * x(j)", {{"A", A, F("db")}, {"x", xd, F("d")}}, "b");
}

TEST(Bitmap, ElementwiseVectorsAndMatrices) {
  CooData x = rnd({40}, 0.3), z = rnd({40}, 0.5);
  for (auto xf : {"b", "s", "d"})
    for (auto yf : {"b", "s", "d"}) {
      check("y(i) = x(i) + z(i)", {{"x", x, F(xf)}, {"z", z, F("b")}}, yf);
      check("y(i) = x(i) * z(i)", {{"x", x, F(xf)}, {"z", z, F("b")}}, yf);
    }
  check("y(i) = x(i) - 2 * z(i)", {{"x", x, F("s")}, {"z", z, F("b")}}, "b");
  CooData A = rnd({17, 13}, 0.3), B = rnd({17, 13}, 0.25), C = rnd({17, 13}, 0.2);
  for (auto bf : {"db", "bb"})
    for (auto of : {"db", "ds", "dd"}) {
      check("C(i,j) = A(i,j) + B(i,j)", {{"A", A, F("ds")}, {"B", B, F(bf)}}, of);
      check("C(i,j) = A(i,j) * B(i,j)", {{"A", A, F("ds")}, {"B", B, F(bf)}}, of);
    }
  checkThreads("C(i,j) = A(i,j) + B(i,j)", {{"A", A, F("ds")}, {"B", B, F("db")}}, "db");
  checkThreads("C(i,j) = A(i,j) * B(i,j)", {{"A", A, F("ds")}, {"B", B, F("db")}}, "ds");
  checkThreads("D(i,j) = A(i,j) + B(i,j) * E(i,j)", {{"A", A, F("db")}, {"B", B, F("bb")}, {"E", C, F("ds")}}, "db");
}

TEST(Bitmap, MatrixProductsAndReductions) {
  CooData A = rnd({11, 9}, 0.3), B = rnd({9, 7}, 0.3);
  for (auto af : {"db", "ds"})
    for (auto bf : {"db", "ds"})
      for (auto of : {"dd", "ds", "db"}) check("C(i,j) = A(i,k) * B(k,j)", {{"A", A, F(af)}, {"B", B, F(bf)}}, of);
  checkThreads("C(i,j) = A(i,k) * B(k,j)", {{"A", A, F("db")}, {"B", B, F("ds")}}, "ds");
  checkThreads("a = A(i,j) * A(i,j)", {{"A", A, F("db")}}, "");
}

TEST(Bitmap, OutputUnderAppendedLevelIsRefused) {
  CooData A = rnd({5, 4}, 0.5);
  try {
    matchesReference("C(i,j) = A(i,j)", {{"A", A, F("ds")}}, F("sb"));
    FAIL() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot assemble C (sb): level 1 is bitmap"), std::string::npos) << e.what();
  }
}

TEST(Bitmap, BinaryFilesRefuseBitmapLevels) {
  TensorBase t = makeTensor("x", rnd({6}, 0.5), F("b"));
  auto dir = makeScratchDir("tessel-bitmap");
  try {
    writeBinary((dir / "x.tsb").string(), t);
    ADD_FAILURE() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("bitmap levels cannot be written to .tsb yet"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tensor x: level 0"), std::string::npos) << e.what();
  }
  removeScratchDir(dir);
}
