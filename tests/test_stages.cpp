// Splitting an assignment into stages (driver/stages.h): a run splits without picking the
// stages' schedules (picking one lowers the stage), and still gets the compile's stages.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "driver/stages.h"
#include "support/test_support.h"
#include "tessel/tessel.h"

using namespace tessel;
using tessel::testing::makeAssignment;
using tessel::testing::makeTensor;

namespace {

struct Case {
  std::string what;
  Assignment a;
  Schedule s;
  bool compilePicks = true;  ///< the compile picks a schedule for some stage
};

// y(i) = B(i,j) * C(j,k) * x(k) with dense factors; the stages of three kinds.
std::vector<Case> stagedCases() {
  IndexVar i("i"), j("j"), k("k");
  TensorVar y("y", Datatype::Float64, {3}, DenseFormat(1));
  TensorVar B("B", Datatype::Float64, {3, 4}, CSR());
  TensorVar C("C", Datatype::Float64, {4, 5}, DenseFormat(2));
  TensorVar x("x", Datatype::Float64, {5}, DenseFormat(1));
  std::vector<Case> out;
  Assignment plain = makeAssignment(Access(y, {i}), Access(B, {i, j}) * Access(C, {j, k}) * Access(x, {k}));
  Schedule pre;
  pre.precompute(Access(C, {j, k}) * Access(x, {k}), "t");
  out.push_back({"precompute", plain, pre});
  // An inner sum runs first, into a temporary (the einsum convention).
  Assignment inner = makeAssignment(Access(y, {i}), Access(B, {i, j}) * sum(k, Access(C, {j, k}) * Access(x, {k})));
  out.push_back({"inner sum", inner, Schedule()});
  // A sparse y += e with a sum in e: the sum into a temporary, then added in.
  TensorVar ys("ys", Datatype::Float64, {3}, Format::parse("s"));
  Assignment acc = makeAssignment(Access(ys, {i}), Access(B, {i, j}) * Access(C, {j, k}) * Access(x, {k}), true);
  // (Its add-in stage, a sparse += of a sparse temporary, has no parallel schedule.)
  out.push_back({"+= with a sum", acc, Schedule(), false});
  return out;
}

}  // namespace

TEST(Stages, ARunSplitsLikeTheCompileWithoutPickingSchedules) {
  for (const Case& c : stagedCases()) {
    SCOPED_TRACE(c.what);
    driver::Stages compiled = driver::splitStages(c.a, c.s);
    ASSERT_GE(compiled.assignments.size(), 2u);
    std::vector<TensorVar> kept = compiled.temporaries;
    driver::Stages run = driver::splitStages(c.a, c.s, &kept, driver::StageSchedules::Skip);
    ASSERT_EQ(run.assignments.size(), compiled.assignments.size());
    for (size_t k = 0; k < run.assignments.size(); k++) EXPECT_EQ(run.assignments[k].str(), compiled.assignments[k].str());
    // The run reuses the compile's temporaries (their storage is kept between runs).
    ASSERT_EQ(run.temporaries.size(), compiled.temporaries.size());
    for (size_t k = 0; k < run.temporaries.size(); k++) EXPECT_EQ(run.temporaries[k], compiled.temporaries[k]);
    // The compile picked blocks of rows for a stage the user's schedule does not cover;
    // the run picked nothing.
    bool picked = false;
    for (size_t k = 0; k < run.schedules.size(); k++) {
      EXPECT_TRUE(run.schedules[k].commands().empty()) << "stage " << k << ": " << run.schedules[k].str();
      picked = picked || !compiled.schedules[k].commands().empty();
    }
    EXPECT_EQ(picked, c.compilePicks);
  }
}

TEST(Stages, RepeatedRunsOfAStagedKernelFollowTheirInputs) {
  // y(i) = sum_j B(i,j) * sum_k C(j,k) * x(k), computed by hand for two sets of values.
  IndexVar i("i"), j("j"), k("k");
  Tensor<double> y("y", {2}, DenseFormat(1)), B("B", {2, 3}, CSR()), C("C", {3, 2}, DenseFormat(2)),
      x("x", {2}, DenseFormat(1));
  B.insert({0, 0}, 1.0);
  B.insert({0, 2}, 2.0);
  B.insert({1, 1}, 3.0);
  B.pack();
  for (int64_t r = 0; r < 3; r++)
    for (int64_t c = 0; c < 2; c++) C.insert({r, c}, static_cast<double>(r + 2 * c + 1));  // [[1 3] [2 4] [3 5]]
  C.pack();
  y(i) = B(i, j) * C(j, k) * x(k);
  const Assignment a = y.assignment();
  Schedule s;
  s.precompute(C(j, k) * x(k), "t");
  auto kernel = Kernel::compile(a, s);
  // x = [1 1]: t = [4 6 8], y = [1*4 + 2*8, 3*6] = [20 18].
  // x = [2 -1]: t = [-1 0 1], y = [1*-1 + 2*1, 0] = [1 0].
  const std::vector<std::vector<double>> xs = {{1, 1}, {2, -1}, {1, 1}};
  const std::vector<std::vector<double>> want = {{20, 18}, {1, 0}, {20, 18}};
  for (size_t run = 0; run < xs.size(); run++) {
    x.insert({0}, xs[run][0]);
    x.insert({1}, xs[run][1]);
    x.pack();
    kernel->run(a, 1);
    EXPECT_DOUBLE_EQ(y.at({0}), want[run][0]) << "run " << run;
    EXPECT_DOUBLE_EQ(y.at({1}), want[run][1]) << "run " << run;
  }
}

TEST(Stages, AStagedKernelRunsEachAssignmentItIsGiven) {
  // A run reuses the last run's split of the same assignment: another assignment (other
  // tensors, other dimensions) must be split anew, and its dimensions checked.
  std::mt19937_64 rng(20261127);
  IndexVar i("i"), j("j"), k("k");
  auto tensor = [&](const std::string& name, std::vector<int64_t> dims, double density, const char* format) {
    return makeTensor(name, tessel::testing::randomCoo(dims, density, rng), Format::parse(format));
  };
  TensorBase Ba = tensor("B", {7, 5}, 0.4, "ds"), Ca = tensor("C", {5, 6}, 1.0, "dd"), xa = tensor("x", {6}, 1.0, "d");
  TensorBase Bb = tensor("B", {3, 9}, 0.4, "ds"), Cb = tensor("C", {9, 4}, 1.0, "dd"), xb = tensor("x", {4}, 1.0, "d");
  TensorBase ya("y", Datatype::Float64, {7}, DenseFormat(1)), yb("y", Datatype::Float64, {3}, DenseFormat(1));
  Assignment first = makeAssignment(ya(i), Ba(i, j) * Ca(j, k) * xa(k));
  Assignment second = makeAssignment(yb(i), Bb(i, j) * Cb(j, k) * xb(k));
  Schedule s;
  s.precompute(Ca(j, k) * xa(k), "t");
  auto kernel = Kernel::compile(first, s);
  for (const Assignment* a : {&first, &first, &second, &second, &first}) {
    kernel->run(*a, 1);
    std::string why;
    EXPECT_TRUE(tensorsClose(referenceEvaluate(*a), TensorBase(a->lhsNode().binding).toCoo(), 1e-12, 1e-12, &why))
        << a->str() << ": " << why;
  }
  TensorBase xc = tensor("x", {5}, 1.0, "d");
  EXPECT_THROW(kernel->run(makeAssignment(ya(i), Ba(i, j) * Ca(j, k) * xc(k)), 1), DimensionError);
  // What the kernel keeps of a run (its split) does not keep the run's tensors alive.
  std::weak_ptr<TensorImpl> input;
  {
    TensorBase B = tensor("B", {2, 9}, 0.5, "ds"), C = tensor("C", {9, 4}, 1.0, "dd"), x = tensor("x", {4}, 1.0, "d");
    TensorBase y("y", Datatype::Float64, {2}, DenseFormat(1));
    kernel->run(makeAssignment(y(i), B(i, j) * C(j, k) * x(k)), 1);
    input = C.impl();
  }
  EXPECT_TRUE(input.expired());
}
