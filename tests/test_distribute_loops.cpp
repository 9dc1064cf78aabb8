// The distributed lowering (lower/distribute_loops): schedules of DISTAL Figure 9 as SPMD
// programs (printed, and their loops, splits, rotations and communication levels), the
// owner-computes default schedule, and the errors of bad distributed schedules. Programs
// for any grid are built without ranks; the runs here are on the one rank a process
// without a launcher is (the MPI runs are the MPI.* tests).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "lower/distribute_loops.h"
#include "runtime/spmd/program.h"
#include "tessel/distributed.h"
#include "tessel/error.h"
#include "tessel/syntax.h"

using namespace tessel;

namespace {

const char* kSumma =
    "distribute({i,j},{io,jo},{ii,ji}),split(k,ko,ki,256),reorder(ko,ii,ji,ki),communicate(A,jo),"
    "communicate({B,C},ko)";
const char* kCannon =
    "distribute({i,j},{io,jo},{ii,ji}),divide(k,ko,ki,2),reorder(ko,ii,ji,ki),rotate(ko,{io,jo},kos),"
    "communicate(A,jo),communicate({B,C},kos)";
const char* kJohnson = "distribute({i,j,k},{io,jo,ko},{ii,ji,ki}),communicate({A,B,C},ko)";

/// The assignment over dense tensor variables: every dimension `n`, or as `dims` says.
Assignment assignment(const std::string& expr, int64_t n = 8, const std::map<std::string, std::vector<int64_t>>& dims = {}) {
  std::map<std::string, TensorVar> vars;
  for (const TensorUse& u : scanTensors(expr)) {
    std::vector<int64_t> d = dims.count(u.name) ? dims.at(u.name) : std::vector<int64_t>(static_cast<size_t>(u.order), n);
    vars.emplace(u.name, TensorVar(u.name, Datatype::Float64, d, DenseFormat(u.order)));
  }
  return parseAssignment(expr, vars);
}

std::map<std::string, lower::Placement> placements(const Grid& g, const std::map<std::string, std::string>& dists) {
  std::map<std::string, lower::Placement> p;
  for (const auto& [name, text] : dists) p[name] = lower::Placement{g, Distribution::parse(text)};
  return p;
}

spmd::Program lowerText(const std::string& expr, const std::string& schedule, const Grid& g,
                        const std::map<std::string, std::string>& dists = {}, int64_t n = 8) {
  return lower::distributeLoops(assignment(expr, n), schedule, Machine{g}, placements(g, dists));
}

std::string defaultFor(const std::string& expr, const Grid& g, const std::string& outDist) {
  Assignment a = assignment(expr);
  lower::Placement out{g, outDist.empty() ? Distribution() : Distribution::parse(outDist)};
  return lower::defaultDistributedSchedule(a, Machine{g}, out);
}

template <typename E>
void expectThrows(const std::function<void()>& f, const std::vector<std::string>& mentions) {
  try {
    f();
    ADD_FAILURE() << "no exception";
  } catch (const E& e) {
    const std::string what = e.what();
    for (const std::string& m : mentions) EXPECT_NE(what.find(m), std::string::npos) << "missing '" << m << "' in: " << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "another exception: " << e.what();
  }
}

void expectScheduleError(const std::string& expr, const std::string& schedule, const Grid& g,
                         const std::vector<std::string>& mentions) {
  SCOPED_TRACE(expr + "  schedule " + schedule + "  machine " + g.str());
  expectThrows<ScheduleError>([&] { lowerText(expr, schedule, g); }, mentions);
}

const std::map<std::string, std::string> kAllBlocks{{"A", "xy->xy"}, {"B", "xy->xy"}, {"C", "xy->xy"}};

}  // namespace

TEST(DistributeLoops, SummaPrintsItsCommunication) {
  spmd::Program p = lowerText("A(i,j) = B(i,k) * C(k,j)", kSumma, Grid(2, 2), kAllBlocks, 1000);
  EXPECT_EQ(spmd::print(p),
            "// SPMD program on a 2x2 grid (4 ranks); every rank runs it at its grid coordinate.\n"
            "// A: xy->xy on 2x2 (output)\n"
            "// B: xy->xy on 2x2\n"
            "// C: xy->xy on 2x2\n"
            "for io in [0, 2)  // distributed: machine dimension 0, this rank's coordinate\n"
            "  for jo in [0, 2)  // distributed: machine dimension 1, this rank's coordinate\n"
            "    accumulate A(i[io], j[jo]) locally (zero)\n"
            "    for ko in [0, 4)  // sequential step\n"
            "      fetch B(i[io], k[ko]) from its owners\n"
            "      fetch C(k[ko], j[jo]) from its owners\n"
            "      leaf kernel on the local boxes: A(i,j) = B(i,k) * C(k,j)\n"
            "    reduce A(i[io], j[jo]) into its owners\n");
  ASSERT_EQ(p.loops.size(), 3u);
  EXPECT_EQ(p.distributedLoops, 2);
  EXPECT_EQ(p.loops[0].gridDim, 0);
  EXPECT_EQ(p.loops[1].gridDim, 1);
  EXPECT_EQ(p.loops[2].gridDim, -1);
  EXPECT_EQ(p.loops[2].count, 4);  // ceil(1000 / 256)
  ASSERT_EQ(p.tensors.size(), 3u);
  EXPECT_TRUE(p.tensors[0].output);
  EXPECT_EQ(p.tensors[0].level, 1);  // A at jo
  EXPECT_EQ(p.tensors[1].level, 2);  // B, C at ko
  EXPECT_EQ(p.tensors[2].level, 2);
  EXPECT_FALSE(p.gemm);
}

TEST(DistributeLoops, CannonRotatesByBothGridLoopsAndSubstitutesDgemm) {
  spmd::Program p = lowerText("A(i,j) = B(i,k) * C(k,j)", std::string(kCannon) + ",substitute({ii,ji,ki},blas)",
                              Grid(2, 2), kAllBlocks);
  ASSERT_EQ(p.loops.size(), 3u);
  EXPECT_EQ(p.loops[2].name, "kos");
  EXPECT_EQ(p.loops[2].count, 2);
  EXPECT_EQ(p.loops[2].rotateBy, (std::vector<int>{0, 1}));
  const std::string text = spmd::print(p);
  EXPECT_NE(text.find("for kos in [0, 2)  // rotated: block (kos + io + jo) mod 2"), std::string::npos) << text;
  EXPECT_NE(text.find("BLAS dgemm on the local boxes: A(i,j) = B(i,k) * C(k,j)\n"), std::string::npos) << text;
  ASSERT_TRUE(p.gemm);
  EXPECT_EQ(p.gemmLeaf.a, 1);
  EXPECT_EQ(p.gemmLeaf.b, 2);
  EXPECT_FALSE(p.gemmLeaf.transA);
  EXPECT_FALSE(p.gemmLeaf.transB);
  // The block each rank takes at each step: (s + io + jo) mod 2.
  for (int64_t io = 0; io < 2; io++)
    for (int64_t jo = 0; jo < 2; jo++)
      for (int64_t s = 0; s < 2; s++) EXPECT_EQ(spmd::blockIndex(p, 2, s, {io, jo, 0}), (s + io + jo) % 2);
}

TEST(DistributeLoops, JohnsonDistributesTheSummedVariableToo) {
  spmd::Program p = lowerText("A(i,j) = B(i,k) * C(k,j)", kJohnson, Grid(2, 2, 2),
                              {{"A", "xy->xy0"}, {"B", "xz->x0z"}, {"C", "zy->0yz"}});
  EXPECT_EQ(p.distributedLoops, 3);
  ASSERT_EQ(p.loops.size(), 3u);
  for (const spmd::TensorUse& t : p.tensors) EXPECT_EQ(t.level, 2) << t.name;
  const std::string text = spmd::print(p);
  EXPECT_EQ(text.find("sequential step"), std::string::npos) << text;
  EXPECT_NE(text.find("// B: xz->x0z on 2x2x2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("reduce A(i[io], j[jo]) into its owners"), std::string::npos) << text;
}

TEST(DistributeLoops, BlocksAreUnevenAndMayBeEmpty) {
  // 7 rows on 4 ranks: blocks of 2, the last short; 3 rows on 4 ranks: the last empty.
  spmd::Program p = lowerText("a(i) = B(i,j) * c(j)", "distribute({i},{io},{ii})", Grid(4), {}, 7);
  std::vector<Extent> want{{0, 2}, {2, 4}, {4, 6}, {6, 7}};
  for (int64_t r = 0; r < 4; r++) EXPECT_EQ(spmd::rangeAt(p, 0, 0, {r}), want[static_cast<size_t>(r)]) << r;
  spmd::Program q = lowerText("a(i) = B(i,j) * c(j)", "distribute({i},{io},{ii})", Grid(4), {}, 3);
  EXPECT_EQ(spmd::rangeAt(q, 0, 0, {3}).size(), 0);
  // split(j, js, jt, 3) of 8 after the distributed loop: 3 steps of 3, 3 and 2.
  spmd::Program s =
      lowerText("a(i) = B(i,j) * c(j)", "distribute({i},{io},{ii}),split(j,js,jt,3),reorder(io,js,ii,jt),communicate(B,js)",
                Grid(2));
  ASSERT_EQ(s.loops.size(), 2u);
  EXPECT_EQ(s.loops[1].count, 3);
  EXPECT_EQ(spmd::rangeAt(s, 1, 1, {0, 2}), (Extent{6, 8}));
  EXPECT_EQ(spmd::boxAt(s, 1, 1, {1, 2}), (std::vector<Extent>{{4, 8}, {6, 8}}));  // B(i[io=1], j[js=2])
}

TEST(DistributeLoops, DefaultScheduleOwnerComputesByTheOutput) {
  const std::string gemm = "A(i,j) = B(i,k) * C(k,j)";
  EXPECT_EQ(defaultFor(gemm, Grid(2, 2), "xy->xy"), "distribute({i,j},{io,jo},{ii,ji})");
  EXPECT_EQ(defaultFor(gemm, Grid(2, 2), "xy->yx"), "distribute({j,i},{jo,io},{ji,ii})");
  EXPECT_EQ(defaultFor(gemm, Grid(4), ""), "distribute({i},{io},{ii})");
  EXPECT_EQ(defaultFor(gemm, Grid(4), "xy->x"), "distribute({i},{io},{ii})");
  // Fixed and broadcast machine dimensions take the next unused variable (summed last).
  EXPECT_EQ(defaultFor(gemm, Grid(2, 2, 2), "xy->xy0"), "distribute({i,j,k},{io,jo,ko},{ii,ji,ki})");
  EXPECT_EQ(defaultFor(gemm, Grid(2, 2), "xy->*y"), "distribute({i,j},{io,jo},{ii,ji})");
  EXPECT_EQ(defaultFor("a(i) = B(i,j) * c(j)", Grid(2, 2), "x->x*"), "distribute({i,j},{io,jo},{ii,ji})");
  // New loop names do not clash with the assignment's variables.
  EXPECT_EQ(defaultFor("A(i,io) = B(i,io)", Grid(2, 2), "xy->xy"), "distribute({i,io},{io2,ioo},{ii,ioi})");
  expectThrows<ScheduleError>([&] { defaultFor("a = B(i,j) * C(i,j)", Grid(2, 2, 2), ""); },
                              {"no default distributed schedule", "2x2x2", "give -s"});
}

TEST(DistributeLoops, DefaultScheduleByColumnsPutsTheDistributedLoopFirst) {
  // Regression: distributing j alone left i outside it ("distributed loops must be the
  // outermost ... i,jo,ji,k"): owner computes by columns was refused.
  const std::string gemm = "A(i,j) = B(i,k) * C(k,j)";
  EXPECT_EQ(defaultFor(gemm, Grid(2), "xy->y"), "distribute({j},{jo},{ji}),reorder(jo,i,ji,k)");
  spmd::Program p = lowerText(gemm, defaultFor(gemm, Grid(2), "xy->y"), Grid(2), {{"A", "xy->y"}});
  EXPECT_EQ(p.loops.at(0).name, "jo");
  const std::string ttm = "A(i,j,l) = B(i,j,k) * C(k,l)";
  const std::string s = defaultFor(ttm, Grid(2, 2), "xyz->zy");
  EXPECT_EQ(s, "distribute({l,j},{lo,jo},{li,ji}),reorder(lo,jo,i,ji,li,k)");
  EXPECT_NO_THROW(lowerText(ttm, s, Grid(2, 2), {{"A", "xyz->zy"}}));
}

TEST(DistributeLoops, TermsWithoutASplitSumRunAtItsFirstBlockWithTheirOwnSchedule) {
  // Regression: both leaf variants got the schedule reorder(i,j,k), and A(i,j) = D(i,j)
  // has no k ("unknown index variable k"): k split or distributed was refused.
  const std::string expr = "A(i,j) = B(i,k) * C(k,j) + D(i,j)";
  spmd::Program p = lowerText(expr, "distribute({i,j},{io,jo},{ii,ji}),split(k,ko,ki,3),reorder(ko,ii,ji,ki),"
                                    "communicate({B,C},ko)",
                              Grid(2, 2));
  ASSERT_EQ(p.leaves.size(), 2u);
  EXPECT_EQ(p.leaves[0].text, "A(i,j) = sum(k, B(i,k) * C(k,j))");
  // Loops in the assignment's order are left to the single-node default schedule.
  EXPECT_EQ(p.leaves[0].schedule, "");
  EXPECT_TRUE(p.leaves[0].firstBlockOf.empty());
  EXPECT_EQ(p.leaves[1].text, "A(i,j) = D(i,j)");
  EXPECT_EQ(p.leaves[1].schedule, "");
  EXPECT_EQ(p.leaves[1].firstBlockOf, (std::vector<int>{2}));  // k's space
  const std::string text = spmd::print(p);
  EXPECT_NE(text.find("where the blocks of k are the first:\n        leaf kernel on the local boxes: A(i,j) = D(i,j)\n"),
            std::string::npos)
      << text;
  // k distributed (Johnson-like), and split again in the leaf.
  spmd::Program q = lowerText(expr, "distribute({i,j,k},{io,jo,ko},{ii,ji,ki}),split(ki,kis,kit,2),reorder(io,jo,ko,kis,ii,ji,kit)",
                              Grid(1, 2, 2));
  ASSERT_EQ(q.leaves.size(), 2u);
  EXPECT_EQ(q.leaves[0].schedule, "split(k,kis,kit,2),reorder(kis,i,j,kit)");
  EXPECT_EQ(q.leaves[1].schedule, "");
  // An order the user chose is kept.
  spmd::Program r = lowerText(expr, "distribute({i,j},{io,jo},{ii,ji}),reorder(io,jo,ii,k,ji)", Grid(2, 2));
  EXPECT_EQ(r.leaves[0].schedule, "reorder(i,k,j)");
}

TEST(DistributeLoops, BadSchedulesNameTheCommandAndTheRule) {
  const std::string gemm = "A(i,j) = B(i,k) * C(k,j)";
  const std::string d2 = "distribute({i,j},{io,jo},{ii,ji})";
  expectScheduleError(gemm, "tile(i,4)", Grid(2), {"schedule command tile(i,4)", "unknown command 'tile'"});
  expectScheduleError(gemm, "distribute({i,q},{io,qo},{ii,qi})", Grid(2, 2), {"'q' is not a loop here (loops: io,ii,j,k)"});
  expectScheduleError(gemm, "split(k,ko,ki)", Grid(2), {"expected 4 arguments, got 3"});
  expectScheduleError(gemm, "split(k,ko,ki,0)", Grid(2), {"'0' must be at least 1"});
  expectScheduleError(gemm, "split(k,ko,ki,x)", Grid(2), {"'x' is not an integer"});
  expectScheduleError(gemm, "split(k,i,ki,2)", Grid(2), {"'i' already names a loop"});
  expectScheduleError(gemm, d2 + ",split(io,a,b,2)", Grid(2, 2), {"io is the outer loop of a split"});
  expectScheduleError(gemm, "split(k,ko,ki,2),split(k,a,b,2)", Grid(2), {"'k' is not a loop here (loops: i,j,ko,ki)"});
  expectScheduleError(gemm, "divide(j,jo,ji,2),distribute(jo)", Grid(2),
                      {"distributed loops must be the outermost", "(jo)", "i,jo,ji,k"});
  expectScheduleError(gemm, "divide(i,io,ii,3),distribute(io)", Grid(2),
                      {"io has 3 pieces, but machine dimension 0 has 2 ranks"});
  expectScheduleError(gemm, "split(i,io,ii,2),distribute(io)", Grid(2), {"io is not the outer loop of a divide"});
  expectScheduleError(gemm, "distribute({i},{io},{ii})", Grid(2, 2),
                      {"the machine 2x2 has 2 dimension(s), but 1 loop(s) are distributed (io)"});
  expectScheduleError(gemm, d2, Grid(4), {"distributes 2 loops over a machine of 1 dimension(s) (4)"});
  expectScheduleError(gemm, "distribute({i,j},{io,jo},{ii,ji},Grid(4,1))", Grid(2, 2),
                      {"names Grid(4,1), but the machine is a 2x2 grid"});
  expectScheduleError(gemm, d2 + ",communicate(Z,io)", Grid(2, 2), {"communicate(Z,io)", "'Z' is not a tensor"});
  expectScheduleError(gemm, d2 + ",communicate(A,io),communicate(A,jo)", Grid(2, 2),
                      {"tensor A is already communicated at io"});
  expectScheduleError(gemm, d2 + ",communicate(B,ki)", Grid(2, 2), {"'ki' is not a loop here"});
  expectScheduleError(gemm, d2 + ",split(k,ko,ki,2),communicate(B,ki)", Grid(2, 2),
                      {"schedule command communicate(B,ki): loop ii would run above the leaf"});
  // rotate
  expectScheduleError(gemm, d2 + ",rotate(io,{jo},r)", Grid(2, 2), {"io is distributed; rotate a sequential loop"});
  expectScheduleError(gemm, d2 + ",rotate(k,{io},r)", Grid(2, 2), {"k is not the outer loop of a split or divide"});
  expectScheduleError(gemm, d2 + ",divide(k,ko,ki,2),reorder(ko,ii,ji,ki),rotate(ko,{io},kos)", Grid(2, 2),
                      {"rotate: kos must run above the leaf"});
  expectScheduleError(gemm, d2 + ",divide(k,ko,ki,2),reorder(ko,ii,ji,ki),rotate(ko,{io},kos),communicate(B,ko)",
                      Grid(2, 2), {"loop ko was rotated into kos; refer to kos"});
  expectScheduleError(gemm, "divide(i,io,ii,2),divide(k,ko,ki,2),reorder(io,ko,ii,j,ki),rotate(io,{ko},ios),distribute(ko),communicate(B,ios)",
                      Grid(2), {"distributed loops must be the outermost"});
  // Splits of one variable above the leaf run outer to inner.
  expectScheduleError(gemm, d2 + ",split(k,ko,ki,4),split(ki,kio,kii,2),reorder(kio,ko,ii,ji,kii),communicate(B,ko)",
                      Grid(2, 2), {"the splits of k must run outer to inner"});
  // substitute
  expectScheduleError(gemm, d2 + ",substitute({ii,ji,ki},cuda)", Grid(2, 2), {"unknown substitute 'cuda'"});
  expectScheduleError(gemm, d2 + ",substitute({ii,ji},blas)", Grid(2, 2),
                      {"names {ii,ji}, but the leaf's loops are {ii,ji,k}"});
  expectScheduleError(gemm, d2 + ",split(k,ko,ki,2),substitute({ii,ji,ko,ki},blas)", Grid(2, 2),
                      {"BLAS replaces the leaf, so split(k,ko,ki,2) has nothing to schedule"});
  expectScheduleError("A(i,l) = B(i,j,k) * C(j,l) * D(k,l)", "distribute({i},{io},{ii}),substitute({ii,l,j,k},blas)",
                      Grid(2), {"the leaf is not one product of two tensors"});
  expectScheduleError("A(i,j) = B(i,j) + C(i,j)", "distribute({i},{io},{ii}),substitute({ii,j},blas)", Grid(2),
                      {"the leaf is not one product of two tensors"});
  expectScheduleError("A(i,j) = B(i,k) * C(k,j) + D(i,j)",
                      d2 + ",split(k,ko,ki,2),reorder(ko,ii,ji,ki),communicate(B,ko),substitute({ii,ji,ki},blas)",
                      Grid(2, 2), {"the leaf has terms added at the first block only"});
}

TEST(DistributeLoops, SubstituteTakesTransposesAndTheOtherProducts) {
  const std::string d2 = "distribute({i,j},{io,jo},{ii,ji})";
  spmd::Program t = lowerText("A(i,j) = B(i,k) * C(j,k)", d2 + ",substitute({ii,ji,k},blas)", Grid(2, 2));
  ASSERT_TRUE(t.gemm);
  EXPECT_FALSE(t.gemmLeaf.transA);
  EXPECT_TRUE(t.gemmLeaf.transB);
  spmd::Program v = lowerText("a(i) = B(i,j) * c(j)", "distribute({i},{io},{ii}),substitute({ii,j},blas)", Grid(2));
  ASSERT_TRUE(v.gemm);
  EXPECT_TRUE(v.gemmLeaf.y.empty());
  spmd::Program dot = lowerText("a = B(i,j) * C(i,j)", "distribute({i},{io},{ii}),substitute({ii,j},blas)", Grid(2));
  ASSERT_TRUE(dot.gemm);
  EXPECT_EQ(dot.gemmLeaf.k.size(), 2u);
}

TEST(DistributeLoops, ASumInsideATermCannotBeSplit) {
  // k is summed inside the product: its partial sums per block would be multiplied by B.
  expectScheduleError("A(i) = B(i,j) * sum(k, C(j,k))",
                      "distribute({i},{io},{ii}),split(k,ks,kt,2),reorder(io,ks,ii,j,kt),communicate(C,ks)", Grid(2),
                      {"sums over k inside it, so k cannot be split over ranks or steps"});
  expectScheduleError("A(i) = B(i,j) * sum(k, C(j,k))", "distribute({k},{ko},{ki}),reorder(ko,i,j,ki)", Grid(2),
                      {"sums over k inside it"});
  // j, summed at the root, may be.
  EXPECT_NO_THROW(lowerText("A(i) = B(i,j) * sum(k, C(j,k))", "distribute({j},{jo},{ji}),reorder(jo,i,ji,k)", Grid(2)));
}

TEST(DistributeLoops, BadDistributionsAndAccesses) {
  const std::string gemm = "A(i,j) = B(i,k) * C(k,j)";
  const std::string d2 = "distribute({i,j},{io,jo},{ii,ji})";
  expectThrows<DistributionError>([&] { lowerText(gemm, d2, Grid(2, 2), {{"A", "xyz->xy"}}); },
                                  {"distribution of A", "3 tensor dimension(s), and A has 2"});
  expectThrows<DistributionError>([&] { lowerText(gemm, d2, Grid(2, 2), {{"B", "xy->x"}}); },
                                  {"distribution of B", "machine 2x2 has 2"});
  expectThrows<DistributionError>([&] {
    std::map<std::string, lower::Placement> p{{"B", lower::Placement{Grid(3), Distribution::parse("xy->x")}}};
    lower::distributeLoops(assignment(gemm), d2, Machine{Grid(2, 2)}, p);
  }, {"tensor B is distributed over a 3 grid (3 ranks), but the machine 2x2 has 4"});
  expectThrows<NotationError>([&] { lowerText("a(i) = B(i,i)", "distribute({i},{io},{ii})", Grid(2)); },
                              {"B is indexed twice by i"});
}

// ---------------------------------------------------------------------------------
// DistributedKernel on the one rank of a process started without a launcher.

namespace {

double fillValue(const std::string& t, const std::vector<int64_t>& c) {
  double v = static_cast<double>(t[0]) * 0.01;
  for (size_t d = 0; d < c.size(); d++) v += static_cast<double>((c[d] + 1) * static_cast<int64_t>(d + 2)) * 0.1;
  return std::fmod(v, 1.7) - 0.8;
}

/// A(i,j) = B(i,k) * C(k,j) (+ D(i,j)) on one rank against loops written out.
void expectGemmOnOneRank(const Machine& m, const std::string& schedule, bool plusD) {
  SCOPED_TRACE("machine " + m.grid.str() + " x " + std::to_string(m.threads) + " threads, schedule " + schedule);
  const int64_t I = 5, J = 4, K = 7;
  DistTensor A("A", {I, J}, "", m.grid), B("B", {I, K}, "", m.grid), C("C", {K, J}, "", m.grid), D("D", {I, J}, "", m.grid);
  for (DistTensor* t : {&B, &C, &D}) t->fill([&](const std::vector<int64_t>& c) { return fillValue(t->name(), c); });
  std::vector<DistTensor> ts{A, B, C};
  if (plusD) ts.push_back(D);
  auto k = DistributedKernel::compile(std::string("A(i,j) = B(i,k) * C(k,j)") + (plusD ? " + D(i,j)" : ""), ts, m, schedule);
  k->run(ts);
  k->run(ts);  // again: the output is rewritten, not added to
  CooData got = A.gather();
  std::vector<double> dense(static_cast<size_t>(I * J), 0.0);
  for (int64_t e = 0; e < got.nnz(); e++)
    dense[static_cast<size_t>(got.coords[static_cast<size_t>(2 * e)] * J + got.coords[static_cast<size_t>(2 * e + 1)])] =
        got.values[static_cast<size_t>(e)];
  for (int64_t i = 0; i < I; i++)
    for (int64_t j = 0; j < J; j++) {
      double want = plusD ? fillValue("D", {i, j}) : 0.0;
      for (int64_t x = 0; x < K; x++) want += fillValue("B", {i, x}) * fillValue("C", {x, j});
      EXPECT_NEAR(dense[static_cast<size_t>(i * J + j)], want, 1e-12) << "A(" << i << "," << j << ")";
    }
}

}  // namespace

TEST(DistributedKernelOneRank, FigureNineSchedulesOnOneRank) {
  EXPECT_EQ(worldSize(), 1);
  expectGemmOnOneRank(Machine{Grid(1, 1)}, "distribute({i,j},{io,jo},{ii,ji}),split(k,ko,ki,3),reorder(ko,ii,ji,ki),"
                                           "communicate(A,jo),communicate({B,C},ko)", false);
  expectGemmOnOneRank(Machine{Grid(1, 1)}, kCannon, false);
  expectGemmOnOneRank(Machine{Grid(1, 1, 1)}, kJohnson, false);
  expectGemmOnOneRank(Machine{Grid(1, 1)}, std::string(kCannon) + ",substitute({ii,ji,ki},blas)", false);
  expectGemmOnOneRank(Machine{Grid(1)}, "", false);
}

TEST(DistributedKernelOneRank, TermWithoutTheSplitSumIsAddedOnce) {
  expectGemmOnOneRank(Machine{Grid(1, 1)}, "distribute({i,j},{io,jo},{ii,ji}),split(k,ko,ki,3),reorder(ko,ii,ji,ki),"
                                           "communicate({B,C},ko)", true);
  expectGemmOnOneRank(Machine{Grid(1, 1, 1)}, "distribute({i,j,k},{io,jo,ko},{ii,ji,ki})", true);
  expectGemmOnOneRank(Machine{Grid(1)}, "", true);
}

TEST(DistributedKernelOneRank, ThreadsWithALeafThatSplitsTheOuterVariable) {
  // Regression: with --threads the default parallel schedule split i, which the leaf's
  // own divide had already replaced ("unknown index variable i"); the leaf now runs on
  // one thread there, and on the threads otherwise.
  expectGemmOnOneRank(Machine{Grid(1), 2}, "distribute({j},{jo},{ji}),divide(i,is,it,2),reorder(jo,is,ji,it,k)", false);
  expectGemmOnOneRank(Machine{Grid(1), 2}, "", false);
  expectGemmOnOneRank(Machine{Grid(1), 2}, "", true);
}

TEST(DistributedKernelOneRank, EmitShowsTheProgramAndTheLeaf) {
  Machine m{Grid(1, 1)};
  DistTensor A("A", {4, 4}, "xy->xy", m.grid), B("B", {4, 4}, "xy->xy", m.grid), C("C", {4, 4}, "xy->xy", m.grid);
  auto k = DistributedKernel::compile("A(i,j) = B(i,k) * C(k,j)", {A, B, C}, m);
  EXPECT_EQ(k->schedule(), "distribute({i,j},{io,jo},{ii,ji})");
  const std::string text = k->emit();
  EXPECT_EQ(text.rfind("// SPMD program on a 1x1 grid (1 ranks); every rank runs it at its grid coordinate.\n", 0), 0u)
      << text;
  EXPECT_NE(text.find("leaf kernel on the local boxes: A(i,j) = B(i,k) * C(k,j)"), std::string::npos) << text;
  EXPECT_NE(text.find("// leaf kernel 0: A(i,j) = B(i,k) * C(k,j)\n"), std::string::npos) << text;
  // The machine must have as many ranks as are running.
  expectThrows<DistributionError>([&] { DistributedKernel::compile("A(i,j) = B(i,k) * C(k,j)", {A, B, C}, Machine{Grid(2)}); },
                                  {"the machine 2 has 2 ranks, but 1 are running", "mpirun -np 2"});
  expectThrows<DistributionError>([&] { DistTensor("B", {4, 4}, "xy->xy", Grid(2, 2)); }, {"tensor B", "4 ranks"});
}

TEST(DistributedKernelOneRank, CommunicatedBoxesUnderTheMemoryLimit) {
  // B's piece is all of B (one rank), but the k panels of 60 columns are copies: 200 x 60
  // doubles, twice (double buffers) = 192 KB, over a 100 KB limit set after the pieces
  // exist. A one-line MemoryLimitError naming the tensor and the loop, not a bad_alloc.
  Machine m{Grid(1, 1)};
  DistTensor A("A", {200, 10}, "xy->xy", m.grid), B("B", {200, 120}, "xy->xy", m.grid),
      C("C", {120, 10}, "xy->xy", m.grid);
  auto k = DistributedKernel::compile("A(i,j) = B(i,k) * C(k,j)", {A, B, C}, m,
                                      "distribute({i,j},{io,jo},{ii,ji}),split(k,ko,ki,60),reorder(ko,ii,ji,ki),"
                                      "communicate({B,C},ko)");
  ::setenv("TESSEL_MAX_MEMORY", "100K", 1);
  try {
    k->run({A, B, C});
    ADD_FAILURE() << "expected a MemoryLimitError";
  } catch (const MemoryLimitError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor B"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("loop ko"), std::string::npos) << e.what();
  }
  ::setenv("TESSEL_MAX_MEMORY", "1G", 1);
  EXPECT_NO_THROW(k->run({A, B, C}));
  ::unsetenv("TESSEL_MAX_MEMORY");
}

TEST(DistributedKernelOneRank, SparseOperandsRunOwnerComputesAndSayWhatIsNotBuilt) {
  // CSR rows in blocks (one rank: the whole matrix), SpMV row-based, hand-checked.
  Machine m{Grid(1)};
  CooData b;
  b.dims = {3, 4};
  b.add({0, 1}, 2.0);
  b.add({0, 3}, 1.0);
  b.add({2, 0}, -1.0);
  DistTensor B("B", {3, 4}, "xy->x", m.grid, Format::parse("ds"));
  B.setFromCoo(b);
  DistTensor a("a", {3}, "x->x", m.grid), c("c", {4}, "", m.grid);
  c.fill([](const std::vector<int64_t>& at) { return static_cast<double>(at[0] + 1); });  // 1 2 3 4
  auto k = DistributedKernel::compile("a(i) = B(i,j) * c(j)", {a, B, c}, m,
                                      "divide(i,io,ii,1),distribute(io),communicate({a,B,c},io)");
  k->run({a, B, c});
  CooData got = a.gather();
  std::vector<double> dense(3, 0.0);
  for (int64_t e = 0; e < got.nnz(); e++) dense[static_cast<size_t>(got.coords[static_cast<size_t>(e)])] = got.values[static_cast<size_t>(e)];
  EXPECT_EQ(dense, (std::vector<double>{2 * 2 + 1 * 4, 0, -1}));
  // Rows by non-zeros: the same answer.
  DistTensor nz("B", {3, 4}, "xy->~x", m.grid, Format::parse("ds"));
  nz.setFromCoo(b);
  DistributedKernel::compile("a(i) = B(i,j) * c(j)", {a, nz, c}, m,
                             "divide(i,io,ii,1),distribute(io),communicate({a,B,c},io)")
      ->run({a, nz, c});
  CooData again = a.gather();
  EXPECT_EQ(again.values, got.values);
  // Non-zeros fused across rows, SpDISTAL's schedule: the same answer.
  DistTensor fused("B", {3, 4}, "(xy)->~f", m.grid, Format::parse("ds"));
  fused.setFromCoo(b);
  DistributedKernel::compile("a(i) = B(i,j) * c(j)", {a, fused, c}, m,
                             "fuse(i,j,f),pos(f,fp,B),divide(fp,fo,fi,1),distribute(fo),communicate({a,B,c},fo)")
      ->run({a, fused, c});
  EXPECT_EQ(a.gather().values, got.values);
  // A fusion left without its pos and divide is an error naming the command.
  EXPECT_THROW(DistributedKernel::compile("a(i) = B(i,j) * c(j)", {a, fused, c}, m, "fuse(i,j,f),distribute(f)"),
               ScheduleError);
  // A sparse output: assembled by its owner in its own format (hand-computed: 2 * B).
  DistTensor S("S", {3, 4}, "xy->x", m.grid, Format::parse("ds"));
  DistributedKernel::compile("S(i,j) = 2 * B(i,j)", {S, B}, m)->run({S, B});
  CooData s = S.gather();
  EXPECT_EQ(s.coords, b.coords);
  std::vector<double> twice;
  for (double v : b.values) twice.push_back(2 * v);
  EXPECT_EQ(s.values, twice);
  EXPECT_EQ(S.sparsePiece().format().str(), Format::parse("ds").str());
  // Said plainly: a sparse `+=` output, a sparse output the leaf would run into twice.
  EXPECT_THROW(DistributedKernel::compile("S(i,j) += B(i,j)", {S, B}, m), NotationError);
  DistTensor Bw("B", {3, 4}, "xy->x", m.grid, Format::parse("ds")), Cw("C", {4, 4}, "", m.grid);
  Bw.setFromCoo(b);
  EXPECT_THROW(DistributedKernel::compile("S(i,j) = B(i,k) * C(k,j)", {S, Bw, Cw}, m,
                                          "divide(i,io,ii,1),distribute(io),split(k,ko,ki,2),reorder(io,ko,ii,ki,j),"
                                          "communicate(S,io),communicate(B,io),communicate(C,ko)"),
               ScheduleError);
  EXPECT_THROW(DistTensor("D", {3, 4}, "xy->~x", m.grid, Format::parse("dd")), DistributionError);
}

TEST(DistributeLoops, LoopFuseSchedulesTheLeafAtItsLoop) {
  const std::string ss = "A(i,l) = B(i,j) * C(i,k) * D(j,k) * E(j,l)";
  const std::string d = "distribute({i},{io},{ii})";
  auto leafOf = [&](const std::string& schedule) {
    spmd::Program p = lowerText(ss, schedule, Grid(2));
    EXPECT_EQ(p.leaves.size(), 1u);
    return p.leaves.empty() ? std::string() : p.leaves[0].schedule;
  };
  EXPECT_EQ(leafOf(d + ",loopfuse(j)"), "loopfuse(j)");
  EXPECT_EQ(leafOf("loopfuse(j)," + d), "loopfuse(j)");
  // A fused loop split or distributed later: its inner loop, i in the leaf.
  EXPECT_EQ(leafOf("loopfuse(i)," + d), "loopfuse(i)");
  EXPECT_EQ(leafOf(d + ",loopfuse(ii,ti)"), "loopfuse(i,ti)");
  EXPECT_EQ(leafOf(d + ",loopfuse(j,ii)"), "loopfuse(j,ii)");  // a temporary's name is not a loop
  // Split in the leaf: the leaf keeps the single-node default order (the assignment's
  // order would put l above j, where loopfuse(j) splits nothing); a user's reorder stays.
  EXPECT_EQ(leafOf("loopfuse(i)," + d + ",divide(ii,ia,ib,2)"), "divide(i,ia,ib,2),loopfuse(ib)");
  EXPECT_EQ(leafOf(d + ",divide(k,ko,ki,2),loopfuse(j)"), "divide(k,ko,ki,2),loopfuse(j)");
  EXPECT_EQ(leafOf(d + ",loopfuse(j),split(k,k0,k1,4)"), "split(k,k0,k1,4),loopfuse(j)");
  EXPECT_EQ(leafOf(d + ",reorder(ii,l,j,k),split(k,k0,k1,4),loopfuse(j)"),
            "split(k,k0,k1,4),reorder(i,l,j,k0,k1),loopfuse(j)");
  // Below a step loop: the leaf starts under it.
  EXPECT_EQ(leafOf(d + ",divide(ii,ia,ib,2),communicate({A,B,C,D,E},ia),loopfuse(ib),loopfuse(j)"),
            "loopfuse(i),loopfuse(j)");
  spmd::Program p = lowerText(ss, d + ",loopfuse(j)", Grid(2));
  EXPECT_EQ(p.leaves[0].renamed, "ii is i");
  // loopfuse alone: added to the default schedule; anything else as given.
  Assignment a = assignment(ss);
  lower::Placement rows{Grid(2), Distribution::parse("xy->x")};
  EXPECT_EQ(lower::distributedScheduleFor(a, "loopfuse(j)", Machine{Grid(2)}, rows), "loopfuse(j),distribute({i},{io},{ii})");
  EXPECT_EQ(lower::distributedScheduleFor(a, "", Machine{Grid(2)}, rows), "distribute({i},{io},{ii})");
  EXPECT_EQ(lower::distributedScheduleFor(a, d, Machine{Grid(2)}, rows), d);
}

TEST(DistributeLoops, LoopFuseAboveTheLeafIsRefused) {
  const std::string ss = "A(i,l) = B(i,j) * C(i,k) * D(j,k) * E(j,l)";
  const std::string d = "distribute({i},{io},{ii})";
  expectScheduleError(ss, d + ",loopfuse(io)", Grid(2),
                      {"schedule command loopfuse(io)", "io is distributed over the machine", "runs above the leaf"});
  expectScheduleError(ss, "divide(i,io,ii,2),loopfuse(io),distribute(io)", Grid(2),
                      {"schedule command loopfuse(io)", "loop io is distributed over the machine"});
  expectScheduleError(ss, d + ",loopfuse(q)", Grid(2), {"schedule command loopfuse(q)", "'q' is not a loop here"});
  expectScheduleError(ss, d + ",loopfuse(i)", Grid(2), {"'i' is not a loop here (loops: io,ii,l,j,k)"});
  expectScheduleError(ss, d + ",loopfuse()", Grid(2), {"expected loopfuse(at) or loopfuse(at,temporary)"});
  expectScheduleError(ss, d + ",divide(ii,ia,ib,2),communicate({A,B,C},ia),loopfuse(ia)", Grid(2),
                      {"schedule command loopfuse(ia)", "loop ia is a step loop", "fuse at a loop below ia"});
  expectScheduleError("A(i,m) = B(i,j) * C(j,l) * D(l,m)",
                      d + ",divide(j,jo,jb,2),reorder(io,jo,ii,jb,l,m),loopfuse(jo),rotate(jo,{io},jr),"
                          "communicate(A,io),communicate({B,C},jr)",
                      Grid(2), {"schedule command loopfuse(jo)", "loop jr (what jo became) is a step loop"});
  expectScheduleError(ss, d + ",loopfuse(j),substitute({ii,l,j,k},blas)", Grid(2),
                      {"BLAS replaces the leaf, so loopfuse(j) has nothing to schedule"});
}

TEST(DistributedKernelOneRank, LoopFuseRunsTheFusedLeaf) {
  // <SpMM, GEMM> dense, 3 x 2 x 2 x 2 by hand: A(i,m) = sum_l (sum_j B(i,j) C(j,l)) D(l,m).
  Machine m{Grid(1)};
  DistTensor A("A", {3, 2}, "xy->x", m.grid), B("B", {3, 2}, "xy->x", m.grid), C("C", {2, 2}, "", m.grid),
      D("D", {2, 2}, "", m.grid);
  B.fill([](const std::vector<int64_t>& x) { return static_cast<double>(x[0] + 2 * x[1] + 1); });  // 1 3; 2 4; 3 5
  C.fill([](const std::vector<int64_t>& x) { return x[0] == x[1] ? 2.0 : 1.0; });                 // 2 1; 1 2
  D.fill([](const std::vector<int64_t>& x) { return static_cast<double>(x[1] - x[0]); });         // 0 1; -1 0
  auto k = DistributedKernel::compile("A(i,m) = B(i,j) * C(j,l) * D(l,m)", {A, B, C, D}, m, "loopfuse(i)");
  EXPECT_EQ(k->schedule(), "loopfuse(i),distribute({i},{io},{ii})");
  EXPECT_NE(k->emit().find("forall(i, where("), std::string::npos) << k->emit();
  k->run({A, B, C, D});
  // t(row) = B(row) C: (5 7), (8 10), (11 13); A = t D = (-t1, t0).
  const std::vector<double> want{-7, 5, -10, 8, -13, 11};
  ASSERT_EQ(A.localSize(), 6);
  for (int e = 0; e < 6; e++) EXPECT_EQ(A.data()[e], want[static_cast<size_t>(e)]) << e;
}
