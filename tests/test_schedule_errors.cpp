// Every rejected schedule names the command and the reason; the text parser reports
// malformed commands the same way.
#include <gtest/gtest.h>

#include "support/test_support.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

struct Bound {
  std::map<std::string, TensorBase> tensors;
  Assignment a;
};

Bound bind(const std::string& expr, const std::map<std::string, Format>& formats) {
  Bound b;
  std::mt19937_64 rng(1);
  for (const TensorUse& u : scanTensors(expr)) {
    Format f = formats.count(u.name) ? formats.at(u.name) : DenseFormat(u.order);
    std::vector<int64_t> dims(u.order, 6);
    b.tensors[u.name] = makeTensor(u.name, randomCoo(dims, 0.4, rng), f);
  }
  b.a = parseAssignment(expr, b.tensors);
  return b;
}

/// Compiling `expr` with `schedule` throws ScheduleError whose message has every part.
void expectRejected(const std::string& expr, const std::map<std::string, Format>& formats,
                    const std::string& schedule, const std::vector<std::string>& parts) {
  Bound b = bind(expr, formats);
  SCOPED_TRACE(expr + " with " + schedule);
  try {
    Kernel::emitC(b.a, parseSchedule(schedule, b.a));
    ADD_FAILURE() << "accepted";
  } catch (const ScheduleError& e) {
    for (const std::string& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

const std::string kSpMV = "y(i) = B(i,j) * x(j)";
const std::map<std::string, Format> kCsr = {{"B", CSR()}};

}  // namespace

TEST(ScheduleErrors, UnknownAndReusedVariables) {
  expectRejected(kSpMV, kCsr, "split(q,q0,q1,4)", {"split(q,q0,q1,4)", "unknown index variable q", "loops now: i, j"});
  expectRejected(kSpMV, kCsr, "split(i,j,i1,4)", {"j already names a loop"});
  expectRejected(kSpMV, kCsr, "split(i,i0,i1,4),parallelize(i)", {"parallelize(i,", "unknown index variable i"});
}

TEST(ScheduleErrors, ReorderAgainstModeOrder) {
  expectRejected(kSpMV, kCsr, "reorder(j,i)", {"reorder(j,i)", "B (ds) stores i before j", "no random access"});
  expectRejected("A(i,j) = B(i,j) + C(i,j)", {{"B", CSR()}, {"C", CSR()}, {"A", CSR()}}, "reorder(j,i)",
                 {"stores i before j"});
  expectRejected("A(i,j) = B(i,k) * C(k,j)", {{"A", CSR()}}, "reorder(j,i,k)", {"A (ds)", "appended in order"});
  expectRejected(kSpMV, kCsr, "split(i,i0,i1,4),reorder(i1,i0)", {"i0 splits i", "outside the loop over it"});
}

TEST(ScheduleErrors, RacesOnOutputs) {
  expectRejected(kSpMV, kCsr, "parallelize(j)", {"parallelize(j,cpu_thread,no_races)", "reduction over j", "race on y",
                                                 "atomics or temporary"});
  expectRejected(kSpMV, kCsr, "fuse(i,j,f),pos(f,fp,B),split(fp,p0,p1,8),parallelize(p0)",
                 {"reduction over j", "race on y"});
  expectRejected("A(i,j) = B(i,j) + C(i,j)", {{"B", CSR()}, {"C", CSR()}, {"A", CSR()}}, "parallelize(j)",
                 {"A (ds) is assembled by appending", "first level"});
  expectRejected("A(i,j) = B(i,j) + C(i,j)", {{"B", DCSR()}, {"C", DCSR()}, {"A", DCSR()}}, "parallelize(i)",
                 {"A (ss)", "must be dense"});
  expectRejected("A(i,j) = B(i,k) * C(k,j)", {{"B", CSR()}, {"C", CSR()}, {"A", CSR()}},
                 "parallelize(k,cpu_thread,atomics)", {"A (ds) is assembled by appending"});
  expectRejected("A(i,j) = B(i,j) * C(i,k) * D(j,k)", {{"B", CSR()}, {"A", CSR()}},
                 "parallelize(k,cpu_thread,atomics)", {"atomics need a dense output", "A is ds"});
  expectRejected("A(i,j) = B(i,j) + C(i,j)", {{"B", CSR()}, {"C", CSR()}},
                 "parallelize(j)", {"merges the sorted coordinates of B, C"});
  expectRejected(kSpMV, kCsr, "split(i,i0,i1,4),parallelize(i0),parallelize(i1)",
                 {"only one loop may run in parallel", "i0 already does"});
}

TEST(ScheduleErrors, PosAndFuse) {
  expectRejected(kSpMV, kCsr, "pos(i,ip,B)", {"pos(i,ip,B)", "B's level 0 (i) is dense (ds)"});
  expectRejected(kSpMV, kCsr, "pos(j,jp,Z)", {"'Z' is not a tensor on the right-hand side"});
  expectRejected(kSpMV, kCsr, "pos(j,jp,x)", {"x's level 0 (j) is dense"});
  expectRejected("y(i) = B(i,j) * x(j) + C(i,j) * x(j)", {{"B", CSR()}, {"C", CSR()}}, "pos(j,jp,B)",
                 {"not zero where B has no entry"});
  expectRejected("A(i,l) = B(i,j,k) * C(j,l) * D(k,l)", {{"B", CSF(3)}}, "fuse(i,k,f)",
                 {"fuse(i,k,f)", "must be directly inside"});
  expectRejected(kSpMV, kCsr, "fuse(i,j,f),split(f,f0,f1,4)", {"apply pos(f, ..., tensor) before splitting"});
  expectRejected(kSpMV, {{"B", COO(2)}}, "fuse(i,j,f),pos(f,fp,B)", {"no positions array"});
  expectRejected(kSpMV, kCsr, "split(j,j0,j1,4),pos(j1,jp,B)", {"already split; apply pos before split"});
}

TEST(ScheduleErrors, PrecomputeBoundUnrollSizes) {
  expectRejected(kSpMV, kCsr, "precompute(i)", {"precompute(i)", "dense, which needs no workspace"});
  expectRejected("A(i,j) = B(i,k) * C(k,j)", {{"A", CSR()}}, "precompute(i)", {"not the variable of A's last level"});
  Schedule zero;
  IndexVar i0("i0"), i1("i1");
  Bound b = bind(kSpMV, kCsr);
  const IndexVar& iv = b.a.lhs.node().vars[0];
  zero.split(iv, i0, i1, 0);
  EXPECT_THROW(Kernel::emitC(b.a, zero), ScheduleError);
  // A bound that does not hold is found when the kernel runs.
  Schedule wrong = parseSchedule("bound(j,jb,5,max_exact)", b.a);
  auto k = Kernel::compile(b.a, wrong);
  try {
    k->run(b.a);
    ADD_FAILURE() << "bound not checked";
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("bound()"), std::string::npos) << e.what();
  }
  // No partial result: a sparse output that held a result is left empty and readable.
  Bound sp = bind("A(i,j) = B(i,j) + C(i,j)", {{"A", CSR()}, {"B", CSR()}, {"C", CSR()}});
  TensorBase A(sp.a.lhs.node().binding);
  Kernel::compile(sp.a)->run(sp.a);
  ASSERT_GT(A.storedCount(), 0);
  EXPECT_THROW(Kernel::compile(sp.a, parseSchedule("bound(j,jb,5,max_exact)", sp.a))->run(sp.a), ScheduleError);
  EXPECT_EQ(A.storedCount(), 0);
  EXPECT_EQ(A.toCoo().nnz(), 0);
  EXPECT_NO_THROW(Kernel::compile(b.a, parseSchedule("bound(j,jb,8,upper_bound)", b.a))->run(b.a));
  // A sparse += that fails keeps the entries it had (from the snapshot it read), with
  // and without a sum on the right (one stage, or two); also after earlier runs, whose
  // arrays it writes into.
  for (const char* expr : {"A(i,j) += B(i,j) + C(i,j)", "A(i,j) += B(i,k) * C(k,j)"})
    for (int earlier : {0, 2}) {
      SCOPED_TRACE(std::string(expr) + ", after " + std::to_string(earlier) + " runs");
      Bound acc = bind(expr, {{"A", CSR()}, {"B", CSR()}, {"C", CSR()}});
      TensorBase out(acc.a.lhs.node().binding);
      auto working = Kernel::compile(acc.a);
      for (int r = 0; r < earlier; r++) working->run(acc.a, 2);
      CooData before = out.toCoo();
      ASSERT_GT(before.nnz(), 0);
      auto failing = Kernel::compile(acc.a, parseSchedule("bound(j,jb,5,max_exact)", acc.a));
      EXPECT_THROW(failing->run(acc.a, 2), ScheduleError);
      std::string why;
      EXPECT_TRUE(tensorsClose(before, out.toCoo(), 0, 0, &why)) << why;
      CooData expected = referenceEvaluate(acc.a);
      working->run(acc.a, 2);  // and it still accumulates after
      EXPECT_TRUE(tensorsClose(expected, out.toCoo(), 1e-12, 1e-12, &why)) << why;
    }
}

TEST(ScheduleErrors, ParserMessages) {
  Bound b = bind(kSpMV, kCsr);
  auto expectParse = [&](const std::string& text, const std::string& part) {
    try {
      parseSchedule(text, b.a);
      ADD_FAILURE() << text << " accepted";
    } catch (const ScheduleError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expectParse("splt(i,i0,i1,4)", "unknown command 'splt'");
  expectParse("split(i,i0,i1,four)", "'four' is not an integer");
  expectParse("split(i,i0,i1,0)", "must be at least 1");
  expectParse("split(i,i0,4)", "expected 4 arguments, got 3");
  expectParse("parallelize(i,gpu_block)", "unknown parallel unit 'gpu_block'");
  expectParse("parallelize(i,cpu_thread,locks)", "unknown race strategy 'locks'");
  expectParse("split(i,i0,i1,4", "expected name(arguments)");
  expectParse("split(i,2x,i1,4)", "'2x' is not an index variable name");
  expectParse("bound(i,ib,4,exactly)", "unknown bound kind");
  // Round trip: parse(str) == str.
  Schedule s = parseSchedule(" split(i, i0,i1,32) ; parallelize(i0,CPUThread,Atomics) unroll(j,4)", b.a);
  EXPECT_EQ(s.str(), "split(i,i0,i1,32),parallelize(i0,cpu_thread,atomics),unroll(j,4)");
  EXPECT_EQ(parseSchedule(s.str(), b.a).str(), s.str());
}
