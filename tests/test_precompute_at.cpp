// precompute(e, t, at): a temporary inside the loop nest, in one generated function.
// MTTKRP and a matrix chain against hand-computed values and the reference evaluator,
// on several formats, shapes and 1, 2 and 4 threads; real 3-tensors when present; every
// rejection names the command.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_support.h"
#include "tessel/io.h"
#include "tessel/kernel.h"
#include "tessel/operators.h"
#include "tessel/parser.h"
#include "tessel/reference.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

Format fmt(const std::string& s) { return Format::parse(s); }
const std::string kMttkrp = "A(i,l) = B(i,j,k) * C(j,l) * D(k,l)";

}  // namespace

TEST(PrecomputeAt, MttkrpHandComputed) {
  // B(0,0,0)=1, B(0,0,1)=2, B(0,1,1)=3, B(1,1,0)=4; C = [[1,2],[3,4]]; D = [[5,6],[7,8]].
  // A(i,l) = sum_jk B(i,j,k) C(j,l) D(k,l):
  //   A(0,:) = 1*C0*D0 + 2*C0*D1 + 3*C1*D1 = (5+14+63, 12+32+96) = (82, 140)
  //   A(1,:) = 4*C1*D0 = (60, 96)
  CooData B;
  B.dims = {2, 2, 2};
  B.add({0, 0, 0}, 1);
  B.add({0, 0, 1}, 2);
  B.add({0, 1, 1}, 3);
  B.add({1, 1, 0}, 4);
  CooData C, D;
  C.dims = D.dims = {2, 2};
  for (int64_t r = 0; r < 2; r++)
    for (int64_t c = 0; c < 2; c++) {
      C.add({r, c}, static_cast<double>(1 + 2 * r + c));
      D.add({r, c}, static_cast<double>(5 + 2 * r + c));
    }
  for (const char* bf : {"sss", "dss", "ddd"})
    for (int threads : {1, 2}) {
      std::map<std::string, TensorBase> t = {{"B", makeTensor("B", B, fmt(bf))},
                                             {"C", makeTensor("C", C, fmt("dd"))},
                                             {"D", makeTensor("D", D, fmt("dd"))}};
      TensorBase A("A", Datatype::Float64, {2, 2}, fmt("dd"));
      t["A"] = A;
      Assignment a = parseAssignment(kMttkrp, t);
      auto k = Kernel::compile(a, parseSchedule("precompute(B(i,j,k)*D(k,l),t,j),parallelize(i)", a));
      k->run(a, threads);
      CooData got = A.toCoo();
      std::map<std::vector<int64_t>, double> at;
      for (int64_t e = 0; e < got.nnz(); e++) at[{got.coords[2 * e], got.coords[2 * e + 1]}] = got.values[e];
      EXPECT_EQ(at[std::vector<int64_t>({0, 0})], 82) << bf;
      EXPECT_EQ(at[std::vector<int64_t>({0, 1})], 140) << bf;
      EXPECT_EQ(at[std::vector<int64_t>({1, 0})], 60) << bf;
      EXPECT_EQ(at[std::vector<int64_t>({1, 1})], 96) << bf;
      // One generated function: no stages, the temporary lives inside the loop over j.
      EXPECT_EQ(k->source().find("stage"), std::string::npos);
      EXPECT_NE(k->source().find("t_row"), std::string::npos);
    }
}

TEST(PrecomputeAt, MttkrpAgainstReference) {
  std::mt19937_64 rng(21);
  struct Shape {
    int64_t i, j, k, l;
    double density;
  };
  // Fibers below j shorter than 4 entries run the plain nest (localOrPlain): the long
  // fibers of {3, 2, 40, ...} take the temporary.
  for (const Shape& s : std::vector<Shape>{{7, 5, 6, 4, 0.3}, {9, 3, 11, 1, 0.6}, {4, 4, 4, 3, 0.0}, {0, 3, 2, 2, 0.5},
                                           {3, 2, 5, 0, 0.5}, {3, 2, 40, 3, 0.9}, {2, 3, 50, 1, 0.5}})
    for (const char* bf : {"sss", "dss", "sds"})
      for (const char* df : {"dd", "ds"}) {
        SCOPED_TRACE(std::string("B ") + bf + " C/D " + df + " dims " + std::to_string(s.i) + "x" +
                     std::to_string(s.j) + "x" + std::to_string(s.k) + " L " + std::to_string(s.l));
        std::vector<Operand> in = {{"B", randomCoo({s.i, s.j, s.k}, s.density, rng), fmt(bf)},
                                   {"C", randomCoo({s.j, s.l}, 0.8, rng), fmt(df)},
                                   {"D", randomCoo({s.k, s.l}, 0.8, rng), fmt(df)}};
        expectAllThreads(kMttkrp, in, fmt("dd"), "precompute(B(i,j,k)*D(k,l),t,j)");
        expectAllThreads(kMttkrp, in, fmt("dd"), "precompute(B(i,j,k)*D(k,l),t,j),parallelize(i)");
        // At i: t(j,l) summed over k per i; with C's factor instead, t(k,l) per (i,j).
        expectAllThreads(kMttkrp, in, fmt("dd"), "precompute(D(k,l)*B(i,j,k),t,i)");
        expectAllThreads(kMttkrp, in, fmt("dd"), "precompute(B(i,j,k)*C(j,l),t,j)");
      }
}

TEST(PrecomputeAt, MinPlus) {
  // Under min_plus the temporary starts at +inf and folds with min; max_times is refused
  // (its zero, -inf, does not annihilate *: the consumer reads unmet entries of t).
  std::mt19937_64 rng(25);
  std::map<std::string, TensorBase> t = {{"B", makeTensor("B", randomCoo({6, 4, 5}, 0.4, rng), fmt("sss"))},
                                         {"C", makeTensor("C", randomCoo({4, 3}, 1.0, rng), fmt("dd"))},
                                         {"D", makeTensor("D", randomCoo({5, 3}, 1.0, rng), fmt("dd"))}};
  for (int threads : {1, 2}) {
    TensorBase A("A", Datatype::Float64, {6, 3}, fmt("dd"));
    t["A"] = A;
    Assignment a = parseAssignment(kMttkrp, t);
    a.semiring = Semiring::minPlus();
    Kernel::compile(a, parseSchedule("precompute(B(i,j,k)*D(k,l),t,j),parallelize(i)", a))->run(a, threads);
    std::string why;
    EXPECT_TRUE(tensorsClose(referenceEvaluate(a), A.toCoo(), 1e-12, 1e-12, &why, a.semiring)) << why;
  }
  TensorBase A("A", Datatype::Float64, {6, 3}, fmt("dd"));
  t["A"] = A;
  Assignment a = parseAssignment(kMttkrp, t);
  a.semiring = Semiring::maxTimes();
  EXPECT_THROW(Kernel::emitC(a, parseSchedule("precompute(B(i,j,k)*D(k,l),t,j)", a)), ScheduleError);
}

TEST(PrecomputeAt, ScalarTemporaryInAMatrixChain) {
  // y(i) = A(i,j) * B(j,k) * x(k) with t = sum_k B(j,k) x(k) per (i,j): a scalar.
  std::mt19937_64 rng(22);
  for (const char* f : {"ds", "dd"}) {
    std::vector<Operand> in = {{"A", randomCoo({8, 6}, 0.4, rng), fmt(f)},
                               {"B", randomCoo({6, 5}, 0.4, rng), fmt(f)},
                               {"x", randomCoo({5}, 1.0, rng), DenseFormat(1)}};
    expectAllThreads("y(i) = A(i,j) * B(j,k) * x(k)", in, DenseFormat(1), "precompute(B(j,k)*x(k),t,j)");
  }
}

TEST(PrecomputeAt, RealTensors) {
  std::string dir = dataDir();
  if (dir.empty()) GTEST_SKIP() << "../shared/data not present";
  std::mt19937_64 rng(23);
  for (const char* name : {"kg-nations.tns", "kg-umls.tns", "aminoacid.tns"}) {
    std::filesystem::path p = std::filesystem::path(dir) / "tensors" / name;
    if (!std::filesystem::exists(p)) continue;
    SCOPED_TRACE(name);
    CooData b = readTensorFile(p.string()).data;
    std::vector<Operand> in = {{"B", b, fmt("sss")},
                               {"C", randomCoo({b.dims[1], 8}, 1.0, rng), fmt("dd")},
                               {"D", randomCoo({b.dims[2], 8}, 1.0, rng), fmt("dd")}};
    for (int threads : {1, 2})
      EXPECT_TRUE(matchesReferenceScheduled(
          kMttkrp, in, fmt("dd"),
          [](const std::vector<IndexVar>&) { return "precompute(B(i,j,k)*D(k,l),t,j),parallelize(i)"; }, threads,
          1e-9));
  }
}

TEST(PrecomputeAt, Rejections) {
  std::mt19937_64 rng(24);
  std::map<std::string, TensorBase> t = {{"B", makeTensor("B", randomCoo({4, 3, 5}, 0.4, rng), fmt("sss"))},
                                         {"C", makeTensor("C", randomCoo({3, 2}, 1.0, rng), fmt("dd"))},
                                         {"D", makeTensor("D", randomCoo({5, 2}, 1.0, rng), fmt("dd"))},
                                         {"A", TensorBase("A", Datatype::Float64, {4, 2}, fmt("dd"))},
                                         {"S", TensorBase("S", Datatype::Float64, {4, 2}, fmt("ds"))}};
  auto expectRejected = [&](const std::string& expr, const std::string& schedule,
                            const std::vector<std::string>& parts) { expectScheduleRejected(t, expr, schedule, parts); };
  const std::string m = kMttkrp;
  // The loop over l does not enclose the sum over k, which only e uses.
  expectRejected(m, "precompute(B(i,j,k)*D(k,l),t,l)",
                 {"precompute(B(i,j,k) * D(k,l),t,l)", "does not enclose the sum over k"});
  expectRejected(m, "precompute(B(i,j,k)*D(k,l),t,q)", {"unknown index variable q"});
  expectRejected(m, "precompute(B(i,j,k)*D(k,l),C,j)", {"a name that no tensor of the assignment has"});
  expectRejected(m, "precompute(B(i,j,k)+D(k,l),t,j)", {"is not some of the tensor factors"});
  expectRejected(m, "precompute(B(i,j,k)*D(k,l),t,j),split(k,k0,k1,2),reorder(i,k0,j,k1,l)",
                 {"k0 splits k", "may not cross the fusion point"});
  expectRejected(m, "precompute(B(i,j,k)*D(k,l),t,j),parallelize(l)", {"cannot be parallel"});
  expectRejected(m, "precompute(B(i,j,k)*D(k,l),t,j),precompute(B(i,j,k)*C(j,l),u,j)", {"precompute(B(i,j,k) * C(j,l),u,j)", "encloses an earlier fusion or precompute at a loop"});
  expectRejected("S(i,l) = B(i,j,k) * C(j,l) * D(k,l)", "precompute(B(i,j,k)*D(k,l),t,j)",
                 {"precompute(B(i,j,k) * D(k,l),t,j)", "the output S (ds) is gathered in a workspace row"});
}
