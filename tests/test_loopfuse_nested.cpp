// loopfuse applied again (SparseLNR's recursion): a second fusion names a loop of the
// producer or the consumer of the first, so the nest has a where inside a where. A
// nested fusion equals the perfect nest and the reference evaluator on hand-computed
// values, random data and degenerate shapes at 1, 2 and 4 threads; `emit` shows the
// nested wheres; second fusions that cannot apply are ScheduleErrors naming the command.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "support/test_support.h"
#include "tessel/kernel.h"
#include "tessel/parser.h"
#include "tessel/reference.h"
#include "tessel/syntax.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

Format fmt(const std::string& s) { return Format::parse(s); }
// <SDDMM, SpMM, GEMM> (SparseLNR 6.2): scores on B's edges, aggregation, then a GEMM.
const std::string kTriple = "A(i,m) = B(i,j) * C(i,k) * D(j,k) * E(j,l) * F(l,m)";
// SparseLNR's schedule for it: fuse the GEMM at i (t_i(l) = the aggregated row), then
// the SDDMM into the SpMM at j (t_j = the score of edge (i,j)).
const std::string kTripleSchedule = "loopfuse(i),loopfuse(j)";
const std::string kSpttm = "A(i,j,m) = B(i,j,k) * C(k,l) * D(l,m)";
const std::string kSddmmSpmm = "A(i,l) = B(i,j) * C(i,k) * D(j,k) * E(j,l)";

/// <SDDMM, SpMM, GEMM>'s operands: B m x n (the sparse one, `density`), the rest dense.
std::vector<Operand> tripleOperands(std::mt19937_64& rng, int64_t m, int64_t n, int64_t k, int64_t l, int64_t mm,
                                    double density, const std::string& bFormat = "ds") {
  return {{"B", randomCoo({m, n}, density, rng), fmt(bFormat)},
          {"C", randomCoo({m, k}, 1, rng), fmt("dd")},
          {"D", randomCoo({n, k}, 1, rng), fmt("dd")},
          {"E", randomCoo({n, l}, 1, rng), fmt("dd")},
          {"F", randomCoo({l, mm}, 1, rng), fmt("dd")}};
}

/// <SDDMM, SpMM>'s operands, small: B 9 x 8 (CSR, 40%), C 9 x 4, D 8 x 4 and E 8 x 3 dense.
std::vector<Operand> sddmmSpmmOperands(std::mt19937_64& rng) {
  return {{"B", randomCoo({9, 8}, 0.4, rng), fmt("ds")},
          {"C", randomCoo({9, 4}, 1, rng), fmt("dd")},
          {"D", randomCoo({8, 4}, 1, rng), fmt("dd")},
          {"E", randomCoo({8, 3}, 1, rng), fmt("dd")}};
}

std::map<std::string, TensorBase> tensorsOf(const std::vector<Operand>& in, const std::string& out,
                                            std::vector<int64_t> outDims) {
  std::map<std::string, TensorBase> t;
  for (const Operand& o : in) t.emplace(o.name, makeTensor(o.name, o.data, o.format));
  t.emplace(out, TensorBase(out, Datatype::Float64, std::move(outDims), DenseFormat(2)));
  return t;
}

/// `expr` over `in` under `schedule` (1 thread) against the same without a schedule.
::testing::AssertionResult equalsPerfectNest(const std::string& expr, const std::vector<Operand>& in,
                                             const std::string& schedule) {
  CooData fused, perfect;
  for (const std::string& s : {schedule, std::string()}) {
    ::testing::AssertionResult r = matchesReferenceScheduled(
        expr, in, DenseFormat(scanTensors(expr)[0].order), [&](const std::vector<IndexVar>&) { return s; }, 1);
    if (!r) return r << " (schedule '" << s << "')";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace

TEST(LoopFuseNested, SddmmSpmmGemmHandComputed) {
  // B = [[1, 0, 2], [0, 3, 0]]; C = [[1, 1], [2, 0]]; D = [[1, 0], [0, 1], [1, 1]]:
  // scores t_j: (0,0) 1*(1) = 1, (0,2) 2*(1+1) = 4, (1,1) 3*(0) = 0.
  // E = [[1, 0], [0, 1], [1, 1]]: t_i(0,:) = 1*E(0,:) + 4*E(2,:) = [5, 4]; t_i(1,:) = 0.
  // F = [[1, 2], [10, 20]]: A(0,:) = 5*[1, 2] + 4*[10, 20] = [45, 90]; A(1,:) = 0.
  std::vector<Operand> in = {
      {"B", entries({2, 3}, {{{0, 0}, 1}, {{0, 2}, 2}, {{1, 1}, 3}}), fmt("ds")},
      {"C", entries({2, 2}, {{{0, 0}, 1}, {{0, 1}, 1}, {{1, 0}, 2}}), fmt("dd")},
      {"D", entries({3, 2}, {{{0, 0}, 1}, {{1, 1}, 1}, {{2, 0}, 1}, {{2, 1}, 1}}), fmt("dd")},
      {"E", entries({3, 2}, {{{0, 0}, 1}, {{1, 1}, 1}, {{2, 0}, 1}, {{2, 1}, 1}}), fmt("dd")},
      {"F", entries({2, 2}, {{{0, 0}, 1}, {{0, 1}, 2}, {{1, 0}, 10}, {{1, 1}, 20}}), fmt("dd")}};
  for (int threads : {1, 2}) {
    std::map<std::string, TensorBase> t = tensorsOf(in, "A", {2, 2});
    Assignment a = parseAssignment(kTriple, t);
    Kernel::compile(a, parseSchedule(kTripleSchedule + ",parallelize(i)", a))->run(a, threads);
    CooData c = t.at("A").toCoo();
    std::map<std::vector<int64_t>, double> got;
    for (int64_t e = 0; e < c.nnz(); e++) got[{c.coords[2 * e], c.coords[2 * e + 1]}] = c.values[e];
    EXPECT_EQ(got[std::vector<int64_t>({0, 0})], 45) << threads;
    EXPECT_EQ(got[std::vector<int64_t>({0, 1})], 90) << threads;
    EXPECT_EQ(got[std::vector<int64_t>({1, 0})], 0) << threads;
    EXPECT_EQ(got[std::vector<int64_t>({1, 1})], 0) << threads;
  }
}

TEST(LoopFuseNested, TheNestHasNestedWheres) {
  std::mt19937_64 rng(1);
  std::vector<Operand> in = tripleOperands(rng, 5, 6, 3, 2, 4, 0.5);
  std::map<std::string, TensorBase> t = tensorsOf(in, "A", {5, 4});
  Assignment a = parseAssignment(kTriple, t);
  std::string c = Kernel::emitC(a, parseSchedule(kTripleSchedule, a));
  EXPECT_NE(c.find("forall(i, where(forall(l, forall(m, A(i,m) = F(l,m) * t_i(l))), "
                   "forall(j, where(forall(l, t_i(l) += E(j,l) * t_j), "
                   "forall(k, t_j += B(i,j) * C(i,k) * D(j,k))))))"),
            std::string::npos)
      << c.substr(0, 2000);
}

TEST(LoopFuseNested, SddmmSpmmGemmAgainstReference) {
  std::mt19937_64 rng(2);
  for (const char* f : {"ds", "ss", "dd"})
    for (double density : {0.3, 0.0, 1.0}) {
      std::vector<Operand> in = tripleOperands(rng, 9, 8, 4, 3, 5, density, f);
      SCOPED_TRACE(std::string(f) + " density " + std::to_string(density));
      expectAllThreads(kTriple, in, DenseFormat(2), kTripleSchedule + ",parallelize(i)");
      EXPECT_TRUE(equalsPerfectNest(kTriple, in, kTripleSchedule));
    }
}

TEST(LoopFuseNested, DegenerateShapes) {
  std::mt19937_64 rng(3);
  // Empty rows, extents of 1, an empty B, inner extents of 0.
  for (auto [m, n, k, l] : std::vector<std::array<int64_t, 4>>{
           {1, 1, 1, 1}, {5, 1, 3, 2}, {0, 4, 3, 2}, {4, 0, 3, 2}, {4, 5, 0, 2}, {4, 5, 3, 0}})
    for (double density : {0.0, 0.5}) {
      std::vector<Operand> in = tripleOperands(rng, m, n, k, l, 3, density);
      SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + " k " + std::to_string(k) + " l " +
                   std::to_string(l));
      expectAllThreads(kTriple, in, DenseFormat(2), kTripleSchedule + ",parallelize(i)");
    }
}

TEST(LoopFuseNested, SpttmSpttmBothSides) {
  // A(i,j,m) = B(i,j,k) * C(k,l) * D(l,m). loopfuse(j) is SparseLNR's fused <SpTTM, SpTTM>
  // (t_j(l) = sum_k B(i,j,k) C(k,l), then A(i,j,:) += t_j(l) D(l,:)); fused again at k,
  // a loop of its producer, or after loopfuse(i) at j, a loop of the consumer. The other
  // associativity (C*D first, T(k,m) once) is the separate kernels' precompute, here
  // with a fusion of what is left.
  std::mt19937_64 rng(4);
  for (const char* schedule : {"loopfuse(j),loopfuse(k)", "loopfuse(i),loopfuse(j)",
                               "precompute(C(k,l)*D(l,m),T),loopfuse(j)", "loopfuse(j,s),loopfuse(k,u)"})
    for (double density : {0.3, 0.0, 1.0}) {
      std::vector<Operand> in = {{"B", randomCoo({6, 5, 7}, density, rng), fmt("sss")},
                                 {"C", randomCoo({7, 4}, 0.9, rng), DenseFormat(2)},
                                 {"D", randomCoo({4, 3}, 0.9, rng), DenseFormat(2)}};
      SCOPED_TRACE(std::string(schedule) + " density " + std::to_string(density));
      expectAllThreads(kSpttm, in, DenseFormat(3), std::string(schedule) + ",parallelize(i)");
      EXPECT_TRUE(equalsPerfectNest(kSpttm, in, schedule));
    }
}

TEST(LoopFuseNested, RandomChainsAtPairsOfLoops) {
  // Chains of 4 or 5 factors, fused at every ordered pair of loops: each either matches
  // the reference or is a ScheduleError naming one of the two commands.
  std::mt19937_64 rng(5);
  const std::vector<std::string> chains = {kTriple, "A(i,m) = B(i,j) * C(j,k) * D(k,l) * E(l,m)",
                                           "A(i,l) = B(i,j) * C(i,k) * D(j,k) * E(j,l)",
                                           "A(i,m) = B(i,k,l) * C(l,j) * D(k,j) * E(j,m)"};
  const std::vector<std::string> sparse = {"ds", "ss", "dd"};
  int fused = 0, fusedSparse = 0, refused = 0;
  for (const std::string& expr : chains) {
    std::vector<Operand> in;
    std::map<char, int64_t> extent;
    for (char v : std::string("ijklm")) extent[v] = std::uniform_int_distribution<int64_t>(1, 5)(rng);
    for (const TensorUse& u : scanTensors(expr)) {
      if (u.isOutput) continue;
      std::vector<int64_t> dims;
      size_t at = expr.find(u.name + "(", expr.find('=')) + u.name.size() + 1;
      for (int m = 0; m < u.order; m++) dims.push_back(extent[expr[at + 2 * static_cast<size_t>(m)]]);
      Format f = u.order == 2 ? fmt(sparse[std::uniform_int_distribution<size_t>(0, 2)(rng)]) : fmt("sss");
      in.push_back({u.name, randomCoo(dims, 0.5, rng), f});
    }
    // A dense output at every pair; a sparse one (rows sparse, or CSR) at fewer: it fuses
    // where the loops down to the first fusion make its sparse levels.
    for (const char* out : {"dd", "sd", "ds"})
      for (const char* first : {"i", "j", "k", "l"})
        for (const char* second : {"i", "j", "k", "l", "m"}) {
          if (out != std::string("dd") && (first > std::string("j") || second == std::string("i"))) continue;
          std::string a = std::string("loopfuse(") + first + ",s)", b = std::string("loopfuse(") + second + ",u)";
          std::string s = a + "," + b;
          try {
            EXPECT_TRUE(matchesReferenceScheduled(expr, in, fmt(out),
                                                  [&](const std::vector<IndexVar>&) { return s; }, 1 + fused % 2))
                << expr << " " << s << " into A " << out;
            fused++;
            if (out != std::string("dd")) fusedSparse++;
          } catch (const ScheduleError& e) {
            std::string what = e.what();
            EXPECT_TRUE(what.find(a) != std::string::npos || what.find(b) != std::string::npos) << what;
            refused++;
          }
        }
  }
  EXPECT_GT(fused, 8);
  EXPECT_GT(fusedSparse, 10);
  EXPECT_GT(refused, 8);
}

TEST(LoopFuseNested, Rejections) {
  std::mt19937_64 rng(7);
  std::map<std::string, TensorBase> t = tensorsOf(tripleOperands(rng, 5, 6, 3, 2, 4, 0.5), "A", {5, 4});
  // Fusions nest from the outside in: j's loop holds the first fusion's where.
  expectScheduleRejected(t, kTriple, "loopfuse(j),loopfuse(i)", {"loopfuse(i)", "encloses an earlier fusion"});
  // m is the innermost loop of the consumer: nothing below it to split.
  expectScheduleRejected(t, kTriple, "loopfuse(i),loopfuse(m)", {"loopfuse(m)", "splits nothing"});
  expectScheduleRejected(t, kTriple, "loopfuse(i,s),loopfuse(j,s)", {"loopfuse(j,s)", "no earlier temporary"});
  expectScheduleRejected(t, kTriple, "loopfuse(i),loopfuse(q)", {"loopfuse(q)", "unknown index variable q"});
  // The first fusion's own error comes first.
  expectScheduleRejected(t, kTriple, "loopfuse(k),loopfuse(l)", {"loopfuse(k)", "does not enclose the sum over j"});
}

TEST(LoopFuseNested, ComposesWithLoopsOutsideTheFusion) {
  // reorder below the fusion point, split / divide / pos / fuse of loops outside it (and
  // a block loop of j between the two fusions), and parallelize of the outer shared
  // loop, before one or two fusions.
  std::mt19937_64 rng(8);
  const std::vector<Operand> pair = sddmmSpmmOperands(rng);
  for (const char* s : {"reorder(l,k),loopfuse(j),parallelize(i)", "split(i,i0,i1,4),parallelize(i0),loopfuse(j)",
                        "divide(i,i0,i1,2),parallelize(i0),loopfuse(i1)", "pos(j,jp,B),loopfuse(jp)",
                        "fuse(i,j,f),pos(f,fp,B),split(fp,p0,p1,8),parallelize(p0,cpu_thread,atomics),loopfuse(j)"}) {
    SCOPED_TRACE(s);
    expectAllThreads(kSddmmSpmm, pair, DenseFormat(2), s);
  }
  std::vector<Operand> in = tripleOperands(rng, 9, 8, 4, 3, 5, 0.4);
  for (const char* s : {"split(i,i0,i1,4),parallelize(i0),loopfuse(i1),loopfuse(j)",
                        "divide(i,i0,i1,2),loopfuse(i1),loopfuse(j),parallelize(i0)",
                        "split(j,j0,j1,2),loopfuse(i),loopfuse(j1)"}) {
    SCOPED_TRACE(s);
    expectAllThreads(kTriple, in, DenseFormat(2), s);
  }
  std::map<std::string, TensorBase> t = tensorsOf(in, "A", {9, 5});
  // l0 runs outside j in the producer of the fusion at i.
  expectScheduleRejected(t, kTriple, "split(l,l0,l1,2),reorder(i,l0,j,k,l1,m),loopfuse(i),loopfuse(j)",
                         {"loopfuse(j)", "l0 splits l", "may not cross the fusion point"});
}

TEST(LoopFuseNested, FollowsItsLoopThroughLaterCommands) {
  // A fusion (or a precompute at a loop) names a loop as the nest is when it is given;
  // a later split, divide, pos or bound renames that loop, and the fusion follows it to
  // the loop that still binds its variable (split's inner loop): the same kernel as the
  // commands in the other order. A fused loop (fuse) is fused at its inner loop.
  std::mt19937_64 rng(9);
  const std::vector<Operand> pair = sddmmSpmmOperands(rng);
  std::map<std::string, TensorBase> t = tensorsOf(pair, "A", {9, 3});
  Assignment a = parseAssignment(kSddmmSpmm, t);
  const std::vector<std::pair<std::string, std::string>> same = {
      {"loopfuse(j),split(j,j0,j1,4)", "split(j,j0,j1,4),loopfuse(j1)"},
      {"loopfuse(i),split(i,i0,i1,4),parallelize(i0)", "split(i,i0,i1,4),loopfuse(i1),parallelize(i0)"},
      {"loopfuse(i),divide(i,i0,i1,2)", "divide(i,i0,i1,2),loopfuse(i1)"},
      {"loopfuse(j),pos(j,jp,B)", "pos(j,jp,B),loopfuse(jp)"},
      {"loopfuse(i),bound(i,ib,9,max_exact)", "bound(i,ib,9,max_exact),loopfuse(ib)"},
      {"fuse(i,j,f),loopfuse(f)", "fuse(i,j,f),loopfuse(j)"},
      {"split(i,i0,i1,4),loopfuse(i0),split(i1,i2,i3,2)", "split(i,i0,i1,4),split(i1,i2,i3,2),loopfuse(i0)"},
      {"precompute(B(i,j)*C(i,k)*D(j,k),w,j),pos(j,jp,B)", "pos(j,jp,B),precompute(B(i,j)*C(i,k)*D(j,k),w,jp)"}};
  // The C code but its header's schedule line (which quotes the commands as given).
  auto kernel = [&](const std::string& s) {
    const std::string c = Kernel::emitC(a, parseSchedule(s, a));
    const size_t at = c.find("// schedule: ");
    return at == std::string::npos ? c : c.substr(0, at) + c.substr(c.find('\n', at));
  };
  for (const auto& [after, before] : same) {
    SCOPED_TRACE(after);
    const std::string x = kernel(after), y = kernel(before);
    EXPECT_TRUE(x == y) << "differs from " << before << ":\n" << x.substr(0, 600) << "\n" << y.substr(0, 600);
    expectAllThreads(kSddmmSpmm, pair, DenseFormat(2), after);
  }
  std::vector<Operand> in = tripleOperands(rng, 9, 8, 4, 3, 5, 0.4);
  for (const char* s : {"loopfuse(i),loopfuse(j),split(i,i0,i1,4),split(j,j0,j1,2)",
                        "loopfuse(i),split(i,i0,i1,4),loopfuse(j),parallelize(i0)"}) {
    SCOPED_TRACE(s);
    expectAllThreads(kTriple, in, DenseFormat(2), s);
  }
  // The loop must exist when the fusion is given: j is gone after the split.
  expectScheduleRejected(t, kSddmmSpmm, "split(j,j0,j1,4),loopfuse(j)",
                         {"loopfuse(j)", "unknown index variable j (loops now: i, j0, j1"});
}

namespace {

/// <SpTTM, SpTTM> by hand over B's entries: A(i,j,m) = sum_k,l B(i,j,k) C(k,l) D(l,m),
/// dense (C and D dense arrays, row-major), for an oracle independent of the compiler.
std::vector<double> spttmByHand(const CooData& B, const std::vector<double>& C, const std::vector<double>& D,
                                int64_t L, int64_t M) {
  std::vector<double> A(static_cast<size_t>(B.dims[0] * B.dims[1] * M));
  for (int64_t e = 0; e < B.nnz(); e++) {
    const int64_t i = B.coords[3 * e], j = B.coords[3 * e + 1], k = B.coords[3 * e + 2];
    for (int64_t l = 0; l < L; l++)
      for (int64_t m = 0; m < M; m++)
        A[static_cast<size_t>((i * B.dims[1] + j) * M + m)] += B.values[e] * C[k * L + l] * D[l * M + m];
  }
  return A;
}

/// The largest difference between got and want, relative to 1 + |want|.
double worstError(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return INFINITY;
  double worst = 0;
  for (size_t x = 0; x < got.size(); x++) worst = std::max(worst, std::abs(got[x] - want[x]) / (1 + std::abs(want[x])));
  return worst;
}

}  // namespace

TEST(LoopFuseNested, SpttmSpttmIntoASparseOutput) {
  // SparseLNR's <SpTTM, SpTTM> on real tensors needs a sparse output: A(i,j,:) exists
  // for B's fibers (i,j) only (a dense A of kg-fb15k-237 would be 14541 x 237 x M). Its
  // sparse levels are appended by the shared loops i and j, so the fusion at j (and
  // again at k) lowers; the consumer only locates m. Fused at i, the consumer would
  // have to append j: a ScheduleError that says so, as for an output gathered in a
  // workspace row (all-sparse A, whose last level follows the sums).
  std::mt19937_64 rng(14);
  const int64_t I = 6, J = 5, K = 7, L = 4, M = 3;
  for (const char* aFormat : {"ssd", "dsd"})
    for (const char* bFormat : {"sss", "dss"})
      for (double density : {0.3, 0.0, 1.0}) {
        const CooData B = randomCoo({I, J, K}, density, rng), C = randomCoo({K, L}, 0.9, rng),
                      D = randomCoo({L, M}, 0.9, rng);
        const std::vector<double> want = spttmByHand(B, denseArray(C), denseArray(D), L, M);
        std::set<std::pair<int64_t, int64_t>> fibers;  // B's (i,j): A's stored rows
        for (int64_t e = 0; e < B.nnz(); e++) fibers.insert({B.coords[3 * e], B.coords[3 * e + 1]});
        for (std::string schedule : {"loopfuse(j)", "loopfuse(j),loopfuse(k)", "loopfuse(j,s),loopfuse(k,u)", ""}) {
          // A CSR-like output (dense first level) appends rows in parallel.
          if (aFormat == std::string("dsd") && !schedule.empty()) schedule += ",parallelize(i)";
          for (int threads : {1, 2, 4}) {
            SCOPED_TRACE(std::string("A ") + aFormat + ", B " + bFormat + ", density " + std::to_string(density) +
                         ", " + schedule + ", " + std::to_string(threads) + " threads");
            std::map<std::string, TensorBase> t = {{"B", makeTensor("B", B, fmt(bFormat))},
                                                   {"C", makeTensor("C", C, fmt("dd"))},
                                                   {"D", makeTensor("D", D, fmt("dd"))},
                                                   {"A", TensorBase("A", Datatype::Float64, {I, J, M}, fmt(aFormat))}};
            Assignment a = parseAssignment(kSpttm, t);
            Kernel::compile(a, parseSchedule(schedule, a))->run(a, threads);
            EXPECT_EQ(storageProblem(t.at("A")), "");
            EXPECT_LT(worstError(denseArray(t.at("A").toCoo()), want), 1e-12);
            // Stored: exactly B's fibers (i,j), each with its M values.
            EXPECT_EQ(t.at("A").storedCount(), M * static_cast<int64_t>(fibers.size()));
          }
        }
      }
  std::map<std::string, TensorBase> t = {{"B", makeTensor("B", randomCoo({I, J, K}, 0.3, rng), fmt("sss"))},
                                         {"C", makeTensor("C", randomCoo({K, L}, 1, rng), fmt("dd"))},
                                         {"D", makeTensor("D", randomCoo({L, M}, 1, rng), fmt("dd"))},
                                         {"A", TensorBase("A", Datatype::Float64, {I, J, M}, fmt("ssd"))}};
  expectScheduleRejected(t, kSpttm, "loopfuse(i)",
                         {"loopfuse(i,t_i)", "A (ssd) stores level 1 (j) sparse", "fuse at j or below"});
  t["A"] = TensorBase("A", Datatype::Float64, {I, J, M}, fmt("sss"));
  expectScheduleRejected(t, kSpttm, "loopfuse(j)", {"loopfuse(j,t_j)", "A (sss) is gathered in a workspace row"});
}

TEST(LoopFuseNested, SpttmSpttmIntoASparseOutputOnRealTensors) {
  // The knowledge-graph tensors, A sparse (ssd: its entries B's fibers; dsd: CSR-like
  // rows), fused at j and as tessel chooses, against a hand loop over B's entries. The
  // choice is the other associativity: T(k,m) = C(k,l) * D(l,m) for every k once (K x L
  // x M multiplies), then one SpTTM, nnz x M; fused at j: nnz x L + fibers x L x M.
  const std::string dir = dataDir();
  if (dir.empty()) GTEST_SKIP() << "../shared/data not present";
  std::mt19937_64 rng(15);
  for (const char* name : {"kg-nations.tns", "kg-umls.tns"}) {
    const CooData B = readTensorFile(dir + "/tensors/" + name).data;
    const int64_t L = 32, M = 64;
    const CooData C = randomCoo({B.dims[2], L}, 1, rng), D = randomCoo({L, M}, 1, rng);
    const std::vector<double> want = spttmByHand(B, denseArray(C), denseArray(D), L, M);
    for (const char* aFormat : {"ssd", "dsd"})
      for (int threads : {1, 2}) {
        SCOPED_TRACE(std::string(name) + ", A " + aFormat + ", " + std::to_string(threads) + " threads");
        std::map<std::string, TensorBase> t = {
            {"B", makeTensor("B", B, fmt("sss"))},
            {"C", makeTensor("C", C, fmt("dd"))},
            {"D", makeTensor("D", D, fmt("dd"))},
            {"A", TensorBase("A", Datatype::Float64, {B.dims[0], B.dims[1], M}, fmt(aFormat))}};
        Assignment a = parseAssignment(kSpttm, t);
        const ScheduleChoice c = defaultSchedule(a, threads);
        EXPECT_EQ(c.reason.rfind("separate kernels: T = C(k,l) * D(l,m) (dense", 0), 0u) << c.reason;
        for (const Schedule& schedule : {c.schedule, parseSchedule("loopfuse(j)", a)}) {
          Kernel::compile(a, schedule)->run(a, c.threads);
          EXPECT_EQ(storageProblem(t.at("A")), "");
          EXPECT_LT(worstError(denseArray(t.at("A").toCoo()), want), 1e-12) << schedule.str();
        }
      }
  }
}

TEST(LoopFuseNested, AutomaticChoiceFusesIntoASparseOutput) {
  // A long third mode and few fibers (i,j): T(k,m) = C * D would cost K x L x M, more
  // than the fused nest's nnz x L + fibers x L x M, so tessel fuses at j. On 2 threads
  // rows run in blocks in parallel where A's first level is dense (dsd); A ssd appends
  // its rows in order, so it runs on one thread, rows as they are.
  std::mt19937_64 rng(16);
  const int64_t I = 200, J = 100, K = 20000, L = 32, M = 32;
  // 600 fibers (i,j) of 8 entries: a dense T(i,j,l) = B * C would be I x J x L, its
  // consumer every (i,j).
  CooData B;
  B.dims = {I, J, K};
  std::set<std::vector<int64_t>> at;
  while (at.size() < 600 * 8) {
    const int64_t f = static_cast<int64_t>(at.size() / 8) * 61 % (I * J);  // fiber (i,j)
    at.insert({f / J, f % J, static_cast<int64_t>(rng() % K)});
  }
  for (const auto& c : at) B.add(c, static_cast<double>(rng() % 9) - 4);
  const CooData C = randomCoo({K, L}, 1, rng), D = randomCoo({L, M}, 1, rng);
  const std::vector<double> want = spttmByHand(B, denseArray(C), denseArray(D), L, M);
  for (const char* aFormat : {"ssd", "dsd"})
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::string("A ") + aFormat + ", " + std::to_string(threads) + " threads");
      std::map<std::string, TensorBase> t = {{"B", makeTensor("B", B, fmt("sss"))},
                                             {"C", makeTensor("C", C, fmt("dd"))},
                                             {"D", makeTensor("D", D, fmt("dd"))},
                                             {"A", TensorBase("A", Datatype::Float64, {I, J, M}, fmt(aFormat))}};
      Assignment a = parseAssignment(kSpttm, t);
      const ScheduleChoice c = defaultSchedule(a, threads);
      const std::string s = c.schedule.str();
      EXPECT_EQ(c.reason.rfind("fused at j (loopfuse)", 0), 0u) << s << "\n" << c.reason;
      const bool rows = aFormat == std::string("dsd");
      if (threads == 2) {
        EXPECT_EQ(c.threads, rows ? 2 : 1) << c.reason;
        EXPECT_NE(c.reason.find(rows ? "; blocks of rows in parallel" : "; one thread (no parallel schedule of it lowers)"),
                  std::string::npos) << c.reason;
      }
      if (threads == 1 || !rows) EXPECT_EQ(s, "loopfuse(j)") << c.reason;  // no row blocks without threads for them
      Kernel::compile(a, c.schedule)->run(a, c.threads);
      EXPECT_EQ(storageProblem(t.at("A")), "");
      EXPECT_LT(worstError(denseArray(t.at("A").toCoo()), want), 1e-12);
    }
}
