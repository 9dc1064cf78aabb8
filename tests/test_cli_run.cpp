// `tessel run` options beyond the core contract (-g, --time=REPS, --check, --seed)
// and `tessel emit`.
#include <gtest/gtest.h>

#include "support/test_support.h"

#include <filesystem>

#include "support/tool_runner.h"

using namespace tessel::testing;
namespace fs = std::filesystem;

namespace {

class CliRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tessel::testing::makeScratchDir("tessel-cli-run");
  }
  void TearDown() override { tessel::testing::removeScratchDir(dir_); }
  Result run(const std::vector<std::string>& args) { return runTool(dir_, args); }
  fs::path dir_;
};

}  // namespace

TEST_F(CliRun, GeneratedInputsCheckedAgainstTheReference) {
  Result r = run({"run", "a(i) = B(i,j) * c(j)", "-g", "B:uniform:300,200,5", "-g", "c:dense:200", "--check"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.err.find("check: OK"), std::string::npos) << show(r);
}

TEST_F(CliRun, SameSeedSameResult) {
  auto a = run({"run", "s = B(i,j) * B(i,j)", "-g", "B:uniform:50,60,4", "--seed", "7"});
  auto b = run({"run", "s = B(i,j) * B(i,j)", "-g", "B:uniform:50,60,4", "--seed", "7"});
  auto c = run({"run", "s = B(i,j) * B(i,j)", "-g", "B:uniform:50,60,4", "--seed", "8"});
  ASSERT_EQ(a.code, 0) << show(a);
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
}

TEST_F(CliRun, TimeWithRepetitionsPrintsMedians) {
  Result r = run({"run", "A(i,j) = B(i,j) + C(i,j)", "-g", "B:uniform:100,100,3", "-g", "C:uniform:100,100,3",
                  "-f", "A:ds", "--time=5"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.err.find("compile: "), std::string::npos) << show(r);
  EXPECT_NE(r.err.find("assemble: "), std::string::npos) << show(r);
  EXPECT_NE(r.err.find("compute: "), std::string::npos) << show(r);
  EXPECT_NE(r.err.find("median of 5 runs"), std::string::npos) << show(r);
  Result once = run({"run", "s = B(i,j) * B(i,j)", "-g", "B:uniform:10,10,2", "--time"});
  EXPECT_EQ(once.code, 0) << show(once);
  EXPECT_EQ(once.err.find("median"), std::string::npos) << show(once);
}

TEST_F(CliRun, EmitPrintsTheKernel) {
  Result r = run({"emit", "A(i,j) = B(i,k) * C(k,j)", "-f", "B:ds", "-f", "C:ds", "-f", "A:ds"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.out.find("int tessel_compute(tessel_tensor_t** tensors)"), std::string::npos);
  EXPECT_NE(r.out.find("where("), std::string::npos) << "the workspace shows in the concrete notation";
}

TEST_F(CliRun, BadArgumentsExitTwo) {
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-g", "B:nosuchkind:1,2", "-g", "c:dense:2"}), {"nosuchkind"});
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-g", "B:uniform:10,10,2"}), {"no input for tensor 'c'"});
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-g", "B:uniform:10,10,2", "-g", "c:dense:10,10"}),
                  {"order 2"});
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-g", "B:uniform:10,10,2", "-i", "B:x.mtx", "-g", "c:dense:10"}),
                  {"more than one source"});
  expectUserError(run({"emit", "a(i) = B(i,j) * c(j", "-f", "B:ds"}), {"column"});
  expectUserError(run({"emit", "a(i) = B(i,j) * c(j)", "-f", "B:dss"}), {"levels"});
}

TEST_F(CliRun, BinaryInputsKeepTheirFormatAndOutputsRoundTrip) {
  std::string b = (dir_ / "B.tsb").string(), a = (dir_ / "a.tsb").string(), t = (dir_ / "a.tns").string();
  ASSERT_EQ(run({"generate", "uniform:40,30,3", "-o", (dir_ / "B.mtx").string()}).code, 0);
  ASSERT_EQ(run({"convert", (dir_ / "B.mtx").string(), b, "-f", "ds:1,0"}).code, 0);
  Result r = run({"run", "a(i) = B(i,j) * c(j)", "-i", "B:" + b, "-g", "c:dense:30", "-o", "a:" + a, "--check"});
  ASSERT_EQ(r.code, 0) << show(r);
  Result text = run({"run", "a(i) = B(i,j) * c(j)", "-i", "B:" + (dir_ / "B.mtx").string(), "-g", "c:dense:30",
                     "-o", "a:" + t});
  ASSERT_EQ(text.code, 0) << show(text);
  ASSERT_EQ(run({"convert", a, (dir_ / "a2.tns").string()}).code, 0);
  EXPECT_TRUE(sameEntries(readEntries(t), readEntries(dir_ / "a2.tns")));
  Result info = run({"info", b});
  EXPECT_NE(info.out.find("ds:1,0"), std::string::npos) << show(info);
}
