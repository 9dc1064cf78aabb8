// `tessel run` options beyond the core contract (-g, --time=REPS, --check, --seed)
// and `tessel emit`; --semiring.
#include <gtest/gtest.h>

#include "support/test_support.h"

#include <filesystem>
#include <fstream>
#include <limits>

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

TEST_F(CliRun, BitmapFormatsRunAndCheck) {
  Result r = run({"run", "y(i) = A(i,j) * x(j)", "-f", "A:ds", "-f", "x:b", "-f", "y:b", "-g", "A:uniform:60,40,5",
                  "-g", "x:density:40,0.3", "--check"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.err.find("check: OK"), std::string::npos) << show(r);
  r = run({"run", "C(i,j) = A(i,j) + B(i,j)", "-f", "A:ds", "-f", "B:db", "-f", "C:db", "-g", "A:uniform:30,20,4",
           "-g", "B:uniform:30,20,3", "--threads", "2", "--check"});
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

/// `+=` starts from the output's values when -i or -g gives them (only then), adds the sum
/// once per run, and --check compares the last run with the reference.
TEST_F(CliRun, AccumulateStartsFromGivenValues) {
  std::string B = (dir_ / "B.mtx").string(), c = (dir_ / "c.tns").string(), a0 = (dir_ / "a0.tns").string();
  ASSERT_EQ(run({"generate", "uniform:300,200,5", "-o", B}).code, 0);
  ASSERT_EQ(run({"generate", "dense:200", "-o", c, "--seed", "2"}).code, 0);
  ASSERT_EQ(run({"generate", "uniform:300,1,1", "-o", (dir_ / "a0.mtx").string(), "--seed", "3"}).code, 0);
  ASSERT_EQ(run({"run", "a(i) = A0(i,j)", "-i", "A0:" + (dir_ / "a0.mtx").string(), "-o", "a:" + a0}).code, 0);
  Result acc = run({"run", "a(i) += B(i,j) * c(j)", "-f", "B:ds", "-i", "B:" + B, "-i", "c:" + c, "-i", "a:" + a0,
                    "-o", "a:" + (dir_ / "acc.tns").string(), "--check", "--threads", "2"});
  ASSERT_EQ(acc.code, 0) << show(acc);
  EXPECT_NE(acc.err.find("check: OK"), std::string::npos) << show(acc);
  // The same in two steps. (Not `B(i,j) * c(j) + d(i)`: the sum over j covers the whole
  // right-hand side, so that adds d 200 times.)
  std::string t = (dir_ / "t.tns").string();
  ASSERT_EQ(run({"run", "a(i) = B(i,j) * c(j)", "-f", "B:ds", "-i", "B:" + B, "-i", "c:" + c, "-o", "a:" + t}).code, 0);
  Result sum = run({"run", "a(i) = t(i) + d(i)", "-i", "t:" + t, "-i", "d:" + a0, "-o", "a:" + (dir_ / "sum.tns").string()});
  ASSERT_EQ(sum.code, 0) << show(sum);
  EXPECT_TRUE(sameEntries(readEntries(dir_ / "sum.tns"), readEntries(dir_ / "acc.tns")));
  // Three runs add the sum three times; the check follows the last.
  Result reps = run({"run", "A(i,j) += B(i,k) * C(k,j)", "-f", "A:ds", "-f", "B:ds", "-f", "C:ds", "-g",
                     "A:uniform:40,30,3", "-g", "B:uniform:40,50,4", "-g", "C:uniform:50,30,4", "--time=3", "--check"});
  EXPECT_EQ(reps.code, 0) << show(reps);
  EXPECT_NE(reps.err.find("check: OK"), std::string::npos) << show(reps);
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-g", "B:uniform:10,10,2", "-g", "c:dense:10", "-g",
                       "a:dense:10"}),
                  {"output tensor 'a'", "+="});
  expectUserError(run({"run", "a(i) += B(i,j) * c(j)", "-g", "B:uniform:10,10,2", "-g", "c:dense:10", "-g",
                       "a:dense:9"}),
                  {"starting values", "9", "10"});
}

TEST_F(CliRun, EmitPrintsTheKernel) {
  Result r = run({"emit", "A(i,j) = B(i,k) * C(k,j)", "-f", "B:ds", "-f", "C:ds", "-f", "A:ds"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.out.find("int tessel_compute(tessel_tensor_t** tensors)"), std::string::npos);
  EXPECT_NE(r.out.find("where("), std::string::npos) << "the workspace shows in the concrete notation";
}

/// `emit --passes` prints the program after every pass, named, in pipeline order, and
/// ends with the same C as plain `emit`.
TEST_F(CliRun, EmitPassesNamesEveryPassInOrder) {
  std::vector<std::string> args = {"emit", "y(i) = A(i,j) * x(j)", "-f", "A:ds"};
  Result plain = run(args);
  args.push_back("--passes");
  Result r = run(args);
  ASSERT_EQ(r.code, 0) << show(r);
  const std::vector<std::string> passes = {
      "after splitStages", "after analyze (loop order)", "after schedule", "after planOutput",
      "after workspace", "after planParallel", "after insertWorkspace", "after lowerLoops (assemble)",
      "after lowerLoops (compute)", "after simplify", "after collapsePositionLoops", "after unrollAndJam",
      "after splitReductionChains", "after unswitchLoopFlags", "after simplify (again)", "C (backend)"};
  size_t at = 0;
  for (const std::string& p : passes) {
    size_t next = r.out.find("=== " + p + " ===\n", at);
    ASSERT_NE(next, std::string::npos) << "no '" << p << "' after offset " << at << "\n" << r.out;
    at = next + 1;
  }
  EXPECT_NE(r.out.find("loop order: i j"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("for i in [0, y0_dim)"), std::string::npos) << "the IR in pseudo-code\n" << r.out;
  std::string c = r.out.substr(r.out.find("=== C (backend) ===\n") + std::string("=== C (backend) ===\n").size());
  EXPECT_EQ(c, plain.out) << "the last pass is the C that emit prints";
  // Several stages: each pass is named with its stage.
  Result staged = run({"emit", "A(i,j) += B(i,k)*C(k,j)", "-f", "A:ds", "-f", "B:ds", "-f", "C:ds", "--passes"});
  ASSERT_EQ(staged.code, 0) << show(staged);
  EXPECT_NE(staged.out.find("=== after analyze (loop order) [stage 2 of 2] ==="), std::string::npos) << staged.out;
  expectUserError(run({"emit", "a(i) = B(i,j) * c(j", "-f", "B:ds", "--passes"}), {"column"});
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

TEST_F(CliRun, SchedulesAndThreads) {
  // Same result with any schedule and thread count; the schedule used is reported.
  const std::vector<std::string> base = {"run", "a(i) = B(i,j) * c(j)", "-g", "B:rmat:9,8", "-g", "c:dense:512", "-o", "a:" + (dir_ / "a.tns").string()};
  Result one = run(base);
  ASSERT_EQ(one.code, 0) << show(one);
  Entries expected = readEntries(dir_ / "a.tns");
  for (std::vector<std::string> extra :
       {std::vector<std::string>{"--threads", "2", "--time"},
        {"-s", "split(i,i0,i1,32),parallelize(i0,cpu_thread,no_races)", "--threads", "2", "--time"},
        {"-s", "fuse(i,j,f),pos(f,fp,B),split(fp,p0,p1,256),parallelize(p0,cpu_thread,atomics)", "--threads", "4",
         "--time", "--check"},
        {"-s", "precompute(B(i,j) * c(j),t),parallelize(i)", "--threads", "2", "--time", "--check"}}) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    Result r = run(args);
    ASSERT_EQ(r.code, 0) << show(r);
    EXPECT_NE(r.err.find("schedule: "), std::string::npos) << show(r);
    EXPECT_NE(r.err.find("parallelize("), std::string::npos) << "a parallel schedule was used\n" << show(r);
    EXPECT_TRUE(sameEntries(expected, readEntries(dir_ / "a.tns")));
  }
  Result emitted = run({"emit", "a(i) = B(i,j) * c(j)", "-f", "B:ds", "-s", "split(i,i0,i1,8),parallelize(i0)"});
  EXPECT_EQ(emitted.code, 0) << show(emitted);
  EXPECT_NE(emitted.out.find("#pragma omp parallel"), std::string::npos) << emitted.out;
  EXPECT_NE(emitted.out.find("tessel_next_block(i0_shares"), std::string::npos) << emitted.out;
  EXPECT_NE(emitted.out.find("// schedule: split(i,i0,i1,8),parallelize(i0,cpu_thread,no_races)"), std::string::npos);
}

TEST_F(CliRun, AutomaticChoiceRunsOnTheThreadsItChose) {
  // Separate kernels of too little work to share: every stage runs on one thread (the
  // producer's stage has a parallel schedule of its own), as the reason says; a schedule
  // given runs on the threads asked for.
  const std::vector<std::string> base = {"run",  "A(i,l) = B(i,j) * C(i,k) * D(j,k) * E(j,l)",
                                         "-g",   "B:uniform:200,150,10",
                                         "-g",   "C:dense:200,32",
                                         "-g",   "D:dense:150,32",
                                         "-g",   "E:dense:150,32",
                                         "--threads", "2", "--time", "--check"};
  Result chosen = run(base);
  ASSERT_EQ(chosen.code, 0) << show(chosen);
  EXPECT_NE(chosen.err.find("check: OK"), std::string::npos) << show(chosen);
  EXPECT_NE(chosen.err.find("schedule: precompute(B(i,j) * C(i,k) * D(j,k),T,B) (separate kernels"), std::string::npos)
      << show(chosen);
  EXPECT_NE(chosen.err.find("one thread (too little work to share))"), std::string::npos) << show(chosen);
  EXPECT_NE(chosen.err.find("threads: 1\n"), std::string::npos) << show(chosen);
  std::vector<std::string> given = base;
  given.insert(given.end(), {"-s", "loopfuse(j)"});
  Result r = run(given);
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.err.find("check: OK"), std::string::npos) << show(r);
  EXPECT_NE(r.err.find("threads: 2\n"), std::string::npos) << show(r);
}

TEST_F(CliRun, BadSchedulesExitTwo) {
  const std::vector<std::string> base = {"run", "a(i) = B(i,j) * c(j)", "-g", "B:uniform:10,10,2", "-g", "c:dense:10"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run(args);
  };
  expectUserError(with({"-s", "parallelize(j)"}), {"parallelize(j,cpu_thread,no_races)", "race on a"});
  expectUserError(with({"-s", "split(x,x0,x1,2)"}), {"unknown index variable x"});
  expectUserError(with({"-s", "split(i,i0,i1"}), {"expected name(arguments)"});
  expectUserError(with({"--threads", "0"}), {"threads"});
  expectUserError(with({"-s", "bound(j,jb,3)"}), {"bound()"});
  expectUserError(with({"-s", "precompute(c(j) * B(i,j),B)"}), {"precompute(c(j) * B(i,j),B)", "a name that no tensor"});
  expectUserError(with({"-s", "precompute(B(i,j) * d(j),t)"}), {"unknown tensor d"});
}

/// --semiring: y(i) = min over stored j of A(i,j) + x(j); the empty row is inf in the
/// .tns, which reads back as inf; --check compares under the semiring.
TEST_F(CliRun, SemiringMinPlusWritesInf) {
  std::string A = (dir_ / "A.mtx").string(), x = (dir_ / "x.tns").string(), y = (dir_ / "y.tns").string();
  {
    std::ofstream a(A), v(x);
    a << "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 2\n1 3 -1\n3 2 3\n";
    v << "1 1\n2 -2\n3 4\n";
  }
  for (const char* threads : {"1", "2"}) {
    Result r = run({"run", "y(i) = A(i,j) * x(j)", "-f", "A:ds", "-i", "A:" + A, "-i", "x:" + x, "-o", "y:" + y,
                    "--semiring", "min_plus", "--check", "--threads", threads});
    ASSERT_EQ(r.code, 0) << show(r);
    EXPECT_NE(r.err.find("check: OK"), std::string::npos) << show(r);
    EXPECT_EQ(slurp(y), "# tessel dims: 3\n1 3\n2 inf\n3 1\n");
    tessel::FileContents back = tessel::readTensorFile(y);
    ASSERT_EQ(back.data.nnz(), 3);
    EXPECT_EQ(back.data.values[1], std::numeric_limits<double>::infinity());
  }
  Result m = run({"run", "y(i) = A(i,j) * x(j)", "-f", "A:ds", "-i", "A:" + A, "-i", "x:" + x, "-o", "y:" + y,
                  "--semiring", "max_times", "--check"});
  ASSERT_EQ(m.code, 0) << show(m);
  EXPECT_EQ(slurp(y), "# tessel dims: 3\n1 2\n2 -inf\n3 -6\n");
}

TEST_F(CliRun, SemiringInEmitAndHelp) {
  Result e = run({"emit", "y(i) = A(i,j) * x(j)", "-f", "A:ds", "--semiring", "min_plus"});
  ASSERT_EQ(e.code, 0) << show(e);
  EXPECT_NE(e.out.find("INFINITY"), std::string::npos) << e.out;
  Result plain = run({"emit", "y(i) = A(i,j) * x(j)", "-f", "A:ds"});
  Result named = run({"emit", "y(i) = A(i,j) * x(j)", "-f", "A:ds", "--semiring", "plus_times"});
  EXPECT_EQ(plain.out, named.out);
  for (const char* cmd : {"run", "emit"}) {
    Result h = run({cmd, "--help"});
    EXPECT_NE(h.out.find("--semiring"), std::string::npos) << cmd;
    EXPECT_NE(h.out.find("min_plus"), std::string::npos) << cmd;
  }
}

TEST_F(CliRun, SemiringErrors) {
  expectUserError(run({"emit", "y(i) = A(i,j) * x(j)", "--semiring", "tropical"}),
                  {"--semiring", "tropical", "plus_times, min_plus, max_plus"});
  expectUserError(run({"emit", "y(i) = A(i,j) - x(j)", "--semiring", "min_plus"}),
                  {"semiring min_plus has no '-'", "column 15"});
  expectUserError(run({"run", "y(i) = A(i,j) / x(j)", "-g", "A:uniform:5,5,2", "-g", "x:dense:5", "--semiring",
                       "max_times"}),
                  {"semiring max_times has no '/'", "column 15"});
  expectUserError(run({"emit", "y(i) = A(i,j) * x(j)", "-f", "A:ds", "--semiring", "min_plus", "-s",
                       "pos(j,jp,A),split(jp,j0,j1,64),parallelize(j0,cpu_thread,atomics)"}),
                  {"parallelize(j0,cpu_thread,atomics)", "min_plus"});
}

TEST_F(CliRun, TypesFromTheCommandLine) {
  // One step of reachability on a 4-cycle 1->2->3->4->1 over or_and on bool tensors:
  // y(i) = OR_j A(i,j) AND x(j) with x = {1: true, 4: false (stored)}.
  {
    std::ofstream(dir_ / "ring.mtx") << "%%MatrixMarket matrix coordinate pattern general\n4 4 4\n1 2\n2 3\n3 4\n4 1\n";
    std::ofstream(dir_ / "x.tns") << "1 1\n4 0\n";
  }
  std::string y = (dir_ / "y.tns").string();
  Result r = run({"run", "y(i) = A(i,j) * x(j)", "-i", "A:" + (dir_ / "ring.mtx").string(), "-i",
                  "x:" + (dir_ / "x.tns").string(), "-t", "A:bool", "-t", "x:bool", "-t", "y:bool", "-f", "A:ds",
                  "-f", "x:s", "-f", "y:s", "--semiring", "or_and", "-o", "y:" + y, "--check"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream in(y);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "# tessel dims: 4\n3 0\n4 1\n");  // y(4) = A(4,1) and x(1); y(3) reads the stored false x(4)
  // Counting with plus_pair on int32.
  Result c = run({"run", "y(i) = A(i,j) * x(j)", "-i", "A:" + (dir_ / "ring.mtx").string(), "-g", "x:dense:4",
                  "-t", "A:int32", "-t", "x:int32", "-t", "y:int32", "--semiring", "plus_pair", "--check"});
  EXPECT_EQ(c.code, 0) << c.err;
  expectUserError(run({"emit", "y(i) = A(i,j) * x(j)", "-t", "A:complex"}), {"-t A:complex", "unknown type 'complex'"});
  expectUserError(run({"emit", "y(i) = A(i,j) * x(j)", "-t", "Q:bool"}), {"-t names tensor 'Q'"});
  expectUserError(run({"emit", "y(i) = A(i,j) * x(j)", "-t", "A:bool", "-t", "A:int32"}), {"-t given twice"});
  EXPECT_NE(run({"emit", "y(i) = A(i,j) * x(j)", "-t", "A:float32", "-t", "y:float32"}).out.find("float"),
            std::string::npos);
  // min over an empty row of an int32 output: int32's "infinity", INT32_MAX (the int64
  // identity it is computed in once came out cut to -1), written as inf like a float's.
  {
    std::ofstream(dir_ / "ig.mtx") << "%%MatrixMarket matrix coordinate integer general\n3 3 2\n1 2 5\n2 3 7\n";
    std::ofstream(dir_ / "iv.tns") << "1 1\n2 2\n3 3\n";
  }
  std::string iy = (dir_ / "iy.tns").string();
  Result m = run({"run", "y(i) = A(i,j) * x(j)", "-i", "A:" + (dir_ / "ig.mtx").string(), "-i",
                  "x:" + (dir_ / "iv.tns").string(), "-t", "A:int32", "-t", "x:int32", "-t", "y:int32", "--semiring",
                  "min_second", "-o", "y:" + iy});
  ASSERT_EQ(m.code, 0) << m.err;
  std::ifstream iin(iy);
  std::string itext((std::istreambuf_iterator<char>(iin)), std::istreambuf_iterator<char>());
  EXPECT_EQ(itext, "# tessel dims: 3\n1 2\n2 3\n3 inf\n");
  // Read back into int32 and int64, inf is the type's largest value again, and a copy
  // under min_plus writes it as inf, where int64's extreme once came out as
  // 9.2233720368547758e+18, which no int64 holds.
  for (const char* type : {"int32", "int64"}) {
    std::string again = (dir_ / (std::string("again-") + type + ".tns")).string();
    Result b = run({"run", "y(i) = x(i)", "-i", "x:" + iy, "-t", std::string("x:") + type, "-t",
                    std::string("y:") + type, "--semiring", "min_plus", "-o", "y:" + again, "--check"});
    ASSERT_EQ(b.code, 0) << type << ": " << b.err;
    std::ifstream ain(again);
    std::string atext((std::istreambuf_iterator<char>(ain)), std::istreambuf_iterator<char>());
    EXPECT_EQ(atext, "# tessel dims: 3\n1 2\n2 3\n3 inf\n") << type;
  }
  // @(min,+) in the text is the semiring: 0 is then a value, not an absent entry, and
  // an explicit --semiring must agree with it (plus_times too: it is not the default then).
  {
    std::ofstream(dir_ / "z.mtx") << "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 0\n2 2 3\n";
    std::ofstream(dir_ / "zx.tns") << "1 0\n2 1\n";
  }
  std::string zy = (dir_ / "zy.tns").string();
  Result z = run({"run", "y(i) = A(i,j) @(min,+) x(j)", "-i", "A:" + (dir_ / "z.mtx").string(), "-i",
                  "x:" + (dir_ / "zx.tns").string(), "-f", "A:ds", "-o", "y:" + zy, "--check"});
  ASSERT_EQ(z.code, 0) << z.err;
  std::ifstream zin(zy);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(zin)), std::istreambuf_iterator<char>()),
            "# tessel dims: 2\n1 0\n2 4\n");
  std::string never = (dir_ / "never.tns").string();
  expectUserError(run({"run", "y(i) = A(i,j) @(min,+) x(j)", "-i", "A:" + (dir_ / "z.mtx").string(), "-i",
                       "x:" + (dir_ / "zx.tns").string(), "--semiring", "plus_times", "-o", "y:" + never}),
                  {"--semiring plus_times disagrees with the expression's @(min,plus)"});
  EXPECT_FALSE(fs::exists(never));
  expectUserError(run({"emit", "y(i) = A(i,j) @(min,+) x(j)", "--semiring", "plus_times"}),
                  {"--semiring plus_times disagrees"});
  EXPECT_EQ(run({"emit", "y(i) = A(i,j) @(min,+) x(j)", "--semiring", "min_plus"}).code, 0);
  // --check reads an integer output's extremes as the semiring's infinities (the row
  // without entries: +inf under min, -inf under max), as the reference writes them.
  for (const char* type : {"int32", "int64"})
    for (const char* semiring : {"min_plus", "max_plus", "min_second"}) {
      Result k = run({"run", "y(i) = A(i,j) * x(j)", "-i", "A:" + (dir_ / "ig.mtx").string(), "-i",
                      "x:" + (dir_ / "iv.tns").string(), "-t", std::string("A:") + type, "-t",
                      std::string("x:") + type, "-t", std::string("y:") + type, "--semiring", semiring, "--check"});
      EXPECT_EQ(k.code, 0) << type << " " << semiring << ": " << k.err;
    }
  // y += A x under any_pair: any's result is its right operand, the new value (1 where
  // the row has entries), in the kernel and in the reference alike.
  {
    std::ofstream(dir_ / "y0.tns") << "1 5\n2 5\n3 5\n";
  }
  std::string ay = (dir_ / "ay.tns").string();
  Result any = run({"run", "y(i) += A(i,j) * x(j)", "-i", "A:" + (dir_ / "ig.mtx").string(), "-i",
                    "x:" + (dir_ / "iv.tns").string(), "-i", "y:" + (dir_ / "y0.tns").string(), "--semiring",
                    "any_pair", "--check", "-o", "y:" + ay});
  ASSERT_EQ(any.code, 0) << any.err;
  std::ifstream ain(ay);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(ain)), std::istreambuf_iterator<char>()),
            "# tessel dims: 3\n1 1\n2 1\n3 5\n");
  // An integer output of float operands would truncate them (0.5 * 4 as 0): refused,
  // naming both; integer operands into a float output are exact.
  expectUserError(run({"run", "y(i) = A(i,j) * x(j)", "-t", "y:int32", "-g", "A:uniform:5,5,2", "-g", "x:dense:5"}),
                  {"tensor y is int32 but A is float64", "would be truncated"});
  EXPECT_EQ(run({"run", "y(i) = A(i,j) * x(j)", "-t", "A:int64", "-i", "A:" + (dir_ / "ring.mtx").string(), "-g",
                 "x:dense:4", "--check"}).code, 0);
}
