// precompute(expression, temporary): a sub-expression computed first into a dense
// temporary, on several kernels, formats, data shapes and 1, 2 and 4 threads against
// the reference evaluator; every rejection names the command and the reason.
#include <gtest/gtest.h>

#include "support/test_support.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

Format fmt(const std::string& s) { return Format::parse(s); }

/// Shapes of A (rows x mid), B (mid x cols): ordinary, one empty, zero-sized.
struct Shape {
  int64_t rows, mid, cols;
  double density;
};
const std::vector<Shape> kShapes = {{23, 17, 11, 0.2}, {9, 30, 4, 0.5}, {12, 8, 6, 0.0}, {0, 5, 3, 0.5}, {7, 0, 3, 0.5}};

}  // namespace

TEST(PrecomputeExpr, MatrixChainTimesVector) {
  std::mt19937_64 rng(3);
  for (const Shape& s : kShapes)
    for (const char* af : {"ds", "dd"})
      for (const char* bf : {"ds", "dd", "sd"}) {
        SCOPED_TRACE(std::to_string(s.rows) + "x" + std::to_string(s.mid) + "x" + std::to_string(s.cols) +
                     " A " + af + " B " + bf);
        std::vector<Operand> in = {{"A", randomCoo({s.rows, s.mid}, s.density, rng), fmt(af)},
                                   {"B", randomCoo({s.mid, s.cols}, s.density, rng), fmt(bf)},
                                   {"x", randomCoo({s.cols}, 1.0, rng), DenseFormat(1)}};
        // The factors of a product chain, and a parenthesized sub-expression.
        expectAllThreads("y(i) = A(i,j) * B(j,k) * x(k)", in, DenseFormat(1), "precompute(B(j,k)*x(k),t)");
        expectAllThreads("y(i) = A(i,j) * (B(j,k) * x(k))", in, DenseFormat(1),
                         "precompute(B(j,k) * x(k),t),split(i,i0,i1,4),parallelize(i0)");
        expectAllThreads("y(i) = x(k) * B(j,k) * A(i,j)", in, DenseFormat(1), "precompute(x(k)*B(j,k),t)");
        // Into a sparse output, and accumulated into one (three stages).
        expectAllThreads("y(i) = A(i,j) * B(j,k) * x(k)", in, fmt("s"), "precompute(B(j,k)*x(k),t)");
        std::vector<Operand> acc = in;
        acc.push_back({"y", randomCoo({s.rows}, 0.3, rng), fmt("s")});
        expectAllThreads("y(i) += A(i,j) * B(j,k) * x(k)", acc, fmt("s"), "precompute(B(j,k)*x(k),t)");
      }
}

TEST(PrecomputeExpr, SumsScalarsAndThreeTensors) {
  std::mt19937_64 rng(5);
  for (const char* f : {"ds", "dd", "ss"}) {
    SCOPED_TRACE(f);
    std::vector<Operand> in = {{"A", randomCoo({19, 13}, 0.3, rng), fmt(f)},
                               {"B", randomCoo({19, 13}, 0.3, rng), fmt(f)},
                               {"C", randomCoo({19, 13}, 0.3, rng), fmt(f)}};
    // No variable summed inside: a sum may be precomputed anywhere.
    expectAllThreads("Y(i,j) = A(i,j) * (B(i,j) + C(i,j))", in, fmt("ds"), "precompute(B(i,j)+C(i,j),t)");
    expectAllThreads("Y(i,j) = A(i,j) - (B(i,j) + C(i,j))", in, fmt("ds"), "precompute(B(i,j)+C(i,j),t)");
  }
  // A scalar temporary, and two precomputes in one schedule.
  std::vector<Operand> vec = {{"A", randomCoo({21, 15}, 0.3, rng), CSR()},
                              {"B", randomCoo({15, 9}, 0.3, rng), CSR()},
                              {"x", randomCoo({9}, 1.0, rng), DenseFormat(1)},
                              {"b", randomCoo({40}, 0.5, rng), fmt("s")},
                              {"c", randomCoo({40}, 1.0, rng), DenseFormat(1)}};
  expectAllThreads("y(i) = A(i,j) * B(j,k) * x(k) * (b(l) * c(l))", vec, DenseFormat(1), "precompute(b(l)*c(l),s)");
  expectAllThreads("y(i) = A(i,j) * B(j,k) * x(k) * (b(l) * c(l))", vec, DenseFormat(1),
                   "precompute(B(j,k)*x(k),t),precompute(b(l)*c(l),s),parallelize(i)");
  // MTTKRP with the product over l first: t(i,k,j) = B(i,k,l) * D(l,j).
  std::vector<Operand> mttkrp = {{"B", randomCoo({8, 7, 9}, 0.1, rng), CSF()},
                                 {"C", randomCoo({7, 5}, 1.0, rng), DenseFormat(2)},
                                 {"D", randomCoo({9, 5}, 1.0, rng), DenseFormat(2)}};
  expectAllThreads("A(i,j) = B(i,k,l) * C(k,j) * D(l,j)", mttkrp, DenseFormat(2), "precompute(B(i,k,l)*D(l,j),t)");
}

TEST(PrecomputeExpr, RunsAgainIntoItsTemporaries) {
  std::mt19937_64 rng(9);
  std::map<std::string, TensorBase> t = {
      {"A", makeTensor("A", randomCoo({30, 20}, 0.2, rng), CSR())},
      {"B", makeTensor("B", randomCoo({20, 10}, 0.3, rng), CSR())},
      {"x", makeTensor("x", randomCoo({10}, 1.0, rng), DenseFormat(1))},
      {"y", makeTensor("y", CooData{{30}, {}, {}}, fmt("s"))}};
  for (bool acc : {false, true}) {
    SCOPED_TRACE(acc ? "+=" : "=");
    Assignment a = parseAssignment(std::string("y(i) ") + (acc ? "+=" : "=") + " A(i,j) * B(j,k) * x(k)", t);
    auto k = Kernel::compile(a, parseSchedule("precompute(B(j,k)*x(k),w)", a));
    EXPECT_NE(k->source().find("stage 1 of " + std::string(acc ? "3" : "2")), std::string::npos);
    for (int run = 0; run < 3; run++) {
      CooData expected = referenceEvaluate(a);
      k->run(a, 1 + run % 2);
      std::string why;
      EXPECT_TRUE(tensorsClose(expected, t["y"].toCoo(), 1e-9, 1e-9, &why)) << "run " << run << ": " << why;
    }
  }
}

TEST(PrecomputeExpr, ApiMatchesTheTextForm) {
  std::mt19937_64 rng(2);
  TensorBase A = makeTensor("A", randomCoo({6, 5}, 0.5, rng), CSR());
  TensorBase B = makeTensor("B", randomCoo({5, 4}, 0.5, rng), CSR());
  TensorBase x = makeTensor("x", randomCoo({4}, 1.0, rng), DenseFormat(1));
  TensorBase y("y", Datatype::Float64, {6}, DenseFormat(1));
  IndexVar i("i"), j("j"), k("k");
  Assignment a = makeAssignment(Access(y, {i}), Access(A, {i, j}) * Access(B, {j, k}) * Access(x, {k}));
  Schedule s;
  s.precompute(Access(B, {j, k}) * Access(x, {k}), "t");
  EXPECT_EQ(s.str(), "precompute(B(j,k) * x(k),t)");
  EXPECT_EQ(parseSchedule(s.str(), a).str(), s.str());
  EXPECT_EQ(Kernel::emitC(a, s), Kernel::emitC(a, parseSchedule("precompute( B(j,k)*x(k) , t )", a)));
  Kernel::compile(a, s)->run(a);
  std::string why;
  EXPECT_TRUE(tensorsClose(referenceEvaluate(a), y.toCoo(), 1e-12, 1e-12, &why)) << why;
}

TEST(PrecomputeExpr, Rejections) {
  std::mt19937_64 rng(4);
  std::map<std::string, TensorBase> t;
  for (const char* n : {"A", "B"}) t[n] = makeTensor(n, randomCoo({6, 6}, 0.4, rng), CSR());
  for (const char* n : {"x", "z", "y"}) t[n] = makeTensor(n, randomCoo({6}, 1.0, rng), DenseFormat(1));
  auto expectRejected = [&](const std::string& expr, const std::string& schedule,
                            const std::vector<std::string>& parts) { expectScheduleRejected(t, expr, schedule, parts); };
  const std::string chain = "y(i) = A(i,j) * B(j,k) * x(k)";
  // Summed inside, but added to something inside the same explicit sum: z(i) is added
  // once per (j, k), which a temporary summed over k first would not do.
  expectRejected("y(i) = sum(j, sum(k, A(i,j) * B(j,k) * x(k) + z(i)))", "precompute(B(j,k)*x(k),t)",
                 {"precompute(B(j,k) * x(k),t)", "sums over k", "'+', '-' or denominator"});
  expectRejected("y(i) = A(i,j) / (B(j,k) * x(k))", "precompute(B(j,k)*x(k),t)", {"sums over k"});
  expectRejected(chain, "precompute(A(i,j)*z(j),t)", {"unknown tensor z"});
  expectRejected(chain, "precompute(A(i,j)*x(j),t)", {"'A(i,j) * x(j)' is not part of the right-hand side"});
  expectRejected(chain, "precompute(B(j,k)+x(k),t)", {"is not part of the right-hand side"});
  expectRejected(chain, "precompute(B(j,k)*x(k),A)", {"a name that no tensor of the assignment has"});
  expectRejected(chain, "precompute(B(j,k)*x(k),y)", {"a name that no tensor of the assignment has"});
  expectRejected(chain, "precompute(B(j,k)*x(k),2t)", {"'2t' is not a tensor name"});
  expectRejected(chain, "precompute(B(j,k)*,t)", {"precompute(B(j,k)*,t)", "expected an operand", "at column 8"});
  expectRejected(chain, "precompute(B(j,k),t,u)", {"unknown index variable u"});
  expectRejected(chain, "precompute(B(j,k),t,j,u)", {"expected precompute(j), precompute(expression,temporary),", "precompute(expression,temporary,tensor)"});
  expectRejected(chain, "precompute(B(j),t)", {"B"});
  // Allowed: the whole right-hand side (nothing summed outside it).
  Assignment a = parseAssignment(chain + " + z(i)", t);
  EXPECT_NO_THROW(Kernel::emitC(a, parseSchedule("precompute(A(i,j)*B(j,k)*x(k)+z(i),t)", a)));
}
