// Concrete index notation drives lowering: the tree the schedule produces (forall, where,
// sequence, assignment), printed exactly, and kernels whose trees hold several
// statements computing hand-computed values.
#include <gtest/gtest.h>

#include "driver/pipeline.h"
#include "lower/concrete_stmt.h"
#include "support/test_support.h"
#include "tessel/kernel.h"
#include "tessel/parser.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

Format fmt(const std::string& s) { return Format::parse(s); }

/// The concrete index notation of `expr` (tensors of the given formats and dims) under
/// `schedule`, as lowering receives it.
std::string concrete(const std::string& expr, std::map<std::string, TensorBase> t, const std::string& schedule = "") {
  Assignment a = parseAssignment(expr, t);
  return lower::str(driver::lowerAssignment(a, parseSchedule(schedule, a)).nest.stmt);
}

TensorBase empty(const std::string& name, std::vector<int64_t> dims, const std::string& f) {
  return TensorBase(name, Datatype::Float64, std::move(dims), fmt(f));
}

std::map<std::vector<int64_t>, double> entries(const TensorBase& t) {
  CooData c = t.toCoo();
  std::map<std::vector<int64_t>, double> out;
  for (int64_t e = 0; e < c.nnz(); e++)
    out[std::vector<int64_t>(c.coords.begin() + e * t.order(), c.coords.begin() + (e + 1) * t.order())] = c.values[e];
  return out;
}

}  // namespace

TEST(ConcreteStmt, ForallNestInLoopOrder) {
  std::map<std::string, TensorBase> t = {
      {"y", empty("y", {3}, "d")}, {"A", empty("A", {3, 4}, "ds")}, {"x", empty("x", {4}, "d")}};
  EXPECT_EQ(concrete("y(i) = A(i,j) * x(j)", t), "forall(i, forall(j, y(i) = A(i,j) * x(j)))");
  EXPECT_EQ(concrete("y(i) = A(i,j) * x(j)", t, "split(i,i0,i1,8),parallelize(i0)"),
            "forall(i0 by 8 parallel, forall(i1, forall(j, y(i) = A(i,j) * x(j))))");
}

TEST(ConcreteStmt, PrecomputeAtIsAWhereInsideTheLoop) {
  std::map<std::string, TensorBase> t = {{"A", empty("A", {2, 3}, "dd")},
                                         {"B", empty("B", {2, 4, 5}, "sss")},
                                         {"C", empty("C", {4, 3}, "dd")},
                                         {"D", empty("D", {5, 3}, "dd")}};
  const std::string mttkrp = "A(i,l) = B(i,j,k) * C(j,l) * D(k,l)";
  // Per (i,j): t(l) = sum over k of B*D, then A(i,l) += t(l) * C(j,l). Each side of the
  // where runs only the loops below j that its own expression uses.
  EXPECT_EQ(concrete(mttkrp, t, "precompute(B(i,j,k)*D(k,l),t,j)"),
            "forall(i, forall(j, where(forall(l, A(i,l) = C(j,l) * t(l)), "
            "forall(k, forall(l, t(l) += B(i,j,k) * D(k,l))))))");
  // Per (i,j,k): t(l) = D(k,l), the consumer reads it with B and C.
  EXPECT_EQ(concrete(mttkrp, t, "precompute(D(k,l),t,k)"),
            "forall(i, forall(j, forall(k, where(forall(l, A(i,l) = B(i,j,k) * C(j,l) * t(l)), "
            "forall(l, t(l) += D(k,l))))))");
}

TEST(ConcreteStmt, WorkspaceIsAWhereAndTermsAreASequence) {
  std::map<std::string, TensorBase> t = {{"A", empty("A", {3, 3}, "ds")}, {"B", empty("B", {3, 3}, "ds")},
                                         {"C", empty("C", {3, 3}, "ds")}, {"D", empty("D", {3, 3}, "ds")},
                                         {"E", empty("E", {3, 3}, "ds")}};
  EXPECT_EQ(concrete("A(i,j) = B(i,k) * C(k,j)", t),
            "forall(i, where(forall(j, A(i,j) = w(j)), forall(k, forall(j, w(j) += B(i,k) * C(k,j)))))");
  // The terms of a sum share the workspace's loops...
  EXPECT_EQ(concrete("A(i,j) = B(i,k) * C(k,j) + D(i,k) * E(k,j)", t),
            "forall(i, where(forall(j, A(i,j) = w(j)), forall(k, forall(j, w(j) += B(i,k) * C(k,j) + "
            "D(i,k) * E(k,j)))))");
  // ... or, in a workspace the schedule asks for, each runs its own loop: a sequence.
  EXPECT_EQ(concrete("A(i,j) = B(i,j) + C(i,j) - D(i,j)", t, "precompute(j)"),
            "forall(i, where(forall(j, A(i,j) = w(j)), sequence("
            "forall(j, w(j) += B(i,j)), forall(j, w(j) += C(i,j)), forall(j, w(j) += -D(i,j)))))");
  // Under a split the where sits inside the block loops.
  EXPECT_EQ(concrete("A(i,j) = B(i,k) * C(k,j)", t, "split(i,i0,i1,2)"),
            "forall(i0 by 2, forall(i1, where(forall(j, A(i,j) = w(j)), "
            "forall(k, forall(j, w(j) += B(i,k) * C(k,j))))))");
}

TEST(ConcreteStmt, SequenceOfTermsRunsOnlyThePresentTerms) {
  // A = B + C - D gathered in a workspace (precompute(j)), one loop per term in one
  // function. Each row's case runs the statements of the terms present in that row:
  //   B = [[1,0,0],[0,0,0],[2,0,4],[0,0,0]]
  //   C = [[0,0,0],[0,5,0],[0,3,0],[0,0,0]]
  //   D = [[0,0,7],[0,0,0],[1,0,1],[0,0,0]]
  //   A = [[1,0,-7],[0,5,0],[1,3,3],[0,0,0]]
  auto matrix = [](const std::string& name, const std::vector<std::pair<std::vector<int64_t>, double>>& es,
                   const std::string& f) {
    CooData c;
    c.dims = {4, 3};
    for (auto& [at, v] : es) c.add(at, v);
    return makeTensor(name, c, fmt(f));
  };
  for (const char* f : {"ds", "ss"})
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::string(f) + " on " + std::to_string(threads) + " threads");
      std::map<std::string, TensorBase> t = {{"B", matrix("B", {{{0, 0}, 1}, {{2, 0}, 2}, {{2, 2}, 4}}, f)},
                                             {"C", matrix("C", {{{1, 1}, 5}, {{2, 1}, 3}}, f)},
                                             {"D", matrix("D", {{{0, 2}, 7}, {{2, 0}, 1}, {{2, 2}, 1}}, f)},
                                             {"A", empty("A", {4, 3}, f)}};
      Assignment a = parseAssignment("A(i,j) = B(i,j) + C(i,j) - D(i,j)", t);
      auto k = Kernel::compile(a, parseSchedule("precompute(j)", a));
      EXPECT_NE(k->source().find("sequence("), std::string::npos);
      k->run(a, threads);
      std::map<std::vector<int64_t>, double> want = {{{0, 0}, 1}, {{0, 2}, -7}, {{1, 1}, 5},
                                                     {{2, 0}, 1}, {{2, 1}, 3},  {{2, 2}, 3}};
      EXPECT_EQ(entries(t["A"]), want);
      EXPECT_EQ(storageProblem(t["A"]), "");
    }
}
