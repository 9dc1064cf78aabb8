// Output masks (Assignment::mask, GraphBLAS's C<M>): masked SpGEMM and SpMV against
// values written out by hand -- structural, valued, complemented, `+=` merge and
// replace, dense and sparse outputs and masks, semirings, types, pull and push forms,
// threads -- a kernel rerun on a changed mask, triangle counts on real graphs against
// an independent count, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <set>

#include "support/test_support.h"
#include "tessel/io.h"
#include "tessel/kernel.h"
#include "tessel/parser.h"
#include "tessel/reference.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
using Entries = std::map<std::vector<int64_t>, double>;

CooData entriesOf(const std::vector<int64_t>& dims, const Entries& es) {
  return entries(dims, {es.begin(), es.end()});
}

Entries stored(const TensorBase& t) {
  CooData c = t.toCoo();
  Entries e;
  for (int64_t k = 0; k < c.nnz(); k++)
    e[std::vector<int64_t>(c.coords.begin() + k * c.order(), c.coords.begin() + (k + 1) * c.order())] = c.values[k];
  return e;
}

/// Stored entries without the value `zero` (what a dense output holds where it has none).
Entries without(const Entries& e, double zero) {
  Entries r;
  for (const auto& [at, v] : e)
    if (!(v == zero)) r[at] = v;
  return r;
}

// A and B (3x3), the mask M with an explicit zero at (0,2), and C's old values for +=.
// A*B = (0,0) 7, (0,1) 8, (0,2) 2, (1,0) 9, (1,1) 12, (2,0) 4, (2,2) 33.
const CooData kA = entries({3, 3}, {{{0, 0}, 1}, {{0, 1}, 2}, {{1, 1}, 3}, {{2, 0}, 4}, {{2, 2}, 5}});
const CooData kB = entries({3, 3}, {{{0, 0}, 1}, {{0, 2}, 2}, {{1, 0}, 3}, {{1, 1}, 4}, {{2, 2}, 5}});
const CooData kM = entries({3, 3}, {{{0, 0}, 1}, {{0, 2}, 0}, {{1, 1}, 1}, {{2, 1}, 1}});
const CooData kOld = entries({3, 3}, {{{0, 1}, 100}, {{1, 2}, 200}, {{2, 1}, 300}});

struct MaskKind {
  bool valued = false, complement = false, replace = false;
  MaskForm form = MaskForm::Auto;
};

struct Masked {
  TensorBase out;
  CooData expected;  ///< the reference evaluator's
};

/// C(i,j) (= or +=) A(i,k) * B(k,j) under mask M of `maskFormat`; C starts from kOld for +=.
Masked spgemm(const Format& outFormat, const Format& maskFormat, const MaskKind& k, bool accumulate = false,
           const Semiring& s = Semiring::plusTimes(), int threads = 1, Datatype type = Datatype::Float64,
           const Format& bFormat = Format::parse("ds")) {
  TensorBase A = makeTensor("A", kA, Format::parse("ds"), type), B = makeTensor("B", kB, bFormat, type);
  TensorBase M = makeTensor("M", kM, maskFormat);
  TensorBase C = accumulate ? makeTensor("C", kOld, outFormat, type) : TensorBase("C", type, {3, 3}, outFormat);
  IndexVar i("i"), j("j"), kk("k");
  Assignment a = makeAssignment(C(i, j), A(i, kk) * B(kk, j), accumulate);
  a.semiring = s;
  a.mask = outputMask(M(i, j), k.valued, k.complement, k.replace);
  a.mask.form = k.form;
  CooData expected = referenceEvaluate(a);
  Kernel::compile(a, defaultParallelSchedule(a, threads))->run(a, threads);
  EXPECT_EQ(storageProblem(C), "");
  return {C, expected};
}

const std::vector<std::string> kMaskFormats = {"ds", "ds:1,0", "ss", "dd", "db"};
const std::vector<std::string> kOutFormats = {"ds", "ss", "dd"};

}  // namespace

TEST(Masks, SpGEMMStructuralValuedComplementedByHand) {
  const Entries structural = {{{0, 0}, 7}, {{0, 2}, 2}, {{1, 1}, 12}};  // (2,1): no product, no entry
  const Entries valued = {{{0, 0}, 7}, {{1, 1}, 12}};                   // M(0,2) = 0 is false
  const Entries complement = {{{0, 1}, 8}, {{1, 0}, 9}, {{2, 0}, 4}, {{2, 2}, 33}};
  Entries complementValued = complement;
  complementValued[{0, 2}] = 2;
  for (const std::string& mf : kMaskFormats)
    for (const std::string& of : kOutFormats)
      for (MaskForm form : {MaskForm::Auto, MaskForm::Pull, MaskForm::Push}) {
        if (mf != "ds" && form != MaskForm::Auto) continue;  // the forms on one mask format
        SCOPED_TRACE("mask " + mf + ", output " + of + ", form " + std::to_string(static_cast<int>(form)));
        Format o = Format::parse(of), m = Format::parse(mf);
        bool dense = o.isAllDense();
        // A dense mask stores every coordinate: structurally it is all true.
        bool denseMask = m.isAllDense();
        auto got = [&](const MaskKind& k) { return without(stored(spgemm(o, m, k).out), 0); };
        EXPECT_EQ(got({false, false, false, form}), denseMask ? without(stored(spgemm(o, Format::parse("dd"), {}).out), 0) : structural);
        EXPECT_EQ(got({true, false, false, form}), valued);
        EXPECT_EQ(got({false, true, false, form}), denseMask ? Entries{} : complement);
        EXPECT_EQ(got({true, true, false, form}), complementValued);
        if (!dense && !denseMask) EXPECT_EQ(stored(spgemm(o, m, {}).out).size(), 3u) << "an entry where no product met";
      }
}

TEST(Masks, AccumulateMergesOrReplacesByHand) {
  // += keeps the old values where the mask is false; replace removes them.
  const Entries merge = {{{0, 0}, 7}, {{0, 1}, 100}, {{0, 2}, 2}, {{1, 1}, 12}, {{1, 2}, 200}, {{2, 1}, 300}};
  const Entries replace = {{{0, 0}, 7}, {{0, 2}, 2}, {{1, 1}, 12}, {{2, 1}, 300}};
  const Entries complementReplace = {{{0, 1}, 108}, {{1, 0}, 9}, {{1, 2}, 200}, {{2, 0}, 4}, {{2, 2}, 33}};
  const Entries valuedReplace = {{{0, 0}, 7}, {{1, 1}, 12}, {{2, 1}, 300}};
  for (const std::string& mf : {"ds", "ss", "db"})
    for (const std::string& of : kOutFormats)
      for (int threads : {1, 2}) {
        SCOPED_TRACE("mask " + std::string(mf) + ", output " + of + ", threads " + std::to_string(threads));
        Format o = Format::parse(of), m = Format::parse(mf);
        auto got = [&](const MaskKind& k) {
          Masked r = spgemm(o, m, k, true, Semiring::plusTimes(), threads);
          std::string why;
          EXPECT_TRUE(tensorsClose(r.expected, r.out.toCoo(), 1e-12, 1e-12, &why)) << why;
          return without(stored(r.out), 0);
        };
        EXPECT_EQ(got({}), merge);
        EXPECT_EQ(got({false, false, true}), replace);
        EXPECT_EQ(got({false, true, true}), complementReplace);
        EXPECT_EQ(got({true, false, true}), valuedReplace);
      }
}

TEST(Masks, DenseOutputHoldsTheSemiringsZeroWhereMasked) {
  // min_plus: (0,1) = min_k A(0,k) + B(k,1) = 2 + 4; where the mask is false: +inf.
  Masked r = spgemm(Format::parse("dd"), Format::parse("ds"), {false, true}, false, Semiring::minPlus());
  Entries e = stored(r.out);
  EXPECT_EQ(e.at({0, 1}), 6);
  EXPECT_EQ(e.at({0, 0}), kInf);  // in the mask
  EXPECT_EQ(e.at({2, 1}), kInf);
  std::string why;
  EXPECT_TRUE(tensorsClose(r.expected, r.out.toCoo(), 1e-12, 1e-12, &why, Semiring::minPlus())) << why;
  r = spgemm(Format::parse("dd"), Format::parse("ds"), {}, false, Semiring::plusTimes());
  EXPECT_EQ(stored(r.out).at({1, 0}), 0);  // 9 without the mask
  EXPECT_EQ(stored(r.out).at({1, 1}), 12);
}

TEST(Masks, SemiringsAndTypesAgainstTheReference) {
  for (const std::string& name : {"plus_times", "min_plus", "any_pair", "plus_pair", "or_and", "max_times", "min_first",
                                  "min_second"})
    for (Datatype type : {Datatype::Float64, Datatype::Int32, Datatype::Bool})
      for (const auto& [k, acc] : std::vector<std::pair<MaskKind, bool>>{
               {MaskKind{}, false}, {MaskKind{true, false, true}, true}, {MaskKind{false, true}, false},
               {MaskKind{true, true}, true}}) {
          Semiring s = Semiring::byName(name);
          bool logical = s.add.kind == BinaryOpKind::Or || s.mul.kind == BinaryOpKind::And;
          if (logical != (type == Datatype::Bool)) continue;
          // any's `+=` may keep either value (old or new; the reference keeps the old, the
          // kernel the new one, with or without a mask): checked without += below.
          if (acc && s.add.kind == BinaryOpKind::Any) continue;
          SCOPED_TRACE(name + " " + datatypeName(type) + (k.valued ? " valued" : "") + (k.complement ? " !" : "") +
                       (acc ? " +=" : ""));
          Masked r = spgemm(Format::parse("ds"), Format::parse("ds"), k, acc, s, 2, type);
          std::string why;
          EXPECT_TRUE(tensorsClose(r.expected, r.out.toCoo(), 1e-12, 1e-12, &why, s)) << why;
        }
  // plus_pair counts the k met inside the mask: C<M>(0,0) = |{k : A(0,k), B(k,0)}| = 2.
  Masked r = spgemm(Format::parse("ds"), Format::parse("ds"), {}, false, Semiring::byName("plus_pair"));
  EXPECT_EQ(stored(r.out), (Entries{{{0, 0}, 2}, {{0, 2}, 1}, {{1, 1}, 1}}));
}

TEST(Masks, SpMVFrontierWithExplicitZerosInTheMask) {
  // A BFS step y<!visited>(j) = x(i) * A(i,j) under any_pair: x = {0}, row 0 of A
  // reaches {0, 1}. visited stores 0 (true) and 1 (an explicit zero).
  CooData x = entries({3}, {{{0}, 1}});
  CooData visited = entries({3}, {{{0}, 1}, {{1}, 0}});
  for (const std::string& vf : {"s", "b"})
    for (const std::string& xf : {"s", "d"})
      for (const std::string& yf : {"s", "d"})
        for (const std::string& af : {"ds", "ds:1,0", "ss"}) {
          SCOPED_TRACE("visited " + vf + ", x " + xf + ", y " + yf + ", A " + af);
          TensorBase X = makeTensor("x", x, Format::parse(xf), Datatype::Bool);
          TensorBase A = makeTensor("A", kA, Format::parse(af), Datatype::Bool);
          TensorBase V = makeTensor("visited", visited, Format::parse(vf), Datatype::Bool);
          TensorBase Y("y", Datatype::Bool, {3}, Format::parse(yf));
          IndexVar i("i"), j("j");
          Assignment a = makeAssignment(Y(j), X(i) * A(i, j));
          a.semiring = Semiring::byName("any_pair");
          a.mask = outputMask(V(j), false, true);
          auto k = Kernel::compile(a);
          k->run(a);
          // A dense x stores every coordinate (zeros too): any_pair meets row 2 as well.
          bool denseX = xf == "d";
          EXPECT_EQ(without(stored(Y), 0), (denseX ? Entries{{{2}, 1}} : Entries{}))
              << "structurally 0 and 1 are both visited";
          a.mask.valued = true;  // the explicit zero is not visited
          Kernel::compile(a)->run(a);
          EXPECT_EQ(without(stored(Y), 0), denseX ? (Entries{{{1}, 1}, {{2}, 1}}) : (Entries{{{1}, 1}}));
          std::string why;
          EXPECT_TRUE(tensorsClose(referenceEvaluate(a), Y.toCoo(), 0, 0, &why)) << why;
        }
}

TEST(Masks, OneKernelFollowsItsMasksData) {
  // Compiled once, run as the mask changes (a BFS loop refills `visited` each level).
  TensorBase A = makeTensor("A", kA, Format::parse("ds"));
  TensorBase x = makeTensor("x", entries({3}, {{{0}, 1}, {{2}, 1}}), Format::parse("s"));
  TensorBase v("v", Datatype::Float64, {3}, Format::parse("s"));
  TensorBase y("y", Datatype::Float64, {3}, Format::parse("s"));
  IndexVar i("i"), j("j");
  Assignment a = makeAssignment(y(j), x(i) * A(i, j));
  a.mask = outputMask(v(j), false, true);
  auto k = Kernel::compile(a, defaultParallelSchedule(a, 2));
  // x*A = {0: 1 + 4, 1: 2, 2: 5}
  for (const auto& [mask, want] : std::vector<std::pair<Entries, Entries>>{
           {{}, {{{0}, 5}, {{1}, 2}, {{2}, 5}}},
           {{{{0}, 1}}, {{{1}, 2}, {{2}, 5}}},
           {{{{0}, 1}, {{2}, 1}}, {{{1}, 2}}},
           {{{{0}, 1}, {{1}, 1}, {{2}, 1}}, {}}}) {
    v.setFromCoo(entriesOf({3}, mask));
    k->run(a, 2);
    EXPECT_EQ(stored(y), want);
  }
}

TEST(Masks, PullAndPushFormsShowInTheCode) {
  TensorVar A("A", Datatype::Float64, {30, 40}, Format::parse("ds")), B("B", Datatype::Float64, {40, 50}, Format::parse("ds"));
  TensorVar C("C", Datatype::Float64, {30, 50}, Format::parse("ds")), M("M", Datatype::Float64, {30, 50}, Format::parse("ds"));
  IndexVar i("i"), j("j"), k("k");
  Assignment a{C(i, j), A(i, k) * B(k, j)};
  a.mask = outputMask(M(i, j));
  a.mask.form = MaskForm::Pull;
  std::string pull = Kernel::emitC(a);
  EXPECT_NE(pull.find("C<M>(i,j) = A(i,k) * B(k,j)"), std::string::npos) << pull.substr(0, 600);
  EXPECT_NE(pull.find("forall(i, forall(j, forall(k, C(i,j) = mask(M(i,j)) * (A(i,k) * B(k,j)))))"), std::string::npos)
      << pull.substr(0, 600);
  EXPECT_NE(pull.find("transposes B"), std::string::npos);  // dot products read B by columns
  a.mask.form = MaskForm::Push;
  std::string push = Kernel::emitC(a);
  EXPECT_NE(push.find("forall(k, forall(j, w(j) += mask(M(i,j))"), std::string::npos) << push.substr(0, 600);
  a.mask.complement = true;
  a.mask.valued = true;
  std::string comp = Kernel::emitC(a);
  EXPECT_NE(comp.find("C<!M,valued>(i,j)"), std::string::npos) << comp.substr(0, 600);
  EXPECT_NE(comp.find("mask(!(M(i,j) != 0))"), std::string::npos) << comp.substr(0, 600);
  // A CSR mask's row is scattered into flags once per i, then tested per product.
  EXPECT_NE(comp.find("M_row_flags[mask_row + (int64_t)M1_crd[mask_q]] = M_vals[mask_q] != 0.0;"), std::string::npos)
      << comp;
  EXPECT_EQ(comp.find("in_mask"), std::string::npos);
  // A DCSR mask (no dense row level) is binary-searched where (i, j) is bound.
  TensorVar S("S", Datatype::Float64, {30, 50}, Format::parse("ss"));
  a.mask = outputMask(S(i, j), false, true);
  std::string search = Kernel::emitC(a);
  EXPECT_NE(search.find("in_mask"), std::string::npos) << search;
  EXPECT_EQ(search.find("_row_flags"), std::string::npos);
}

TEST(Masks, AutoFormFollowsTheDensities) {
  // A sparse mask over dense-ish operands pulls (few dot products); a dense mask over
  // sparse operands pushes (few products).
  std::mt19937_64 rng(5);
  auto run = [&](double maskDensity, double operandDensity) {
    TensorBase A = makeTensor("A", randomCoo({60, 60}, operandDensity, rng), Format::parse("ds"));
    TensorBase B = makeTensor("B", randomCoo({60, 60}, operandDensity, rng), Format::parse("ds"));
    TensorBase M = makeTensor("M", randomCoo({60, 60}, maskDensity, rng), Format::parse("ds"));
    TensorBase C("C", Datatype::Float64, {60, 60}, Format::parse("ds"));
    IndexVar i("i"), j("j"), k("k");
    Assignment a = makeAssignment(C(i, j), A(i, k) * B(k, j));
    a.mask = outputMask(M(i, j));
    auto kernel = Kernel::compile(a);
    kernel->run(a);
    std::string why;
    EXPECT_TRUE(tensorsClose(referenceEvaluate(a), C.toCoo(), 1e-9, 1e-9, &why)) << why;
    return kernel->source().find("transposes B") != std::string::npos;  // pulled
  };
  EXPECT_TRUE(run(0.01, 0.5));
  EXPECT_FALSE(run(0.9, 0.03));
}

TEST(Masks, StagesOfInnerSumsAndSumAccumulationKeepTheMask) {
  std::mt19937_64 rng(9);
  TensorBase A = makeTensor("A", randomCoo({7, 6}, 0.5, rng), Format::parse("ds"));
  TensorBase B = makeTensor("B", randomCoo({6, 5}, 0.5, rng), Format::parse("ds"));
  TensorBase D = makeTensor("D", randomCoo({7, 5}, 0.5, rng), Format::parse("ds"));
  TensorBase M = makeTensor("M", randomCoo({7, 5}, 0.4, rng), Format::parse("ds"));
  for (bool complement : {false, true})
    for (const char* expr : {"C(i,j) = A(i,k) * B(k,j) + D(i,j)", "C(i,j) += A(i,k) * B(k,j)"}) {
      SCOPED_TRACE(std::string(expr) + (complement ? " complemented" : ""));
      TensorBase C = makeTensor("C", randomCoo({7, 5}, 0.3, rng), Format::parse("ds"));
      std::map<std::string, TensorBase> ts = {{"A", A}, {"B", B}, {"D", D}, {"C", C}};
      Assignment a = parseAssignment(expr, ts);
      a.mask = outputMask(Access(M, a.lhsNode().vars), false, complement, true);
      CooData want = referenceEvaluate(a);
      Kernel::compile(a)->run(a);
      std::string why;
      EXPECT_TRUE(tensorsClose(want, C.toCoo(), 1e-9, 1e-9, &why)) << why;
    }
}

TEST(Masks, ExplicitParallelSchedules) {
  // Blocks of rows on 1, 2 and 4 threads, masks of every kind, both forms.
  const Entries structural = {{{0, 0}, 7}, {{0, 2}, 2}, {{1, 1}, 12}};
  const Entries complement = {{{0, 1}, 8}, {{1, 0}, 9}, {{2, 0}, 4}, {{2, 2}, 33}};
  for (MaskForm form : {MaskForm::Pull, MaskForm::Push})
    for (bool comp : {false, true})
      for (int threads : {1, 2, 4}) {
        SCOPED_TRACE(std::string(form == MaskForm::Pull ? "pull" : "push") + (comp ? " complemented" : "") + " on " +
                     std::to_string(threads) + " threads");
        TensorBase A = makeTensor("A", kA, Format::parse("ds")), B = makeTensor("B", kB, Format::parse("ds"));
        TensorBase M = makeTensor("M", kM, Format::parse("ds"));
        TensorBase C("C", Datatype::Float64, {3, 3}, Format::parse("ds"));
        IndexVar i("i"), j("j"), k("k"), i0("i0"), i1("i1");
        Assignment a = makeAssignment(C(i, j), A(i, k) * B(k, j));
        a.mask = outputMask(M(i, j), false, comp);
        a.mask.form = form;
        Schedule s;
        s.split(i, i0, i1, 1).parallelize(i0);
        Kernel::compile(a, s)->run(a, threads);
        EXPECT_EQ(without(stored(C), 0), comp ? complement : structural);
        EXPECT_EQ(storageProblem(C), "");
      }
}

TEST(Masks, BadMasksAreNamedErrors) {
  TensorVar A("A", Datatype::Float64, {3, 4}, Format::parse("ds")), C("C", Datatype::Float64, {3, 4}, Format::parse("ds"));
  TensorVar M("M", Datatype::Float64, {4, 3}, Format::parse("ds")), s("s", Datatype::Float64, {}, Format());
  IndexVar i("i"), j("j");
  Assignment a{C(i, j), A(i, j)};
  a.mask = outputMask(M(i, j));
  try {
    checkAssignment(a);
    ADD_FAILURE() << "a 4x3 mask on a 3x4 output";
  } catch (const DimensionError& e) {
    EXPECT_NE(std::string(e.what()).find("the mask M is 4x3 but the output C is 3x4"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Kernel::emitC(a), DimensionError);
  a.mask = outputMask(A(j, i));  // not the output's variables (and the wrong shape for them)
  EXPECT_THROW(checkAssignment(a), UserError);
  a.mask = outputMask(C(i, j));
  EXPECT_THROW(checkAssignment(a), NotationError);  // the output itself
  a.mask = OutputMask{};
  a.mask.complement = true;  // complement without a mask
  try {
    checkAssignment(a);
    ADD_FAILURE() << "complement without a mask";
  } catch (const NotationError& e) {
    EXPECT_NE(std::string(e.what()).find("without a mask"), std::string::npos) << e.what();
  }
  Assignment scalar{s(), A(i, j)};
  scalar.mask = outputMask(A(i, j));
  EXPECT_THROW(checkAssignment(scalar), NotationError);
}

namespace {

/// The undirected simple graph of a .mtx file as sorted neighbour sets.
std::vector<std::set<int64_t>> neighbours(const std::string& path) {
  CooData g = readTensorFile(path).data;
  std::vector<std::set<int64_t>> adj(static_cast<size_t>(g.dims[0]));
  for (int64_t e = 0; e < g.nnz(); e++) {
    int64_t u = g.coords[2 * e], v = g.coords[2 * e + 1];
    if (u == v) continue;
    adj[u].insert(v);
    adj[v].insert(u);
  }
  return adj;
}

}  // namespace

TEST(Masks, TriangleCountsOnRealGraphs) {
  if (dataDir().empty()) GTEST_SKIP() << "no shared data";
  // sum(C) with C<L>(i,j) = L(i,k) * L(k,j) under plus_pair, L the strictly lower
  // triangle: each triangle w < v < u once. The oracle counts common neighbours by sets.
  for (const auto& [name, known] : std::vector<std::pair<std::string, int64_t>>{{"karate", 45}, {"ca-GrQc", 48260}}) {
    auto adj = neighbours(dataDir() + "/matrices/" + name + ".mtx");
    int64_t n = static_cast<int64_t>(adj.size()), triangles = 0;
    CooData lower;
    lower.dims = {n, n};
    for (int64_t u = 0; u < n; u++)
      for (int64_t v : adj[u])
        if (v < u) {
          lower.add({u, v}, 1);
          for (int64_t w : adj[v]) triangles += w < v && adj[u].count(w);
        }
    EXPECT_EQ(triangles, known) << name;
    for (MaskForm form : {MaskForm::Pull, MaskForm::Push, MaskForm::Auto})
      for (int threads : {1, 2}) {
        TensorBase L = makeTensor("L", lower, Format::parse("ds"));
        TensorBase C("C", Datatype::Int64, {n, n}, Format::parse("ds"));
        IndexVar i("i"), j("j"), k("k");
        Assignment a = makeAssignment(C(i, j), L(i, k) * L(k, j));
        a.semiring = Semiring::byName("plus_pair");
        a.mask = outputMask(L(i, j));
        a.mask.form = form;
        Kernel::compile(a, defaultParallelSchedule(a, threads))->run(a, threads);
        int64_t sum = 0;
        for (double v : C.toCoo().values) sum += static_cast<int64_t>(v);
        EXPECT_EQ(sum, triangles) << name << " form " << static_cast<int>(form) << " threads " << threads;
      }
  }
}
