// Index notation: variables, expression printing, assignments and their checks.
#include <gtest/gtest.h>

#include "support/test_support.h"

#include <functional>
#include <string>

#include "tessel/tessel.h"

using namespace tessel;

namespace {

// Runs f, expects an exception of type E whose message contains every one of `parts`.
template <typename E>
void expectError(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no exception thrown";
  } catch (const E& e) {
    std::string msg = e.what();
    for (const std::string& p : parts)
      EXPECT_NE(msg.find(p), std::string::npos) << "message \"" << msg << "\" lacks \"" << p << "\"";
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

Assignment assign(const IndexExpr& lhs, const IndexExpr& rhs, bool acc = false) {
  return tessel::testing::makeAssignment(lhs, rhs, acc);
}

}  // namespace

TEST(IndexVar, FreshNamesAndIdentity) {
  IndexVar a, b;
  EXPECT_NE(a, b);
  EXPECT_NE(a.id(), b.id());
  EXPECT_NE(a.name(), b.name());
  ASSERT_GE(a.name().size(), 2u);
  EXPECT_EQ(a.name()[0], 'i');
  // Generated names are "i<N>" with consecutive N.
  uint64_t na = std::stoull(a.name().substr(1)), nb = std::stoull(b.name().substr(1));
  EXPECT_EQ(nb, na + 1);
  EXPECT_EQ(a.name(), "i" + std::to_string(na));

  IndexVar i("i"), i2("i");
  EXPECT_EQ(i.name(), "i");
  EXPECT_NE(i, i2);  // identity, not name
  IndexVar copy = i;
  EXPECT_EQ(copy, i);
  EXPECT_EQ(copy.id(), i.id());
  EXPECT_TRUE(i < i2 || i2 < i);
  EXPECT_LT(i.id(), i2.id());
}

TEST(IndexExpr, LiteralsAndKinds) {
  IndexExpr d(2.5), n(3);
  EXPECT_EQ(d.kind(), ExprKind::Literal);
  EXPECT_EQ(d.node().value, 2.5);
  EXPECT_EQ(n.node().value, 3.0);
  EXPECT_FALSE(IndexExpr().defined());
  EXPECT_THROW(IndexExpr().kind(), NotationError);
  EXPECT_EQ(IndexExpr(2).str(), "2");
  EXPECT_EQ(IndexExpr(0.5).str(), "0.5");
  EXPECT_EQ(IndexExpr(0.1).str(), "0.1");
  EXPECT_EQ(IndexExpr(1e20).str(), "1e+20");
  EXPECT_EQ(IndexExpr(-3.25).str(), "-3.25");
  EXPECT_EQ(IndexExpr(1.0 / 3).str(), "0.3333333333333333");
}

TEST(IndexExpr, PrintsWithMinimalParentheses) {
  Tensor<double> B("B", {3, 3}), C("C", {3, 3}), D("D", {3, 3}), s("s", {});
  IndexVar i("i"), j("j");
  EXPECT_EQ((B(i, j) * (C(i, j) + D(i, j))).str(), "B(i,j) * (C(i,j) + D(i,j))");
  EXPECT_EQ((B(i, j) * C(i, j) + D(i, j)).str(), "B(i,j) * C(i,j) + D(i,j)");
  EXPECT_EQ((B(i, j) + C(i, j) * D(i, j)).str(), "B(i,j) + C(i,j) * D(i,j)");
  EXPECT_EQ((B(i, j) - C(i, j) - D(i, j)).str(), "B(i,j) - C(i,j) - D(i,j)");
  EXPECT_EQ((B(i, j) - (C(i, j) - D(i, j))).str(), "B(i,j) - (C(i,j) - D(i,j))");
  EXPECT_EQ((B(i, j) - (C(i, j) + D(i, j))).str(), "B(i,j) - (C(i,j) + D(i,j))");
  EXPECT_EQ((B(i, j) / (C(i, j) * D(i, j))).str(), "B(i,j) / (C(i,j) * D(i,j))");
  EXPECT_EQ((B(i, j) * C(i, j) / D(i, j)).str(), "B(i,j) * C(i,j) / D(i,j)");
  EXPECT_EQ((-B(i, j)).str(), "-B(i,j)");
  EXPECT_EQ((-(B(i, j) + C(i, j))).str(), "-(B(i,j) + C(i,j))");
  EXPECT_EQ((-B(i, j) * C(i, j)).str(), "-B(i,j) * C(i,j)");
  EXPECT_EQ((2 * B(i, j) + 0.5).str(), "2 * B(i,j) + 0.5");
  EXPECT_EQ((B(i, j) * -2.5).str(), "B(i,j) * -2.5");
  EXPECT_EQ((s() * B(i, j)).str(), "s * B(i,j)");
  EXPECT_EQ(s().str(), "s");
}

TEST(Access, ArityIsChecked) {
  Tensor<double> B("B", {2, 3});
  IndexVar i("i"), j("j"), k("k");
  expectError<NotationError>([&] { (void)B(i, j, k); },
                             {"B has order 2 but is accessed with 3 index variables"});
  expectError<NotationError>([&] { (void)B(i); }, {"B has order 2 but is accessed with 1 index variable"});
  Access a = B(i, j);
  EXPECT_EQ(a.kind(), ExprKind::Access);
  EXPECT_EQ(a.tensor().name(), "B");
  EXPECT_EQ(a.tensor().impl(), B.impl());
  ASSERT_EQ(a.vars().size(), 2u);
  EXPECT_EQ(a.vars()[0], i);
  EXPECT_EQ(a.vars()[1], j);
  EXPECT_EQ(a.node().tensor, B.tensorVar());
  EXPECT_EQ(a.tensorVar(), B.tensorVar());
  EXPECT_EQ(a.node().binding, B.impl());
  Access copy = a;
  EXPECT_EQ(copy.tensor().impl(), B.impl());
  EXPECT_EQ(copy.get(), a.get());
}

// A recorded assignment names its output; the output must still be freed when its last
// handle goes, and its inputs with it.
TEST(Access, RecordedAssignmentsDoNotKeepTensorsAlive) {
  std::weak_ptr<TensorImpl> out, in;
  {
    Tensor<double> a("a", {3}), B("B", {3, 4}, CSR()), c("c", {4}), d("d", {3});
    IndexVar i("i"), j("j");
    B.insert({1, 2}, 3.0);
    c.insert({2}, 2.0);
    d.insert({1}, 1.0);
    a(i) = B(i, j) * c(j);
    a.evaluate();
    EXPECT_EQ(a.at({1}), 6.0);
    a(i) += d(i);  // reads the output's current values too
    a.evaluate();
    EXPECT_EQ(a.at({1}), 7.0);
    out = a.impl();
    in = B.impl();
  }
  EXPECT_TRUE(out.expired()) << "the output owns itself through its assignment";
  EXPECT_TRUE(in.expired());
}

TEST(Access, AssignmentIsRecordedInTheOutput) {
  Tensor<double> a("a", {3}), B("B", {3, 4}, CSR()), c("c", {4});
  IndexVar i("i"), j("j");
  a(i) = B(i, j) * c(j);
  EXPECT_EQ(a.assignment().str(), "a(i) = B(i,j) * c(j)");
  EXPECT_FALSE(a.assignment().accumulate);
  a(i) += B(i, j) * c(j);
  EXPECT_EQ(a.assignment().str(), "a(i) += B(i,j) * c(j)");
  EXPECT_TRUE(a.assignment().accumulate);
  Tensor<double> d("d", {3});
  d(i) = a(i);  // Access = Access records, does not copy
  EXPECT_EQ(d.assignment().str(), "d(i) = a(i)");
  d(i) = 2;
  EXPECT_EQ(d.assignment().str(), "d(i) = 2");
  Tensor<double> s("s", {});
  s() = c(j) * c(j);
  EXPECT_EQ(s.assignment().str(), "s = c(j) * c(j)");
}

TEST(Access, AssignmentIsCheckedWhenRecorded) {
  Tensor<double> a("a", {3}), B("B", {3, 4}), c("c", {5});
  IndexVar i("i"), j("j");
  expectError<DimensionError>([&] { a(i) = B(i, j) * c(j); }, {"index variable j", "B", "c"});
  expectError<NotationError>([&] { a(i) = a(i) * 2; }, {"a", "+="});
}

TEST(Assignment, StrAndVariables) {
  Tensor<double> A("A", {2, 3}), B("B", {2, 4}), C("C", {4, 3}), s("s", {});
  IndexVar i("i"), j("j"), k("k");
  Assignment a = assign(A(i, j), B(i, k) * C(k, j));
  EXPECT_EQ(a.str(), "A(i,j) = B(i,k) * C(k,j)");
  EXPECT_EQ(assign(A(i, j), B(i, k) * C(k, j), true).str(), "A(i,j) += B(i,k) * C(k,j)");
  EXPECT_EQ(freeVars(a), (std::vector<IndexVar>{i, j}));
  EXPECT_EQ(reductionVars(a), (std::vector<IndexVar>{k}));
  auto acc = rhsAccesses(a);
  ASSERT_EQ(acc.size(), 2u);
  EXPECT_EQ(acc[0]->tensor, B.tensorVar());
  EXPECT_EQ(acc[1]->tensor, C.tensorVar());

  // lhs order decides the free-variable order; reductions in order of first appearance.
  Tensor<double> At("At", {3, 2}), X("X", {2, 4, 5}), Y("Y", {5, 4});
  IndexVar l("l");
  Assignment t = assign(At(j, i), X(i, k, l) * Y(l, k) * C(k, j));
  EXPECT_EQ(freeVars(t), (std::vector<IndexVar>{j, i}));
  EXPECT_EQ(reductionVars(t), (std::vector<IndexVar>{k, l}));
  EXPECT_EQ(rhsAccesses(t).size(), 3u);

  Assignment dot = assign(s(), B(i, k) * B(i, k));
  EXPECT_EQ(dot.str(), "s = B(i,k) * B(i,k)");
  EXPECT_TRUE(freeVars(dot).empty());
  EXPECT_EQ(reductionVars(dot), (std::vector<IndexVar>{i, k}));

  Assignment lit = assign(A(i, j), IndexExpr(7));
  EXPECT_TRUE(rhsAccesses(lit).empty());
  EXPECT_TRUE(reductionVars(lit).empty());
  EXPECT_EQ(lit.str(), "A(i,j) = 7");
}

TEST(CheckAssignment, AcceptsValidAssignments) {
  Tensor<double> A("A", {2, 3}), B("B", {2, 4}), C("C", {4, 3}), c("c", {2}), s("s", {});
  IndexVar i("i"), j("j"), k("k");
  EXPECT_NO_THROW(checkAssignment(assign(A(i, j), B(i, k) * C(k, j))));
  EXPECT_NO_THROW(checkAssignment(assign(A(i, j), c(i))));  // j broadcasts
  EXPECT_NO_THROW(checkAssignment(assign(A(i, j), IndexExpr(1.5))));
  EXPECT_NO_THROW(checkAssignment(assign(s(), B(i, k) * B(i, k))));
}

TEST(CheckAssignment, RejectsBadAssignments) {
  Tensor<double> A("A", {3, 3}), B("B", {3, 5}), c("c", {7}), a("a", {3}), M("M", {3, 3});
  IndexVar i("i"), j("j"), k("k");
  expectError<NotationError>([&] { checkAssignment(assign(a(i), M(i, i))); },
                             {"index variable i", "M(i,i)", "not supported"});
  expectError<NotationError>([&] { checkAssignment(assign(A(i, i), M(i, j) * a(j))); },
                             {"index variable i", "left-hand side", "A(i,i)"});
  expectError<NotationError>([&] { checkAssignment(assign(A(i, j), A(i, j) + M(i, j))); },
                             {"output tensor A", "right-hand side", "use +="});
  expectError<NotationError>([&] { checkAssignment(assign(A(i, j), M(j, i) * A(i, j), true)); },
                             {"output tensor A", "right-hand side"});
  expectError<DimensionError>([&] { checkAssignment(assign(a(i), B(i, j) * c(j))); },
                              {"index variable j: extent 5 in B (mode 1) but 7 in c (mode 0)"});
  expectError<DimensionError>([&] { checkAssignment(assign(A(i, j), B(i, j))); },
                              {"index variable j: extent 3 in A (mode 1) but 5 in B (mode 1)"});
  expectError<NotationError>([&] { checkAssignment(assign(IndexExpr(1), a(i))); },
                             {"left-hand side"});
  expectError<NotationError>([&] { checkAssignment(assign(a(i), IndexExpr())); },
                             {"right-hand side"});

  // An access node built by hand with the wrong arity.
  auto bad = std::make_shared<ExprNode>();
  bad->kind = ExprKind::Access;
  bad->tensor = B.tensorVar();
  bad->vars = {i, j, k};
  expectError<NotationError>(
      [&] { checkAssignment(assign(a(i), IndexExpr(std::shared_ptr<const ExprNode>(bad)))); },
      {"B has order 2 but is accessed with 3 index variables"});
}

TEST(ExtentOf, FromAnyAccess) {
  Tensor<double> A("A", {2, 6}), B("B", {2, 4}), C("C", {4, 6});
  IndexVar i("i"), j("j"), k("k"), z("z");
  Assignment a = assign(A(i, j), B(i, k) * C(k, j));
  EXPECT_EQ(extentOf(a, i), 2);
  EXPECT_EQ(extentOf(a, j), 6);
  EXPECT_EQ(extentOf(a, k), 4);
  EXPECT_THROW(extentOf(a, z), NotationError);
  Tensor<double> c("c", {2});
  Assignment bc = assign(A(i, j), c(i));
  EXPECT_EQ(extentOf(bc, j), 6);  // lhs-only variable: from the lhs
}
