// Property test for output masks: random expressions (sums of products over i, j, k,
// with reductions) into a(i) or a(i,j), under random masks -- structural or valued,
// complemented or not, `=` or `+=` with merge or replace, pull, push or auto -- in random
// formats (dense, compressed, bitmap levels; CSC), semirings of the catalogue, bool,
// int and double data, at 1 and 2 threads, against the reference evaluator, which
// applies the mask to the unmasked result on its own.
#include <gtest/gtest.h>

#include <cmath>

#include "support/test_support.h"
#include "tessel/kernel.h"
#include "tessel/parser.h"
#include "tessel/reference.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

struct Case {
  std::string expr;
  std::vector<Operand> in;
  Format out, maskFormat;
  std::vector<int64_t> outDims;
  CooData mask, start;
  OutputMask kind;  ///< flags and form; the access is bound per run
  bool accumulate = false;
  std::string what;
};

Format randomFormat(int order, std::mt19937_64& rng, bool bitmap) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::string levels;
  for (int m = 0; m < order; m++) levels += "dsb"[pick(0, bitmap && m == order - 1 ? 2 : 1)];
  Format f = Format::parse(levels);
  if (order == 2 && pick(0, 3) == 0) f = Format::parse(levels + ":1,0");  // by columns
  return f;
}

/// One or two terms of one or two accesses over i, j, k (no `-`, `/`: most semirings lack
/// them), the output's variables all used.
Case randomCase(std::mt19937_64& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const char* vars[] = {"i", "j", "k"};
  std::vector<int64_t> ext = {pick(1, 6), pick(1, 6), pick(1, 5)};
  int outVars = pick(1, 2);
  Case c;
  std::string rhs;
  for (int t = 0, terms = pick(1, 2); t < terms; t++) {
    std::string term;
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
      }
      double density = std::vector<double>{0.0, 0.3, 0.7, 1.0}[pick(0, 3)];
      c.in.push_back({name, randomCoo(dims, density, rng, false, true), randomFormat(static_cast<int>(modes.size()), rng, false)});
      term += (f ? " * " : "") + acc + ")";
    }
    rhs += (t ? " + " : "") + term;
  }
  std::string name(1, static_cast<char>('B' + c.in.size()));  // every output variable on the right
  std::vector<int64_t> dims(ext.begin(), ext.begin() + outVars);
  c.in.push_back({name, randomCoo(dims, 0.5, rng, false, true), randomFormat(outVars, rng, false)});
  rhs += " * " + name + (outVars == 1 ? "(i)" : "(i,j)");
  c.outDims = dims;
  // Outputs whose levels an assembly can fill (a bitmap level under dense ones only).
  const std::vector<std::string> outs = outVars == 1 ? std::vector<std::string>{"d", "s", "b"}
                                                     : std::vector<std::string>{"dd", "ds", "ss", "db", "ds:1,0"};
  c.out = Format::parse(outs[static_cast<size_t>(pick(0, static_cast<int>(outs.size()) - 1))]);
  c.accumulate = pick(0, 2) == 0;
  c.expr = std::string(outVars == 1 ? "a(i)" : "a(i,j)") + (c.accumulate ? " += " : " = ") + rhs;
  // Masks with explicit zeros (integer values), empty and full ones.
  c.mask = randomCoo(dims, std::vector<double>{0.0, 0.2, 0.6, 1.0}[pick(0, 3)], rng, false, true);
  c.maskFormat = randomFormat(outVars, rng, true);
  c.start = randomCoo(dims, 0.4, rng, false, true);
  c.kind.valued = pick(0, 1);
  c.kind.complement = pick(0, 1);
  c.kind.replace = pick(0, 1);
  c.kind.form = std::vector<MaskForm>{MaskForm::Auto, MaskForm::Pull, MaskForm::Push}[pick(0, 2)];
  c.what = c.expr + " with mask <" + std::string(c.kind.complement ? "!" : "") + "M" + (c.kind.valued ? ",valued" : "") +
           (c.kind.replace ? ",replace" : "") + "> M:" + c.maskFormat.str() + " a:" + c.out.str() + " form " +
           std::to_string(static_cast<int>(c.kind.form));
  return c;
}

/// Compiles and runs `c` under `s` on `threads` threads (the default parallel schedule);
/// false when the case is refused with a UserError the test accepts (a schedule or
/// format that cannot be, named).
bool runAgainstReference(const Case& c, const Semiring& s, int threads, Datatype type) {
  std::map<std::string, TensorBase> tensors;
  for (const Operand& o : c.in) tensors.emplace(o.name, makeTensor(o.name, o.data, o.format, type));
  TensorBase out = c.accumulate ? makeTensor("a", c.start, c.out, type) : TensorBase("a", type, c.outDims, c.out);
  tensors.emplace("a", out);
  TensorBase mask = makeTensor("M", c.mask, c.maskFormat);
  Assignment a = parseAssignment(c.expr, tensors);
  a.semiring = s;
  a.mask = c.kind;
  a.mask.access = Access(mask, a.lhsNode().vars);
  CooData expected = referenceEvaluate(a);
  try {
    Kernel::compile(a, defaultParallelSchedule(a, threads))->run(a, threads);
  } catch (const FormatError& e) {  // formats no loop order serves (reported, not wrong)
    ADD_FAILURE() << e.what();
    return false;
  }
  std::string why;
  EXPECT_TRUE(tensorsClose(expected, out.toCoo(), 1e-9, 1e-9, &why, s)) << why;
  EXPECT_EQ(storageProblem(out), "");
  return true;
}

}  // namespace

TEST(MaskProperty, RandomMaskedExpressionsAcrossSemiringsFormatsAndThreads) {
  std::mt19937_64 rng(2024);
  int ran = 0;
  const std::vector<std::string> semirings = {"plus_times", "min_plus", "max_times", "any_pair", "plus_pair",
                                              "or_and",     "min_first", "max_second"};
  for (int n = 0; n < 40; n++) {
    Case c = randomCase(rng);
    Semiring s = Semiring::byName(semirings[static_cast<size_t>(n) % semirings.size()]);
    bool logical = s.add.kind == BinaryOpKind::Or || s.mul.kind == BinaryOpKind::And;
    // Integers only where the semiring's zero is finite: an int64 output cannot hold
    // min_plus's inf (it holds INT64_MAX, unmasked too; not a mask's concern).
    bool finiteZero = std::isfinite(s.zero());
    Datatype type = logical ? Datatype::Bool : n % 3 == 0 && finiteZero ? Datatype::Int64 : Datatype::Float64;
    // any's `+=` may keep the old or the new value (the reference and kernels differ).
    if (c.accumulate && s.add.kind == BinaryOpKind::Any) s = Semiring::byName("plus_pair");
    for (int threads : {1, 2}) {
      SCOPED_TRACE("case " + std::to_string(n) + ": " + c.what + " under " + s.name + " (" + datatypeName(type) +
                   ") on " + std::to_string(threads) + " threads");
      ran += runAgainstReference(c, s, threads, type);
    }
  }
  EXPECT_GE(ran, 60);
}
