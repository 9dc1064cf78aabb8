// Element-wise functions (min, max, abs, comparisons, user-declared operators) and the
// per-product semiring syntax `X @(add,mul) Y`: hand-computed values on dense and sparse
// vectors, CSR, DCSR and mixed formats, under plus_times (absent = 0) and min_plus
// (absent = +inf), checked for the compiled kernel AND the reference evaluator; the
// text syntax's print/parse round trip and its errors; random data against plain loops
// at 1 and 2 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "support/test_support.h"
#include "tessel/kernel.h"
#include "tessel/parser.h"
#include "tessel/reference.h"
#include "tessel/syntax.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// B = [-1, _, 3, _], C = [_, 2, -5, _]: every case of stored/absent, negative values.
const CooData kB = entries({4}, {{{0}, -1}, {{2}, 3}});
const CooData kC = entries({4}, {{{1}, 2}, {{2}, -5}});

/// The dense values of `c` (absent entries read as `zero`).
std::vector<double> dense(const CooData& c, double zero) {
  int64_t n = 1;
  for (int64_t d : c.dims) n *= d;
  std::vector<double> out(static_cast<size_t>(n), zero);
  for (int64_t e = 0; e < c.nnz(); e++) {
    int64_t at = 0;
    for (int m = 0; m < c.order(); m++) at = at * c.dims[m] + c.coords[e * c.order() + m];
    out[static_cast<size_t>(at)] = c.values[e];
  }
  return out;
}

struct Outcome {
  std::vector<double> compiled, reference;
};

/// Compiles and runs `expr` (over `semiring` unless the text writes one) on `threads`
/// threads with the default parallel schedule; the compiled and reference values, dense.
Outcome run(const std::string& expr, const Semiring& semiring, const std::vector<Operand>& inputs,
            const std::vector<int64_t>& outDims, const Format& outFormat, int threads = 1) {
  std::map<std::string, TensorBase> tensors;
  for (const Operand& o : inputs) tensors.emplace(o.name, makeTensor(o.name, o.data, o.format));
  std::string outName = expr.substr(0, expr.find('('));
  TensorBase out(outName, Datatype::Float64, outDims, outFormat);
  tensors.emplace(outName, out);
  Assignment a = parseAssignment(expr, tensors);
  if (expr.find('@') == std::string::npos) a.semiring = semiring;
  Schedule s = threads > 1 ? defaultParallelSchedule(a, threads) : Schedule();
  Kernel::compile(a, s)->run(a, threads);
  return {dense(out.toCoo(), a.semiring.zero()), dense(referenceEvaluate(a), a.semiring.zero())};
}

void expectValues(const Outcome& o, const std::vector<double>& want, const std::string& what) {
  EXPECT_EQ(o.reference, want) << what << " (reference evaluator)";
  EXPECT_EQ(o.compiled, want) << what << " (compiled)";
}

struct VectorCase {
  const char* expr;
  std::vector<double> want;
};

}  // namespace

// ---------------------------------------------------------------- notation

TEST(Elementwise, PrintParseRoundTrip) {
  std::map<std::string, TensorVar> vars;
  for (const char* n : {"B", "C"}) vars.emplace(n, TensorVar(n, Datatype::Float64, {4, 4}, Format::parse("ds")));
  vars.emplace("a", TensorVar("a", Datatype::Float64, {4}, Format::parse("d")));
  vars.emplace("A", TensorVar("A", Datatype::Float64, {4, 4}, Format::parse("ds")));
  for (const char* text : {"a(i) = max(B(i,j), C(i,j))", "A(i,j) = min(B(i,j), 0)", "A(i,j) = abs(B(i,j) - C(i,j))",
                           "A(i,j) = B(i,j) < C(i,j)", "A(i,j) = B(i,j) <= C(i,j) + 1", "A(i,j) = B(i,j) > C(i,j)",
                           "A(i,j) = B(i,j) >= C(i,j)", "A(i,j) = B(i,j) == C(i,j)", "A(i,j) = B(i,j) != C(i,j)",
                           "A(i,j) = (B(i,j) < C(i,j)) * 2", "A(i,j) = (B(i,j) < C(i,j)) == (C(i,j) < 1)",
                           "A(i,j) = max(min(B(i,j), C(i,j)), abs(B(i,j)))", "a(i) = sum(j, max(B(i,j), 0))"}) {
    Assignment a = parseAssignment(text, vars);
    EXPECT_EQ(a.str(), text);
    EXPECT_EQ(parseAssignment(a.str(), vars).str(), text);
  }
  // The C++ API builds the same trees.
  IndexVar i("i"), j("j");
  TensorVar B = vars.at("B"), C = vars.at("C");
  EXPECT_EQ(max(B(i, j), C(i, j)).str(), "max(B(i,j), C(i,j))");
  EXPECT_EQ(min(B(i, j), 0.0).str(), "min(B(i,j), 0)");
  EXPECT_EQ(abs(B(i, j)).str(), "abs(B(i,j))");
  EXPECT_EQ((B(i, j) <= C(i, j)).str(), "B(i,j) <= C(i,j)");
  EXPECT_EQ((B(i, j) + 1 == C(i, j)).str(), "B(i,j) + 1 == C(i,j)");
  EXPECT_EQ(((B(i, j) != C(i, j)) * 2).str(), "(B(i,j) != C(i,j)) * 2");
  // Plain numbers keep their meaning next to the templates.
  EXPECT_EQ(std::min(2, 3), 2);
  EXPECT_TRUE(1.0 < 2.0);
}

TEST(Elementwise, ParseErrors) {
  std::map<std::string, TensorVar> vars;
  for (const char* n : {"a", "b", "c"}) vars.emplace(n, TensorVar(n, Datatype::Float64, {4}, Format::parse("d")));
  for (const char* bad : {"a(i) = max(b(i))", "a(i) = max(b(i), c(i), b(i))", "a(i) = abs(b(i), c(i))",
                          "a(i) = b(i) < c(i) < b(i)", "a(i) = min()", "a(i) = b(i) ! c(i)", "max(i) = b(i)",
                          "a(i) = b(i) @(tropical,+) c(i)", "a(i) = b(i) @(min,+ c(i)", "a(i) = b(i) @ c(i)"})
    EXPECT_THROW(parseAssignment(bad, vars), UserError) << bad;
}

// ---------------------------------------------------------------- hand-computed values

// Under plus_times an absent entry is 0: max(-1, absent) is 0, not -1 (no union), and a
// comparison true for 0 vs 0 is 1 where neither operand is stored (a dense result).
TEST(Elementwise, VectorsPlusTimesByHand) {
  const std::vector<VectorCase> cases = {
      {"a(i) = max(B(i), C(i))", {0, 2, 3, 0}},  {"a(i) = min(B(i), C(i))", {-1, 0, -5, 0}},
      {"a(i) = abs(B(i))", {1, 0, 3, 0}},        {"a(i) = abs(C(i)) + B(i)", {-1, 2, 8, 0}},
      {"a(i) = max(B(i), 0)", {0, 0, 3, 0}},     {"a(i) = min(B(i), 1)", {-1, 0, 1, 0}},
      {"a(i) = B(i) < C(i)", {1, 1, 0, 0}},      {"a(i) = B(i) <= C(i)", {1, 1, 0, 1}},
      {"a(i) = B(i) > C(i)", {0, 0, 1, 0}},      {"a(i) = B(i) >= C(i)", {0, 0, 1, 1}},
      {"a(i) = B(i) == C(i)", {0, 0, 0, 1}},     {"a(i) = B(i) != C(i)", {1, 1, 1, 0}},
      {"a(i) = (B(i) < C(i)) * B(i)", {-1, 0, 0, 0}}, {"a(i) = max(B(i), C(i)) * C(i)", {0, 4, -15, 0}},
  };
  for (const char* bf : {"d", "s"})
    for (const char* cf : {"d", "s"})
      for (const char* of : {"d", "s"})
        for (const VectorCase& c : cases) {
          std::string what = std::string(c.expr) + " B:" + bf + " C:" + cf + " a:" + of;
          expectValues(run(c.expr, Semiring::plusTimes(), {{"B", kB, Format::parse(bf)}, {"C", kC, Format::parse(cf)}},
                           {4}, Format::parse(of)),
                       c.want, what);
        }
}

// Under min_plus an absent entry is +inf: min is a plain union (inf is its identity), max
// an intersection (inf annihilates it), and inf == inf where neither is stored. Sparse
// operands only: a dense level stores its zeros, which are not absent.
TEST(Elementwise, VectorsMinPlusByHand) {
  const std::vector<VectorCase> cases = {
      {"a(i) = min(B(i), C(i))", {-1, 2, -5, kInf}}, {"a(i) = max(B(i), C(i))", {kInf, kInf, 3, kInf}},
      {"a(i) = B(i) < C(i)", {1, 0, 0, 0}},          {"a(i) = B(i) == C(i)", {0, 0, 0, 1}},
      {"a(i) = abs(B(i))", {1, kInf, 3, kInf}},
  };
  for (const char* of : {"d", "s"})
    for (const VectorCase& c : cases)
      expectValues(run(c.expr, Semiring::minPlus(), {{"B", kB, Format::parse("s")}, {"C", kC, Format::parse("s")}}, {4},
                       Format::parse(of)),
                   c.want, std::string(c.expr) + " a:" + of);
}

// Matrices: B row 0 {0: -1, 2: 4}, row 1 {1: -2}; C row 0 {1: 3}, row 1 {1: -7, 2: 1}.
TEST(Elementwise, MatricesByHand) {
  const CooData B = entries({2, 3}, {{{0, 0}, -1}, {{0, 2}, 4}, {{1, 1}, -2}});
  const CooData C = entries({2, 3}, {{{0, 1}, 3}, {{1, 1}, -7}, {{1, 2}, 1}});
  for (const char* bf : {"ds", "ss", "dd"})
    for (const char* cf : {"ds", "ss"}) {
      std::vector<Operand> in = {{"B", B, Format::parse(bf)}, {"C", C, Format::parse(cf)}};
      std::string what = std::string(" B:") + bf + " C:" + cf;
      for (const char* of : {"ds", "ss", "dd"})
        expectValues(run("A(i,j) = max(B(i,j), C(i,j))", Semiring::plusTimes(), in, {2, 3}, Format::parse(of)),
                     {0, 3, 4, 0, -2, 1}, "max" + what + " A:" + of);
      for (const char* of : {"ds", "dd"})
        expectValues(run("A(i,j) = B(i,j) == C(i,j)", Semiring::plusTimes(), in, {2, 3}, Format::parse(of)),
                     {0, 0, 0, 1, 0, 0}, "==" + what + " A:" + of);
      // Reductions: sum_j max(B, C) and sum_j (B == C) (the latter over every j).
      expectValues(run("a(i) = max(B(i,j), C(i,j))", Semiring::plusTimes(), in, {2}, Format::parse("d")), {7, -1},
                   "sum max" + what);
      expectValues(run("a(i) = B(i,j) == C(i,j)", Semiring::plusTimes(), in, {2}, Format::parse("d")), {0, 1},
                   "sum ==" + what);
      expectValues(run("a(i) = abs(B(i,j)) * C(i,j)", Semiring::plusTimes(), in, {2}, Format::parse("d")), {0, -14},
                   "sum abs*" + what);
    }
}

// ---------------------------------------------------------------- @(add,mul)

TEST(Elementwise, SemiringPerProduct) {
  // A (3x3): row 0 {0: 2, 2: -1}, row 1 empty, row 2 {1: 3}; x = [1, -2, 4].
  const CooData A = entries({3, 3}, {{{0, 0}, 2}, {{0, 2}, -1}, {{2, 1}, 3}});
  const CooData x = entries({3}, {{{0}, 1}, {{1}, -2}, {{2}, 4}});
  std::vector<Operand> in = {{"A", A, Format::parse("ds")}, {"x", x, Format::parse("d")}};
  // min(2+1, -1+4) = 3; empty row: inf; 3 + -2 = 1.
  for (const char* text : {"y(i) = A(i,j) @(min,+) x(j)", "y(i) = A(i,j) @(min,plus) x(j)"})
    expectValues(run(text, Semiring::plusTimes(), in, {3}, Format::parse("d")), {3, kInf, 1}, text);
  expectValues(run("y(i) = A(i,j) @(max,*) x(j)", Semiring::plusTimes(), in, {3}, Format::parse("d")), {2, -kInf, -6},
               "max_times");
  expectValues(run("y(i) = A(i,j) @(+,*) x(j)", Semiring::plusTimes(), in, {3}, Format::parse("d")), {-2, 0, -6},
               "plus_times");
  std::map<std::string, TensorVar> vars;
  vars.emplace("A", TensorVar("A", Datatype::Float64, {3, 3}, Format::parse("ds")));
  for (const char* n : {"x", "y", "b"}) vars.emplace(n, TensorVar(n, Datatype::Float64, {3}, Format::parse("d")));
  EXPECT_TRUE(parseAssignment("y(i) = A(i,j) @(min,+) x(j)", vars).semiring == Semiring::minPlus());
  EXPECT_EQ(parseAssignment("y(i) = A(i,j) @(min,+) x(j)", vars).semiring.name, "min_plus");
  for (const char* mixed : {"y(i) = A(i,j) @(min,+) x(j) + b(i)", "y(i) = A(i,j) @(min,+) x(j) * b(i)",
                            "y(i) = A(i,j) @(min,+) x(j) @(max,+) b(i)"}) {
    try {
      parseAssignment(mixed, vars);
      ADD_FAILURE() << mixed << " accepted";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("mixing semirings"), std::string::npos) << e.what();
    }
  }
}

// ---------------------------------------------------------------- user-declared operators

TEST(Elementwise, UserDeclaredOperator) {
  BinaryOp absdiff = BinaryOp::custom("absdiff", "(a > b ? a - b : b - a)",
                                      [](double a, double b) { return a > b ? a - b : b - a; });
  EXPECT_EQ(absdiff.apply(2, 7), 5);
  EXPECT_THROW(BinaryOp::custom("no good", "a", [](double a, double) { return a; }), NotationError);
  TensorBase B = makeTensor("B", kB, Format::parse("s")), C = makeTensor("C", kC, Format::parse("s"));
  IndexVar i("i"), j("j");
  // Element-wise: |B - C| with absent = 0, over the union (no identity): [1, 2, 8, 0].
  for (const char* of : {"d", "s"}) {
    TensorBase a("a", Datatype::Float64, {4}, Format::parse(of));
    Assignment as;
    as.lhs = a(i);
    as.rhs = apply(absdiff, B(i), C(i));
    EXPECT_EQ(as.rhs.str(), "absdiff(B(i), C(i))");
    Kernel::compile(as, Schedule())->run(as, 1);
    EXPECT_EQ(dense(a.toCoo(), 0), (std::vector<double>{1, 2, 8, 0})) << of;
    EXPECT_EQ(dense(referenceEvaluate(as), 0), (std::vector<double>{1, 2, 8, 0})) << of;
  }
  // As a semiring's mul: y(i) = sum over stored j of |A(i,j) - x(j)| (no annihilator:
  // products over stored operands only). A row 0 {0: 2, 2: -1}, row 2 {1: 3}; x = [1, -2, 4].
  const CooData Ad = entries({3, 3}, {{{0, 0}, 2}, {{0, 2}, -1}, {{2, 1}, 3}});
  TensorBase A = makeTensor("A", Ad, Format::parse("ds"));
  TensorBase x = makeTensor("x", entries({3}, {{{0}, 1}, {{1}, -2}, {{2}, 4}}), Format::parse("d"));
  TensorBase y("y", Datatype::Float64, {3}, Format::parse("d"));
  Assignment sp;
  sp.lhs = y(i);
  sp.rhs = A(i, j) * x(j);
  sp.semiring = Semiring::of(BinaryOp::plus(), absdiff);
  EXPECT_EQ(sp.semiring.name, "plus_absdiff");
  Kernel::compile(sp, Schedule())->run(sp, 1);
  EXPECT_EQ(dense(y.toCoo(), 0), (std::vector<double>{1 + 5, 0, 5}));
  EXPECT_EQ(dense(referenceEvaluate(sp), 0), (std::vector<double>{6, 0, 5}));
  // Two operators of one name but different C text are different kernels.
  BinaryOp other = BinaryOp::custom("absdiff", "(a - b)", [](double a, double b) { return a - b; });
  EXPECT_FALSE(other == absdiff);
  TensorBase a2("a2", Datatype::Float64, {4}, Format::parse("d"));
  Assignment o;
  o.lhs = a2(i);
  o.rhs = apply(other, B(i), C(i));
  Kernel::compile(o, Schedule())->run(o, 1);
  EXPECT_EQ(dense(a2.toCoo(), 0), (std::vector<double>{-1, -2, 8, 0}));
}

// ---------------------------------------------------------------- random data

// max(B, C), B < C and abs(B) on random CSR/DCSR/dense matrices against plain loops
// over the dense values (absent = 0), at 1 and 2 threads.
TEST(Elementwise, RandomAgainstLoops) {
  std::mt19937_64 rng(7);
  const int64_t m = 37, n = 23;
  for (int round = 0; round < 3; round++) {
    CooData B = randomCoo({m, n}, 0.2, rng), C = randomCoo({m, n}, 0.2, rng);
    std::vector<double> b = dense(B, 0), c = dense(C, 0), wantMax(b.size()), wantLt(b.size()), rowSum(m, 0);
    for (size_t k = 0; k < b.size(); k++) {
      wantMax[k] = std::max(b[k], c[k]);
      wantLt[k] = b[k] < c[k] ? 1 : 0;
      rowSum[k / n] += std::abs(b[k]);
    }
    for (const char* f : {"ds", "ss", "dd"})
      for (int threads : {1, 2}) {
        std::vector<Operand> in = {{"B", B, Format::parse(f)}, {"C", C, Format::parse("ds")}};
        std::string what = std::string(f) + " threads " + std::to_string(threads);
        expectValues(run("A(i,j) = max(B(i,j), C(i,j))", Semiring::plusTimes(), in, {m, n}, Format::parse("ds"), threads),
                     wantMax, "max " + what);
        expectValues(run("A(i,j) = B(i,j) < C(i,j)", Semiring::plusTimes(), in, {m, n}, Format::parse("dd"), threads),
                     wantLt, "< " + what);
        Outcome s = run("a(i) = abs(B(i,j))", Semiring::plusTimes(), in, {m}, Format::parse("d"), threads);
        for (int64_t r = 0; r < m; r++) {
          EXPECT_NEAR(s.compiled[r], rowSum[r], 1e-12) << what;
          EXPECT_NEAR(s.reference[r], rowSum[r], 1e-12) << what;
        }
      }
  }
}

