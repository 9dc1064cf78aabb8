// Lowering decisions and their errors: loop order, auto-transposition, output
// assembly strategy, generated code shape, bad inputs to the compiler.
#include <gtest/gtest.h>

#include <chrono>

#include "ir/ir.h"
#include "ir/rewrite.h"
#include "driver/pipeline.h"
#include "support/test_support.h"

using namespace tessel;
using namespace tessel::testing;

namespace {
std::mt19937_64 rng(5);
TensorBase T(const std::string& n, std::vector<int64_t> dims, const std::string& f, double density = 0.3) {
  return makeTensor(n, randomCoo(dims, density, rng), Format::parse(f));
}
}  // namespace

TEST(Lowering, LoopOrderFollowsFormats) {
  IndexVar i("i"), j("j"), k("k");
  TensorBase B = T("B", {5, 6}, "ds:1,0"), c = T("c", {6}, "d"), a("a", Datatype::Float64, {5}, DenseFormat(1));
  a(i) = B(i, j) * c(j);
  auto lk = driver::lowerAssignment(a.assignment());
  ASSERT_EQ(lk.problem.order.size(), 2u);
  EXPECT_EQ(lk.problem.order[0], j);  // CSC: columns outside
  EXPECT_EQ(lower::str(lk.nest.stmt), "forall(j, forall(i, a(i) = B(i,j) * c(j)))");
}

TEST(Lowering, ConflictingOperandIsTransposedAndSaysSo) {
  IndexVar i("i"), j("j");
  TensorBase B = T("B", {7, 7}, "ds"), C = T("C", {7, 7}, "ds"), A("A", Datatype::Float64, {7, 7}, CSR());
  A(i, j) = B(i, j) + C(j, i);
  std::string code = A.emitC();
  EXPECT_NE(code.find("no loop order is consistent"), std::string::npos) << code;
  EXPECT_NE(code.find("tessel transposes C from ds to ds:1,0"), std::string::npos) << code;
  CooData expected = referenceEvaluate(A.assignment());
  A.evaluate();
  EXPECT_TRUE(tensorsClose(expected, A.toCoo(), 1e-12, 1e-12));
}

/// `A += e` with a sum in e and a sparse A is two loop nests (Kernel runs T = e, then
/// A += T); one would add A's old values once per iteration of the sum, so lowering names
/// the variable.
TEST(Lowering, AccumulatedSumIsNotOneLoopNest) {
  TensorBase B = T("B", {5, 6}, "ds"), c = T("c", {6}, "d"), a("a", Datatype::Float64, {5}, Format::parse("s"));
  IndexVar i("i"), j("j");
  Assignment acc = makeAssignment(Access(a, {i}), Access(B, {i, j}) * Access(c, {j}), true);
  ASSERT_TRUE(accumulatesSum(acc));
  try {
    driver::lowerAssignment(acc);
    ADD_FAILURE() << "one loop nest for " << acc.str();
  } catch (const NotationError& e) {
    EXPECT_NE(std::string(e.what()).find("sum over j"), std::string::npos) << e.what();
  }
  EXPECT_EQ(Kernel::loopOrder(acc).size(), 2u);
  std::string code = Kernel::emitC(acc);
  EXPECT_NE(code.find("stage 1 of 2"), std::string::npos);
  EXPECT_NE(code.find("stage 2 of 2"), std::string::npos);
  EXPECT_FALSE(accumulatesSum(makeAssignment(Access(a, {i}), Access(B, {i, j}) * Access(c, {j}))));
}

/// `A += e` into a dense A adds into A's values where they are: one loop nest whose
/// stores accumulate, no snapshot of A, the values kept by assembly (tessel_take mode 2).
TEST(Lowering, DenseAccumulateAddsInPlace) {
  TensorBase B = T("B", {5, 6}, "ds"), c = T("c", {6}, "d"), a("a", Datatype::Float64, {5}, DenseFormat(1));
  IndexVar i("i"), j("j");
  Assignment acc = makeAssignment(Access(a, {i}), Access(B, {i, j}) * Access(c, {j}), true);
  ASSERT_TRUE(accumulatesInPlace(acc));
  EXPECT_FALSE(accumulatesSum(acc));
  auto lk = driver::lowerAssignment(acc);
  EXPECT_TRUE(lk.plan.inPlace);
  EXPECT_EQ(lk.problem.args.size(), 3u);  // a, B, c: no snapshot of a
  std::string code = Kernel::emitC(acc);
  EXPECT_NE(code.find("tessel_take(&a->vals, size, sizeof(double), 2)"), std::string::npos) << code;
  EXPECT_NE(code.find("a_vals[pa0] += acc"), std::string::npos) << code;
  EXPECT_EQ(code.find("stage 1 of 2"), std::string::npos);
}

TEST(Lowering, OutputStrategies) {
  IndexVar i("i"), j("j"), k("k");
  TensorBase B = T("B", {6, 6}, "ds"), C = T("C", {6, 6}, "ds"), D = T("D", {6, 4}, "dd", 1.0),
             E = T("E", {4, 6}, "dd", 1.0);
  TensorBase A("A", Datatype::Float64, {6, 6}, CSR());
  A(i, j) = B(i, j) + C(i, j);
  EXPECT_EQ(driver::lowerAssignment(A.assignment()).plan.kind, lower::OutputKind::Append);
  A(i, j) = B(i, k) * C(k, j);
  auto sp = driver::lowerAssignment(A.assignment());
  EXPECT_EQ(sp.plan.kind, lower::OutputKind::Workspace);
  EXPECT_NE(lower::str(sp.nest.stmt).find("where("), std::string::npos) << lower::str(sp.nest.stmt);
  A(i, j) = B(i, j) * D(i, k) * E(k, j);
  EXPECT_EQ(driver::lowerAssignment(A.assignment()).plan.kind, lower::OutputKind::PatternCopy);
  TensorBase Ad("Ad", Datatype::Float64, {6, 6}, DenseFormat(2));
  Ad(i, j) = B(i, j) + C(i, j);
  EXPECT_EQ(driver::lowerAssignment(Ad.assignment()).plan.kind, lower::OutputKind::Dense);
}

/// A dense output is zeroed before compute unless the loops assign each entry once:
/// every output variable runs over its whole extent and nothing accumulates.
TEST(Lowering, DenseOutputIsZeroedUnlessEveryEntryIsAssigned) {
  IndexVar i("i"), j("j"), k("k");
  TensorBase B = T("B", {6, 5}, "ds"), Bs = T("Bs", {6, 5}, "ss"), D = T("D", {6, 5}, "dd", 1.0),
             c = T("c", {5}, "d"), E = T("E", {5, 4}, "dd", 1.0);
  TensorBase a("a", Datatype::Float64, {6}, DenseFormat(1)), A("A", Datatype::Float64, {6, 5}, DenseFormat(2)),
      M("M", Datatype::Float64, {6, 4}, DenseFormat(2));
  auto assignsAll = [](const Assignment& as, const Schedule& s = {}) { return driver::lowerAssignment(as, s).plan.assignsAll; };
  a(i) = B(i, j) * c(j);  // CSR SpMV: every row's sum is stored, empty rows too
  EXPECT_TRUE(assignsAll(a.assignment()));
  EXPECT_TRUE(assignsAll(a.assignment(), parseSchedule("split(i,i0,i1,2),parallelize(i0,cpu_thread,no_races)", a.assignment())));
  EXPECT_NE(a.emitC().find("every entry assigned"), std::string::npos);
  // Nonzero splits over fused rows skip empty rows and add partial sums.
  EXPECT_FALSE(assignsAll(a.assignment(), parseSchedule("fuse(i,j,f),pos(f,fp,B),split(fp,fp0,fp1,4)", a.assignment())));
  a(i) = Bs(i, j) * c(j);  // DCSR: rows it does not store are never visited
  EXPECT_FALSE(assignsAll(a.assignment()));
  A(i, j) = B(i, j) * D(i, j);  // only B's entries are visited
  EXPECT_FALSE(assignsAll(A.assignment()));
  A(i, j) = D(i, j) * 2;
  EXPECT_TRUE(assignsAll(A.assignment()));
  M(i, k) = D(i, j) * E(j, k);  // runs i, j, k: rows accumulate
  EXPECT_FALSE(assignsAll(M.assignment()));
  EXPECT_TRUE(assignsAll(M.assignment(), parseSchedule("reorder(i,k,j)", M.assignment())));  // dot products
  M(i, k) = B(i, j) * E(j, k);  // CSR SpMM runs i, j, k: rows accumulate
  EXPECT_FALSE(assignsAll(M.assignment()));
}

/// A dense output whose rows each get filled by one iteration of the loop over its first
/// variable is zeroed row by row inside that loop (in cache, just before the row
/// accumulates) instead of all at once by assembly. Not when a reduction or the other
/// output variable encloses that loop, or when the loop skips rows. (Under TESSEL_POISON
/// an unzeroed row reads NaN: the kernel and property tests check the results.)
TEST(Lowering, DenseRowsAreZeroedWhereTheyAreFilled) {
  IndexVar i("i"), j("j"), k("k");
  TensorBase B = T("B", {6, 5}, "ds"), Bs = T("Bs", {6, 5}, "ss"), D = T("D", {6, 5}, "dd", 1.0),
             E = T("E", {5, 4}, "dd", 1.0), Bc = T("Bc", {6, 5}, "ds:1,0");
  TensorBase M("M", Datatype::Float64, {6, 4}, DenseFormat(2));
  auto zeroes = [](const Assignment& as, const Schedule& s = {}) { return driver::lowerAssignment(as, s).plan.zeroSlices; };
  M(i, k) = B(i, j) * E(j, k);  // CSR SpMM: i, j, k
  EXPECT_TRUE(zeroes(M.assignment()));
  std::string code = M.emitC();
  EXPECT_NE(code.find("tessel_take(&M->vals, size, sizeof(double), 0)"), std::string::npos) << code;
  EXPECT_NE(code.find("for (int64_t z = pM0 * M1_dim; z < (pM0 + 1) * M1_dim; z++) {\n      M_vals[z] = 0.0;"),
            std::string::npos)
      << code;
  Assignment spmm = M.assignment();
  EXPECT_TRUE(zeroes(spmm, parseSchedule("split(i,i0,i1,2),parallelize(i0,cpu_thread,no_races)", spmm)));
  EXPECT_TRUE(zeroes(spmm, parseSchedule("parallelize(j,cpu_thread,atomics)", spmm)));  // the split reduction runs inside
  EXPECT_FALSE(zeroes(spmm, parseSchedule("reorder(i,k,j)", spmm)));  // dot products: every entry assigned instead
  EXPECT_TRUE(driver::lowerAssignment(spmm, parseSchedule("reorder(i,k,j)", spmm)).plan.assignsAll);
  M(i, k) = Bs(i, j) * E(j, k);  // DCSR: rows it does not store are never visited
  EXPECT_FALSE(zeroes(M.assignment()));
  EXPECT_NE(M.emitC().find("tessel_take(&M->vals, size, sizeof(double), 1)"), std::string::npos);
  M(i, k) = Bc(i, j) * E(j, k);  // CSC runs j outside i: every row accumulates once per j
  EXPECT_FALSE(zeroes(M.assignment()));
  M(i, k) = D(i, j) * E(j, k);  // dense GEMM i, j, k
  EXPECT_TRUE(zeroes(M.assignment()));
  EXPECT_FALSE(zeroes(M.assignment(), parseSchedule("reorder(k,i,j)", M.assignment())));  // k encloses i
}

TEST(Lowering, ThreadCopiesWrapTheWholeLoopNest) {
  // A reduction parallelized inside the row loop (temporary strategy) allocates, zeroes
  // and sums the per-thread copies once per call, around the nest: once per row was
  // quadratic in the rows (SpMM on 4000 rows: 253 ms instead of 9).
  IndexVar i("i"), j("j"), k("k");
  TensorBase B = T("B", {6, 5}, "ds"), E = T("E", {5, 4}, "dd", 1.0);
  TensorBase M("M", Datatype::Float64, {6, 4}, DenseFormat(2));
  M(i, k) = B(i, j) * E(j, k);
  for (const char* sched : {"parallelize(j,cpu_thread,temporary)", "split(i,i0,i1,2),parallelize(j,cpu_thread,temporary)",
                            "split(j,j0,j1,2),parallelize(j1,cpu_thread,temporary)"}) {
    SCOPED_TRACE(sched);
    Assignment spmm = M.assignment();
    std::string code = Kernel::emitC(spmm, parseSchedule(sched, spmm));
    std::string compute = code.substr(code.find("int tessel_compute("));
    const std::string allocation = "tessel_thread_copies = (double*)tessel_alloc(ntmp, sizeof(double), 1);";
    size_t alloc = compute.find(allocation);
    ASSERT_NE(alloc, std::string::npos) << compute;
    EXPECT_EQ(compute.find("tessel_alloc(", alloc + allocation.size()), std::string::npos) << compute;
    size_t firstLoop = compute.find("for (");
    size_t sum = compute.find("M_vals[x] += tessel_thread_copies[");
    size_t lastRowLoopEnd = compute.rfind("\n  }\n  for (int64_t t");
    EXPECT_LT(alloc, firstLoop) << compute;
    EXPECT_NE(sum, std::string::npos) << compute;
    EXPECT_NE(lastRowLoopEnd, std::string::npos) << compute;  // the sum follows the outermost loop
    EXPECT_LT(lastRowLoopEnd, sum) << compute;
    EXPECT_NE(compute.find("double* restrict M_vals = tessel_thread_copies + "), std::string::npos) << compute;
    for (int threads : {1, 2, 4})
      EXPECT_TRUE(matchesReferenceScheduled("M(i,k) = B(i,j) * E(j,k)",
                                            {{"B", randomCoo({37, 11}, 0.3, rng), CSR()},
                                             {"E", randomCoo({11, 5}, 1.0, rng), DenseFormat(2)}},
                                            DenseFormat(2), [&](const std::vector<IndexVar>&) { return std::string(sched); },
                                            threads));
  }
}

TEST(Lowering, SumMergesTimeABranchingAndABranchFreeLoop) {
  // A sum of sparse operands merges in two variants, picked per row by a tuner that
  // times both (lower/merge_tuner.h); only in the compute phase, and only where the
  // merged levels are the operands' last (their positions index the values).
  IndexVar i("i"), j("j"), k("k");
  TensorBase A = T("A", {9, 8}, "ds"), B = T("B", {9, 8}, "ds"), C = T("C", {9, 8}, "ds");
  TensorBase Y("Y", Datatype::Float64, {9, 8}, CSR());
  Y(i, j) = A(i, j) + B(i, j) + C(i, j);
  std::string code = Y.emitC();
  std::string compute = code.substr(code.find("int tessel_compute("));
  std::string assemble = code.substr(0, code.find("int tessel_compute("));
  EXPECT_EQ(assemble.find("tune_left"), std::string::npos) << assemble;
  // Serial: the state lives for the whole call, and a trial starts it unless an earlier
  // call's choice is reused (function statics, one slot per thread range; a trial's end
  // keeps its choice there).
  EXPECT_NE(compute.find("  static int64_t tune_memo_best[64];\n  static int64_t tune_memo_every[64];\n  static int64_t tune_memo_calls[64];\n"
                         "  int64_t tune_memo_slot = 0;\n"
                         "  int64_t tune_memo_reused = tessel_tune_reuse(&tune_memo_best[tune_memo_slot], "
                         "&tune_memo_calls[tune_memo_slot]);\n"
                         "  int64_t tune_left = (int64_t)tessel_sel_i64(tune_memo_reused < 0, 1024, 0);\n"
                         "  int64_t tune_wait = 16384;\n"
                         "  int64_t tune_best = (int64_t)tessel_sel_i64(tune_memo_reused < 0, 0, tune_memo_reused);\n"),
            std::string::npos) << compute;
  EXPECT_NE(compute.find("tessel_tune_keep(&tune_memo_best[tune_memo_slot], &tune_memo_every[tune_memo_slot], "
                         "&tune_memo_calls[tune_memo_slot], tune_best, 64);"),
            std::string::npos) << compute;
  EXPECT_NE(compute.find("if (tune_mode != 0) {"), std::string::npos) << compute;
  EXPECT_NE(compute.find("if (jA == j) {\n          A_val = A_vals[pA1];\n          pA1 = pA1 + 1;\n        }"),
            std::string::npos) << compute;
  EXPECT_NE(compute.find("] = (A_val + B_val) + C_val;"), std::string::npos) << compute;
  EXPECT_NE(compute.find("(tessel_sel_f64(jA == j, A_vals[pA1], 0.0) + tessel_sel_f64(jB == j, B_vals[pB1], 0.0))"),
            std::string::npos) << compute;
  EXPECT_NE(compute.find("int64_t tune_dt = tessel_min(tessel_clock() - tune_t0, (work * 100) + 800);"),
            std::string::npos) << compute;
  // In parallel: per thread range (trials on); in a loop whose body runs per row, the
  // state would restart every row, so no trial starts there.
  Assignment add3 = Y.assignment();
  std::string ranges = Kernel::emitC(add3, defaultParallelSchedule(add3, 2));
  size_t stop = ranges.find("int64_t i_block_stop = ");
  ASSERT_NE(stop, std::string::npos) << ranges;
  EXPECT_NE(ranges.find("int64_t tune_memo_slot = t2 % 64;", stop), std::string::npos) << ranges;
  EXPECT_NE(ranges.find("int64_t tune_left = (int64_t)tessel_sel_i64(tune_memo_reused < 0, 1024, 0);", stop),
            std::string::npos) << ranges;
  // A trial cut short by the end of the range (a thread's share of fewer than 1024 rows)
  // settles on its 64 or more timed rows, after the range's loop, so that the next calls
  // reuse its choice instead of running a trial each.
  const std::string cutShort = "if ((tune_left > 0) && ((1024 - tune_left) >= 64)) {";
  size_t settleRange = ranges.find(cutShort, stop);
  ASSERT_NE(settleRange, std::string::npos) << ranges;
  EXPECT_NE(ranges.find("tessel_tune_keep(", settleRange), std::string::npos) << ranges;
  EXPECT_EQ(ranges.find("tessel_settle_block", settleRange), std::string::npos) << ranges;  // after the loop
  size_t settleSerial = compute.find(cutShort);
  ASSERT_NE(settleSerial, std::string::npos) << compute;
  EXPECT_EQ(compute.find("Y1_pos[pY0 + 1]", settleSerial), std::string::npos) << compute;  // after the loop
  TensorBase M("M", Datatype::Float64, {9, 8}, DenseFormat(2));
  M(i, j) = A(i, j) + B(i, j);
  Assignment dense = M.assignment();
  std::string rows = Kernel::emitC(dense, parseSchedule("parallelize(i)", dense));
  size_t par = rows.find("#pragma omp parallel for schedule(guided)");
  ASSERT_NE(par, std::string::npos) << rows;
  EXPECT_NE(rows.find("int64_t tune_memo_reused = -1;\n    int64_t tune_left = 0;\n"
                      "    int64_t tune_wait = 9223372036854775807LL;", par),
            std::string::npos) << rows;
  // C's merged level k is its first; its value sits below a dense level: no branching variant.
  TensorBase Bi = T("Bi", {9, 8}, "ds"), Ck = T("Ck", {8, 9}, "sd"), y("y", Datatype::Float64, {9}, DenseFormat(1));
  y(i) = Bi(i, k) + Ck(k, i);
  EXPECT_EQ(y.emitC().find("tune_left"), std::string::npos) << y.emitC();
  // Enough rows for trials to end and the picked variant to run (both variants alternate
  // during a trial, which every smaller test exercises); then the same kernel again, on
  // other data and shapes of rows, so that later calls reuse a choice (and start with
  // no trial) where it was made on other rows.
  std::mt19937_64 r(11);
  for (int threads : {1, 2, 4}) {
    std::vector<std::vector<Operand>> rounds;
    for (double density : {0.1, 0.4, 0.02, 0.1, 0.3, 0.1}) {
      std::vector<Operand> ops;
      for (const char* name : {"A", "B", "C"}) ops.push_back({name, randomCoo({3000, 40}, density, r), CSR()});
      rounds.push_back(ops);
    }
    EXPECT_TRUE(matchesReferenceEachRound("Y(i,j) = A(i,j) + B(i,j) + C(i,j)", rounds, CSR(), threads));
  }
}

TEST(Lowering, GeneratedSpMVSumsEachRowInTwoChains) {
  IndexVar i("i"), j("j");
  TensorBase B = T("B", {5, 6}, "ds"), c = T("c", {6}, "d"), a("a", Datatype::Float64, {5}, DenseFormat(1));
  a(i) = B(i, j) * c(j);
  std::string code = a.emitC();
  EXPECT_NE(code.find("for (int64_t i = 0; i < a0_dim; i++)"), std::string::npos) << code;
  // x[crd[p]] is a gather: when B's rows average 24 or more entries (a flag set once per
  // call, so that rows of mixed lengths do not mispredict), even and odd positions sum
  // in two scalar chains, the odd position left over in the plain loop, and the chains
  // meet at the row's end; else (graphs, road networks) every row keeps the plain loop,
  // its product kept from fusing with the add (one add per entry on the chain).
  EXPECT_NE(code.find("int64_t pB1_lo = (int64_t)B1_pos[pB0];"), std::string::npos) << code;
  EXPECT_NE(code.find("bool B1_pos_long = B->crd_size[1] >= (24 * (B->pos_size[1] - 1));"), std::string::npos) << code;
  EXPECT_NE(code.find("if (B1_pos_long) {"), std::string::npos) << code;
  EXPECT_NE(code.find("int64_t pB1_pairs = (pB1_hi - pB1_lo) / 2;"), std::string::npos) << code;
  EXPECT_NE(code.find("for (int64_t pB1_pair = 0; pB1_pair < pB1_pairs; pB1_pair++)"), std::string::npos) << code;
  EXPECT_NE(code.find("acc = acc + (B_vals[pB1] * c_vals[pc0]);"), std::string::npos) << code;
  EXPECT_NE(code.find("acc_odd = acc_odd + (B_vals[pB1_odd] * c_vals[pc0_odd]);"), std::string::npos) << code;
  EXPECT_NE(code.find("for (int64_t pB1 = pB1_lo + (2 * pB1_pairs); pB1 < pB1_hi; pB1++)"), std::string::npos)
      << code;
  EXPECT_NE(code.find("acc = acc + acc_odd;"), std::string::npos) << code;
  // Each row prefetches its crd and vals 1024 positions ahead when B's arrays are large
  // and its rows hold 4 or more entries on average.
  EXPECT_NE(code.find("bool B1_streams = (B->crd_size[1] >= 2097152) && (B->crd_size[1] >= (4 * B->pos_size[1]));"),
            std::string::npos) << code;
  EXPECT_NE(code.find("        tessel_prefetch(B1_crd + ((int64_t)B1_pos[pB0] + 1024));\n"
                      "        tessel_prefetch(B_vals + ((int64_t)B1_pos[pB0] + 1024));"),
            std::string::npos) << code;
  // A row whose rows average 12 entries or more sums with AVX-512 gathers, where the
  // machine has them (the flag is constant false otherwise).
  EXPECT_NE(code.find("bool B1_pos_gathers = tessel_gather_dot_pays(B->crd_size[1], B->pos_size[1] - 1);"),
            std::string::npos) << code;
  EXPECT_NE(code.find("acc = acc + tessel_gather_dot_f64(pB1_lo, pB1_hi, B1_crd, B_vals, c_vals);"),
            std::string::npos) << code;
  // Short rows of irregular lengths (a sample of B's pos array) take 4-entry gathers.
  EXPECT_NE(code.find("bool B1_pos_short = tessel_short_gathers_pay(B1_pos, 0, B->crd_size[1], B->pos_size[1] - 1);"),
            std::string::npos) << code;
  EXPECT_NE(code.find("acc = acc + tessel_gather_dot4_f64(pB1_lo, pB1_hi, B1_crd, B_vals, c_vals);"),
            std::string::npos) << code;
  // The flags are tested once, before the row loop: one copy of it per value of the
  // streams flag and of the three sums (gathers, else two chains, else one), the last
  // without hints and with the plain loop.
  EXPECT_NE(code.find("  if (B1_streams) {\n    if (B1_pos_gathers) {\n      for (int64_t i = 0; i < a0_dim; i++) {"),
            std::string::npos) << code;
  EXPECT_NE(code.find("    } else if (B1_pos_long) {\n      for (int64_t i = 0; i < a0_dim; i++) {"),
            std::string::npos) << code;
  EXPECT_NE(code.find("  } else if (B1_pos_gathers) {\n    for (int64_t i = 0; i < a0_dim; i++) {"),
            std::string::npos) << code;
  EXPECT_NE(code.find("  } else if (B1_pos_short) {\n    for (int64_t i = 0; i < a0_dim; i++) {"),
            std::string::npos) << code;
  EXPECT_EQ(code.find("if (B1_streams) {\n      tessel_prefetch"), std::string::npos) << code;
  const std::string last = code.substr(code.rfind("for (int64_t i = 0; i < a0_dim; i++)"));
  EXPECT_EQ(last.find("tessel_prefetch"), std::string::npos) << last;
  EXPECT_EQ(last.find("_odd"), std::string::npos) << last;
  // The plain loop's first entry is peeled: a row of one entry does not enter the loop.
  EXPECT_NE(last.find("if (pB1_lo < pB1_hi) {"), std::string::npos) << last;
  EXPECT_NE(last.find("acc = acc + tessel_unfused_f64(B_vals[pB1_lo] * c_vals[pc0_first]);"), std::string::npos)
      << last;
  EXPECT_NE(last.find("for (int64_t pB1 = pB1_lo + 1; pB1 < pB1_hi; pB1++) {"), std::string::npos) << last;
  EXPECT_NE(last.find("acc = acc + tessel_unfused_f64(B_vals[pB1] * c_vals[pc0]);"), std::string::npos) << last;
  const std::string first = code.substr(0, code.find("} else {", code.find("if (B1_pos_long) {")));
  EXPECT_EQ(first.find("acc = acc + tessel_unfused"), std::string::npos) << first;
  // A gather sum over a range that is not one pos segment tests its own length.
  TensorBase C = T("C", {5, 6}, "ds"), s("s", Datatype::Float64, {}, Format());
  s() = C(i, j) * c(j);
  code = s.emitC();
  EXPECT_EQ(code.find("_long"), std::string::npos) << code;
  EXPECT_NE(code.find(">= 8) {"), std::string::npos) << code;
  EXPECT_NE(code.find("if (tessel_gather_dot_pays(pC1_hi - pC1_lo, 1)) {"), std::string::npos) << code;
}

TEST(Lowering, SumsThatMarkAnEntryStillReorder) {
  // A sparse output whose pattern is not copied marks whether the fiber had an entry
  // (`hit = 1` in the sum's loop): the mark moves after the loop, guarded by its bounds
  // being non-empty, so the sum still gets the gathers and two chains.
  IndexVar i("i"), j("j"), k("k");
  TensorBase Tn = T("Tn", {4, 5, 6}, "dds"), c = T("c", {6}, "d");
  TensorBase A("A", Datatype::Float64, {4, 5}, CSR());
  A(i, j) = Tn(i, j, k) * c(k);
  std::string code = A.emitC();
  std::string compute = code.substr(code.find("int tessel_compute("));
  EXPECT_NE(compute.find("acc = acc + tessel_gather_dot_f64(pTn2_lo, pTn2_hi, Tn2_crd, Tn_vals, c_vals);"),
            std::string::npos) << compute;
  EXPECT_NE(compute.find("acc_odd = acc_odd + "), std::string::npos) << compute;
  // Every mark sits in such a guard, none in a loop.
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = compute.find(what); at != std::string::npos; at = compute.find(what, at + 1)) n++;
    return n;
  };
  size_t guards = count("if ((int64_t)Tn2_pos[pTn1] < (int64_t)Tn2_pos[pTn1 + 1]) {\n");
  EXPECT_GE(guards, 3u) << compute;
  EXPECT_EQ(count("hit = 1;"), guards) << compute;
}

TEST(Lowering, DenseDotProductsSumInVectorLanes) {
  IndexVar i("i"), j("j"), k("k");
  TensorBase S = T("S", {5, 6}, "ds"), U = T("U", {5, 4}, "dd", 1.0), V = T("V", {6, 4}, "dd", 1.0);
  TensorBase A("A", Datatype::Float64, {5, 6}, CSR());
  A(i, j) = S(i, j) * U(i, k) * V(j, k);
  std::string code = A.emitC();
  EXPECT_NE(code.find("#pragma omp simd reduction(+:acc)\n      for (int64_t k = 0;"), std::string::npos) << code;
  EXPECT_EQ(code.find("_odd"), std::string::npos) << code;
}

TEST(Lowering, OnlyFloatingPointSumLoopsGetChains) {
  IndexVar i("i"), j("j");
  TensorBase B = makeTensor("B", randomCoo({5, 6}, 0.5, rng, false, true), Format::parse("ds"), Datatype::Int64);
  TensorBase c = makeTensor("c", randomCoo({6}, 1.0, rng, false, true), Format::parse("d"), Datatype::Int64);
  TensorBase a("a", Datatype::Int64, {5}, DenseFormat(1));
  a(i) = B(i, j) * c(j);  // integer sums are exact and fast in order
  std::string code = a.emitC();
  EXPECT_EQ(code.find("_odd"), std::string::npos) << code;
  EXPECT_EQ(code.find("omp simd"), std::string::npos) << code;
  TensorBase d = T("d", {6}, "d"), y("y", Datatype::Float64, {6}, DenseFormat(1));
  y(j) = B(i, j) * d(j);  // stores into the output in the loop: not a reduction
  code = y.emitC();
  EXPECT_EQ(code.find("_odd"), std::string::npos) << code;
  EXPECT_EQ(code.find("omp simd"), std::string::npos) << code;
}

TEST(Lowering, SpMMAddsFourTermsPerRowUpdate) {
  IndexVar i("i"), j("j"), k("k");
  TensorBase B = T("B", {5, 6}, "ds"), C = T("C", {6, 4}, "dd", 1.0), A("A", Datatype::Float64, {5, 4}, DenseFormat(2));
  A(i, j) = B(i, k) * C(k, j);
  std::string code = A.emitC();
  EXPECT_NE(code.find("int64_t pB1_groups = (pB1_hi - pB1_lo) / 4;"), std::string::npos) << code;
  EXPECT_NE(code.find("A_vals[pA1] += ((B_vals[pB1] * C_vals[pC1]) + (B_vals[pB1_1] * C_vals[pC1_1])) + "
                      "((B_vals[pB1_2] * C_vals[pC1_2]) + (B_vals[pB1_3] * C_vals[pC1_3]));"),
            std::string::npos) << code;
  EXPECT_NE(code.find("for (int64_t pB1 = pB1_lo + (4 * pB1_groups); pB1 < pB1_hi; pB1++)"), std::string::npos) << code;
}

TEST(Lowering, UnrollAndJamLeavesLoopsThatReadTheRow) {
  using namespace tessel::ir;
  Expr p = var("p", i64()), j = var("j", i64()), n = var("n", i64());
  Expr Y = var("Y", ptr(Datatype::Float64)), v = var("v", ptr(Datatype::Float64, true));
  auto loop = [&](Expr value, Expr index) {
    return forRange(p, intImm(0), n, block({forRange(j, intImm(0), n, store(Y, index, value, true))}));
  };
  Expr term = mul(load(v, p), load(v, j));
  EXPECT_EQ(unrollAndJam(loop(term, j))->op, StmtOp::Block);  // jammed
  EXPECT_EQ(unrollAndJam(loop(add(term, load(Y, add(j, intImm(1)))), j))->op, StmtOp::For);  // reads Y
  EXPECT_EQ(unrollAndJam(loop(term, add(j, p)))->op, StmtOp::For);  // each p its own entries
  Stmt atomic = forRange(p, intImm(0), n, block({forRange(j, intImm(0), n, atomicAdd(Y, j, term))}));
  EXPECT_EQ(unrollAndJam(atomic)->op, StmtOp::For);
}

TEST(Lowering, PositionLoopsCollapseOnlyOverTheirChildren) {
  using namespace tessel::ir;
  Expr p = var("p", i64()), q = var("q", i64()), n = var("n", i64()), r = var("r", i64());
  Expr P = var("P", ptr(Datatype::Int32, true)), W = var("W", ptr(Datatype::Int32));
  Expr Y = var("Y", ptr(Datatype::Float64)), v = var("v", ptr(Datatype::Float64, true));
  auto at = [&](const Expr& a, const Expr& k) { return cast(i64(), load(a, k)); };
  Stmt body = store(Y, q, load(v, q));
  auto loop = [&](const Expr& lo, const Expr& hi, const Stmt& b, std::vector<Stmt> before = {}) {
    before.push_back(forRange(q, lo, hi, b));
    return forRange(p, intImm(0), n, block(before));
  };
  Stmt flat = collapsePositionLoops(loop(at(P, p), at(P, add(p, intImm(1))), body));
  ASSERT_EQ(flat->op, StmtOp::For);
  EXPECT_EQ(flat->args[0]->name, "q");
  // Through an alias of p (pB0 = p), and under a window [lo, hi).
  Expr alias = var("pB0", i64()), lo = var("lo", i64()), hi = var("hi", i64());
  Stmt windowed = loop(binary(ExprOp::Max, at(P, alias), lo), minOf(at(P, add(alias, intImm(1))), hi), body,
                       {decl(alias, p)});
  EXPECT_EQ(collapsePositionLoops(windowed)->args[0]->name, "q");
  // Not collapsed: the end is not the next parent's begin, the array is written (not
  // a read-only pos array), the body reads p or a per-row decl, or it breaks out of a row.
  EXPECT_EQ(collapsePositionLoops(loop(at(P, p), at(P, add(p, intImm(2))), body))->args[0]->name, "p");
  EXPECT_EQ(collapsePositionLoops(loop(at(W, p), at(W, add(p, intImm(1))), body))->args[0]->name, "p");
  EXPECT_EQ(collapsePositionLoops(loop(at(P, p), at(P, add(p, intImm(1))), store(Y, q, cast(scalar(Datatype::Float64), p))))
                ->args[0]->name, "p");
  Stmt perRow = loop(at(P, p), at(P, add(p, intImm(1))), store(Y, q, cast(scalar(Datatype::Float64), r)),
                     {decl(r, add(p, intImm(3)))});
  EXPECT_EQ(collapsePositionLoops(perRow)->args[0]->name, "p");
  EXPECT_EQ(collapsePositionLoops(loop(at(P, p), at(P, add(p, intImm(1))), block({body, breakLoop()})))->args[0]->name,
            "p");
  Stmt parallel = forRange(p, intImm(0), n, block({forRange(q, at(P, p), at(P, add(p, intImm(1))), body)}),
                           cpuParallel(ParallelStrategy::Guided));
  EXPECT_EQ(collapsePositionLoops(parallel)->args[0]->name, "p");
}

TEST(Lowering, LoopsAreCopiedPerValueOfTheFlagsTheyTest) {
  using namespace tessel::ir;
  Expr i = var("i", i64()), n = var("n", i64()), Y = var("Y", ptr(Datatype::Float64));
  Expr f = var("f", scalar(Datatype::Bool)), g = var("g", scalar(Datatype::Bool)), h = var("h", scalar(Datatype::Bool));
  auto put = [&](double v) { return store(Y, i, floatImm(v)); };
  Stmt loop = forRange(i, intImm(0), n, block({ifThen(f, put(1), put(2)), ifThen(g, put(3))}));
  Stmt u = simplify(unswitchLoopFlags(loop));
  ASSERT_EQ(u->op, StmtOp::If);  // if (f) { if (g) loop11 else loop10 } else { ... }
  EXPECT_EQ(u->args[0]->name, "f");
  const Stmt& yes = u->body[0];
  ASSERT_EQ(yes->op, StmtOp::If);
  EXPECT_EQ(yes->args[0]->name, "g");
  std::vector<Stmt> fg = statementsOf(yes->body[0]->body[0]);  // f and g: Y[i] = 1; Y[i] = 3
  ASSERT_EQ(fg.size(), 2u);
  EXPECT_EQ(fg[0]->args[2]->fval, 1.0);
  EXPECT_EQ(fg[1]->args[2]->fval, 3.0);
  std::vector<Stmt> none = statementsOf(u->elseBody[0]->elseBody[0]->body[0]);  // neither: Y[i] = 2
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0]->args[2]->fval, 2.0);
  // Flags set inside the loop stay tests; a fifth flag stays a test (four deep at most).
  Stmt local = forRange(i, intImm(0), n, block({decl(f, lt(i, n)), ifThen(f, put(1))}));
  EXPECT_EQ(unswitchLoopFlags(local)->op, StmtOp::For);
  Stmt assigned = forRange(i, intImm(0), n, block({ifThen(f, put(1)), assign(f, lt(i, n))}));
  EXPECT_EQ(unswitchLoopFlags(assigned)->op, StmtOp::For);
  Expr k = var("k", scalar(Datatype::Bool)), m = var("m", scalar(Datatype::Bool));
  Stmt five = simplify(unswitchLoopFlags(forRange(
      i, intImm(0), n,
      block({ifThen(f, put(1)), ifThen(g, put(2)), ifThen(h, put(3)), ifThen(k, put(4)), ifThen(m, put(5))}))));
  ASSERT_EQ(five->op, StmtOp::If);
  const Stmt& deepest = five->body[0]->body[0]->body[0]->body[0];
  EXPECT_EQ(deepest->op, StmtOp::For);
  EXPECT_EQ(statementsOf(deepest->body[0]).back()->args[0]->name, "m");
  // A flag tested only when another is false splits only that copy: three loops, not four.
  Stmt chain = simplify(unswitchLoopFlags(forRange(i, intImm(0), n, ifThen(g, put(1), ifThen(h, put(2), put(3))))));
  ASSERT_EQ(chain->op, StmtOp::If);
  EXPECT_EQ(chain->args[0]->name, "g");
  EXPECT_EQ(chain->body[0]->op, StmtOp::For);
  ASSERT_EQ(chain->elseBody[0]->op, StmtOp::If);
  EXPECT_EQ(chain->elseBody[0]->args[0]->name, "h");
  EXPECT_EQ(chain->elseBody[0]->body[0]->op, StmtOp::For);
  EXPECT_EQ(chain->elseBody[0]->elseBody[0]->op, StmtOp::For);
}

TEST(Lowering, DimensionMismatchNamesTheVariable) {
  IndexVar i("i"), j("j");
  TensorBase B = T("B", {5, 6}, "ds"), c = T("c", {7}, "d"), a("a", Datatype::Float64, {5}, DenseFormat(1));
  try {
    a(i) = B(i, j) * c(j);  // checked when the assignment is made
    FAIL() << "expected DimensionError";
  } catch (const DimensionError& e) {
    EXPECT_NE(std::string(e.what()).find("j"), std::string::npos) << e.what();
  }
}

TEST(Lowering, OutputOnTheRightIsRejected) {
  IndexVar i("i"), j("j");
  TensorBase B = T("B", {5, 5}, "ds"), A("A", Datatype::Float64, {5, 5}, CSR());
  EXPECT_THROW(A(i, j) = B(i, j) + A(i, j), NotationError);
}

TEST(Lowering, KernelRejectsOtherFormats) {
  IndexVar i("i"), j("j");
  TensorBase B = T("B", {5, 6}, "ds"), c = T("c", {6}, "d"), a("a", Datatype::Float64, {5}, DenseFormat(1));
  a(i) = B(i, j) * c(j);
  auto k = Kernel::compile(a.assignment());
  TensorBase B2 = T("B", {5, 6}, "ss");
  a(i) = B2(i, j) * c(j);
  EXPECT_THROW(k->run(a.assignment()), UserError);
}

TEST(Lowering, HugeDenseOutputOverflowsBeforeAllocating) {
  EXPECT_THROW(TensorBase("A", Datatype::Float64, {int64_t(1) << 40, int64_t(1) << 40}, DenseFormat(2)),
               OverflowError);
}

TEST(Lowering, SecondCompileIsACacheHit) {
  IndexVar i("i"), j("j");
  TensorBase B = T("B", {5, 6}, "ds"), c = T("c", {6}, "d"), a("a", Datatype::Float64, {5}, DenseFormat(1));
  a(i) = B(i, j) * c(j);
  Kernel::compile(a.assignment());
  auto k = Kernel::compile(a.assignment());
  EXPECT_TRUE(k->cacheHit());
  EXPECT_LT(k->compileSeconds(), 0.1);
}

TEST(Lowering, SparseOutputOfAReductionStoresNoExplicitZeros) {
  IndexVar i("i"), j("j"), k("k");
  CooData b;
  b.dims = {3, 4};
  b.add({0, 0}, 1.0);
  b.add({1, 1}, 2.0);
  b.add({2, 0}, 3.0);
  TensorBase B = makeTensor("B", b, CSR()), Bt = makeTensor("C", b, CSR());
  TensorBase A("A", Datatype::Float64, {3, 3}, CSR());
  A(i, j) = B(i, k) * Bt(j, k);  // rows 0 and 2 share column 0; row 1 meets only itself
  A.evaluate();
  EXPECT_EQ(A.storedCount(), 5);  // (0,0) (0,2) (1,1) (2,0) (2,2)
  EXPECT_TRUE(tensorsClose(referenceEvaluate(A.assignment()), A.toCoo(), 0, 0));
}

TEST(Lowering, RerunReassemblesTheOutput) {
  IndexVar i("i"), j("j");
  TensorBase B = T("B", {8, 8}, "ds"), C = T("C", {8, 8}, "ds"), A("A", Datatype::Float64, {8, 8}, CSR());
  A(i, j) = B(i, j) * C(i, j);
  auto k = Kernel::compile(A.assignment());
  k->run(A.assignment());
  CooData first = A.toCoo();
  k->run(A.assignment());
  EXPECT_TRUE(tensorsClose(first, A.toCoo(), 0, 0));
  EXPECT_TRUE(tensorsClose(referenceEvaluate(A.assignment()), A.toCoo(), 1e-12, 1e-12));
}

TEST(Lowering, ExponentialExpressionsAreRefusedQuickly) {
  // Seven sparse operands co-iterated at one variable: 2^7 - 1 lattice points (and 3^7
  // cases) is over the limit.
  std::string sum = "A(i) = B0(i)";
  std::map<std::string, TensorBase> tensors;
  tensors["A"] = TensorBase("A", Datatype::Float64, {4}, Format::parse("s"));
  tensors["B0"] = T("B0", {4}, "s");
  for (int n = 1; n <= 6; n++) {
    std::string name = "B" + std::to_string(n);
    sum += " + " + name + "(i)";
    tensors[name] = T(name, {4}, "s");
  }
  tensors["A"] = TensorBase("A", Datatype::Float64, {4}, DenseFormat(1));
  Assignment wide = parseAssignment(sum, tensors);
  EXPECT_THROW(Kernel::emitC(wide), NotationError);
  // Six sparse operands are still fine.
  Assignment ten = parseAssignment(sum.substr(0, sum.rfind(" + ")), tensors);
  EXPECT_NO_THROW(Kernel::emitC(ten));
  // A sparse output gathers the seven terms in a workspace, one loop per term.
  tensors["A"] = TensorBase("A", Datatype::Float64, {4}, Format::parse("s"));
  Assignment gathered = parseAssignment(sum, tensors);
  std::string code = Kernel::emitC(gathered);
  EXPECT_NE(code.find("one loop per term"), std::string::npos) << code;

  // Many reductions over a long sum (found by fuzzing): refused in well under a second.
  std::map<std::string, TensorBase> t2;
  t2["A"] = TensorBase("A", Datatype::Float64, {2, 2}, Format::parse("ss"));
  for (auto n : {"B", "C", "D", "E"}) t2[n] = T(n, {2, 2}, "ds");
  std::string longSum = "A(y,n) = ";
  for (int r = 0; r < 6; r++)
    longSum += std::string(r ? " + " : "") + "B(a" + std::to_string(r) + ",j) + C(h,j" + std::to_string(r) +
               ") - D(i,b" + std::to_string(r) + ") + E(k" + std::to_string(r) + ",z)";
  Assignment deep = parseAssignment(longSum, t2);
  auto t0 = std::chrono::steady_clock::now();
  try {
    Kernel::emitC(deep);
  } catch (const NotationError& e) {
    EXPECT_NE(std::string(e.what()).find("too complex"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
}
