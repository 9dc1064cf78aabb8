// Splitting an assignment into stages (driver/stages.h): a run splits without picking the
// stages' schedules (picking one lowers the stage), and still gets the compile's stages.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "driver/stages.h"
#include "support/test_support.h"
#include "tessel/tessel.h"

using namespace tessel;
using tessel::testing::makeAssignment;

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
