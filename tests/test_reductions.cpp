// Reduction semantics (einsum convention, explicit `sum`): compiled kernels and the
// reference evaluator against values computed by hand, on several formats and 1, 2 and
// 4 threads; the explicit form; bad sums; precompute below a `+`; and random sums of
// terms that reduce over different variables.
#include <gtest/gtest.h>

#include "support/test_support.h"
#include "tessel/kernel.h"
#include "tessel/parser.h"
#include "tessel/reference.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

/// A dense row-major array as entries (zeros left out).
CooData dense(const std::vector<int64_t>& dims, const std::vector<double>& v) {
  CooData c;
  c.dims = dims;
  std::vector<int64_t> at(dims.size(), 0);
  for (double x : v) {
    if (x != 0) c.add(at, x);
    for (size_t m = dims.size(); m-- > 0;) {
      if (++at[m] < dims[m]) break;
      at[m] = 0;
    }
  }
  return c;
}

// B (2x3), c (3), d (2), E (2x2), f (2), C (3x2), D (2x2), x (2)
const CooData kB = dense({2, 3}, {1, 0, 2, 0, 3, 0});
const CooData kc = dense({3}, {1, 2, 3});
const CooData kd = dense({2}, {10, 20});
const CooData kE = dense({2, 2}, {1, 1, 0, 5});
const CooData kf = dense({2}, {4, 0});
const CooData kC = dense({3, 2}, {1, 2, 0, 1, 3, 0});
const CooData kD = dense({2, 2}, {100, 0, 0, 200});
const CooData kx = dense({2}, {1, 1});

struct HandCase {
  std::string expr;
  Format out;
  std::vector<int64_t> outDims;
  std::vector<double> expected;  ///< dense, row-major
};

std::map<std::string, TensorBase> bind(const std::string& sparse) {
  Format m = Format::parse(sparse);
  return {{"B", makeTensor("B", kB, m)},           {"c", makeTensor("c", kc, DenseFormat(1))},
          {"d", makeTensor("d", kd, DenseFormat(1))}, {"E", makeTensor("E", kE, m)},
          {"f", makeTensor("f", kf, Format::parse("s"))}, {"C", makeTensor("C", kC, m)},
          {"D", makeTensor("D", kD, m)},           {"x", makeTensor("x", kx, DenseFormat(1))}};
}

void expectValues(const CooData& got, const HandCase& h, const std::string& who) {
  CooData want = dense(h.outDims, h.expected);
  std::string why;
  EXPECT_TRUE(tensorsClose(want, got, 1e-12, 1e-12, &why)) << who << ": " << h.expr << ": " << why;
}

const std::vector<HandCase> kHand = {
    // Bc = (7, 6): each term sums over its own variables.
    {"a(i) = B(i,j) * c(j) + d(i)", DenseFormat(1), {2}, {17, 26}},
    {"a(i) = d(i) + B(i,j) * c(j)", Format::parse("s"), {2}, {17, 26}},
    {"r(i) = d(i) - B(i,j) * c(j)", DenseFormat(1), {2}, {3, 14}},
    {"r(i) = -(B(i,j) * c(j)) + d(i)", DenseFormat(1), {2}, {3, 14}},
    {"r(i) = -(B(i,j) * c(j) - d(i))", DenseFormat(1), {2}, {3, 14}},
    // sum(j, ...) keeps d inside the sum: added once per j (3 times).
    {"a(i) = sum(j, B(i,j) * c(j) + d(i))", DenseFormat(1), {2}, {37, 66}},
    {"a(i) = sum(j, B(i,j) * c(j)) + d(i)", DenseFormat(1), {2}, {17, 26}},
    // Two terms over different reduction variables: Bc + Ef = (7, 6) + (4, 0).
    {"a(i) = B(i,j) * c(j) + E(i,k) * f(k)", DenseFormat(1), {2}, {11, 6}},
    {"a(i) = B(i,j) * c(j) + E(i,k) * f(k) + d(i)", Format::parse("s"), {2}, {21, 26}},
    // Two terms over the same variable: one loop nest, the same sums.
    {"a(i) = B(i,j) * c(j) + B(i,j) * c(j) * 2", DenseFormat(1), {2}, {21, 18}},
    // Row sums of a sum: each term sums over j: rowsum(B) + rowsum(B) = (6, 6).
    {"a(i) = B(i,j) + B(i,j)", DenseFormat(1), {2}, {6, 6}},
    // An explicit inner sum: Cx = (3, 1, 3), then B(Cx) = (9, 3).
    {"a(i) = B(i,j) * sum(k, C(j,k) * x(k))", DenseFormat(1), {2}, {9, 3}},
    {"a(i) = 2 * sum(j, B(i,j) * c(j))", DenseFormat(1), {2}, {14, 12}},
    // Scalars: dot(d, d) + 1 is 501, not 500 + 2.
    {"s = d(i) * d(i) + 1", Format(), {}, {501}},
    {"s = sum(i, d(i) * d(i) + 1)", Format(), {}, {502}},
    // Matrices: BC = [[7, 2], [0, 3]], plus D.
    {"A(i,j) = B(i,k) * C(k,j) + D(i,j)", DenseFormat(2), {2, 2}, {107, 2, 0, 203}},
    {"A(i,j) = B(i,k) * C(k,j) + D(i,j)", Format::parse("ds"), {2, 2}, {107, 2, 0, 203}},
    {"A(i,j) = D(i,j) - B(i,k) * C(k,j)", Format::parse("ss"), {2, 2}, {93, -2, 0, 197}},
};

}  // namespace

TEST(Reductions, HandComputedValuesCompiled) {
  for (const char* sparse : {"ds", "dd", "ss"})
    for (const HandCase& h : kHand)
      for (int threads : {1, 2, 4}) {
        auto tensors = bind(sparse);
        std::vector<TensorUse> uses = scanTensors(h.expr);
        TensorBase out(uses[0].name, Datatype::Float64, h.outDims, h.out);
        tensors[uses[0].name] = out;
        Assignment a = parseAssignment(h.expr, tensors);
        SCOPED_TRACE(h.expr + " (" + sparse + ", " + std::to_string(threads) + " threads)");
        auto k = Kernel::compile(a, defaultParallelSchedule(a, threads));
        k->run(a, threads);
        expectValues(out.toCoo(), h, "compiled");
        EXPECT_EQ(storageProblem(out), "");
      }
}

TEST(Reductions, HandComputedValuesReference) {
  for (const HandCase& h : kHand) {
    auto tensors = bind("ds");
    std::vector<TensorUse> uses = scanTensors(h.expr);
    tensors[uses[0].name] = TensorBase(uses[0].name, Datatype::Float64, h.outDims, h.out);
    expectValues(referenceEvaluate(parseAssignment(h.expr, tensors)), h, "reference");
  }
}

TEST(Reductions, AccumulateAddsEachTermOnce) {
  // a starts at (1, 2): a += Bc + d gives (1 + 7 + 10, 2 + 6 + 20), dense and sparse.
  for (const char* of : {"d", "s"}) {
    auto tensors = bind("ds");
    TensorBase a = makeTensor("a", dense({2}, {1, 2}), Format::parse(of));
    tensors["a"] = a;
    Assignment as = parseAssignment("a(i) += B(i,j) * c(j) + d(i)", tensors);
    Kernel::compile(as)->run(as, 1);
    expectValues(a.toCoo(), {"a(i) += B(i,j) * c(j) + d(i)", Format(), {2}, {18, 28}}, of);
  }
}

TEST(Reductions, ExplicitForm) {
  auto t = bind("ds");
  t["a"] = TensorBase("a", Datatype::Float64, {2}, DenseFormat(1));
  t["A"] = TensorBase("A", Datatype::Float64, {2, 2}, DenseFormat(2));
  auto form = [&](const std::string& e) { return explicitReductions(parseAssignment(e, t)).str(); };
  EXPECT_EQ(form("a(i) = B(i,j) * c(j) + d(i)"), "sum(j, B(i,j) * c(j)) + d(i)");
  EXPECT_EQ(form("a(i) = sum(j, B(i,j) * c(j) + d(i))"), "sum(j, B(i,j) * c(j) + d(i))");
  EXPECT_EQ(form("A(i,j) = B(i,k) * C(k,j)"), "sum(k, B(i,k) * C(k,j))");
  EXPECT_EQ(form("a(i) = B(i,j) * C(j,k) * x(k) - d(i)"), "sum(j, sum(k, B(i,j) * C(j,k) * x(k))) - d(i)");
  EXPECT_EQ(form("a(i) = -(B(i,j) * c(j) + E(i,k) * f(k))"), "-(sum(j, B(i,j) * c(j)) + sum(k, E(i,k) * f(k)))");
  // A sum prints and parses back as itself.
  Assignment a = parseAssignment("a(i) = sum(j, B(i,j) * c(j) + d(i))", t);
  EXPECT_EQ(parseAssignment(a.str(), t).str(), a.str());
  // The C++ form.
  IndexVar i("i"), j("j");
  TensorBase B = t["B"], c = t["c"], d = t["d"], out = t["a"];
  EXPECT_EQ(makeAssignment(out(i), sum(j, B(i, j) * c(j)) + d(i)).str(), "a(i) = sum(j, B(i,j) * c(j)) + d(i)");
}

TEST(Reductions, BadSums) {
  auto t = bind("ds");
  t["a"] = TensorBase("a", Datatype::Float64, {2}, DenseFormat(1));
  auto expectError = [&](const std::string& e, const std::vector<std::string>& parts) {
    SCOPED_TRACE(e);
    try {
      checkAssignment(parseAssignment(e, t));
      ADD_FAILURE() << "accepted";
    } catch (const UserError& err) {
      for (const std::string& p : parts) EXPECT_NE(std::string(err.what()).find(p), std::string::npos) << err.what();
    }
  };
  expectError("a(i) = sum(k, B(i,j) * c(j))", {"sum(k, ...)", "k does not appear in its expression", "column 12"});
  expectError("a(i) = sum(i, B(i,j) * c(j))", {"i is an index variable of the left-hand side"});
  expectError("a(i) = sum(j, sum(j, B(i,j)))", {"already summed by an enclosing sum"});
  expectError("a(i) = sum(j, B(i,j)) * c(j)", {"j is summed by sum(j, ...) and also used outside that sum"});
  expectError("a(i) = sum(B(i,j))", {"expected ',' and an expression after sum(B"});
  expectError("a(i) = sum(j)", {"expected ',' and an expression after sum(j"});
  expectError("a(i) = sum + d(i)", {"sum is the reduction sum(j, e)"});
  expectError("sum(i) = d(i)", {"a tensor cannot be named sum"});
  expectError("a(i) = sum(j, B(i,j)", {"missing ')'"});
  // The C++ API checks the same when the assignment is made.
  IndexVar i("i"), j("j"), k("k");
  TensorBase B = t["B"], out = t["a"];
  EXPECT_THROW(out(i) = sum(k, B(i, j)), NotationError);
  EXPECT_THROW(out(i) = sum(i, B(i, j)), NotationError);
}

TEST(Reductions, PrecomputeBelowAPlus) {
  // y = A x + z with A x precomputed: the temporary holds the sum, z is added once.
  for (int threads : {1, 2, 4}) {
    auto tensors = bind("ds");
    TensorBase y("y", Datatype::Float64, {2}, DenseFormat(1));
    tensors["y"] = y;
    Assignment a = parseAssignment("y(i) = B(i,j) * c(j) + d(i)", tensors);
    auto k = Kernel::compile(a, parseSchedule("precompute(B(i,j)*c(j),t)", a));
    k->run(a, threads);
    expectValues(y.toCoo(), {"y(i) = B(i,j) * c(j) + d(i)", Format(), {2}, {17, 26}}, "precompute");
    EXPECT_NE(k->source().find("t(i) = sum(j, B(i,j) * c(j))"), std::string::npos);
  }
}

TEST(Reductions, ScheduleGoesToTheStageWithItsVariables) {
  auto tensors = bind("ds");
  TensorBase y("y", Datatype::Float64, {2}, DenseFormat(1));
  tensors["y"] = y;
  Assignment a = parseAssignment("y(i) = B(i,j) * c(j) + d(i)", tensors);
  // pos over B's j names the inner sum's loop nest; the split of i fits the last stage.
  for (const char* s : {"fuse(i,j,f),pos(f,fp,B),split(fp,p0,p1,2),parallelize(p0,cpu_thread,atomics)",
                        "split(i,i0,i1,1),parallelize(i0,cpu_thread,no_races)"}) {
    SCOPED_TRACE(s);
    Kernel::compile(a, parseSchedule(s, a))->run(a, 2);
    expectValues(y.toCoo(), {"", Format(), {2}, {17, 26}}, s);
  }
  tensors["a"] = TensorBase("a", Datatype::Float64, {2}, DenseFormat(1));
  Assignment two = parseAssignment("a(i) = B(i,j) * c(j) + E(i,k) * f(k)", tensors);
  EXPECT_THROW(Kernel::compile(two, parseSchedule("reorder(j,k)", two)), ScheduleError);
}

namespace {

/// Random sums of terms: each term a product of one or two accesses over variables that
/// the output may or may not have, some terms (or the whole) in an explicit sum.
std::string randomSumOfTerms(std::mt19937_64& rng, std::vector<Operand>& in, std::string& lhs, Format& out) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const char* vars[] = {"i", "j", "k"};
  std::vector<int64_t> ext = {pick(0, 5), pick(1, 6), pick(1, 4)};
  int outVars = pick(0, 2);  // the output's variables: the first outVars of i, j
  std::string rhs;
  int terms = pick(2, 4);
  for (int t = 0; t < terms; t++) {
    std::string term;
    std::vector<std::string> used;
    int factors = pick(1, 2);
    for (int f = 0; f < factors; f++) {
      std::string name(1, static_cast<char>('B' + in.size()));
      std::vector<int> modes;
      for (int v = 0; v < 3; v++)
        if (pick(0, 1)) modes.push_back(v);
      if (modes.empty()) modes.push_back(pick(0, 2));
      std::string acc = name + "(";
      std::vector<int64_t> dims;
      for (size_t m = 0; m < modes.size(); m++) {
        acc += (m ? "," : "") + std::string(vars[modes[m]]);
        dims.push_back(ext[modes[m]]);
        used.push_back(vars[modes[m]]);
      }
      in.push_back({name, randomCoo(dims, std::vector<double>{0.0, 0.3, 1.0}[pick(0, 2)], rng),
                    Format::parse(std::string(dims.size(), pick(0, 1) ? 's' : 'd'))});
      term += (f ? " * " : "") + acc + ")";
    }
    // An explicit sum over one of the term's variables not on the left.
    for (const std::string& v : used)
      if ((v == "k" || (v == "j" && outVars < 2) || (v == "i" && outVars < 1)) && pick(0, 2) == 0) {
        term = "sum(" + v + ", " + term + ")";
        break;
      }
    rhs += t == 0 ? term : std::string(pick(0, 1) ? " + " : " - ") + term;
  }
  lhs = outVars == 0 ? "a" : outVars == 1 ? "A(i)" : "A(i,j)";
  out = outVars == 0 ? Format() : Format::parse(outVars == 1 ? (pick(0, 1) ? "d" : "s") : (pick(0, 1) ? "dd" : "ds"));
  // Every output variable must appear on the right: add a term over them.
  if (outVars >= 1) {
    std::string name(1, static_cast<char>('B' + in.size()));
    std::vector<int64_t> dims(ext.begin(), ext.begin() + outVars);
    in.push_back({name, randomCoo(dims, 0.5, rng), DenseFormat(outVars)});
    rhs += " + " + name + (outVars == 1 ? "(i)" : "(i,j)");
  }
  return lhs + " = " + rhs;
}

}  // namespace

TEST(Reductions, PropertyRandomSumsOfTerms) {
  std::mt19937_64 rng(11);
  int ran = 0;
  for (int n = 0; n < 30; n++) {
    std::vector<Operand> in;
    std::string lhs;
    Format out;
    std::string expr = randomSumOfTerms(rng, in, lhs, out);
    for (int threads : {1, 2, 4}) {
      SCOPED_TRACE("case " + std::to_string(n) + ": " + expr + " on " + std::to_string(threads) + " threads");
      try {
        EXPECT_TRUE(matchesReferenceEachRound(expr, {in}, out, threads));
        ran++;
      } catch (const UserError& e) {
        // A variable summed explicitly and used in another factor of its term.
        EXPECT_NE(std::string(e.what()).find("also used outside that sum"), std::string::npos) << e.what();
      }
    }
  }
  EXPECT_GE(ran, 45);
}
