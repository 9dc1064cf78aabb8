// Property test for semirings: random sums of products (with explicit sums and terms
// that reduce over different variables), random formats and shapes, under min_plus and
// max_times, on 1, 2 and 4 threads (default parallel schedule), against the reference
// evaluator, which implements each semiring's operators on its own.
#include <gtest/gtest.h>

#include <cmath>

#include "support/test_support.h"
#include "tessel/kernel.h"
#include "tessel/operators.h"
#include "tessel/parser.h"
#include "tessel/reference.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

struct Case {
  std::string expr;
  std::vector<Operand> in;
  Format out;
  std::vector<int64_t> outDims;
};

/// Terms of one or two accesses over i, j, k joined by `+` (no `-`, `/` or numbers: the
/// semirings lack them); the output is a(i), A(i,j) or a scalar.
Case randomCase(std::mt19937_64& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const char* vars[] = {"i", "j", "k"};
  std::vector<int64_t> ext = {pick(0, 5), pick(1, 6), pick(1, 4)};
  int outVars = pick(0, 2);
  Case c;
  std::string rhs;
  int terms = pick(1, 3);
  for (int t = 0; t < terms; t++) {
    std::string term;
    std::vector<int> used;
    for (int f = 0, n = pick(1, 2); f < n; f++) {
      std::string name(1, static_cast<char>('B' + c.in.size()));
      std::vector<int> modes;
      for (int v = 0; v < 3; v++)
        if (pick(0, 1)) modes.push_back(v);
      if (modes.empty()) modes.push_back(pick(0, 2));
      std::string acc = name + "(";
      std::vector<int64_t> dims;
      for (size_t m = 0; m < modes.size(); m++) {
        acc += (m ? "," : "") + std::string(vars[modes[m]]);
        dims.push_back(ext[modes[m]]);
        used.push_back(modes[m]);
      }
      std::string levels;
      for (size_t m = 0; m < modes.size(); m++) levels += pick(0, 1) ? 's' : 'd';
      c.in.push_back({name, randomCoo(dims, std::vector<double>{0.0, 0.3, 1.0}[pick(0, 2)], rng), Format::parse(levels)});
      term += (f ? " * " : "") + acc + ")";
    }
    for (int v : used)  // sometimes an explicit sum over a variable not on the left
      if (v >= outVars && pick(0, 2) == 0) {
        term = "sum(" + std::string(vars[v]) + ", " + term + ")";
        break;
      }
    rhs += (t ? " + " : "") + term;
  }
  if (outVars >= 1) {  // every output variable appears on the right
    std::string name(1, static_cast<char>('B' + c.in.size()));
    std::vector<int64_t> dims(ext.begin(), ext.begin() + outVars);
    c.in.push_back({name, randomCoo(dims, 0.5, rng), DenseFormat(outVars)});
    rhs += " + " + name + (outVars == 1 ? "(i)" : "(i,j)");
  }
  c.outDims.assign(ext.begin(), ext.begin() + outVars);
  std::string lhs = outVars == 0 ? "a" : outVars == 1 ? "a(i)" : "a(i,j)";
  c.out = outVars == 0 ? Format() : Format::parse(outVars == 1 ? (pick(0, 1) ? "d" : "s") : (pick(0, 1) ? "dd" : "ds"));
  c.expr = lhs + " = " + rhs;
  return c;
}

/// Compiles and runs `c` under `s` on `threads` threads (the default parallel schedule)
/// and compares with the reference evaluator; tensors of `type`, values rounded to
/// integers -3..3 when `integers`. False when the case is refused: a summed variable
/// used in another factor of its term, by name.
bool runAgainstReference(const Case& c, const Semiring& s, int threads, Datatype type = Datatype::Float64,
                         bool integers = false) {
  std::map<std::string, TensorBase> tensors;
  for (const Operand& o : c.in) {
    CooData d = o.data;
    if (integers)
      for (double& v : d.values) v = std::round(v * 3);  // -3..3: zeros, ones, signs
    tensors.emplace(o.name, makeTensor(o.name, d, o.format, type));
  }
  TensorBase out("a", type, c.outDims, c.out);
  tensors.emplace("a", out);
  Assignment a = parseAssignment(c.expr, tensors);
  a.semiring = s;
  try {
    Kernel::compile(a, defaultParallelSchedule(a, threads))->run(a, threads);
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("also used outside that sum"), std::string::npos) << e.what();
    return false;
  }
  std::string why;
  EXPECT_TRUE(tensorsClose(referenceEvaluate(a), out.toCoo(), 1e-9, 1e-9, &why, s)) << why;
  return true;
}

}  // namespace

TEST(SemiringProperty, RandomSumsOfProducts) {
  std::mt19937_64 rng(31);
  int ran = 0;
  for (int n = 0; n < 24; n++) {
    Case c = randomCase(rng);
    for (const Semiring& s : {Semiring::minPlus(), Semiring::maxTimes()})
      for (int threads : {1, 2, 4}) {
        SCOPED_TRACE("case " + std::to_string(n) + ": " + c.expr + " under " + s.name + " on " +
                     std::to_string(threads) + " threads");
        ran += runAgainstReference(c, s, threads);
      }
  }
  EXPECT_GE(ran, 100);
}

// Every semiring of the catalogue (GraphBLAS's names) on random sums of products, formats
// and shapes at 1 and 2 threads, against the reference evaluator (which writes out each
// operator on its own). Integer-valued data, so structural semirings meet zeros, ones and
// repeats; the logical ones (or_and, and_or) run on bool tensors, their domain (over
// other types `or` has no identity: or(0, -6) is 1, not -6).
TEST(SemiringProperty, TheCatalogue) {
  std::mt19937_64 rng(57);
  int ran = 0;
  std::vector<Case> cases;
  for (int n = 0; n < 8; n++) cases.push_back(randomCase(rng));
  for (const std::string& name : Semiring::names()) {
    Semiring s = Semiring::byName(name);
    EXPECT_EQ(s.name, name);
    auto logical = [](const BinaryOp& o) { return o.kind == BinaryOpKind::Or || o.kind == BinaryOpKind::And; };
    Datatype type = logical(s.add) || logical(s.mul) ? Datatype::Bool : Datatype::Float64;
    for (size_t n = 0; n < cases.size(); n++)
      for (int threads : {1, 2}) {
        const Case& c = cases[n];
        SCOPED_TRACE("case " + std::to_string(n) + ": " + c.expr + " under " + name + " on " +
                     std::to_string(threads) + " threads");
        ran += runAgainstReference(c, s, threads, type, true);
      }
  }
  EXPECT_GE(ran, 150);
}
