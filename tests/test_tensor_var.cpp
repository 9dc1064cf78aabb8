// Tensor variables apart from storage: identity, compiling assignments over bare
// variables, and running them once storage is bound.
#include <gtest/gtest.h>

#include <string>

#include "driver/pipeline.h"
#include "tessel/tessel.h"

using namespace tessel;

namespace {

// y(i) = B(i,j) * x(j) with B = [[1 0 2] [0 3 0]] (CSR), x = [1 2 3].
struct SpMV {
  TensorVar y{"y", Datatype::Float64, {2}, DenseFormat(1)};
  TensorVar B{"B", Datatype::Float64, {2, 3}, CSR()};
  TensorVar x{"x", Datatype::Float64, {3}, DenseFormat(1)};
  IndexVar i{"i"}, j{"j"};
};

void fill(Tensor<double>& B, Tensor<double>& x) {
  B.insert({0, 0}, 1.0);
  B.insert({0, 2}, 2.0);
  B.insert({1, 1}, 3.0);
  B.pack();
  x.insert({0}, 1.0);
  x.insert({1}, 2.0);
  x.insert({2}, 3.0);
  x.pack();
}

}  // namespace

TEST(TensorVar, IdentityNotName) {
  TensorVar a("B", Datatype::Float64, {2, 3}, CSR()), b("B", Datatype::Float64, {2, 3}, CSR());
  EXPECT_NE(a, b);  // same name, type, dims and format: still two variables
  TensorVar copy = a;
  EXPECT_EQ(copy, a);
  EXPECT_EQ(copy.id(), a.id());
  EXPECT_NE(a.id(), b.id());
  EXPECT_EQ(a.str(), "B");
  EXPECT_EQ(a.order(), 2);
  EXPECT_EQ(a.dim(1), 3);
  EXPECT_EQ(a.format(), CSR());
  EXPECT_FALSE(TensorVar().defined());
  EXPECT_EQ(TensorVar().id(), 0u);

  // Two tensors of one name are two variables; copies of a tensor share its variable.
  Tensor<double> t1("T", {4}), t2("T", {4});
  EXPECT_NE(t1.tensorVar(), t2.tensorVar());
  Tensor<double> alias = t1;
  EXPECT_EQ(alias.tensorVar(), t1.tensorVar());
  EXPECT_EQ(Tensor<double>(TensorBase(t1)).tensorVar(), t1.tensorVar());
  EXPECT_NE(t1.convert(DenseFormat(1)).tensorVar(), t1.tensorVar());
}

TEST(TensorVar, AccessesPrintByNameAndHaveNoStorage) {
  SpMV p;
  Access a = p.B(p.i, p.j);
  EXPECT_EQ(a.str(), "B(i,j)");
  EXPECT_EQ(a.tensorVar(), p.B);
  EXPECT_EQ(a.node().binding, nullptr);
  EXPECT_THROW((void)a.tensor(), NotationError);
  EXPECT_THROW((void)p.B(p.i), NotationError);  // arity is checked as for tensors
  // Nothing to record an assignment in: build an Assignment instead.
  Access out = p.y(p.i);
  EXPECT_THROW(out = a * p.x(p.j), NotationError);

  Tensor<double> B("B", {2, 3}, CSR());
  Access bound = B(p.i, p.j);
  EXPECT_EQ(bound.tensorVar(), B.tensorVar());
  EXPECT_EQ(bound.node().binding, B.impl());
}

TEST(TensorVar, AssignmentOverVariablesCompilesWithoutStorage) {
  SpMV p;
  Assignment a{p.y(p.i), p.B(p.i, p.j) * p.x(p.j)};
  checkAssignment(a);
  EXPECT_EQ(a.str(), "y(i) = B(i,j) * x(j)");
  lower::LoweredKernel k = driver::lowerAssignment(a);
  ASSERT_GE(k.problem.args.size(), 3u);
  EXPECT_EQ(k.problem.args[0].tensor, p.y);
  EXPECT_EQ(k.problem.args[1].tensor, p.B);
  EXPECT_EQ(k.problem.args[2].tensor, p.x);
  std::string c = Kernel::emitC(a);
  EXPECT_NE(c.find("B"), std::string::npos);
  EXPECT_FALSE(Kernel::loopOrder(a).empty());

  // Stages with temporaries (an inner sum, a precompute) are variables too.
  TensorVar d("d", Datatype::Float64, {2}, DenseFormat(1));
  Assignment staged{p.y(p.i), sum(p.j, p.B(p.i, p.j) * p.x(p.j)) * d(p.i)};
  EXPECT_NE(Kernel::emitC(staged).find("y_sum"), std::string::npos);
  Schedule s;
  s.precompute(p.B(p.i, p.j) * p.x(p.j), "t");
  EXPECT_NO_THROW((void)Kernel::emitC(a, s));

  // Running needs storage.
  auto kernel = Kernel::compile(a);
  try {
    kernel->run(a);
    ADD_FAILURE() << "ran an assignment without storage";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("has no storage"), std::string::npos) << e.what();
  }
}

TEST(TensorVar, BindingStorageThenEvaluating) {
  SpMV p;
  Assignment vars{p.y(p.i), p.B(p.i, p.j) * p.x(p.j)};
  auto kernel = Kernel::compile(vars);  // compiled before any storage exists

  // Storage for the same variables: the kernel runs on them.
  Tensor<double> y(TensorBase::forVar(p.y)), B(TensorBase::forVar(p.B)), x(TensorBase::forVar(p.x));
  EXPECT_EQ(B.tensorVar(), p.B);
  EXPECT_EQ(B.name(), "B");
  EXPECT_EQ(B.format(), CSR());
  fill(B, x);
  y(p.i) = B(p.i, p.j) * x(p.j);
  kernel->run(y.assignment());
  EXPECT_EQ(y.at({0}), 1.0 * 1 + 2.0 * 3);  // 7
  EXPECT_EQ(y.at({1}), 3.0 * 2);            // 6

  // The usual path, and a stage whose temporary the runtime allocates.
  Tensor<double> d("d", {2});
  d.insert({0}, 10.0);
  d.insert({1}, -1.0);
  Tensor<double> z("z", {2});
  z(p.i) = sum(p.j, B(p.i, p.j) * x(p.j)) * d(p.i);
  z.evaluate();
  EXPECT_EQ(z.at({0}), 70.0);
  EXPECT_EQ(z.at({1}), -6.0);
  z.evaluate();  // again, into the kept temporary
  EXPECT_EQ(z.at({0}), 70.0);

  // A sparse `+=` of a sum: the sum's temporary and the output's snapshot.
  Tensor<double> w("w", {2, 2}, CSR()), C("C", {2, 3}, CSR());
  IndexVar k("k");
  w.insert({0, 0}, 1.0);
  C.insert({0, 1}, 5.0);
  C.insert({1, 2}, 4.0);
  w(p.i, k) += B(p.i, p.j) * C(k, p.j);  // w += B * C^T
  w.evaluate();
  // B*C^T: row 0 = [1*0+0*5+2*0, 1*0+0*0+2*4] = [0, 8]; row 1 = [3*5, 0] = [15, 0].
  EXPECT_EQ(w.at({0, 0}), 1.0);
  EXPECT_EQ(w.at({0, 1}), 8.0);
  EXPECT_EQ(w.at({1, 0}), 15.0);
  EXPECT_EQ(w.at({1, 1}), 0.0);
}
