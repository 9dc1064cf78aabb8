// Semirings (tessel/operators.h): min_plus and max_times kernels against values
// computed by hand and against the reference evaluator, on every matrix format, dense
// and sparse outputs, empty rows and matrices, 1, 2 and 4 threads with the default
// parallel schedule and with split/parallelize; plus_times unchanged; the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "support/test_support.h"
#include "tessel/kernel.h"
#include "tessel/parser.h"
#include "tessel/reference.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// A (3x3): row 0 {0: 2, 2: -1}, row 1 empty, row 2 {1: 3}; x = [1, -2, 4].
const CooData kA = entries({3, 3}, {{{0, 0}, 2}, {{0, 2}, -1}, {{2, 1}, 3}});
const CooData kx = entries({3}, {{{0}, 1}, {{1}, -2}, {{2}, 4}});

struct Outcome {
  CooData result;    ///< the compiled kernel's output entries
  CooData expected;  ///< the reference evaluator's
  TensorBase output;
};

/// Compiles `expr` over `semiring` with `schedule` (text; "default" for the default
/// parallel schedule of `threads`), runs it on `threads` threads.
Outcome runOver(const std::string& expr, const Semiring& semiring, const std::vector<Operand>& inputs,
            const std::string& outName, const std::vector<int64_t>& outDims, const Format& outFormat,
            int threads = 1, const std::string& schedule = "") {
  std::map<std::string, TensorBase> tensors;
  for (const Operand& o : inputs) tensors.emplace(o.name, makeTensor(o.name, o.data, o.format));
  TensorBase out(outName, Datatype::Float64, outDims, outFormat);
  tensors.emplace(outName, out);
  Assignment a = parseAssignment(expr, tensors);
  a.semiring = semiring;
  Schedule s = schedule == "default" ? defaultParallelSchedule(a, threads)
               : schedule.empty()    ? Schedule()
                                     : parseSchedule(schedule, a);
  auto k = Kernel::compile(a, s);
  k->run(a, threads);
  return {out.toCoo(), referenceEvaluate(a), out};
}

/// Every entry of `r` is `want` (a dense vector; absent entries read as the zero).
void expectVector(const Outcome& r, const std::vector<double>& want, const Semiring& s, const std::string& what) {
  std::string why;
  EXPECT_TRUE(tensorsClose(r.expected, r.result, 1e-12, 1e-12, &why, s)) << what << ": " << why;
  std::vector<double> got(want.size(), s.zero());
  for (int64_t e = 0; e < r.result.nnz(); e++) got[r.result.coords[e]] = r.result.values[e];
  for (size_t i = 0; i < want.size(); i++) EXPECT_EQ(got[i], want[i]) << what << " at " << i;
}

}  // namespace

TEST(Semiring, Values) {
  Semiring mp = Semiring::byName("min_plus");
  EXPECT_EQ(mp.zero(), kInf);
  EXPECT_TRUE(mp.zeroAnnihilatesMul());
  EXPECT_EQ(mp.add.apply(3, 2), 2);
  EXPECT_EQ(mp.mul.apply(3, 2), 5);
  Semiring mt = Semiring::byName("max_times");
  EXPECT_EQ(mt.zero(), -kInf);
  EXPECT_FALSE(mt.zeroAnnihilatesMul());  // -inf * -2 is +inf: products are structural
  EXPECT_TRUE(Semiring::byName("plus_times").isPlusTimes());
  EXPECT_TRUE(Semiring() == Semiring::plusTimes());
  try {
    Semiring::byName("tropical");
    FAIL() << "unknown semiring accepted";
  } catch (const NotationError& e) {
    EXPECT_NE(std::string(e.what()).find("min_times, max_times, or_and"), std::string::npos) << e.what();
  }
}

// y(i) = min over stored j of A(i,j) + x(j) (max of A(i,j) * x(j)); a dense level stores
// every entry, its zeros included, so each format has its own hand-computed answer.
TEST(Semiring, SpMVEveryFormatByHand) {
  struct Case {
    const char* format;
    std::vector<double> minPlus, maxTimes;
  };
  const std::vector<Case> cases = {
      {"ds", {3, kInf, 1}, {2, -kInf, -6}},
      {"ss", {3, kInf, 1}, {2, -kInf, -6}},
      {"sd", {-2, kInf, 1}, {2, -kInf, 0}},   // rows 0 and 2 stored whole
      {"dd", {-2, -2, 1}, {2, 0, 0}},         // every entry stored
  };
  for (const Case& c : cases)
    for (const char* out : {"d", "s"}) {
      std::string what = std::string("A:") + c.format + " y:" + out;
      std::vector<Operand> in = {{"A", kA, Format::parse(c.format)}, {"x", kx, Format::parse("d")}};
      Outcome mp = runOver("y(i) = A(i,j) * x(j)", Semiring::minPlus(), in, "y", {3}, Format::parse(out));
      expectVector(mp, c.minPlus, Semiring::minPlus(), "min_plus " + what);
      Outcome mt = runOver("y(i) = A(i,j) * x(j)", Semiring::maxTimes(), in, "y", {3}, Format::parse(out));
      expectVector(mt, c.maxTimes, Semiring::maxTimes(), "max_times " + what);
      if (std::string(out) == "s" && (std::string(c.format) == "ds" || std::string(c.format) == "ss"))
        EXPECT_EQ(mp.result.nnz(), 2) << what << ": the empty row is not stored";
      if (std::string(out) == "d") EXPECT_EQ(mp.result.nnz(), 3) << what << ": a dense output holds inf";
    }
}

TEST(Semiring, SpMVThreadsAndSchedules) {
  std::mt19937_64 rng(5);
  CooData A = randomCoo({97, 61}, 0.08, rng), x = randomCoo({61}, 1.0, rng);
  for (const Semiring& s : {Semiring::minPlus(), Semiring::maxTimes()})
    for (int threads : {1, 2, 4})
      for (const char* schedule : {"default", "split(i,i0,i1,8),parallelize(i0,cpu_thread,no_races)",
                                   "pos(j,jp,A),split(jp,j0,j1,16),parallelize(j0,cpu_thread,temporary)"})
        for (const char* out : {"d", "s"}) {
          // A sparse vector output is appended in order: only the default schedule runs it.
          if (std::string(out) == "s" && std::string(schedule) != "default") continue;
          std::vector<Operand> in = {{"A", A, Format::parse("ds")}, {"x", x, Format::parse("d")}};
          Outcome r = runOver("y(i) = A(i,j) * x(j)", s, in, "y", {97}, Format::parse(out), threads, schedule);
          std::string why;
          EXPECT_TRUE(tensorsClose(r.expected, r.result, 1e-12, 1e-12, &why, s))
              << s.name << " " << threads << " threads, " << schedule << ", y:" << out << ": " << why;
        }
}

// One step of all-pairs shortest paths: D2(i,j) = min_k D(i,k) + D(k,j), D holding the
// edge weights and a stored 0 on the diagonal (so D2 is the paths of at most 2 edges).
TEST(Semiring, ShortestPathsStepByHand) {
  const CooData D = entries({4, 4}, {{{0, 0}, 0}, {{0, 1}, 1}, {{0, 2}, 5}, {{1, 1}, 0}, {{1, 2}, 2},
                                     {{2, 2}, 0}, {{2, 3}, 1}, {{3, 0}, 4}, {{3, 3}, 0}});
  const double want[4][4] = {{0, 1, 3, 6}, {kInf, 0, 2, 3}, {5, kInf, 0, 1}, {4, 5, 9, 0}};
  for (const char* fd : {"ds", "ss"})
    for (const char* fc : {"dd", "ds"})
      for (int threads : {1, 2, 4}) {
        std::vector<Operand> in = {{"A", D, Format::parse(fd)}, {"B", D, Format::parse("ds")}};
        Outcome r = runOver("C(i,j) = A(i,k) * B(k,j)", Semiring::minPlus(), in, "C", {4, 4}, Format::parse(fc),
                        threads, threads > 1 ? "default" : "");
        std::string what = std::string("A:") + fd + " C:" + fc + " threads " + std::to_string(threads);
        std::string why;
        EXPECT_TRUE(tensorsClose(r.expected, r.result, 0, 0, &why, Semiring::minPlus())) << what << ": " << why;
        for (int i = 0; i < 4; i++)
          for (int j = 0; j < 4; j++)
            if (std::isinf(want[i][j]) && std::string(fc) == "ds")
              EXPECT_EQ(r.output.at({i, j}), 0) << what << ": (" << i << "," << j << ") is not stored";
            else
              EXPECT_EQ(r.output.at({i, j}), want[i][j]) << what << " at (" << i << "," << j << ")";
      }
  // The same with B dense (SpMM): a dense B stores every entry, so compare with the reference.
  std::vector<Operand> in = {{"A", D, Format::parse("ds")}, {"B", D, Format::parse("dd")}};
  for (const Semiring& s : {Semiring::minPlus(), Semiring::maxTimes()}) {
    Outcome r = runOver("C(i,j) = A(i,k) * B(k,j)", s, in, "C", {4, 4}, Format::parse("dd"), 2, "default");
    std::string why;
    EXPECT_TRUE(tensorsClose(r.expected, r.result, 0, 0, &why, s)) << s.name << ": " << why;
  }
}

TEST(Semiring, EmptyMatrix) {
  CooData none;
  none.dims = {3, 3};
  for (const Semiring& s : {Semiring::minPlus(), Semiring::maxTimes()}) {
    std::vector<Operand> in = {{"A", none, Format::parse("ds")}, {"x", kx, Format::parse("d")}};
    Outcome dense = runOver("y(i) = A(i,j) * x(j)", s, in, "y", {3}, Format::parse("d"), 2, "default");
    expectVector(dense, {s.zero(), s.zero(), s.zero()}, s, s.name + " dense");
    Outcome sparse = runOver("y(i) = A(i,j) * x(j)", s, in, "y", {3}, Format::parse("s"));
    EXPECT_EQ(sparse.result.nnz(), 0) << s.name;
    Outcome scalar = runOver("a = A(i,j) * A(i,j)", s, {{"A", none, Format::parse("ds")}}, "a", {}, Format::parse(""));
    ASSERT_EQ(scalar.result.nnz(), 1);
    EXPECT_EQ(scalar.result.values[0], s.zero()) << s.name;
  }
}

// Sums (union: absent terms are the add's identity), += (min with the old values),
// terms summed over different variables (stages), SDDMM.
TEST(Semiring, OtherKernelsAgainstTheReference) {
  std::mt19937_64 rng(11);
  CooData B = randomCoo({20, 15}, 0.2, rng), C = randomCoo({20, 15}, 0.2, rng), E = randomCoo({20, 15}, 0.2, rng);
  CooData X = randomCoo({20, 4}, 1.0, rng), Y = randomCoo({4, 15}, 1.0, rng), z = randomCoo({20}, 1.0, rng);
  CooData x = randomCoo({15}, 1.0, rng);
  struct K {
    std::string expr;
    std::vector<Operand> in;
    std::vector<int64_t> dims;
    const char* out;
  };
  const std::vector<K> ks = {
      {"A(i,j) = B(i,j) + C(i,j) + E(i,j)", {{"B", B, Format::parse("ds")}, {"C", C, Format::parse("ds")},
                                              {"E", E, Format::parse("ds")}}, {20, 15}, "ds"},
      {"A(i,j) = B(i,j) * X(i,k) * Y(k,j)", {{"B", B, Format::parse("ds")}, {"X", X, Format::parse("dd")},
                                              {"Y", Y, Format::parse("dd")}}, {20, 15}, "ds"},
      {"y(i) = B(i,j) * x(j) + z(i)", {{"B", B, Format::parse("ds")}, {"x", x, Format::parse("d")},
                                        {"z", z, Format::parse("d")}}, {20}, "d"},
      {"y(i) = B(i,j) * x(j) * 2", {{"B", B, Format::parse("ds")}, {"x", x, Format::parse("d")}}, {20}, "s"},
  };
  for (const Semiring& s : {Semiring::minPlus(), Semiring::maxTimes()})
    for (const K& k : ks)
      for (int threads : {1, 2}) {
        Outcome r = runOver(k.expr, s, k.in, k.expr.substr(0, 1), k.dims, Format::parse(k.out), threads,
                        threads > 1 ? "default" : "");
        std::string why;
        EXPECT_TRUE(tensorsClose(r.expected, r.result, 1e-12, 1e-12, &why, s))
            << s.name << " " << k.expr << " threads " << threads << ": " << why;
      }
}

TEST(Semiring, AccumulateTakesTheMin) {
  TensorBase A = makeTensor("A", kA, Format::parse("ds")), x = makeTensor("x", kx, Format::parse("d"));
  TensorBase y = makeTensor("y", entries({3}, {{{0}, 10}, {{1}, 7}, {{2}, -5}}), Format::parse("d"));
  Assignment a = parseAssignment("y(i) += A(i,j) * x(j)", {{"A", A}, {"x", x}, {"y", y}});
  a.semiring = Semiring::minPlus();
  CooData expected = referenceEvaluate(a);
  Kernel::compile(a)->run(a);
  EXPECT_EQ(y.at({0}), 3);
  EXPECT_EQ(y.at({1}), 7);  // no stored entry: the old value stays
  EXPECT_EQ(y.at({2}), -5);
  std::string why;
  EXPECT_TRUE(tensorsClose(expected, y.toCoo(), 0, 0, &why, Semiring::minPlus())) << why;
}

TEST(Semiring, PlusTimesUnchanged) {
  std::vector<Operand> in = {{"A", kA, Format::parse("ds")}, {"x", kx, Format::parse("d")}};
  Outcome r = runOver("y(i) = A(i,j) * x(j)", Semiring::plusTimes(), in, "y", {3}, Format::parse("d"));
  expectVector(r, {-2, 0, -6}, Semiring::plusTimes(), "plus_times");
}

TEST(Semiring, OperatorsTheSemiringLacks) {
  TensorBase A = makeTensor("A", kA, Format::parse("ds")), x = makeTensor("x", kx, Format::parse("d"));
  TensorBase y("y", Datatype::Float64, {3}, Format::parse("d"));
  for (const char* expr : {"y(i) = A(i,j) - x(j)", "y(i) = A(i,j) / x(j)", "y(i) = -A(i,j) * x(j)"}) {
    Assignment a = parseAssignment(expr, {{"A", A}, {"x", x}, {"y", y}});
    a.semiring = Semiring::minPlus();
    try {
      Kernel::compile(a);
      ADD_FAILURE() << expr << " compiled under min_plus";
    } catch (const NotationError& e) {
      EXPECT_NE(std::string(e.what()).find("semiring min_plus has no"), std::string::npos) << e.what();
    }
    EXPECT_THROW(referenceEvaluate(a), NotationError) << expr;
  }
  // Atomic updates are +=: refused for min, with the command named.
  Assignment a = parseAssignment("y(i) = A(i,j) * x(j)", {{"A", A}, {"x", x}, {"y", y}});
  a.semiring = Semiring::maxTimes();
  try {
    Kernel::compile(a, parseSchedule("pos(j,jp,A),split(jp,j0,j1,4),parallelize(j0,cpu_thread,atomics)", a));
    ADD_FAILURE() << "atomics accepted under max_times";
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("parallelize(j0,cpu_thread,atomics)"), std::string::npos) << e.what();
  }
}

// A dense dot product (SDDMM with dense factors) reduces in vector lanes with the
// semiring's add: `omp simd reduction(min:acc)`; sparse rows keep their scalar loop.
TEST(Semiring, VectorLanesReduceWithMinAndMax) {
  std::mt19937_64 rng(3);
  CooData B = randomCoo({12, 10}, 0.3, rng), X = randomCoo({12, 7}, 1.0, rng), Y = randomCoo({10, 7}, 1.0, rng);
  std::vector<Operand> in = {{"B", B, Format::parse("ds")}, {"X", X, Format::parse("dd")},
                             {"Y", Y, Format::parse("dd")}};
  for (const Semiring& s : {Semiring::minPlus(), Semiring::maxTimes()}) {
    std::map<std::string, TensorBase> tensors;
    for (const Operand& o : in) tensors.emplace(o.name, makeTensor(o.name, o.data, o.format));
    tensors.emplace("A", TensorBase("A", Datatype::Float64, {12, 10}, Format::parse("ds")));
    Assignment a = parseAssignment("A(i,j) = B(i,j) * X(i,k) * Y(j,k)", tensors);
    a.semiring = s;
    std::string c = Kernel::emitC(a);
    std::string pragma = std::string("reduction(") + (s == Semiring::minPlus() ? "min" : "max") + ":";
    EXPECT_NE(c.find(pragma), std::string::npos) << s.name << "\n" << c;
    Outcome r = runOver("A(i,j) = B(i,j) * X(i,k) * Y(j,k)", s, in, "A", {12, 10}, Format::parse("ds"));
    std::string why;
    EXPECT_TRUE(tensorsClose(r.expected, r.result, 1e-12, 1e-12, &why, s)) << s.name << ": " << why;
  }
}

// Skewed rows: plus_times's default schedule splits the non-zeros with atomics; other
// semirings (no atomic min) fall back to blocks of rows.
TEST(Semiring, SkewedRowsDefaultSchedule) {
  CooData A;
  A.dims = {400, 400};
  std::mt19937_64 rng(9);
  for (int64_t j = 0; j < 400; j++) A.add({0, j}, static_cast<double>(j % 7) - 3);
  for (int64_t i = 1; i < 400; i++) A.add({i, static_cast<int64_t>(rng() % 400)}, static_cast<double>(i % 5));
  CooData x = randomCoo({400}, 1.0, rng);
  for (const Semiring& s : {Semiring::minPlus(), Semiring::maxTimes()})
    for (int threads : {2, 4}) {
      std::vector<Operand> in = {{"A", A, Format::parse("ds")}, {"x", x, Format::parse("d")}};
      Outcome r = runOver("y(i) = A(i,j) * x(j)", s, in, "y", {400}, Format::parse("d"), threads, "default");
      std::string why;
      EXPECT_TRUE(tensorsClose(r.expected, r.result, 1e-12, 1e-12, &why, s)) << s.name << " " << threads << ": " << why;
    }
}

TEST(Semiring, CatalogueHandComputed) {
  // A (3x3): row 0 {0: 2, 2: -1}, row 1 empty, row 2 {1: 3}; x = [1, -2, 4] (dense).
  // y(i) = A(i,j) * x(j) under each semiring, by hand (row 1 gets the zero):
  struct Want {
    const char* name;
    std::vector<double> y;
  };
  const std::vector<Want> wants = {
      {"max_plus", {3, -kInf, 1}},      // max(2+1, -1+4) = 3; 3 + -2 = 1
      {"min_times", {-4, kInf, -6}},    // min(2*1, -1*4); 3*-2
      {"plus_pair", {2, 0, 1}},         // stored products counted
      {"any_pair", {1, 0, 1}},
      {"min_first", {-1, kInf, 3}},     // min over A's entries of the row
      {"max_second", {4, -kInf, -2}},   // max over the x(j) met
      {"min_second", {1, kInf, -2}},
      {"max_first", {2, -kInf, 3}},
      {"plus_min", {0, 0, -2}},         // min(2,1) + min(-1,4); min(3,-2)
  };
  // (A dense A would store its zeros as entries: sparse formats only.)
  for (const Want& w : wants)
    for (const char* af : {"ds", "ss"})
      for (const char* out : {"d", "s"}) {
        Semiring s = Semiring::byName(w.name);
        std::string what = std::string(w.name) + " A " + af + " y " + out;
        Outcome r = runOver("y(i) = A(i,j) * x(j)", s, {{"A", kA, Format::parse(af)}, {"x", kx, Format::parse("d")}},
                            "y", {3}, Format::parse(out));
        expectVector(r, w.y, s, what);
      }
}
