// loopfuse(v) with split, divide, pos, reorder and unroll of loops below the fusion
// point, in the producer's or the consumer's nest: each fused and split kernel equals
// the fused one without splits, the perfect nest and plain loops written here, on
// several formats, degenerate shapes (empty rows, extents of 0 and 1, block sizes past
// the extent or not dividing it) and 1, 2 and 4 threads (the loop over i parallel);
// random product chains fused at every loop with random splits below it; fusion at
// the outer loop of a split (blocks of rows, the temporary one block); the rejections
// name the command and the reason.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "support/test_support.h"
#include "support/tool_runner.h"
#include "tessel/kernel.h"
#include "tessel/parser.h"
#include "tessel/reference.h"
#include "tessel/schedule.h"
#include "tessel/syntax.h"
#include "tessel/tuning.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

Format fmt(const std::string& s) { return Format::parse(s); }
using Values = std::map<std::vector<int64_t>, double>;

const std::string kSddmmSpmm = "A(i,l) = B(i,j) * C(i,k) * D(j,k) * E(j,l)";
const std::string kSpmmGemm = "A(i,m) = B(i,j) * C(j,l) * D(l,m)";
const std::string kTriple = "A(i,m) = B(i,j) * C(i,k) * D(j,k) * E(j,l) * F(l,m)";

/// The nonzero entries of c.
Values valuesOf(const CooData& c) {
  Values m;
  for (int64_t e = 0; e < c.nnz(); e++)
    if (c.values[e] != 0)
      m[std::vector<int64_t>(c.coords.begin() + e * c.order(), c.coords.begin() + (e + 1) * c.order())] = c.values[e];
  return m;
}
/// The dense output (dims `out`) of `expr` over `in` under `schedule` on `threads` threads.
Values run(const std::string& expr, const std::vector<Operand>& in, const std::vector<int64_t>& out,
           const std::string& schedule, int threads = 1) {
  std::map<std::string, TensorBase> t;
  for (const Operand& o : in) t.emplace(o.name, makeTensor(o.name, o.data, o.format));
  TensorBase A("A", Datatype::Float64, out, DenseFormat(static_cast<int>(out.size())));
  t.emplace("A", A);
  Assignment a = parseAssignment(expr, t);
  Kernel::compile(a, parseSchedule(schedule, a))->run(a, threads);
  return valuesOf(A.toCoo());
}

/// Entries of x and y agree within a relative 1e-10 (absent = 0).
::testing::AssertionResult same(const Values& x, const Values& y) {
  auto at = [](const Values& m, const std::vector<int64_t>& k) {
    auto it = m.find(k);
    return it == m.end() ? 0.0 : it->second;
  };
  Values keys = x;
  keys.insert(y.begin(), y.end());
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

/// Drops the zeros a plain loop leaves (the kernels' outputs are read without them).
Values nonzero(const Values& v) {
  Values out;
  for (auto& [k, x] : v)
    if (x != 0) out[k] = x;
  return out;
}

/// <SDDMM, SpMM> by plain loops over B's entries: sum_j B(i,j) (C(i,:) . D(j,:)) E(j,l).
Values plainSddmmSpmm(const CooData& B, const CooData& C, const CooData& D, const CooData& E) {
  const int64_t K = C.dims[1], L = E.dims[1];
  std::vector<double> c = denseArray(C), d = denseArray(D), e = denseArray(E);
  Values plain;
  for (int64_t x = 0; x < B.nnz(); x++) {
    int64_t i = B.coords[2 * x], j = B.coords[2 * x + 1];
    double dot = 0;
    for (int64_t k = 0; k < K; k++) dot += c[i * K + k] * d[j * K + k];
    for (int64_t l = 0; l < L; l++) plain[{i, l}] += B.values[x] * dot * e[j * L + l];
  }
  return nonzero(plain);
}

/// <SpMM, GEMM> by plain loops over B's entries: sum_j,l B(i,j) C(j,l) D(l,m).
Values plainSpmmGemm(const CooData& B, const CooData& C, const CooData& D) {
  const int64_t L = C.dims[1], M = D.dims[1];
  std::vector<double> c = denseArray(C), d = denseArray(D);
  Values plain;
  for (int64_t x = 0; x < B.nnz(); x++)
    for (int64_t l = 0; l < L; l++)
      for (int64_t mm = 0; mm < M; mm++)
        plain[{B.coords[2 * x], mm}] += B.values[x] * c[B.coords[2 * x + 1] * L + l] * d[l * M + mm];
  return nonzero(plain);
}

/// Every schedule equals `plain` alone at 1 thread and with `parallel` appended at 2 and
/// 4 (parallelize(i), or for B in COO, whose rows are merged sequentially, blocks of i
/// where i is not the fusion point, else on one thread).
void expectSchedules(const std::string& expr, const std::vector<Operand>& in, const std::vector<int64_t>& out,
                     const std::vector<std::string>& schedules, const Values& plain,
                     const std::string& parallel = ",parallelize(i)") {
  for (const std::string& s : schedules) {
    SCOPED_TRACE(s);
    EXPECT_TRUE(same(run(expr, in, out, s), plain));
    for (int threads : {2, 4}) EXPECT_TRUE(same(run(expr, in, out, s + parallel, threads), plain)) << threads;
  }
}

bool coo(const std::string& f) { return f == "uq"; }

}  // namespace

TEST(LoopFuseSplit, SddmmSpmmSplitsInTheProducerAndTheConsumer) {
  // loopfuse(j): the producer sums over k into the scalar t_j, the consumer loops over l;
  // k's and l's loops split, divided, reordered and unrolled below j.
  std::mt19937_64 rng(21);
  const std::vector<std::string> schedules = {
      "loopfuse(j),split(l,l0,l1,4)",
      "loopfuse(j),split(k,k0,k1,2)",
      "loopfuse(j),split(k,k0,k1,16),divide(l,l0,l1,3)",
      "split(l,l0,l1,1),loopfuse(j),unroll(l1,2)",
      "loopfuse(j),reorder(l,k),split(l,l0,l1,2)",
      "split(k,k0,k1,3),split(k1,k2,k3,2),loopfuse(j),unroll(k3,4)"};
  for (auto [m, n, K, L] : std::vector<std::array<int64_t, 4>>{
           {7, 6, 5, 9}, {1, 1, 1, 1}, {5, 4, 3, 1}, {6, 5, 1, 3}, {4, 5, 0, 2}, {4, 5, 3, 0}})
    for (const char* f : {"ds", "ss", "dd", "uq"}) {
      CooData B = randomCoo({m, n}, 0.35, rng), C = randomCoo({m, K}, 1, rng), D = randomCoo({n, K}, 1, rng),
              E = randomCoo({n, L}, 1, rng);
      std::vector<Operand> in = {{"B", B, fmt(f)}, {"C", C, fmt("dd")}, {"D", D, fmt("dd")}, {"E", E, fmt("dd")}};
      const Values plain = plainSddmmSpmm(B, C, D, E);
      SCOPED_TRACE(std::string(f) + " " + std::to_string(m) + "x" + std::to_string(n) + " k " + std::to_string(K) +
                   " l " + std::to_string(L));
      EXPECT_TRUE(same(run(kSddmmSpmm, in, {m, L}, "loopfuse(j)"), plain));
      EXPECT_TRUE(same(run(kSddmmSpmm, in, {m, L}, ""), plain));
      expectSchedules(kSddmmSpmm, in, {m, L}, schedules, plain,
                      coo(f) ? ",split(i,i0,i1,2),parallelize(i0)" : ",parallelize(i)");
    }
}

TEST(LoopFuseSplit, SpmmGemmSharedLoopsAndPositions) {
  // loopfuse(i): the producer fills the row t(l) = sum_j B(i,j) * C(j,l), the consumer
  // reads it over l and m. l runs in both nests (a split of it splits both); pos(j, jp, B)
  // blocks B's positions in the producer; pos(l, lp, C) iterates C's positions in the
  // producer while the consumer, which has no C, runs over l's coordinates.
  std::mt19937_64 rng(22);
  for (auto [m, n, L, M] : std::vector<std::array<int64_t, 4>>{{9, 7, 5, 6}, {1, 1, 1, 1}, {6, 4, 3, 1}, {5, 0, 2, 3}})
    for (const char* f : {"ds", "ss", "uq", "dd"})
      for (const char* cf : {"dd", "ds"}) {
        CooData B = randomCoo({m, n}, 0.3, rng), C = randomCoo({n, L}, std::string(cf) == "dd" ? 1.0 : 0.5, rng),
                D = randomCoo({L, M}, 1, rng);
        std::vector<Operand> in = {{"B", B, fmt(f)}, {"C", C, fmt(cf)}, {"D", D, fmt("dd")}};
        const Values plain = plainSpmmGemm(B, C, D);
        std::vector<std::string> schedules = {"loopfuse(i),split(l,l0,l1,4)", "loopfuse(i),split(m,m0,m1,3),unroll(m1,2)",
                                              "loopfuse(i),reorder(m,l),split(m,m0,m1,8)", "loopfuse(i),divide(j,j0,j1,3)"};
        if (std::string(f) != "dd") {
          schedules.push_back("loopfuse(i),pos(j,jp,B),split(jp,jp0,jp1,2)");
          schedules.push_back("pos(j,jp,B),divide(jp,p0,p1,3),loopfuse(i),divide(l,l0,l1,2)");
        }
        if (std::string(cf) == "ds") {
          schedules.push_back("loopfuse(i),pos(l,lp,C)");
          schedules.push_back("loopfuse(i),pos(l,lp,C),split(lp,lp0,lp1,2),split(m,m0,m1,2)");
        }
        SCOPED_TRACE(std::string(f) + " C " + cf + " " + std::to_string(m) + "x" + std::to_string(n) + " l " +
                     std::to_string(L) + " m " + std::to_string(M));
        EXPECT_TRUE(same(run(kSpmmGemm, in, {m, M}, "loopfuse(i)"), plain));
        EXPECT_TRUE(same(run(kSpmmGemm, in, {m, M}, ""), plain));
        expectSchedules(kSpmmGemm, in, {m, M}, schedules, plain, coo(f) ? "" : ",parallelize(i)");
      }
}

TEST(LoopFuseSplit, NestedFusionsSplitEachNest) {
  // <SDDMM, SpMM, GEMM> fused at i, then j: splits of k (the inner producer), l (both
  // sides of the inner fusion and the outer consumer), m (the outer consumer), and a
  // block loop of j between the two fusions.
  std::mt19937_64 rng(23);
  const int64_t M = 8, N = 7, K = 4, L = 5, P = 3;
  for (const char* f : {"ds", "ss", "uq"}) {
    CooData B = randomCoo({M, N}, 0.3, rng), C = randomCoo({M, K}, 1, rng), D = randomCoo({N, K}, 1, rng),
            E = randomCoo({N, L}, 1, rng), F = randomCoo({L, P}, 1, rng);
    std::vector<Operand> in = {{"B", B, fmt(f)},    {"C", C, fmt("dd")}, {"D", D, fmt("dd")},
                               {"E", E, fmt("dd")}, {"F", F, fmt("dd")}};
    std::vector<double> c = denseArray(C), d = denseArray(D), e = denseArray(E), ff = denseArray(F);
    Values plain;
    for (int64_t x = 0; x < B.nnz(); x++) {
      int64_t i = B.coords[2 * x], j = B.coords[2 * x + 1];
      double dot = 0;
      for (int64_t k = 0; k < K; k++) dot += c[i * K + k] * d[j * K + k];
      for (int64_t l = 0; l < L; l++)
        for (int64_t p = 0; p < P; p++) plain[{i, p}] += B.values[x] * dot * e[j * L + l] * ff[l * P + p];
    }
    plain = nonzero(plain);
    SCOPED_TRACE(f);
    expectSchedules(kTriple, in, {M, P},
                    {"loopfuse(i),loopfuse(j),split(l,l0,l1,4),split(k,k0,k1,3)",
                     "loopfuse(i),loopfuse(j),divide(m,m0,m1,2)", "split(j,j0,j1,2),loopfuse(i),loopfuse(j1),split(k,k0,k1,2)",
                     "loopfuse(i),pos(j,jp,B),split(jp,jp0,jp1,2),loopfuse(jp1),split(l,l0,l1,3)",
                     "split(m,m0,m1,2),reorder(i,m0,j,k,l,m1),loopfuse(i),loopfuse(j)"},
                    plain, coo(f) ? "" : ",parallelize(i)");
  }
}

TEST(LoopFuseSplit, MttkrpAndPrecomputeAtAgainstReference) {
  // <MTTKRP, GEMM> fused at i (the producer sums B(i,k,l) * C(l,j) * D(k,j) over k and l
  // into t(j)), and precompute(e, t, j) of MTTKRP, which shares the rules.
  std::mt19937_64 rng(24);
  for (const char* f : {"sss", "dss"})
    for (double density : {0.3, 0.0}) {
      std::vector<Operand> in = {{"B", randomCoo({6, 5, 7}, density, rng), fmt(f)},
                                 {"C", randomCoo({7, 4}, 1, rng), fmt("dd")},
                                 {"D", randomCoo({5, 4}, 1, rng), fmt("dd")},
                                 {"E", randomCoo({4, 3}, 1, rng), fmt("dd")}};
      const std::string e = "A(i,m) = B(i,k,l) * C(l,j) * D(k,j) * E(j,m)";
      SCOPED_TRACE(std::string(f) + " density " + std::to_string(density));
      Values perfect = run(e, in, {6, 3}, "");
      for (const char* s : {"loopfuse(i),split(j,j0,j1,2)", "loopfuse(i),pos(l,lp,B),split(lp,lp0,lp1,2),parallelize(i)",
                            "loopfuse(i),divide(m,m0,m1,2),split(k,k0,k1,3),parallelize(i)"}) {
        expectAllThreads(e, in, DenseFormat(2), s);
        EXPECT_TRUE(same(run(e, in, {6, 3}, s), perfect)) << s;
      }
      std::vector<Operand> mt = {in[0], {"C", randomCoo({5, 4}, 1, rng), fmt("dd")}, {"D", in[1].data, fmt("dd")}};
      for (const char* s : {"precompute(B(i,j,k)*D(k,l),t,j),split(k,k0,k1,2),parallelize(i)",
                            "precompute(B(i,j,k)*D(k,l),t,j),pos(k,kp,B),split(kp,kp0,kp1,3),split(l,l0,l1,3)",
                            // t's index l under another name (bound's lb): still a row over l
                            "precompute(B(i,j,k)*D(k,l),t,j),bound(l,lb,4)"})
        expectAllThreads("A(i,l) = B(i,j,k) * C(j,l) * D(k,l)", mt, DenseFormat(2), s);
    }
}

TEST(LoopFuseSplit, EmitShowsTheSplitLoopsInTheirNest) {
  std::mt19937_64 rng(25);
  std::map<std::string, TensorBase> t = {{"B", makeTensor("B", randomCoo({5, 6}, 0.4, rng), fmt("ds"))},
                                         {"C", makeTensor("C", randomCoo({5, 3}, 1, rng), fmt("dd"))},
                                         {"D", makeTensor("D", randomCoo({6, 3}, 1, rng), fmt("dd"))},
                                         {"E", makeTensor("E", randomCoo({6, 2}, 1, rng), fmt("dd"))},
                                         {"A", TensorBase("A", Datatype::Float64, {5, 2}, fmt("dd"))}};
  Assignment a = parseAssignment(kSddmmSpmm, t);
  std::string c = Kernel::emitC(a, parseSchedule("loopfuse(j),split(l,l0,l1,8),split(k,k0,k1,16)", a));
  EXPECT_NE(c.find("forall(i, forall(j, where(forall(l0 by 8, forall(l1, A(i,l) = E(j,l) * t_j)), "
                   "forall(k0 by 16, forall(k1, t_j += B(i,j) * C(i,k) * D(j,k))))))"),
            std::string::npos)
      << c.substr(0, 1500);
  // <SpMM, GEMM>: l's blocks in both nests, B's blocks of positions in the producer only.
  std::map<std::string, TensorBase> s = {{"B", makeTensor("B", randomCoo({5, 6}, 0.4, rng), fmt("ds"))},
                                         {"C", makeTensor("C", randomCoo({6, 3}, 1, rng), fmt("dd"))},
                                         {"D", makeTensor("D", randomCoo({3, 2}, 1, rng), fmt("dd"))},
                                         {"A", TensorBase("A", Datatype::Float64, {5, 2}, fmt("dd"))}};
  Assignment g = parseAssignment(kSpmmGemm, s);
  std::string e = Kernel::emitC(g, parseSchedule("loopfuse(i),pos(j,jp,B),split(jp,jp0,jp1,2),split(l,l0,l1,4)", g));
  EXPECT_NE(e.find("where(forall(l0 by 4, forall(l1, forall(m, A(i,m) = D(l,m) * t_i(l)))), forall(jp0 by 2 positions, "
                   "forall(jp1, forall(l0 by 4, forall(l1, t_i(l) += B(i,j) * C(j,l))))))"),
            std::string::npos)
      << e.substr(0, 1500);
  // pos(l, lp, C): C's positions in the producer; the consumer, without C, loops over l.
  s["C"] = makeTensor("C", randomCoo({6, 3}, 0.5, rng), fmt("ds"));
  Assignment h = parseAssignment(kSpmmGemm, s);
  std::string p = Kernel::emitC(h, parseSchedule("loopfuse(i),pos(l,lp,C),split(lp,lp0,lp1,2)", h));
  EXPECT_NE(p.find("forall(i, where(forall(l, forall(m, A(i,m) = D(l,m) * t_i(l))), forall(j, forall(lp0 by 2 "
                   "positions, forall(lp1, t_i(l) += B(i,j) * C(j,l))))))"),
            std::string::npos)
      << p.substr(0, 1500);
}

TEST(LoopFuseSplit, Rejections) {
  std::mt19937_64 rng(26);
  std::map<std::string, TensorBase> t = {{"B", makeTensor("B", randomCoo({5, 6}, 0.4, rng), fmt("ds"))},
                                         {"C", makeTensor("C", randomCoo({5, 3}, 1, rng), fmt("dd"))},
                                         {"D", makeTensor("D", randomCoo({6, 3}, 1, rng), fmt("dd"))},
                                         {"E", makeTensor("E", randomCoo({6, 2}, 1, rng), fmt("dd"))},
                                         {"A", TensorBase("A", Datatype::Float64, {5, 2}, fmt("dd"))}};
  // A block loop outside j over l, which runs below it: the split crosses the fusion point.
  expectScheduleRejected(t, kSddmmSpmm, "loopfuse(j),split(l,l0,l1,2),reorder(i,l0,j,k,l1)",
                         {"loopfuse(j)", "l0 splits l", "may not cross the fusion point"});
  // Parallel loops below the fusion point would race on its temporary.
  expectScheduleRejected(t, kSddmmSpmm, "loopfuse(j),split(k,k0,k1,2),parallelize(k0)",
                         {"parallelize(k0,cpu_thread,no_races)", "runs below j (loopfuse(j))", "race"});
  expectScheduleRejected(t, kSddmmSpmm, "loopfuse(j),parallelize(l)", {"parallelize(l", "cannot be parallel"});
  expectScheduleRejected(t, kSddmmSpmm, "loopfuse(j),split(q,q0,q1,2)", {"split(q,q0,q1,2)", "unknown index variable q"});
  expectScheduleRejected(t, kSddmmSpmm, "loopfuse(j),pos(k,kp,C)", {"pos(k,kp,C)", "dense"});
  // At the block loop of k below j, t_j's producer keeps every factor (t_j has no index).
  expectScheduleRejected(t, kSddmmSpmm, "loopfuse(j),split(k,k0,k1,2),loopfuse(k0)",
                         {"loopfuse(k0)", "splits nothing"});
  // A block of positions (fuse + pos) is no set of rows to hold a temporary for.
  expectScheduleRejected(t, kSddmmSpmm, "fuse(i,j,f),pos(f,fp,B),split(fp,f0,f1,4),loopfuse(f0)",
                         {"loopfuse(f0)", "f0 blocks an operand's positions (pos)"});
  // One block loop over two levels' positions (fuse + pos) below the fusion point.
  std::map<std::string, TensorBase> m = {{"B", makeTensor("B", randomCoo({4, 5, 6}, 0.4, rng), fmt("sss"))},
                                         {"C", makeTensor("C", randomCoo({6, 3}, 1, rng), fmt("dd"))},
                                         {"D", makeTensor("D", randomCoo({5, 3}, 1, rng), fmt("dd"))},
                                         {"E", makeTensor("E", randomCoo({3, 2}, 1, rng), fmt("dd"))},
                                         {"A", TensorBase("A", Datatype::Float64, {4, 2}, fmt("dd"))}};
  expectScheduleRejected(m, "A(i,m) = B(i,k,l) * C(l,j) * D(k,j) * E(j,m)",
                         "loopfuse(i),fuse(k,l,f),pos(f,fp,B),split(fp,p0,p1,4)",
                         {"loopfuse(i)", "p0 blocks the positions of two fused loops below i"});
}

TEST(LoopFuseSplit, ToolEmitsTheSplitNestAndExitsTwoOnBadSchedules) {
  std::filesystem::path dir = makeScratchDir("tessel-fusesplit");
  Result ok = runTool(dir, {"run", kSddmmSpmm, "-f", "B:ds", "-f", "C:dd", "-f", "D:dd", "-f", "E:dd", "-g",
                            "B:uniform:40,30,4", "-g", "C:dense:40,5", "-g", "D:dense:30,5", "-g", "E:dense:30,7", "-s",
                            "loopfuse(j),split(l,l0,l1,4),split(k,k0,k1,2),parallelize(i)", "--threads", "2", "--check"});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.err.find("check: OK"), std::string::npos) << ok.err;
  Result emit = runTool(dir, {"emit", kSddmmSpmm, "-f", "B:ds", "-s", "loopfuse(j),split(l,l0,l1,4)"});
  EXPECT_EQ(emit.code, 0) << emit.err;
  EXPECT_NE(emit.out.find("where(forall(l0 by 4, forall(l1, A(i,l) = E(j,l) * t_j))"), std::string::npos);
  Result bad = runTool(dir, {"emit", kSddmmSpmm, "-f", "B:ds", "-s", "loopfuse(j),parallelize(l)"});
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("parallelize(l,cpu_thread,no_races)"), std::string::npos) << bad.err;
  removeScratchDir(dir);
}

TEST(LoopFuseSplit, RandomProductChainsSplitBelowTheFusionPoint) {
  // The chains of LoopFuse.RandomProductChainsAtEveryLoop fused at each loop, with one or
  // two random splits or divides of loops below it (sometimes after a pos of a random
  // operand over one of them, sometimes the inner loop unrolled): every fusion that is
  // accepted without them is accepted with them (only the pos may be refused, naming
  // itself) and matches the reference; so is the fusion at blocks of that loop, and the
  // fusion with its own loop split after it.
  std::mt19937_64 rng(27);
  const std::vector<std::string>& chains = productChains();
  const std::vector<std::string> sparse = {"ds", "ss", "dd", "ds:1,0", "uq"};
  int split = 0, posAccepted = 0, posRefused = 0, blocks = 0, follows = 0;
  for (const std::string& expr : chains)
    for (int round = 0; round < 4; round++) {
      std::vector<Operand> in;
      std::map<char, int64_t> extent;
      for (char v : std::string("ijkl")) extent[v] = std::uniform_int_distribution<int64_t>(1, 7)(rng);
      for (const TensorUse& u : scanTensors(expr)) {
        if (u.isOutput) continue;
        std::vector<int64_t> dims;
        size_t at = expr.find(u.name + "(", expr.find('=')) + u.name.size() + 1;
        for (int m = 0; m < u.order; m++) dims.push_back(extent[expr[at + 2 * m]]);
        Format f = u.order == 2 ? fmt(sparse[std::uniform_int_distribution<size_t>(0, sparse.size() - 1)(rng)])
                   : u.order == 3 ? fmt("sss")
                                  : DenseFormat(u.order);
        in.push_back({u.name, randomCoo(dims, 0.5, rng), f});
      }
      const Format out = DenseFormat(scanTensors(expr)[0].order);
      for (const char* at : {"i", "j", "k", "l"}) {
        const std::string fuse = std::string("loopfuse(") + at + ")";
        try {
          (void)matchesReferenceScheduled(expr, in, out, [&](const std::vector<IndexVar>&) { return fuse; }, 1);
        } catch (const ScheduleError&) {
          continue;  // refused without splits (LoopFuse.RandomProductChainsAtEveryLoop)
        }
        std::string s, pos;
        auto schedule = [&](const std::vector<IndexVar>& order) {
          std::vector<std::string> below;
          bool past = false;
          for (const IndexVar& v : order) {
            if (past) below.push_back(v.name());
            past |= v.name() == at;
          }
          s = fuse;
          pos.clear();
          if (!below.empty() && rng() % 2) {  // positions of a random operand over a random loop
            size_t pick = std::uniform_int_distribution<size_t>(0, below.size() - 1)(rng);
            const Operand& o = in[std::uniform_int_distribution<size_t>(0, in.size() - 1)(rng)];
            pos = "pos(" + below[pick] + "," + below[pick] + "p," + o.name + ")";
            s += "," + pos;
            below[pick] += "p";
          }
          int n = std::uniform_int_distribution<int>(1, 2)(rng);
          for (int c = 0; c < n && !below.empty(); c++) {
            size_t pick = std::uniform_int_distribution<size_t>(0, below.size() - 1)(rng);
            const std::string v = below[pick], o = v + "o" + std::to_string(c), i = v + "i" + std::to_string(c);
            int64_t factor = std::uniform_int_distribution<int64_t>(1, 9)(rng);
            s += std::string(rng() % 2 ? ",split(" : ",divide(") + v + "," + o + "," + i + "," +
                 std::to_string(factor) + ")";
            if (rng() % 3 == 0) s += ",unroll(" + i + ",2)";
            // A second split of it splits its inner loop (not of positions: already split).
            if (!pos.empty() && v == below[pick] && pos.find("," + v + ",") != std::string::npos)
              below.erase(below.begin() + static_cast<std::ptrdiff_t>(pick));
            else
              below[pick] = i;
          }
          return s;
        };
        int threads = round % 2 ? 2 : 1;
        try {
          ::testing::AssertionResult r = matchesReferenceScheduled(expr, in, out, schedule, threads);
          EXPECT_TRUE(r) << expr << " " << s;
          split++;
          posAccepted += !pos.empty();
        } catch (const ScheduleError& e) {
          // Only the pos may be refused (a dense level, an operand without the variable),
          // and its message names it.
          if (pos.empty() || std::string(e.what()).find("schedule command " + pos + ":") == std::string::npos)
            ADD_FAILURE() << expr << " " << s << ": " << e.what();
          else
            posRefused++;
        }
        // Schedules that must be accepted wherever the fusion at the loop is: counted, and
        // checked against the reference.
        auto accepted = [&](const std::string& schedule, int& count) {
          try {
            EXPECT_TRUE(matchesReferenceScheduled(expr, in, out, [&](const std::vector<IndexVar>&) { return schedule; },
                                                  threads))
                << expr << " " << schedule;
            count++;
          } catch (const ScheduleError& e) {
            ADD_FAILURE() << expr << " " << schedule << ": " << e.what();
          }
        };
        // The same fusion at blocks of the loop (the temporary one block of it).
        const std::string b = std::string(at) + "b", bi = std::string(at) + "i";
        accepted(std::string(rng() % 2 ? "split(" : "divide(") + at + "," + b + "," + bi + "," +
                     std::to_string(std::uniform_int_distribution<int>(1, 5)(rng)) + "),loopfuse(" + b + ")",
                 blocks);
        // The fusion's own loop split after it: the fusion follows to the inner loop.
        accepted(fuse + (rng() % 2 ? ",split(" : ",divide(") + at + "," + b + "," + bi + "," +
                     std::to_string(std::uniform_int_distribution<int>(1, 5)(rng)) + ")",
                 follows);
      }
    }
  EXPECT_GT(split, 20);
  EXPECT_GT(posAccepted, 4);
  EXPECT_GT(posRefused, 3);
  EXPECT_EQ(blocks, split + posRefused);
  EXPECT_EQ(follows, blocks);
  std::printf("%d fused and split (%d with a pos), %d pos refused, %d fused at blocks, %d split after\n", split,
              posAccepted, posRefused, blocks, follows);
}

TEST(LoopFuseSplit, FusedAtBlocksOfRows) {
  // split(i, i0, i1, R), loopfuse(i0): per block of R rows the producer fills t(i, l) for
  // the block's rows, then the consumer reads it (t is R rows, indexed from the block's
  // first row). Block sizes of 1, not dividing the rows, past them; divide; splits
  // below; the block loop parallel; B's rows empty, all rows empty, one row.
  std::mt19937_64 rng(27);
  const std::vector<std::string> schedules = {
      "split(i,i0,i1,1),loopfuse(i0)",        "split(i,i0,i1,3),loopfuse(i0)",
      "split(i,i0,i1,64),loopfuse(i0)",       "divide(i,i0,i1,3),loopfuse(i0)",
      "split(i,i0,i1,2),loopfuse(i0),split(l,l0,l1,2)", "split(i,i0,i1,4),split(i1,i2,i3,2),loopfuse(i0)",
      "split(i,i0,i1,3),loopfuse(i0),unroll(m,2)", "split(i,i0,i1,5),divide(i1,i2,i3,2),loopfuse(i2)"};
  for (auto [m, n, L, M] : std::vector<std::array<int64_t, 4>>{{9, 7, 5, 6}, {1, 1, 1, 1}, {6, 4, 3, 1}, {5, 0, 2, 3}})
    for (const char* f : {"ds", "ss", "dd", "uq"}) {
      CooData B = randomCoo({m, n}, 0.3, rng), C = randomCoo({n, L}, 1, rng), D = randomCoo({L, M}, 1, rng);
      std::vector<Operand> in = {{"B", B, fmt(f)}, {"C", C, fmt("dd")}, {"D", D, fmt("dd")}};
      const Values plain = plainSpmmGemm(B, C, D);
      SCOPED_TRACE(std::string(f) + " " + std::to_string(m) + "x" + std::to_string(n) + " l " + std::to_string(L) +
                   " m " + std::to_string(M));
      expectSchedules(kSpmmGemm, in, {m, M}, schedules, plain, coo(f) ? "" : ",parallelize(i0)");
    }
}

TEST(LoopFuseSplit, FusedAtBlocksSddmmNestedAndMttkrp) {
  std::mt19937_64 rng(28);
  // <SDDMM, SpMM> at blocks of i: t(i, j) holds the block's rows of the sampled product.
  for (const char* f : {"ds", "ss"}) {
    const int64_t m = 7, n = 6, K = 3, L = 4;
    CooData B = randomCoo({m, n}, 0.4, rng), C = randomCoo({m, K}, 1, rng), D = randomCoo({n, K}, 1, rng),
            E = randomCoo({n, L}, 1, rng);
    std::vector<Operand> in = {{"B", B, fmt(f)}, {"C", C, fmt("dd")}, {"D", D, fmt("dd")}, {"E", E, fmt("dd")}};
    SCOPED_TRACE(f);
    expectSchedules(kSddmmSpmm, in, {m, L}, {"split(i,i0,i1,2),loopfuse(i0)", "split(i,i0,i1,3),loopfuse(i0),loopfuse(j)"},
                    plainSddmmSpmm(B, C, D, E), ",parallelize(i0)");
  }
  // <SDDMM, SpMM, GEMM> at blocks of i, then at j inside the producer.
  {
    CooData B = randomCoo({8, 7}, 0.3, rng);
    std::vector<Operand> in = {{"B", B, fmt("ds")}, {"C", randomCoo({8, 4}, 1, rng), fmt("dd")},
                               {"D", randomCoo({7, 4}, 1, rng), fmt("dd")}, {"E", randomCoo({7, 5}, 1, rng), fmt("dd")},
                               {"F", randomCoo({5, 3}, 1, rng), fmt("dd")}};
    const Values perfect = run(kTriple, in, {8, 3}, "");
    expectSchedules(kTriple, in, {8, 3}, {"split(i,i0,i1,3),loopfuse(i0),loopfuse(j)"}, perfect, ",parallelize(i0)");
  }
  // <MTTKRP, GEMM> at blocks of B's compressed rows (blocks of coordinates, some empty).
  for (double density : {0.3, 0.0}) {
    std::vector<Operand> in = {{"B", randomCoo({6, 5, 7}, density, rng), fmt("sss")},
                               {"C", randomCoo({7, 4}, 1, rng), fmt("dd")},
                               {"D", randomCoo({5, 4}, 1, rng), fmt("dd")},
                               {"E", randomCoo({4, 3}, 1, rng), fmt("dd")}};
    const std::string e = "A(i,m) = B(i,k,l) * C(l,j) * D(k,j) * E(j,m)";
    const Values perfect = run(e, in, {6, 3}, "");
    expectSchedules(e, in, {6, 3}, {"split(i,i0,i1,2),loopfuse(i0)", "divide(i,i0,i1,4),loopfuse(i0),split(k,k0,k1,2)"},
                    perfect, ",parallelize(i0)");
  }
}

TEST(LoopFuseSplit, SddmmAtBlocksKeepsTheTemporaryAtBsPositions) {
  // <SDDMM, SpMM> fused at blocks of rows with B in CSR: t(i,j) lives at B's positions (the
  // block's non-zeros, not rows x J), the producer sums each dot product in a scalar, and
  // the consumer iterates B's pattern. Equal to plain loops on empty and one-entry shapes,
  // empty rows, blocks of 1 and past the extent, sparse C, D and E (the producer's merge
  // meets nothing at some of B's entries, the consumer's skips some), precompute too, and
  // 1, 2 and 4 threads. The 300 x 200 shape's blocks of 64 rows hold about 640 entries,
  // far more than the gap between threads' rows (LocalTemporary::kThreadGap, 128), so a
  // row sized too short overruns it (a heap overflow under the ASan suite, whose kernels
  // are instrumented too); the shape must grow if the gap does.
  std::mt19937_64 rng(33);
  struct Shape {
    int64_t m, n, K, L;
    double density;
  };
  for (const Shape& sh : {Shape{9, 7, 3, 4, 0.35}, Shape{9, 7, 3, 4, 0.0}, Shape{1, 1, 1, 1, 1.0},
                          Shape{13, 5, 2, 3, 0.15}, Shape{4, 40, 5, 2, 0.5}, Shape{300, 200, 2, 2, 0.05}})
    for (const char* dense : {"dd", "ds"}) {
      CooData B = randomCoo({sh.m, sh.n}, sh.density, rng), C = randomCoo({sh.m, sh.K}, 0.6, rng),
              D = randomCoo({sh.n, sh.K}, 0.6, rng), E = randomCoo({sh.n, sh.L}, 0.6, rng);
      std::vector<Operand> in = {{"B", B, fmt("ds")}, {"C", C, fmt(dense)}, {"D", D, fmt(dense)}, {"E", E, fmt(dense)}};
      SCOPED_TRACE(std::to_string(sh.m) + "x" + std::to_string(sh.n) + " " + dense);
      expectSchedules(kSddmmSpmm, in, {sh.m, sh.L},
                      {"split(i,i0,i1,1),loopfuse(i0)", "split(i,i0,i1,3),loopfuse(i0)",
                       "split(i,i0,i1,64),loopfuse(i0)", "divide(i,i0,i1,3),loopfuse(i0)",
                       "split(i,i0,i1,2),loopfuse(i0),split(l,l0,l1,2)",
                       "split(i,i0,i1,2),precompute(B(i,j) * C(i,k) * D(j,k),w,i0)"},
                      plainSddmmSpmm(B, C, D, E), ",parallelize(i0)");
    }
  // What the kernel holds: a row as long as the longest block's positions (of 16 rows),
  // zeroed and indexed from the block's first position.
  std::map<std::string, TensorBase> t = {{"B", makeTensor("B", randomCoo({50, 6}, 0.4, rng), fmt("ds"))},
                                         {"C", makeTensor("C", randomCoo({50, 3}, 1, rng), fmt("dd"))},
                                         {"D", makeTensor("D", randomCoo({6, 3}, 1, rng), fmt("dd"))},
                                         {"E", makeTensor("E", randomCoo({6, 2}, 1, rng), fmt("dd"))},
                                         {"A", TensorBase("A", Datatype::Float64, {50, 2}, fmt("dd"))}};
  Assignment a = parseAssignment(kSddmmSpmm, t);
  const std::string c = Kernel::emitC(a, parseSchedule("split(i,i0,i1,16),loopfuse(i0)", a));
  EXPECT_NE(c.find("t_i0 at B's positions"), std::string::npos) << c.substr(0, 1500);
  EXPECT_NE(c.find("t_i0_len = tessel_max(t_i0_len, (int64_t)B1_pos[tessel_min((t_i0_b * t_i0_rows) + t_i0_rows, "),
            std::string::npos)
      << c;
  EXPECT_NE(c.find("t_i0_first = (int64_t)B1_pos[i0_begin]"), std::string::npos) << c;
  EXPECT_NE(c.find("(pB1 - t_i0_first)"), std::string::npos) << c;
  EXPECT_EQ(c.find("(i - i0_begin)"), std::string::npos) << c;
  // B not in CSR (DCSR), or the fusion not at blocks: t stays dense.
  for (const char* other : {"ss"}) {
    std::map<std::string, TensorBase> u = t;
    u["B"] = makeTensor("B", randomCoo({50, 6}, 0.4, rng), fmt(other));
    Assignment b = parseAssignment(kSddmmSpmm, u);
    const std::string d = Kernel::emitC(b, parseSchedule("split(i,i0,i1,16),loopfuse(i0)", b));
    EXPECT_EQ(d.find("at B's positions"), std::string::npos) << other;
    EXPECT_NE(d.find("(i - i0_begin)"), std::string::npos) << other;
  }
  EXPECT_EQ(Kernel::emitC(a, parseSchedule("loopfuse(i)", a)).find("at B's positions"), std::string::npos);
}

TEST(LoopFuseSplit, BlockTemporaryHoldsOneBlock) {
  // The temporary is R rows long, indexed from the block's first row; the producer runs
  // over the whole block before the consumer.
  std::mt19937_64 rng(30);
  std::map<std::string, TensorBase> s = {{"B", makeTensor("B", randomCoo({50, 6}, 0.4, rng), fmt("ds"))},
                                         {"C", makeTensor("C", randomCoo({6, 3}, 1, rng), fmt("dd"))},
                                         {"D", makeTensor("D", randomCoo({3, 2}, 1, rng), fmt("dd"))},
                                         {"A", TensorBase("A", Datatype::Float64, {50, 2}, fmt("dd"))}};
  Assignment g = parseAssignment(kSpmmGemm, s);
  const std::string c = Kernel::emitC(g, parseSchedule("split(i,i0,i1,16),loopfuse(i0)", g));
  EXPECT_NE(c.find("forall(i0 by 16, where(forall(i1, forall(l, forall(m, A(i,m) = D(l,m) * t_i0(i,l)))), "
                   "forall(i1, forall(j, forall(l, t_i0(i,l) += B(i,j) * C(j,l))))))"),
            std::string::npos)
      << c.substr(0, 1500);
  EXPECT_NE(c.find("t_i0_len = 16 * C1_dim"), std::string::npos) << c;
  EXPECT_NE(c.find("(i - i0_begin)"), std::string::npos) << c;
}

/// <SpMM, GEMM>'s operands for the automatic choice: B (300 x 300 at `density`, CSR), C
/// (300 x 64) and D (64 x 64) dense, and the dense output A.
struct SpmmGemmOperands {
  CooData B, C, D;
  std::map<std::string, TensorBase> t;
  SpmmGemmOperands(double density, uint64_t seed) {
    std::mt19937_64 rng(seed);
    const int64_t n = 300, L = 64, M = 64;
    B = randomCoo({n, n}, density, rng), C = randomCoo({n, L}, 1, rng), D = randomCoo({L, M}, 1, rng);
    t = {{"B", makeTensor("B", B, fmt("ds"))},
         {"C", makeTensor("C", C, fmt("dd"))},
         {"D", makeTensor("D", D, fmt("dd"))},
         {"A", TensorBase("A", Datatype::Float64, {n, M}, fmt("dd"))}};
  }
};

TEST(LoopFuseSplit, AutomaticChoiceChargesATemporaryBeyondTheCache) {
  // <SpMM, GEMM>'s separate kernels write and read back a dense T (300 x 64 doubles,
  // 150 KB). Rows of 3 entries, so a fused nest runs per row (not at blocks), its
  // multiplies 1.25x a separate kernel's. Within the last-level cache the cost model
  // picks the separate kernels; beyond it, charged 4x per entry, the fused nest; charged
  // 1x (Intel's streaming), separate kernels again. The reason says when T is beyond the cache.
  SpmmGemmOperands o(0.01, 34);
  Assignment a = parseAssignment(kSpmmGemm, o.t);
  auto choose = [&](const std::string& settings) { return defaultSchedule(a, 1, tuningFromSettings(settings)); };
  const ScheduleChoice inCache = choose("llc=1G,beyond-llc=4"), beyond4 = choose("llc=64K,beyond-llc=4"),
                       beyond1 = choose("llc=64K,beyond-llc=1");
  EXPECT_EQ(inCache.schedule.str().rfind("precompute(", 0), 0u) << inCache.schedule.str() << "\n" << inCache.reason;
  EXPECT_EQ(inCache.reason.find("beyond the"), std::string::npos) << inCache.reason;
  EXPECT_NE(beyond4.schedule.str().find("loopfuse"), std::string::npos) << beyond4.schedule.str() << "\n" << beyond4.reason;
  EXPECT_EQ(beyond1.schedule.str().rfind("precompute(", 0), 0u) << beyond1.schedule.str() << "\n" << beyond1.reason;
  EXPECT_NE(beyond1.reason.find("beyond the 64 KB last-level cache"), std::string::npos) << beyond1.reason;
  EXPECT_EQ(beyond4.reason.find("blocks of"), std::string::npos) << beyond4.reason;
  const Values expected = plainSpmmGemm(o.B, o.C, o.D);
  for (const ScheduleChoice& ch : {inCache, beyond4, beyond1}) {
    Kernel::compile(a, ch.schedule)->run(a, 1);
    EXPECT_TRUE(same(valuesOf(o.t.at("A").toCoo()), expected)) << ch.schedule.str();
  }
}

TEST(LoopFuseSplit, AutomaticChoiceCostsBlocksAsTheSeparateKernelsWithoutT) {
  // Rows of 9 entries: a fusion at i runs at blocks of rows, which is the separate
  // kernels run a block at a time, T's block in cache: their multiplies 1.05x, without
  // T's traffic. So it beats separate kernels even with T in the cache (the T of rows of
  // 3 entries above, per row at 1.25x, does not), and the reason says blocks.
  SpmmGemmOperands o(0.03, 35);
  Assignment a = parseAssignment(kSpmmGemm, o.t);
  const ScheduleChoice c = defaultSchedule(a, 1, tuningFromSettings("llc=1G,beyond-llc=4"));
  EXPECT_EQ(c.schedule.str().rfind("split(i,i_block,i_in,32),loopfuse(i_block)", 0), 0u) << c.schedule.str() << "\n"
                                                                                           << c.reason;
  EXPECT_NE(c.reason.find("fused at blocks of i (loopfuse)"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("and separate kernels'"), std::string::npos) << c.reason;
  Kernel::compile(a, c.schedule)->run(a, 1);
  EXPECT_TRUE(same(valuesOf(o.t.at("A").toCoo()), plainSpmmGemm(o.B, o.C, o.D))) << c.schedule.str();
}

TEST(LoopFuseSplit, AutomaticChoiceTooSmallToShareChoosesAsOnOneThread) {
  // 12 rows of about 7 entries: too little work to share, so at 2 threads the kernel runs
  // on one thread, and the choice is the 1-thread one: fused at blocks of 32 rows, priced
  // so. (On 2 threads rows would not run at blocks, 12 rows being under 4 blocks of 2 a
  // thread; pricing it so while scheduling it on one thread at blocks chose by a price the
  // schedule does not run.)
  std::mt19937_64 rng(52);
  const int64_t n = 12, L = 64, M = 8;
  const CooData B = randomCoo({n, n}, 0.6, rng), C = randomCoo({n, L}, 1, rng), D = randomCoo({L, M}, 1, rng);
  std::map<std::string, TensorBase> t = {{"B", makeTensor("B", B, fmt("ds"))},
                                         {"C", makeTensor("C", C, fmt("dd"))},
                                         {"D", makeTensor("D", D, fmt("dd"))},
                                         {"A", TensorBase("A", Datatype::Float64, {n, M}, fmt("dd"))}};
  Assignment a = parseAssignment(kSpmmGemm, t);
  const ScheduleChoice one = defaultSchedule(a, 1), two = defaultSchedule(a, 2);
  EXPECT_EQ(one.schedule.str().rfind("split(i,i_block,i_in,32),loopfuse(i_block)", 0), 0u) << one.schedule.str()
                                                                                             << "\n" << one.reason;
  EXPECT_EQ(two.schedule.str(), one.schedule.str()) << two.reason;
  EXPECT_EQ(two.reason, one.reason + "; one thread (too little work to share)");
  EXPECT_EQ(one.threads, 1);
  EXPECT_EQ(two.threads, 1);  // the tool and Python run it on these
  Kernel::compile(a, two.schedule)->run(a, two.threads);
  EXPECT_TRUE(same(valuesOf(t.at("A").toCoo()), plainSpmmGemm(B, C, D))) << two.schedule.str();
}

TEST(LoopFuseSplit, AutomaticChoiceFusesAtBlocksOfBusyRows) {
  // The cost model's fused plan at the outermost loop runs at blocks of rows where rows
  // have entries (4 or more a row) and per row where they are short: the block's consumer
  // would run every row, the nest per row skips the empty ones.
  std::mt19937_64 rng(29);
  for (auto [density, blocks] : std::vector<std::pair<double, bool>>{{0.1, true}, {0.015, false}}) {
    const int64_t m = 120, n = 100, K = 16, L = 8, P = 6;
    std::map<std::string, TensorBase> t = {{"B", makeTensor("B", randomCoo({m, n}, density, rng), fmt("ds"))},
                                           {"C", makeTensor("C", randomCoo({m, K}, 1, rng), fmt("dd"))},
                                           {"D", makeTensor("D", randomCoo({n, K}, 1, rng), fmt("dd"))},
                                           {"E", makeTensor("E", randomCoo({n, L}, 1, rng), fmt("dd"))},
                                           {"F", makeTensor("F", randomCoo({L, P}, 1, rng), fmt("dd"))},
                                           {"A", TensorBase("A", Datatype::Float64, {m, P}, fmt("dd"))}};
    Assignment a = parseAssignment(kTriple, t);
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::to_string(density) + " at " + std::to_string(threads) + " threads");
      ScheduleChoice c = defaultSchedule(a, threads);
      const std::string s = c.schedule.str();
      EXPECT_NE(s.find("loopfuse"), std::string::npos) << s << "\n" << c.reason;
      EXPECT_EQ(s.rfind("split(i,i_block,i_in,256),loopfuse(i_block),loopfuse(j)", 0) == 0, blocks) << s;
      EXPECT_EQ(c.reason.find("fused at blocks of i, then j") != std::string::npos, blocks) << c.reason;
      Kernel::compile(a, c.schedule)->run(a, threads);
      std::string why;
      EXPECT_TRUE(tensorsClose(referenceEvaluate(a), t.at("A").toCoo(), 1e-9, 1e-12, &why)) << why;
    }
  }
}

TEST(LoopFuseSplit, AutomaticFusionPerRowRunsBlocksOfRowsInParallel) {
  // Short, often empty rows: the cost model fuses per row (not at blocks), and on 2
  // threads the rows go out in blocks by tessel's block loop, the fusion at the loop
  // inside the blocks (OpenMP's guided chunks of rows were 1.2x slower on skewed rows).
  std::mt19937_64 rng(41);
  const int64_t m = 3000, n = 3000, K = 32, L = 32;
  std::map<std::string, TensorBase> t = {{"B", makeTensor("B", randomCoo({m, n}, 0.0005, rng), fmt("ds"))},
                                         {"C", makeTensor("C", randomCoo({n, K}, 1, rng), fmt("dd"))},
                                         {"D", makeTensor("D", randomCoo({K, L}, 1, rng), fmt("dd"))},
                                         {"A", TensorBase("A", Datatype::Float64, {m, L}, fmt("dd"))}};
  Assignment a = parseAssignment("A(i,l) = B(i,j) * C(j,k) * D(k,l)", t);
  ScheduleChoice one = defaultSchedule(a, 1);
  EXPECT_EQ(one.schedule.str().rfind("loopfuse(i)", 0), 0u) << one.schedule.str() << "\n" << one.reason;
  ScheduleChoice two = defaultSchedule(a, 2);
  const std::string s = two.schedule.str();
  // As many blocks as the default parallel schedule gives that work (blocksPerThreadFor):
  // the plan's 6.4e6 keeps 16384 in each of 64 blocks a thread, so 3000 / 128 rows.
  EXPECT_EQ(s.rfind("split(i,i_block,i_in,24),loopfuse(i_in)", 0), 0u) << s << "\n" << two.reason;
  EXPECT_NE(s.find("parallelize(i_block,cpu_thread"), std::string::npos) << s;
  EXPECT_NE(two.reason.find("blocks of rows in parallel"), std::string::npos) << two.reason;
  EXPECT_EQ(two.threads, 2);
  for (int threads : {1, 2, 4}) {
    Kernel::compile(a, two.schedule)->run(a, threads);
    std::string why;
    EXPECT_TRUE(tensorsClose(referenceEvaluate(a), t.at("A").toCoo(), 1e-9, 1e-12, &why)) << threads << ": " << why;
  }
}
