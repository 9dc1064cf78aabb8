// loopfuse(v): SparseLNR's loop fusion. A fused kernel equals the perfect nest, the
// separate kernels, hand-computed values and plain loops written here, on the kernels of
// SparseLNR §6.2, degenerate shapes, several formats and 1, 2 and 4 threads; random
// product chains fused at every loop; graph attention on the real graphs when present;
// every rejection names the command and the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <random>

#include "support/test_support.h"
#include "tessel/io.h"
#include "tessel/kernel.h"
#include "tessel/parser.h"
#include "tessel/syntax.h"
#include "tessel/reference.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

Format fmt(const std::string& s) { return Format::parse(s); }
const std::string kSddmmSpmm = "A(i,l) = B(i,j) * C(i,k) * D(j,k) * E(j,l)";

/// <SDDMM, SpMM>'s tensors: B m x n CSR (density 0.4), C m x k, D n x k, E n x l dense,
/// and the output A m x l.
std::map<std::string, TensorBase> sddmmSpmmTensors(std::mt19937_64& rng, int64_t m, int64_t n, int64_t k, int64_t l,
                                                   double density = 0.4) {
  return {{"B", makeTensor("B", randomCoo({m, n}, density, rng), fmt("ds"))},
          {"C", makeTensor("C", randomCoo({m, k}, 1, rng), fmt("dd"))},
          {"D", makeTensor("D", randomCoo({n, k}, 1, rng), fmt("dd"))},
          {"E", makeTensor("E", randomCoo({n, l}, 1, rng), fmt("dd"))},
          {"A", TensorBase("A", Datatype::Float64, {m, l}, fmt("dd"))}};
}

/// The extent of each (one-letter) index variable of `expr`, from the operands' dims.
std::map<char, int64_t> extents(const std::string& expr, const std::vector<Operand>& in) {
  std::map<char, int64_t> e;
  const size_t eq = expr.find('=');
  for (const Operand& o : in) {
    const size_t at = expr.find(o.name + "(", eq) + o.name.size() + 1;
    for (int m = 0; m < o.data.order(); m++) e[expr[at + 2 * static_cast<size_t>(m)]] = o.data.dims[m];
  }
  return e;
}

/// The output's dims: its index variables' extents.
std::vector<int64_t> outputDims(const std::string& expr, const std::vector<Operand>& in) {
  std::map<char, int64_t> e = extents(expr, in);
  std::vector<int64_t> dims;
  for (size_t p = expr.find('(') + 1; p < expr.find(')'); p += 2) dims.push_back(e.at(expr[p]));
  return dims;
}

/// The dense output of `expr` over `in` under `schedule` on `threads` threads, as a map.
std::map<std::vector<int64_t>, double> run(const std::string& expr, const std::vector<Operand>& in,
                                           const std::string& schedule, int threads = 1) {
  std::map<std::string, TensorBase> t;
  for (const Operand& o : in) t.emplace(o.name, makeTensor(o.name, o.data, o.format));
  TensorUse out = scanTensors(expr).at(0);
  TensorBase A(out.name, Datatype::Float64, outputDims(expr, in), DenseFormat(out.order));
  t.emplace(out.name, A);
  Assignment a = parseAssignment(expr, t);
  Kernel::compile(a, parseSchedule(schedule, a))->run(a, threads);
  CooData c = A.toCoo();
  std::map<std::vector<int64_t>, double> m;
  for (int64_t e = 0; e < c.nnz(); e++)
    m[std::vector<int64_t>(c.coords.begin() + e * c.order(), c.coords.begin() + (e + 1) * c.order())] = c.values[e];
  return m;
}

/// Entries of x and y agree within a relative 1e-10 (absent = 0).
::testing::AssertionResult same(const std::map<std::vector<int64_t>, double>& x,
                                const std::map<std::vector<int64_t>, double>& y) {
  auto at = [](const std::map<std::vector<int64_t>, double>& m, const std::vector<int64_t>& k) {
    auto it = m.find(k);
    return it == m.end() ? 0.0 : it->second;
  };
  std::map<std::vector<int64_t>, bool> keys;
  for (auto& [k, v] : x) keys[k] = true;
  for (auto& [k, v] : y) keys[k] = true;
  for (auto& [k, unused] : keys) {
    double a = at(x, k), b = at(y, k);
    if (std::abs(a - b) > 1e-10 * std::max({1.0, std::abs(a), std::abs(b)})) {
      std::string c;
      for (int64_t v : k) c += (c.empty() ? "" : ",") + std::to_string(v);
      return ::testing::AssertionFailure() << "at (" << c << "): " << a << " vs " << b;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace

TEST(LoopFuse, SddmmSpmmHandComputed) {
  // B = [[1, 0, 2], [0, 3, 0]] (CSR); C = [[1, 1], [2, 0]]; D = [[1, 0], [0, 1], [1, 1]];
  // E = [[1], [10], [100]]. t(i,j) = B(i,j) * (C(i,:) . D(j,:)):
  //   t(0,0) = 1 * (1*1 + 1*0) = 1, t(0,2) = 2 * (1 + 1) = 4, t(1,1) = 3 * (2*0 + 0*1) = 0.
  //   A(0,0) = t(0,0)*E(0,0) + t(0,2)*E(2,0) = 1 + 400 = 401; A(1,0) = 0.
  CooData B = entries({2, 3}, {{{0, 0}, 1}, {{0, 2}, 2}, {{1, 1}, 3}});
  CooData C = entries({2, 2}, {{{0, 0}, 1}, {{0, 1}, 1}, {{1, 0}, 2}});
  CooData D = entries({3, 2}, {{{0, 0}, 1}, {{1, 1}, 1}, {{2, 0}, 1}, {{2, 1}, 1}});
  CooData E = entries({3, 1}, {{{0, 0}, 1}, {{1, 0}, 10}, {{2, 0}, 100}});
  for (const char* f : {"ds", "dd", "ss"})
    for (int threads : {1, 2}) {
      std::vector<Operand> in = {
          {"B", B, fmt(f)}, {"C", C, fmt("dd")}, {"D", D, fmt("dd")}, {"E", E, fmt("dd")}};
      auto got = run(kSddmmSpmm, in, "loopfuse(j),parallelize(i)", threads);
      EXPECT_EQ(got[std::vector<int64_t>({0, 0})], 401) << f;
      EXPECT_EQ(got[std::vector<int64_t>({1, 0})], 0) << f;
    }
}

TEST(LoopFuse, TheNestIsBranched) {
  // The fused kernel is one function whose concrete index notation has a where: the
  // consumer reads the scalar t_j the producer sums over k, per (i, j).
  std::mt19937_64 rng(1);
  std::map<std::string, TensorBase> t = sddmmSpmmTensors(rng, 5, 6, 3, 2);
  Assignment a = parseAssignment(kSddmmSpmm, t);
  std::string c = Kernel::emitC(a, parseSchedule("loopfuse(j)", a));
  EXPECT_NE(c.find("where(forall(l, A(i,l) = E(j,l) * t_j), forall(k, t_j += B(i,j) * C(i,k) * D(j,k)))"),
            std::string::npos)
      << c.substr(0, 2000);
  std::string named = Kernel::emitC(a, parseSchedule("loopfuse(j,s)", a));
  EXPECT_NE(named.find("s += B(i,j)"), std::string::npos);
}

TEST(LoopFuse, SparseLnrKernelsAgainstReference) {
  std::mt19937_64 rng(2);
  struct Case {
    std::string expr, schedule;
    std::vector<std::pair<std::string, std::vector<int64_t>>> operands;  // name, dims (first: sparse)
    std::string sparseFormat;
  };
  // SparseLNR §6.2: <SDDMM, SpMM>, <SpMMH, GEMM>, <SpMM, GEMM>, <MTTKRP, GEMM>,
  // <SpTTM, SpTTM> fused at j (B*C first) and, the other associativity, C*D first.
  std::vector<Case> cases = {
      {kSddmmSpmm, "loopfuse(j)", {{"B", {9, 8}}, {"C", {9, 4}}, {"D", {8, 4}}, {"E", {8, 3}}}, "ds"},
      {kSddmmSpmm, "loopfuse(i)", {{"B", {9, 8}}, {"C", {9, 4}}, {"D", {8, 4}}, {"E", {8, 3}}}, "ds"},
      {"A(i,l) = B(i,k) * C(k,j) * D(k,j) * E(j,l)", "loopfuse(i)",
       {{"B", {9, 7}}, {"C", {7, 5}}, {"D", {7, 5}}, {"E", {5, 4}}}, "ds"},
      {"A(i,l) = B(i,j) * C(j,k) * D(k,l)", "loopfuse(i)", {{"B", {9, 7}}, {"C", {7, 5}}, {"D", {5, 4}}}, "ds"},
      {"A(i,m) = B(i,k,l) * C(l,j) * D(k,j) * E(j,m)", "loopfuse(i)",
       {{"B", {6, 5, 7}}, {"C", {7, 4}}, {"D", {5, 4}}, {"E", {4, 3}}}, "sss"},
      {"A(i,j,m) = B(i,j,k) * C(k,l) * D(l,m)", "loopfuse(j)", {{"B", {6, 5, 7}}, {"C", {7, 4}}, {"D", {4, 3}}},
       "sss"},
      {"A(i,j,m) = B(i,j,k) * C(k,l) * D(l,m)", "loopfuse(i)", {{"B", {6, 5, 7}}, {"C", {7, 4}}, {"D", {4, 3}}},
       "dss"},
  };
  for (const Case& c : cases)
    for (double density : {0.3, 0.0, 1.0}) {
      std::vector<Operand> in;
      for (size_t k = 0; k < c.operands.size(); k++) {
        auto [name, dims] = c.operands[k];
        in.push_back({name, randomCoo(dims, k == 0 ? density : 0.9, rng), k == 0 ? fmt(c.sparseFormat)
                                                                                 : DenseFormat(int(dims.size()))});
      }
      SCOPED_TRACE(c.expr + " density " + std::to_string(density));
      expectAllThreads(c.expr, in, DenseFormat(scanTensors(c.expr)[0].order), c.schedule + ",parallelize(i)");
      // fused == the perfect nest
      EXPECT_TRUE(same(run(c.expr, in, c.schedule), run(c.expr, in, "")));
    }
}

TEST(LoopFuse, DegenerateShapes) {
  std::mt19937_64 rng(3);
  // Empty rows, extents of 1, an empty B, a k of extent 0 (every t is 0).
  for (auto [m, n, k, l] : std::vector<std::array<int64_t, 4>>{{1, 1, 1, 1}, {5, 1, 3, 2}, {0, 4, 3, 2},
                                                                {4, 0, 3, 2}, {4, 5, 0, 2}, {4, 5, 3, 0}})
    for (double density : {0.0, 0.5}) {
      std::vector<Operand> in = {{"B", randomCoo({m, n}, density, rng), fmt("ds")},
                                 {"C", randomCoo({m, k}, 1, rng), fmt("dd")},
                                 {"D", randomCoo({n, k}, 1, rng), fmt("dd")},
                                 {"E", randomCoo({n, l}, 1, rng), fmt("dd")}};
      SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + " k " + std::to_string(k) + " l " +
                   std::to_string(l));
      expectAllThreads(kSddmmSpmm, in, DenseFormat(2), "loopfuse(j),parallelize(i)");
    }
}

TEST(LoopFuse, EqualsSeparateKernelsAndPlainLoops) {
  // The two kernels SparseLNR fuses, run one after the other through a sparse temporary
  // (SDDMM into T with B's pattern, then SpMM), and the same arithmetic as plain loops.
  std::mt19937_64 rng(4);
  const int64_t M = 40, N = 35, K = 6, L = 5;
  CooData B = randomCoo({M, N}, 0.15, rng), C = randomCoo({M, K}, 1, rng), D = randomCoo({N, K}, 1, rng),
          E = randomCoo({N, L}, 1, rng);
  std::vector<Operand> in = {{"B", B, fmt("ds")}, {"C", C, fmt("dd")}, {"D", D, fmt("dd")}, {"E", E, fmt("dd")}};
  auto fused = run(kSddmmSpmm, in, "loopfuse(j)");
  auto fused2 = run(kSddmmSpmm, in, "loopfuse(j),parallelize(i)", 4);

  std::map<std::string, TensorBase> t = {{"B", makeTensor("B", B, fmt("ds"))},
                                         {"C", makeTensor("C", C, fmt("dd"))},
                                         {"D", makeTensor("D", D, fmt("dd"))},
                                         {"E", makeTensor("E", E, fmt("dd"))},
                                         {"T", TensorBase("T", Datatype::Float64, {M, N}, fmt("ds"))},
                                         {"A", TensorBase("A", Datatype::Float64, {M, L}, fmt("dd"))}};
  Assignment sddmm = parseAssignment("T(i,j) = B(i,j) * C(i,k) * D(j,k)", t);
  Kernel::compile(sddmm)->run(sddmm, 1);
  Assignment spmm = parseAssignment("A(i,l) = T(i,j) * E(j,l)", t);
  Kernel::compile(spmm)->run(spmm, 1);
  CooData sep = t.at("A").toCoo();
  std::map<std::vector<int64_t>, double> separate;
  for (int64_t e = 0; e < sep.nnz(); e++) separate[{sep.coords[2 * e], sep.coords[2 * e + 1]}] = sep.values[e];

  // Plain loops over the coordinates.
  std::vector<double> c(M * K), d(N * K), ev(N * L);
  for (int64_t e = 0; e < C.nnz(); e++) c[C.coords[2 * e] * K + C.coords[2 * e + 1]] += C.values[e];
  for (int64_t e = 0; e < D.nnz(); e++) d[D.coords[2 * e] * K + D.coords[2 * e + 1]] += D.values[e];
  for (int64_t e = 0; e < E.nnz(); e++) ev[E.coords[2 * e] * L + E.coords[2 * e + 1]] += E.values[e];
  std::map<std::vector<int64_t>, double> plain;
  for (int64_t e = 0; e < B.nnz(); e++) {
    int64_t i = B.coords[2 * e], j = B.coords[2 * e + 1];
    double dot = 0;
    for (int64_t k = 0; k < K; k++) dot += c[i * K + k] * d[j * K + k];
    for (int64_t l = 0; l < L; l++) plain[{i, l}] += B.values[e] * dot * ev[j * L + l];
  }
  EXPECT_TRUE(same(fused, separate));
  EXPECT_TRUE(same(fused, plain));
  EXPECT_TRUE(same(fused2, plain));
}

TEST(LoopFuse, RandomProductChainsAtEveryLoop) {
  // Chains of 3 or 4 factors over i, j, k, l with random formats; fused at each loop of
  // the default order. A fusion point that splits nothing or breaks a sum is a
  // ScheduleError; every other one must match the reference.
  std::mt19937_64 rng(5);
  const std::vector<std::string>& chains = productChains();
  const std::vector<std::string> sparse = {"ds", "ss", "dd", "ds:1,0"};
  int fused = 0, refused = 0;
  for (const std::string& expr : chains)
    for (int round = 0; round < 2; round++) {
      std::vector<Operand> in;
      std::map<char, int64_t> extent;
      for (char v : std::string("ijkl")) extent[v] = std::uniform_int_distribution<int64_t>(1, 7)(rng);
      for (const TensorUse& u : scanTensors(expr)) {
        if (u.isOutput) continue;
        std::vector<int64_t> dims;
        size_t at = expr.find(u.name + "(", expr.find('=')) + u.name.size() + 1;
        for (int m = 0; m < u.order; m++) dims.push_back(extent[expr[at + 2 * m]]);
        Format f = u.order == 2 ? fmt(sparse[std::uniform_int_distribution<size_t>(0, 3)(rng)])
                   : u.order == 3 ? fmt("sss")
                                  : DenseFormat(u.order);
        in.push_back({u.name, randomCoo(dims, 0.5, rng), f});
      }
      for (const char* at : {"i", "j", "k", "l"}) {
        std::string s = std::string("loopfuse(") + at + ")";
        try {
          ::testing::AssertionResult r =
              matchesReferenceScheduled(expr, in, DenseFormat(scanTensors(expr)[0].order),
                                        [&](const std::vector<IndexVar>&) { return s; }, round % 2 ? 2 : 1);
          EXPECT_TRUE(r) << expr << " " << s;
          fused++;
        } catch (const ScheduleError& e) {
          EXPECT_NE(std::string(e.what()).find(s), std::string::npos) << e.what();
          refused++;
        }
      }
    }
  EXPECT_GT(fused, 20);    // most chains fuse somewhere
  EXPECT_GT(refused, 6);   // and some points split nothing
}

TEST(LoopFuse, GraphAttentionOnRealGraphs) {
  std::string dir = dataDir();
  if (dir.empty()) GTEST_SKIP() << "../shared/data not present";
  std::mt19937_64 rng(6);
  for (const char* name : {"karate.mtx", "ca-GrQc.mtx", "wiki-Vote.mtx"}) {
    CooData G = readTensorFile(dir + "/matrices/" + name).data;
    const int64_t n = G.dims[0], F = 8, H = 4;
    // Scores on the edges (SDDMM of the features), then aggregation of messages (SpMM).
    std::vector<Operand> in = {{"B", G, fmt("ds")},
                               {"C", randomCoo({n, F}, 1, rng), fmt("dd")},
                               {"D", randomCoo({n, F}, 1, rng), fmt("dd")},
                               {"E", randomCoo({n, H}, 1, rng), fmt("dd")}};
    SCOPED_TRACE(name);
    auto fused = run(kSddmmSpmm, in, "loopfuse(j),parallelize(i)", 2);
    EXPECT_TRUE(same(fused, run(kSddmmSpmm, in, "precompute(B(i,j)*C(i,k)*D(j,k),w,j)")));
    EXPECT_TRUE(matchesReferenceScheduled(kSddmmSpmm, in, DenseFormat(2),
                                          [](const std::vector<IndexVar>&) { return "loopfuse(j)"; }, 1));
  }
}

TEST(LoopFuse, Rejections) {
  std::mt19937_64 rng(7);
  std::map<std::string, TensorBase> t = sddmmSpmmTensors(rng, 5, 6, 3, 2);
  t.emplace("G", makeTensor("G", randomCoo({5, 2}, 1, rng), fmt("dd")));
  t.emplace("H", makeTensor("H", randomCoo({5, 2}, 1, rng), fmt("ds")));
  expectScheduleRejected(t, kSddmmSpmm, "loopfuse(q)", {"loopfuse(q)", "unknown index variable q"});
  expectScheduleRejected(t, kSddmmSpmm, "loopfuse(l)", {"loopfuse(l)", "splits nothing"});
  expectScheduleRejected(t, kSddmmSpmm, "loopfuse(j),loopfuse(i)", {"loopfuse(i)", "encloses an earlier fusion"});
  expectScheduleRejected(t, kSddmmSpmm, "loopfuse(j,B)", {"loopfuse(j,B)", "name that no tensor"});
  // A split loop below j may not run outside it (test_loopfuse_split.cpp: splits below).
  expectScheduleRejected(t, kSddmmSpmm, "split(l,l0,l1,2),reorder(i,l0,j,k,l1),loopfuse(j)",
                         {"loopfuse(j)", "l0 splits l", "may not cross the fusion point"});
  // At a block loop of coordinates it fuses (test_loopfuse_split.cpp); not at one of positions.
  expectScheduleRejected(t, kSddmmSpmm, "fuse(i,j,f),pos(f,fp,B),split(fp,f0,f1,2),loopfuse(f0)",
                         {"loopfuse(f0)", "blocks an operand's positions"});
  // Every factor uses the output's variables below i: nothing left to produce.
  expectScheduleRejected(t, "A(i,l) = G(i,l) * H(i,l)", "loopfuse(i)", {"loopfuse(i)", "splits nothing"});
  // A sum the fusion would break: k and l, which only the producer uses, run outside j.
  std::map<std::string, TensorBase> m = {
      {"B", makeTensor("B", randomCoo({4, 3, 5}, 0.5, rng), fmt("sss"))},
      {"C", makeTensor("C", randomCoo({5, 2}, 1, rng), fmt("dd"))},
      {"D", makeTensor("D", randomCoo({3, 2}, 1, rng), fmt("dd"))},
      {"E", makeTensor("E", randomCoo({2, 3}, 1, rng), fmt("dd"))},
      {"A", TensorBase("A", Datatype::Float64, {4, 3}, fmt("dd"))}};
  expectScheduleRejected(m, "A(i,m) = B(i,k,l) * C(l,j) * D(k,j) * E(j,m)", "loopfuse(j)",
                         {"loopfuse(j)", "does not enclose the sum over k", "fuse at k"});
  EXPECT_THROW(parseSchedule("loopfuse()", parseAssignment(kSddmmSpmm, t)), ScheduleError);
  EXPECT_THROW(parseSchedule("loopfuse(i,t,u)", parseAssignment(kSddmmSpmm, t)), ScheduleError);
}

TEST(LoopFuse, AutomaticChoice) {
  // With data bound, the cost model fuses a small <SDDMM, SpMM> (a second kernel call
  // costs more than the fused nest's overhead) and computes a larger one as separate
  // kernels (SDDMM's output stored like B: nnz x (K + L) multiplies and nnz entries of
  // traffic, against the same multiplies at a fused nest's overhead); it leaves SpMV and
  // a two-factor product alone.
  std::mt19937_64 rng(8);
  std::map<std::string, TensorBase> t = sddmmSpmmTensors(rng, 60, 50, 16, 8, 0.1);
  t.emplace("x", makeTensor("x", randomCoo({50}, 1, rng), DenseFormat(1)));
  t.emplace("y", TensorBase("y", Datatype::Float64, {60}, DenseFormat(1)));
  Assignment a = parseAssignment(kSddmmSpmm, t);
  ScheduleChoice c = defaultSchedule(a, 1);
  EXPECT_EQ(c.schedule.str(), "loopfuse(j)");
  EXPECT_NE(c.reason.find("cost model"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("separate kernels'"), std::string::npos) << c.reason;
  // Too little work for a second thread (a parallel region costs more than it saves).
  ScheduleChoice two = defaultSchedule(a, 2);
  EXPECT_EQ(two.schedule.str(), "loopfuse(j)");
  EXPECT_NE(two.reason.find("one thread (too little work to share)"), std::string::npos) << two.reason;
  EXPECT_EQ(two.threads, 1);
  Kernel::compile(a, two.schedule)->run(a, 2);
  std::string why;
  EXPECT_TRUE(tensorsClose(referenceEvaluate(a), t.at("A").toCoo(), 1e-9, 1e-12, &why)) << why;
  EXPECT_TRUE(defaultSchedule(parseAssignment("y(i) = B(i,j) * x(j)", t), 1).schedule.empty());
  EXPECT_TRUE(defaultSchedule(parseAssignment("A(i,l) = B(i,j) * E(j,l)", t), 1).schedule.empty());
  // A k and l of one: fusing saves nothing, so the perfect nest stays.
  std::map<std::string, TensorBase> s = sddmmSpmmTensors(rng, 60, 50, 1, 1, 0.1);
  EXPECT_TRUE(defaultSchedule(parseAssignment(kSddmmSpmm, s), 1).schedule.empty());

  std::map<std::string, TensorBase> big = sddmmSpmmTensors(rng, 300, 250, 32, 32, 0.1);
  Assignment b = parseAssignment(kSddmmSpmm, big);
  for (int threads : {1, 2}) {
    ScheduleChoice sep = defaultSchedule(b, threads);
    EXPECT_EQ(sep.schedule.str().substr(0, 40), "precompute(B(i,j) * C(i,k) * D(j,k),T,B)") << sep.schedule.str();
    EXPECT_NE(sep.reason.find("separate kernels: T = B(i,j) * C(i,k) * D(j,k) (stored like B"), std::string::npos)
        << sep.reason;
    EXPECT_NE(sep.reason.find("the fused nest's"), std::string::npos) << sep.reason;
    Kernel::compile(b, sep.schedule)->run(b, threads);
    EXPECT_TRUE(tensorsClose(referenceEvaluate(b), big.at("A").toCoo(), 1e-9, 1e-12, &why)) << why;
  }
  // Graph attention with one feature matrix: the producer's H(j,k) and the consumer's
  // H(j,l) are one row at each j, gathered once when fused at j and twice by separate
  // kernels, so the shape `big` computes as separate kernels (D and E) is fused.
  std::map<std::string, TensorBase> att = {{"B", big.at("B")}, {"C", big.at("C")}, {"H", big.at("D")},
                                           {"A", TensorBase("A", Datatype::Float64, {300, 32}, fmt("dd"))}};
  Assignment h = parseAssignment("A(i,l) = B(i,j) * C(i,k) * H(j,k) * H(j,l)", att);
  // The oracle is a hand loop over B's entries as well as the reference evaluator: one H
  // read twice is the case no other test of the fused kernel has.
  const CooData bc = att.at("B").toCoo(), cc = att.at("C").toCoo(), hc = att.at("H").toCoo();
  std::vector<double> cd(300 * 32), hd(250 * 32), hand(300 * 32);
  for (int64_t e = 0; e < cc.nnz(); e++) cd[cc.coords[2 * e] * 32 + cc.coords[2 * e + 1]] = cc.values[e];
  for (int64_t e = 0; e < hc.nnz(); e++) hd[hc.coords[2 * e] * 32 + hc.coords[2 * e + 1]] = hc.values[e];
  for (int64_t e = 0; e < bc.nnz(); e++) {
    const int64_t i = bc.coords[2 * e], j = bc.coords[2 * e + 1];
    double dot = 0;
    for (int64_t k = 0; k < 32; k++) dot += cd[i * 32 + k] * hd[j * 32 + k];
    for (int64_t l = 0; l < 32; l++) hand[i * 32 + l] += bc.values[e] * dot * hd[j * 32 + l];
  }
  CooData want;
  want.dims = {300, 32};
  for (int64_t x = 0; x < 300 * 32; x++)
    if (hand[x] != 0) want.add({x / 32, x % 32}, hand[x]);
  ASSERT_GT(want.nnz(), 0);
  for (int threads : {1, 2}) {
    ScheduleChoice fused = defaultSchedule(h, threads);
    EXPECT_NE(fused.schedule.str().find("loopfuse(j)"), std::string::npos) << fused.schedule.str();
    EXPECT_NE(fused.reason.find("separate kernels'"), std::string::npos) << fused.reason;
    Kernel::compile(h, fused.schedule)->run(h, threads);
    EXPECT_TRUE(tensorsClose(want, att.at("A").toCoo(), 1e-9, 1e-12, &why)) << why;
    EXPECT_TRUE(tensorsClose(referenceEvaluate(h), att.at("A").toCoo(), 1e-9, 1e-12, &why)) << why;
  }
}

TEST(LoopFuse, AutomaticChoiceCountsBusyRows) {
  // <SpMM, GEMM>: the fused nest zeroes its row and runs the consumer (K x L multiplies)
  // only for rows of B with entries; the separate consumer runs every row of the dense T.
  // 40000 entries of B in one row of ten: the cost model fuses per row (counting every
  // row's consumer, 1.25x a separate kernel's multiplies, it would pick separate kernels);
  // the same number spread over every row: fused at blocks of rows (the separate kernels
  // a block at a time, their multiplies 1.05x, without T's traffic).
  std::mt19937_64 rng(11);
  for (bool sparseRows : {true, false}) {
    CooData b;
    b.dims = {400, 2000};
    for (int64_t i = 0; i < 400; i++) {
      if (sparseRows && i % 10 != 0) continue;
      for (int64_t j = 0; j < 2000; j += sparseRows ? 2 : 20) b.add({i, j}, static_cast<double>(rng() % 7) - 3);
    }
    std::map<std::string, TensorBase> t = {{"B", makeTensor("B", b, fmt("ds"))},
                                           {"C", makeTensor("C", randomCoo({2000, 32}, 1, rng), fmt("dd"))},
                                           {"D", makeTensor("D", randomCoo({32, 32}, 1, rng), fmt("dd"))},
                                           {"A", TensorBase("A", Datatype::Float64, {400, 32}, fmt("dd"))}};
    Assignment a = parseAssignment("A(i,l) = B(i,j) * C(j,k) * D(k,l)", t);
    for (int threads : {1, 2}) {
      ScheduleChoice c = defaultSchedule(a, threads);
      SCOPED_TRACE(std::string(sparseRows ? "one row in ten" : "every row") + ", " + std::to_string(threads) + " threads");
      // Fused per row: on 2 threads in blocks of rows (AutomaticFusionPerRowRunsBlocksOfRowsInParallel),
      // 64 a thread for the plan's 3.3e6 of work (blocksPerThreadFor): 4 rows each.
      // At blocks: 64 rows of T's 32 entries (16 KB); on 2 threads at least 4 blocks a thread.
      const char* fused = threads == 1 ? "loopfuse(i)" : "split(i,i_block,i_in,4),loopfuse(i_in)";
      const char* blocks =
          threads == 1 ? "split(i,i_block,i_in,64),loopfuse(i_block)" : "split(i,i_block,i_in,50),loopfuse(i_block)";
      const std::string s = c.schedule.str();
      EXPECT_EQ(s.rfind(sparseRows ? fused : blocks, 0), 0u) << s << "\n" << c.reason;
      EXPECT_EQ(c.reason.rfind(sparseRows ? "fused at i (loopfuse)" : "fused at blocks of i (loopfuse)", 0), 0u) << c.reason;
      Kernel::compile(a, c.schedule)->run(a, threads);
      std::string why;
      EXPECT_TRUE(tensorsClose(referenceEvaluate(a), t.at("A").toCoo(), 1e-9, 1e-12, &why)) << why;
    }
  }
}

TEST(LoopFuse, AutomaticChoiceFusesTwice) {
  // <SDDMM, SpMM, GEMM>: separate kernels would materialize the SpMM's dense T(i,l) from a
  // perfect nest of four factors; fusing at i, then at j, costs nnz x (K + L) + m x L x M.
  std::mt19937_64 rng(9);
  std::map<std::string, TensorBase> t = sddmmSpmmTensors(rng, 60, 50, 16, 8, 0.1);
  t.emplace("F", makeTensor("F", randomCoo({8, 6}, 1, rng), fmt("dd")));
  t["A"] = TensorBase("A", Datatype::Float64, {60, 6}, fmt("dd"));
  Assignment a = parseAssignment("A(i,m) = B(i,j) * C(i,k) * D(j,k) * E(j,l) * F(l,m)", t);
  for (int threads : {1, 2}) {
    ScheduleChoice c = defaultSchedule(a, threads);
    // Rows of 5 entries on average: fused at blocks of i (FusedAtBlocksOfRows).
    EXPECT_EQ(c.schedule.str().substr(0, 56), "split(i,i_block,i_in,256),loopfuse(i_block),loopfuse(j)") << c.schedule.str();
    EXPECT_NE(c.reason.find("fused at blocks of i, then j (loopfuse)"), std::string::npos) << c.reason;
    Kernel::compile(a, c.schedule)->run(a, threads);
    std::string why;
    EXPECT_TRUE(tensorsClose(referenceEvaluate(a), t.at("A").toCoo(), 1e-9, 1e-12, &why)) << why;
  }
}

TEST(LoopFuse, SeparateKernelsStoredLikeAFactor) {
  // precompute(e, T, B): the separate kernels' temporary in B's sparse format (SDDMM's
  // output has B's pattern), equal to the reference at 1, 2 and 4 threads.
  std::mt19937_64 rng(10);
  for (const char* f : {"ds", "ss"})
    for (double density : {0.3, 0.0}) {
      std::vector<Operand> in = {{"B", randomCoo({9, 8}, density, rng), fmt(f)},
                                 {"C", randomCoo({9, 4}, 1, rng), fmt("dd")},
                                 {"D", randomCoo({8, 4}, 1, rng), fmt("dd")},
                                 {"E", randomCoo({8, 3}, 1, rng), fmt("dd")}};
      SCOPED_TRACE(std::string(f) + " density " + std::to_string(density));
      expectAllThreads(kSddmmSpmm, in, DenseFormat(2), "precompute(B(i,j)*C(i,k)*D(j,k),T,B),parallelize(i)");
    }
  std::map<std::string, TensorBase> t = sddmmSpmmTensors(rng, 5, 6, 3, 2);
  Assignment a = parseAssignment(kSddmmSpmm, t);
  EXPECT_EQ(parseSchedule("precompute(B(i,j)*C(i,k)*D(j,k),T,B)", a).str(), "precompute(B(i,j) * C(i,k) * D(j,k),T,B)");
  std::string c = Kernel::emitC(a, parseSchedule("precompute(B(i,j)*C(i,k)*D(j,k),T,B)", a));
  EXPECT_NE(c.find("T(i,j) = B(i,j) * C(i,k) * D(j,k)"), std::string::npos) << c.substr(0, 1500);
  // B must be a factor of e over exactly T's variables, in order.
  expectScheduleRejected(t, kSddmmSpmm, "precompute(C(i,k)*D(j,k),T,B)", {"B is not a factor of the product"});
  t.emplace("G", makeTensor("G", randomCoo({6, 5}, 0.5, rng), fmt("ds")));
  expectScheduleRejected(t, "A(i,l) = B(i,j) * G(j,i) * E(j,l)", "precompute(B(i,j)*G(j,i),T,G)",
                         {"precompute(B(i,j) * G(j,i),T,G)", "same variables in the same order"});
}

TEST(LoopFuse, AutomaticSeparateKernelsRunEachStageOnItsParallelSchedule) {
  // Separate kernels chosen on 2 threads: the last stage (the SpMM reading T) runs its
  // own default parallel schedule (blocks of rows), not the plain rows-in-parallel of a
  // fused nest, and the choice says so.
  std::mt19937_64 rng(11);
  std::map<std::string, TensorBase> t = sddmmSpmmTensors(rng, 600, 600, 32, 32, 0.05);
  Assignment a = parseAssignment(kSddmmSpmm, t);
  ScheduleChoice c = defaultSchedule(a, 2);
  const std::string s = c.schedule.str();
  EXPECT_EQ(s.rfind("precompute(", 0), 0u) << s << "\n" << c.reason;
  EXPECT_NE(s.find("split(i,i_block,i_in,"), std::string::npos) << s;
  EXPECT_NE(s.find("parallelize(i_block,cpu_thread"), std::string::npos) << s;
  EXPECT_NE(c.reason.find("each kernel on its default parallel schedule"), std::string::npos) << c.reason;
  Kernel::compile(a, c.schedule)->run(a, 2);
  std::string why;
  EXPECT_TRUE(tensorsClose(referenceEvaluate(a), t.at("A").toCoo(), 1e-9, 1e-12, &why)) << why;
}
