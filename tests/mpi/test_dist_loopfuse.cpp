// loopfuse in distributed schedules under mpirun (ctest MPI.loopfuse.npN, 1-4 ranks): the
// leaf kernel is SparseLNR's fused nest, and the distributed fused results equal the
// single-node fused and perfect nests and plain loops written here. <SDDMM, SpMM>,
// <SpMM, GEMM>, <SDDMM, SpMM, GEMM> (two fusions) and a dense chain; sparse B by rows
// (xy->x), by rows of about equal non-zeros (xy->~x) and by non-zeros ((xy)->~f); loopfuse
// before and after distribute; degenerate shapes (empty rows, more ranks than rows,
// extent 1); ca-GrQc from the shared data when present; the rejections.
//
// Exactness: small integer values make every sum exact in any order, so those cases
// compare with ==. With real values a row computed whole by one rank (xy->x, xy->~x)
// runs the same leaf loops as one node, in the same order: == as well. Under (xy)->~f
// a row split between ranks is summed in two parts, then added (and the perfect nest
// and plain loops sum in another order): a relative tolerance of 1e-12 there.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "support/test_support.h"
#include "tessel/distributed.h"
#include "tessel/error.h"
#include "tessel/io.h"
#include "tessel/kernel.h"
#include "tessel/parser.h"
#include "tessel/syntax.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

const std::string kSddmmSpmm = "A(i,l) = B(i,j) * C(i,k) * D(j,k) * E(j,l)";
const std::string kSpmmGemm = "A(i,m) = B(i,j) * C(j,l) * D(l,m)";
const std::string kThree = "A(i,m) = B(i,j) * C(i,k) * D(j,k) * E(j,l) * F(l,m)";

using Dense = std::vector<double>;  // row-major

struct In {
  std::string name;
  CooData data;
  bool sparse = false;
  std::string dist = "xy->*";  // replicated unless said otherwise
};

int P() { return worldSize(); }

Dense toDense(const CooData& c) {
  int64_t n = 1;
  for (int64_t d : c.dims) n *= d;
  Dense out(static_cast<size_t>(n), 0.0);
  const size_t order = c.dims.size();
  for (int64_t e = 0; e < c.nnz(); e++) {
    int64_t at = 0;
    for (size_t m = 0; m < order; m++) at = at * c.dims[m] + c.coords[static_cast<size_t>(e) * order + m];
    out[static_cast<size_t>(at)] += c.values[static_cast<size_t>(e)];
  }
  return out;
}

/// A's dims: its variables' extents from the operands.
std::vector<int64_t> outDims(const std::string& expr, const std::vector<In>& in) {
  std::map<char, int64_t> ext;
  const size_t eq = expr.find('=');
  for (const In& x : in) {
    const size_t at = expr.find(x.name + "(", eq) + x.name.size() + 1;
    for (size_t m = 0; m < x.data.dims.size(); m++) ext[expr[at + 2 * m]] = x.data.dims[m];
  }
  return {ext.at(expr[2]), ext.at(expr[4])};
}

/// The distributed result, gathered on rank 0 (empty on the others). Collective.
Dense distRun(const std::string& expr, const std::vector<In>& in, const std::string& outDist,
              const std::string& schedule, int threads = 1, std::string* emitted = nullptr) {
  Grid g(P());
  std::vector<DistTensor> ts;
  ts.emplace_back("A", outDims(expr, in), outDist, g);
  for (const In& x : in) {
    DistTensor t = x.sparse ? DistTensor(x.name, x.data.dims, x.dist, g, Format::parse("ds"))
                            : DistTensor(x.name, x.data.dims, x.dist, g);
    t.setFromCoo(x.data);
    ts.push_back(t);
  }
  auto k = DistributedKernel::compile(expr, ts, Machine{g, threads}, schedule);
  if (emitted) *emitted = k->emit();
  k->run(ts);
  CooData all = ts[0].gather();
  return worldRank() == 0 ? toDense(all) : Dense{};
}

/// One node (no MPI involved): the kernel under `schedule` ("" for the perfect nest).
Dense singleRun(const std::string& expr, const std::vector<In>& in, const std::string& schedule) {
  std::map<std::string, TensorBase> t;
  for (const In& x : in)
    t.emplace(x.name, makeTensor(x.name, x.data, Format::parse(x.sparse ? "ds" : std::string(x.data.dims.size(), 'd'))));
  TensorBase A("A", Datatype::Float64, outDims(expr, in), DenseFormat(2));
  t.emplace("A", A);
  Assignment a = parseAssignment(expr, t);
  Kernel::compile(a, parseSchedule(schedule, a))->run(a, 1);
  return toDense(A.toCoo());
}

void expectEqual(const Dense& got, const Dense& want, const std::string& what) {
  if (worldRank() != 0) return;
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t e = 0; e < got.size(); e++) ASSERT_EQ(got[e], want[e]) << what << " at " << e;
}

void expectNear(const Dense& got, const Dense& want, const std::string& what, double rel = 1e-12) {
  if (worldRank() != 0) return;
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 0;
  for (double w : want) scale = std::max(scale, std::fabs(w));
  for (size_t e = 0; e < got.size(); e++)
    ASSERT_LE(std::fabs(got[e] - want[e]), rel * std::max(scale, 1.0)) << what << " at " << e;
}

// Plain loops over B's entries and dense C, D, E, F (row-major), written here.
double at(const CooData& x, int64_t r, int64_t c) {  // dense factor x(r, c)
  return x.values[static_cast<size_t>(r * x.dims[1] + c)];
}
CooData dense(std::vector<int64_t> dims, std::mt19937_64& rng, bool integers) {
  CooData c;
  c.dims = dims;
  std::uniform_int_distribution<int> small(-3, 3);
  std::uniform_real_distribution<double> real(-1, 1);
  for (int64_t r = 0; r < dims[0]; r++)
    for (int64_t s = 0; s < dims[1]; s++) c.add({r, s}, integers ? small(rng) : real(rng));
  return c;
}
/// <SDDMM, SpMM>: A(i,l) = sum_j B(i,j) (sum_k C(i,k) D(j,k)) E(j,l).
Dense handSddmmSpmm(const CooData& B, const CooData& C, const CooData& D, const CooData& E) {
  const int64_t L = E.dims[1], K = C.dims[1];
  Dense A(static_cast<size_t>(B.dims[0] * L), 0.0);
  for (int64_t e = 0; e < B.nnz(); e++) {
    const int64_t i = B.coords[2 * e], j = B.coords[2 * e + 1];
    double t = 0;
    for (int64_t k = 0; k < K; k++) t += at(C, i, k) * at(D, j, k);
    for (int64_t l = 0; l < L; l++) A[static_cast<size_t>(i * L + l)] += B.values[e] * t * at(E, j, l);
  }
  return A;
}
/// <SpMM, GEMM>: A(i,m) = sum_l (sum_j B(i,j) C(j,l)) D(l,m).
Dense handSpmmGemm(const CooData& B, const CooData& C, const CooData& D) {
  const int64_t L = C.dims[1], M = D.dims[1];
  std::vector<Dense> t(static_cast<size_t>(B.dims[0]), Dense(static_cast<size_t>(L), 0.0));
  for (int64_t e = 0; e < B.nnz(); e++)
    for (int64_t l = 0; l < L; l++) t[B.coords[2 * e]][l] += B.values[e] * at(C, B.coords[2 * e + 1], l);
  Dense A(static_cast<size_t>(B.dims[0] * M), 0.0);
  for (int64_t i = 0; i < B.dims[0]; i++)
    for (int64_t l = 0; l < L; l++)
      for (int64_t m = 0; m < M; m++) A[static_cast<size_t>(i * M + m)] += t[i][l] * at(D, l, m);
  return A;
}
/// <SDDMM, SpMM, GEMM>: the SDDMM-SpMM's rows times F.
Dense handThree(const CooData& B, const CooData& C, const CooData& D, const CooData& E, const CooData& F) {
  Dense R = handSddmmSpmm(B, C, D, E);
  const int64_t L = F.dims[0], M = F.dims[1];
  Dense A(static_cast<size_t>(B.dims[0] * M), 0.0);
  for (int64_t i = 0; i < B.dims[0]; i++)
    for (int64_t l = 0; l < L; l++)
      for (int64_t m = 0; m < M; m++) A[static_cast<size_t>(i * M + m)] += R[static_cast<size_t>(i * L + l)] * at(F, l, m);
  return A;
}

/// B's three placements with their schedules, fused by `fusion` (placed after distribute,
/// and once before it for rows). A is by rows, or replicated when rows may be split.
struct Way {
  std::string bDist, aDist, schedule;
  bool rowsWhole;  ///< every row computed by one rank
};
/// After the split of i, a fusion at i names the loop that carries i: ii, or fi.
std::string renamedI(const std::string& fusion, const std::string& to) {
  return fusion == "loopfuse(i)" ? "loopfuse(" + to + ")" : fusion;
}
std::vector<Way> ways(const std::string& fusion, const std::string& reorderForNnz, const std::string& tensors) {
  const std::string p = std::to_string(P());
  return {
      {"xy->x", "xy->x", "distribute({i},{io},{ii})," + renamedI(fusion, "ii"), true},
      {"xy->x", "xy->x", fusion + ",distribute({i},{io},{ii})", true},
      {"xy->x", "xy->x", fusion, true},  // the default owner-computes schedule, fused
      {"xy->~x", "xy->x",
       "divide(i,io,ii," + p + "),distribute(io),communicate({" + tensors + "},io)," + renamedI(fusion, "ii"), true},
      {"(xy)->~f", "xy->*",
       reorderForNnz + "fuse(i,j,f),pos(f,fp,B),divide(fp,fo,fi," + p + "),distribute(fo),communicate({" + tensors +
           "},fo)," + renamedI(fusion, "fi"),
       false},
      {"(xy)->~f", "xy->*",
       fusion + "," + reorderForNnz + "fuse(i,j,f),pos(f,fp,B),divide(fp,fo,fi," + p + "),distribute(fo),communicate({" +
           tensors + "},fo)",
       false},
  };
}

/// Every way against `hand` (exactly when `exact` or the rows are whole) and against one
/// node's fused and perfect nests.
void checkEveryWay(const std::string& expr, std::vector<In> in, const std::string& fusion, const std::string& reorder,
                   const std::string& tensors, const Dense& hand, bool exact) {
  const Dense fused = singleRun(expr, in, fusion), perfect = singleRun(expr, in, "");
  if (exact) expectEqual(fused, hand, "one node, fused");
  expectNear(fused, hand, "one node, fused");
  for (const Way& w : ways(fusion, reorder, tensors)) {
    SCOPED_TRACE("B:" + w.bDist + " -s " + w.schedule);
    in[0].dist = w.bDist;
    const Dense got = distRun(expr, in, w.aDist, w.schedule);
    if (exact) expectEqual(got, hand, "distributed vs plain loops");
    if (exact || w.rowsWhole) expectEqual(got, fused, "distributed vs one node fused");
    expectNear(got, fused, "distributed vs one node fused");
    expectNear(got, perfect, "distributed vs one node perfect nest");
    expectNear(got, hand, "distributed vs plain loops");
  }
}

std::vector<In> sddmmSpmmInputs(const CooData& B, int64_t K, int64_t L, std::mt19937_64& rng, bool integers) {
  return {{"B", B, true}, {"C", dense({B.dims[0], K}, rng, integers)}, {"D", dense({B.dims[1], K}, rng, integers)},
          {"E", dense({B.dims[1], L}, rng, integers)}};
}

void checkSddmmSpmm(const CooData& B, int64_t K, int64_t L, std::mt19937_64& rng, bool integers) {
  std::vector<In> in = sddmmSpmmInputs(B, K, L, rng, integers);
  checkEveryWay(kSddmmSpmm, in, "loopfuse(j)", "reorder(i,j,l,k),", "A,B,C,D,E",
                handSddmmSpmm(in[0].data, in[1].data, in[2].data, in[3].data), integers);
}

void checkSpmmGemm(const CooData& B, int64_t L, int64_t M, std::mt19937_64& rng, bool integers) {
  std::vector<In> in{{"B", B, true}, {"C", dense({B.dims[1], L}, rng, integers)}, {"D", dense({L, M}, rng, integers)}};
  checkEveryWay(kSpmmGemm, in, "loopfuse(i)", "reorder(i,j,m,l),", "A,B,C,D",
                handSpmmGemm(in[0].data, in[1].data, in[2].data), integers);
}

/// B with `m` x `n` entries of density `d` (small integers or reals), rows listed empty.
CooData sparseB(int64_t m, int64_t n, double d, std::mt19937_64& rng, bool integers, std::vector<int64_t> emptyRows = {}) {
  CooData r = randomCoo({m, n}, d, rng, false, integers);
  CooData out;
  out.dims = r.dims;
  for (int64_t e = 0; e < r.nnz(); e++) {
    const int64_t i = r.coords[2 * e];
    if (std::find(emptyRows.begin(), emptyRows.end(), i) == emptyRows.end())
      out.add({i, r.coords[2 * e + 1]}, r.values[e]);
  }
  return out;
}

TEST(DistLoopFuse, SddmmSpmmAtBlocksKeepsTheTemporaryAtBsPositions) {
  // <SDDMM, SpMM> fused at blocks of each rank's rows: the leaf's temporary lives at its
  // piece of B's positions (CSR); equal to plain loops (exactly, on integers) and to one
  // node's fused nest, for B's rows in blocks and of about equal non-zeros.
  std::mt19937_64 rng(23);
  for (bool integers : {true, false}) {
    CooData B = sparseB(31, 13, 0.3, rng, integers, {0, 5, 30});
    std::vector<In> in = sddmmSpmmInputs(B, 3, 2, rng, integers);
    const Dense hand = handSddmmSpmm(in[0].data, in[1].data, in[2].data, in[3].data);
    const Dense fused = singleRun(kSddmmSpmm, in, "split(i,i0,i1,4),loopfuse(i0)");
    const std::string p = std::to_string(P());
    for (const auto& [bDist, schedule] : std::vector<std::pair<std::string, std::string>>{
             {"xy->x", "distribute({i},{io},{ii}),split(ii,ib,iw,4),loopfuse(ib)"},
             {"xy->~x", "divide(i,io,ii," + p + "),distribute(io),communicate({A,B,C,D,E},io),split(ii,ib,iw,4),loopfuse(ib)"}}) {
      in[0].dist = bDist;
      std::string leaf;
      const Dense got = distRun(kSddmmSpmm, in, "xy->x", schedule, 1, &leaf);
      SCOPED_TRACE("B:" + bDist + " -s " + schedule);
      EXPECT_NE(leaf.find("at B's positions"), std::string::npos) << leaf;
      if (integers) {
        expectEqual(got, hand, "distributed vs plain loops");
        expectEqual(fused, hand, "one node at blocks vs plain loops");
      }
      expectNear(got, hand, "distributed vs plain loops");
    }
  }
}

TEST(DistLoopFuse, SddmmSpmmByHand) {
  // 5 x 4 with row 2 empty, and k = 2, l = 3: small integers, so every sum is exact.
  CooData B = entries({5, 4}, {{{0, 0}, 2}, {{0, 3}, -1}, {{1, 1}, 3}, {{3, 0}, 1}, {{3, 2}, 4}, {{4, 3}, -2}});
  std::mt19937_64 rng(7);
  std::vector<In> in = sddmmSpmmInputs(B, 2, 3, rng, true);
  // One entry worked out: A(0,0) = B(0,0) (C(0,:).D(0,:)) E(0,0) + B(0,3) (C(0,:).D(3,:)) E(3,0).
  const Dense hand = handSddmmSpmm(in[0].data, in[1].data, in[2].data, in[3].data);
  const auto& C = in[1].data;
  const auto& D = in[2].data;
  const auto& E = in[3].data;
  const double a00 = 2 * (at(C, 0, 0) * at(D, 0, 0) + at(C, 0, 1) * at(D, 0, 1)) * at(E, 0, 0) -
                     1 * (at(C, 0, 0) * at(D, 3, 0) + at(C, 0, 1) * at(D, 3, 1)) * at(E, 3, 0);
  EXPECT_EQ(hand[0], a00);
  for (int l = 0; l < 3; l++) EXPECT_EQ(hand[static_cast<size_t>(2 * 3 + l)], 0.0);  // the empty row
  checkSddmmSpmm(B, 2, 3, rng, true);
}

TEST(DistLoopFuse, LeafIsTheFusedNest) {
  std::mt19937_64 rng(3);
  std::vector<In> in = sddmmSpmmInputs(sparseB(12, 9, 0.3, rng, true), 3, 2, rng, true);
  in[0].dist = "xy->x";
  std::string fused, after, perfect;
  distRun(kSddmmSpmm, in, "xy->x", "loopfuse(j),distribute({i},{io},{ii})", 1, &fused);
  distRun(kSddmmSpmm, in, "xy->x", "distribute({i},{io},{ii}),loopfuse(j,tj)", 1, &after);
  distRun(kSddmmSpmm, in, "xy->x", "distribute({i},{io},{ii})", 1, &perfect);
  // The leaf's concrete index notation: the imperfect nest with its scalar temporary.
  EXPECT_NE(fused.find("schedule: loopfuse(j)"), std::string::npos) << fused;
  EXPECT_NE(fused.find("forall(i, forall(j, where(forall(l, A(i,l) = E(j,l) * t_j), forall(k, t_j += B(i,j) * C(i,k) * "
                       "D(j,k)))))"),
            std::string::npos)
      << fused;
  EXPECT_NE(after.find("where(forall(l, A(i,l) = E(j,l) * tj)"), std::string::npos) << after;
  EXPECT_EQ(perfect.find("where("), std::string::npos) << perfect;
  // A fusion at i given before distribute follows i into the leaf (ii there is i).
  std::string atI;
  std::vector<In> g{in[0], {"C", dense({9, 4}, rng, true)}, {"D", dense({4, 3}, rng, true)}};
  distRun(kSpmmGemm, g, "xy->x", "loopfuse(i),distribute({i},{io},{ii})", 1, &atI);
  EXPECT_NE(atI.find("forall(i, where("), std::string::npos) << atI;
}

TEST(DistLoopFuse, SddmmSpmmRandomReals) {
  std::mt19937_64 rng(11);
  checkSddmmSpmm(sparseB(37, 29, 0.2, rng, false, {0, 5, 6, 7, 36}), 5, 4, rng, false);
}

TEST(DistLoopFuse, SpmmGemm) {
  std::mt19937_64 rng(5);
  checkSpmmGemm(sparseB(23, 17, 0.25, rng, true, {1, 2, 22}), 4, 3, rng, true);
  checkSpmmGemm(sparseB(31, 19, 0.2, rng, false), 5, 6, rng, false);
}

TEST(DistLoopFuse, TwoFusions) {
  std::mt19937_64 rng(13);
  for (bool integers : {true, false}) {
    CooData B = sparseB(19, 14, 0.3, rng, integers, {3, 4});
    std::vector<In> in = sddmmSpmmInputs(B, 3, 4, rng, integers);
    in.push_back({"F", dense({4, 2}, rng, integers)});
    const Dense hand = handThree(in[0].data, in[1].data, in[2].data, in[3].data, in[4].data);
    const Dense fused = singleRun(kThree, in, "loopfuse(i),loopfuse(j)");
    in[0].dist = "xy->x";
    for (const char* s : {"distribute({i},{io},{ii}),loopfuse(ii),loopfuse(j)",
                          "loopfuse(i),distribute({i},{io},{ii}),loopfuse(j)", "loopfuse(i),loopfuse(j)"}) {
      SCOPED_TRACE(s);
      std::string leaf;
      const Dense got = distRun(kThree, in, "xy->x", s, 1, &leaf);
      EXPECT_NE(leaf.find("schedule: loopfuse(i),loopfuse(j)"), std::string::npos) << leaf;
      expectEqual(got, fused, "distributed vs one node fused (rows whole)");
      if (integers) expectEqual(got, hand, "distributed vs plain loops");
      expectNear(got, hand, "distributed vs plain loops");
    }
  }
}

TEST(DistLoopFuse, FusedAtBlocksOfTheLeafsRows) {
  // The leaf fused at blocks of its rows (split of ii, loopfuse at the block loop): each
  // rank's temporary holds one block; equal to one node's fused nest and plain loops.
  std::mt19937_64 rng(19);
  for (bool integers : {true, false}) {
    CooData B = sparseB(29, 17, 0.25, rng, integers, {0, 4, 28});
    std::vector<In> in = {{"B", B, true, "xy->x"}, {"C", dense({17, 4}, rng, integers)}, {"D", dense({4, 3}, rng, integers)}};
    const Dense hand = handSpmmGemm(B, in[1].data, in[2].data);
    const Dense fused = singleRun(kSpmmGemm, in, "split(i,i0,i1,3),loopfuse(i0)");
    for (const char* s : {"distribute({i},{io},{ii}),split(ii,ib,iw,3),loopfuse(ib)",
                          "distribute({i},{io},{ii}),divide(ii,ib,iw,2),loopfuse(ib)"}) {
      SCOPED_TRACE(s);
      std::string leaf;
      const Dense got = distRun(kSpmmGemm, in, "xy->x", s, 1, &leaf);
      EXPECT_NE(leaf.find("loopfuse(ib)"), std::string::npos) << leaf;
      if (integers) {
        expectEqual(got, hand, "distributed vs plain loops");
        expectEqual(fused, hand, "one node at blocks vs plain loops");
      }
      expectNear(got, hand, "distributed vs plain loops");
    }
  }
}

TEST(DistLoopFuse, DenseChainAndStepLoops) {
  // A dense <GEMM, GEMM> fused at i, by rows; then j (summed in the producer) divided
  // into steps above the leaf: each step's leaf sums its block of j into the row
  // temporary, and the output adds the steps (exact: integers).
  std::mt19937_64 rng(17);
  const CooData B = dense({13, 10}, rng, true), C = dense({10, 4}, rng, true), D = dense({4, 5}, rng, true);
  std::vector<In> in{{"B", B, false, "xy->x"}, {"C", C}, {"D", D}};
  CooData Bs;  // the same as a sparse operand for the plain loops
  Bs.dims = B.dims;
  for (int64_t e = 0; e < B.nnz(); e++) Bs.add({B.coords[2 * e], B.coords[2 * e + 1]}, B.values[e]);
  const Dense hand = handSpmmGemm(Bs, C, D);
  for (const char* s : {"loopfuse(i)", "distribute({i},{io},{ii}),loopfuse(ii)",
                        "distribute({i},{io},{ii}),divide(j,ja,jb,3),reorder(io,ja,ii,jb,l,m),communicate({A,B,C},ja),"
                        "loopfuse(ii)",
                        "distribute({i},{io},{ii}),divide(ii,ia,ib,2),communicate({A,B},ia),loopfuse(ib)",
                        // given first, the fusion follows i through both splits to ib
                        "loopfuse(i),distribute({i},{io},{ii}),divide(ii,ia,ib,2),communicate({A,B},ia)"}) {
    SCOPED_TRACE(s);
    expectEqual(distRun(kSpmmGemm, in, "xy->x", s), hand, "distributed vs plain loops");
  }
  expectEqual(singleRun(kSpmmGemm, in, "loopfuse(i)"), hand, "one node");
}

TEST(DistLoopFuse, ThreadsInTheLeaf) {
  std::mt19937_64 rng(19);
  std::vector<In> in = sddmmSpmmInputs(sparseB(40, 30, 0.2, rng, false), 4, 3, rng, false);
  const Dense fused = singleRun(kSddmmSpmm, in, "loopfuse(j)");
  in[0].dist = "xy->x";
  std::string leaf;
  const Dense got = distRun(kSddmmSpmm, in, "xy->x", "distribute({i},{io},{ii}),loopfuse(j)", 2, &leaf);
  EXPECT_NE(leaf.find("where("), std::string::npos);
  expectEqual(got, fused, "two threads per rank (rows in blocks, each row whole)");
}

TEST(DistLoopFuse, DegenerateShapes) {
  std::mt19937_64 rng(23);
  // More ranks than rows (1 and 2 rows), extent 1 everywhere, no entries at all, rows
  // empty on whole ranks' blocks.
  checkSddmmSpmm(sparseB(1, 3, 0.7, rng, true), 2, 2, rng, true);
  checkSddmmSpmm(entries({2, 2}, {{{1, 0}, 3}}), 1, 1, rng, true);
  checkSddmmSpmm(entries({1, 1}, {{{0, 0}, -2}}), 1, 1, rng, true);
  checkSddmmSpmm(entries({6, 4}, {}), 2, 3, rng, true);
  checkSddmmSpmm(sparseB(8, 5, 0.5, rng, true, {0, 1, 2, 3, 4}), 3, 1, rng, true);
  checkSpmmGemm(entries({3, 1}, {{{2, 0}, 5}}), 1, 1, rng, true);
}

TEST(DistLoopFuse, SharedMatrix) {
  const std::string path = std::string(TESSEL_DATA_DIR) + "/matrices/ca-GrQc.mtx";
  if (std::FILE* f = std::fopen(path.c_str(), "r")) {
    std::fclose(f);
  } else {
    GTEST_SKIP() << path << " is absent";
  }
  CooData B = readTensorFile(path).data;
  std::mt19937_64 rng(29);
  std::uniform_real_distribution<double> real(0.5, 1.5);
  for (double& v : B.values) v = real(rng);  // real weights: the rows-whole claim is tested
  checkSddmmSpmm(B, 8, 4, rng, false);
}

void expectRejected(const std::string& expr, const std::vector<In>& in, const std::string& schedule,
                    const std::vector<std::string>& parts) {
  SCOPED_TRACE(schedule);
  try {
    distRun(expr, in, "xy->x", schedule);
    ADD_FAILURE() << "accepted";
  } catch (const ScheduleError& e) {
    for (const std::string& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST(DistLoopFuse, Rejections) {
  std::mt19937_64 rng(31);
  std::vector<In> in = sddmmSpmmInputs(sparseB(10, 8, 0.3, rng, true), 2, 2, rng, true);
  in[0].dist = "xy->x";
  const std::string d = "distribute({i},{io},{ii}),";
  expectRejected(kSddmmSpmm, in, d + "loopfuse(io)",
                 {"schedule command loopfuse(io)", "io is distributed", "runs above the leaf"});
  expectRejected(kSddmmSpmm, in, d + "loopfuse(q)", {"schedule command loopfuse(q)", "'q' is not a loop here"});
  expectRejected(kSddmmSpmm, in, d + "loopfuse(i)", {"schedule command loopfuse(i)", "'i' is not a loop here"});
  expectRejected(kSddmmSpmm, in, d + "loopfuse()", {"schedule command loopfuse()", "expected loopfuse(at)"});
  expectRejected(kSddmmSpmm, in, d + "loopfuse(j,t,u)", {"expected loopfuse(at) or loopfuse(at,temporary)"});
  // A loop above the leaf because a tensor is communicated at it (a step loop).
  expectRejected(kSddmmSpmm, in, d + "divide(ii,ia,ib,2),communicate({A,B,C},ia),loopfuse(ia)",
                 {"schedule command loopfuse(ia)", "ia is a step loop", "runs above the leaf"});
  expectRejected(kSddmmSpmm, in, "loopfuse(ii),distribute({i},{io},{ii})", {"'ii' is not a loop here"});
  // Given before a rotate that puts its loop above the leaf: named as it became.
  std::vector<In> g{{"B", dense({8, 6}, rng, true), false, "xy->x"}, {"C", dense({6, 3}, rng, true)},
                    {"D", dense({3, 2}, rng, true)}};
  expectRejected(kSpmmGemm, g,
                 d + "divide(j,jo,jb,2),reorder(io,jo,ii,jb,l,m),loopfuse(jo),rotate(jo,{io},jr),communicate(A,io),"
                     "communicate({B,C},jr)",
                 {"schedule command loopfuse(jo)", "loop jr (what jo became) is a step loop", "runs above the leaf"});
  // The leaf's own rules, with the leaf named and its loop names explained.
  expectRejected(kSddmmSpmm, in, d + "loopfuse(k)",
                 {"schedule command loopfuse(k)", "splits nothing", "in the leaf kernel", "ii is i"});
  expectRejected(kSddmmSpmm, in, d + "loopfuse(j),loopfuse(ii)",
                 {"schedule command loopfuse(i)", "fusions nest from the outside in", "where ii is i"});
  expectRejected(kSddmmSpmm, in, d + "loopfuse(j,B)", {"the temporary needs a name"});
  expectRejected(kSddmmSpmm, in, "distribute({i},{io},{ii}),loopfuse(j),substitute({ii,l,j,k},blas)",
                 {"BLAS replaces the leaf, so loopfuse(j) has nothing to schedule"});
}

}  // namespace
