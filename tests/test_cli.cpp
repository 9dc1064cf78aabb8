// End-to-end tests of the `tessel` command-line tool: runs the built binary with an
// argument vector (fork/execv, no shell) and checks exit codes, stdout, stderr and files.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_support.h"

#include "support/tool_runner.h"

namespace fs = std::filesystem;

using namespace tessel::testing;

namespace {

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tessel::testing::makeScratchDir("tessel-cli");
    ASSERT_TRUE(fs::exists(TESSEL_TOOL)) << "tool not built: " << TESSEL_TOOL;
    // B is 3x4:  [1 0 2 0; 0 3 0 0; 4 0 0 5]
    write("B.mtx",
          "%%MatrixMarket matrix coordinate real general\n"
          "% a small test matrix\n"
          "3 4 5\n"
          "1 1 1.0\n1 3 2.0\n2 2 3.0\n3 1 4.0\n3 4 5.0\n");
    write("c.tns", "# c = [1 2 3 4]\n1 1\n2 2\n3 3\n4 4\n");
    // C is 4x2: [1 0; 0 2; 3 0; 0 4]
    write("C.tns", "1 1 1\n2 2 2\n3 1 3\n4 2 4\n");
  }
  void TearDown() override { tessel::testing::removeScratchDir(dir_); }

  fs::path path(const std::string& name) const { return dir_ / name; }
  std::string arg(const std::string& tensor, const std::string& file) const {
    return tensor + ":" + path(file).string();
  }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(path(name), std::ios::binary) << text;
  }

  Result run(const std::vector<std::string>& args) { return runTool(dir_, args); }

  fs::path dir_;
};


const Entries kSpMV = {{{0}, 7}, {{1}, 6}, {{2}, 24}};
const Entries kSpMM = {{{0, 0}, 7}, {{1, 1}, 6}, {{2, 0}, 4}, {{2, 1}, 20}};

TEST_F(Cli, SpMVDefaultFormats) {
  Result r = run({"run", "a(i) = B(i,j) * c(j)", "-i", arg("B", "B.mtx"), "-i", arg("c", "c.tns"),
                  "-o", arg("a", "a.tns")});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(r.out, "") << show(r);
  EXPECT_TRUE(sameEntries(kSpMV, readEntries(path("a.tns"))));
}

TEST_F(Cli, SpMVCsr) {
  Result r = run({"run", "a(i) = B(i,j) * c(j)", "-f", "B:ds", "-f", "c:d", "-i",
                  arg("B", "B.mtx"), "-i", arg("c", "c.tns"), "-o", arg("a", "a.tns")});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_TRUE(sameEntries(kSpMV, readEntries(path("a.tns"))));
}

TEST_F(Cli, SpMVCsc) {
  Result r = run({"run", "a(i) = B(i,j) * c(j)", "-f", "B:ds:1,0", "-i", arg("B", "B.mtx"), "-i",
                  arg("c", "c.tns"), "-o", arg("a", "a.tns")});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_TRUE(sameEntries(kSpMV, readEntries(path("a.tns"))));
}

TEST_F(Cli, SpMMToMtx) {
  Result r = run({"run", "A(i,j) = B(i,k) * C(k,j)", "-f", "B:ds", "-f", "C:dd", "-i",
                  arg("B", "B.mtx"), "-i", arg("C", "C.tns"), "-o", arg("A", "A.mtx")});
  ASSERT_EQ(r.code, 0) << show(r);
  std::string text = slurp(path("A.mtx"));
  EXPECT_EQ(text.rfind("%%MatrixMarket", 0), 0u) << text;
  EXPECT_TRUE(sameEntries(kSpMM, readEntries(path("A.mtx"))));
}

TEST_F(Cli, SpMMSparseOutputToTns) {
  Result r = run({"run", "A(i,j) = B(i,k) * C(k,j)", "-f", "A:ds", "-f", "B:ds", "-f", "C:ds",
                  "-i", arg("B", "B.mtx"), "-i", arg("C", "C.tns"), "-o", arg("A", "A.tns")});
  ASSERT_EQ(r.code, 0) << show(r);
  // .tns output omits zeros: exactly the four non-zeros, 1-based.
  Entries got = readEntries(path("A.tns"));
  EXPECT_EQ(got.size(), kSpMM.size());
  EXPECT_TRUE(sameEntries(kSpMM, got));
}

TEST_F(Cli, TensorTimesVectorDefaultDss) {
  write("T.tns", "1 1 1 1\n1 2 2 2\n2 1 2 3\n2 2 1 4\n");
  write("v.tns", "1 10\n2 100\n");
  Result r = run({"run", "A(i,j) = T(i,j,k) * v(k)", "-i", arg("T", "T.tns"), "-i",
                  arg("v", "v.tns"), "-o", arg("A", "A.tns")});
  ASSERT_EQ(r.code, 0) << show(r);
  Entries want = {{{0, 0}, 10}, {{0, 1}, 200}, {{1, 0}, 300}, {{1, 1}, 40}};
  EXPECT_TRUE(sameEntries(want, readEntries(path("A.tns"))));
}

TEST_F(Cli, ScalarInnerProductOnStdout) {
  write("x.tns", "1 1\n2 2\n3 3\n");
  write("y.tns", "1 4\n2 5\n3 6\n");
  Result r = run({"run", "s = x(i) * y(i)", "-i", arg("x", "x.tns"), "-i", arg("y", "y.tns")});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(r.out, "32\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(Cli, ScalarOfMatrix) {
  Result r = run({"run", "s = B(i,j) * B(i,j)", "-f", "B:ds", "-i", arg("B", "B.mtx")});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(r.out, "55\n");
}

TEST_F(Cli, EmitCNeedsNoInputs) {
  Result r = run({"run", "a(i) = B(i,j) * c(j)", "-f", "B:ds", "--emit-c"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.out.find("tessel_tensor_t"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("for"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("{"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST_F(Cli, TimePrintsEveryPhase) {
  std::vector<std::string> args = {"run", "a(i) = B(i,j) * c(j)", "-f", "B:ds", "-i",
                                   arg("B", "B.mtx"), "-i", arg("c", "c.tns"), "--time", "--threads", "1"};
  for (int round = 0; round < 2; round++) {
    Result r = run(args);
    ASSERT_EQ(r.code, 0) << show(r);
    EXPECT_EQ(r.out, "");
    std::istringstream lines(r.err);
    std::vector<std::string> got;
    for (std::string l; std::getline(lines, l);) got.push_back(l);
    // threads, schedule, tuning, read, pack, compile, assemble, compute (no -o, no --check).
    ASSERT_EQ(got.size(), 8u) << r.err;
    EXPECT_EQ(got[0], "threads: 1");
    EXPECT_EQ(got[1].rfind("schedule: ", 0), 0u) << got[1];
    EXPECT_EQ(got[2].rfind("tuning: isa=", 0), 0u) << got[2];
    got.erase(got.begin() + 2);
    EXPECT_EQ(got[2].rfind("read: ", 0), 0u) << got[2];
    EXPECT_EQ(got[3].rfind("pack: ", 0), 0u) << got[3];
    const std::string& l1 = got[4];
    EXPECT_EQ(l1.rfind("compile: ", 0), 0u) << l1;
    EXPECT_NE(l1.find(" ms ("), std::string::npos) << l1;
    if (round == 1)  // the first run compiled (or found) the kernel; now it is cached
      EXPECT_NE(l1.find("(cache hit)"), std::string::npos) << l1;
    else
      EXPECT_TRUE(l1.find("(cache hit)") != std::string::npos ||
                  l1.find("(compiled)") != std::string::npos)
          << l1;
    EXPECT_EQ(got[5].rfind("assemble: ", 0), 0u) << got[5];
    EXPECT_EQ(got[6].rfind("compute: ", 0), 0u) << got[6];
    EXPECT_NE(got[6].find(" ms"), std::string::npos) << got[6];
  }
}

TEST_F(Cli, Help) {
  Result r = run({"--help"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.out.find("run"), std::string::npos);
  r = run({"run", "--help"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.out.find("--emit-c"), std::string::npos);
  EXPECT_NE(r.out.find("--time"), std::string::npos);
}

TEST_F(Cli, MalformedExpressionNamesColumn) {
  expectUserError(run({"run", "a(i) = B(i,j) * ", "--emit-c"}), {"column"});
  expectUserError(run({"run", "a(i) = B(i,j) $ c(j)", "--emit-c"}), {"column"});
}

TEST_F(Cli, UsageErrors) {
  // No subcommand, unknown option, missing expression.
  expectUserError(run({}));
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "--bogus"}));
  expectUserError(run({"run"}));
  // -f / -i / -o for a tensor not in the expression.
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-f", "X:ds", "--emit-c"}), {"X"});
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-i", arg("X", "B.mtx"), "-i",
                       arg("B", "B.mtx"), "-i", arg("c", "c.tns")}),
                  {"X"});
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-i", arg("B", "B.mtx"), "-i",
                       arg("c", "c.tns"), "-o", arg("Z", "z.tns")}),
                  {"Z"});
  // -o naming an input.
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-i", arg("B", "B.mtx"), "-i",
                       arg("c", "c.tns"), "-o", arg("B", "z.tns")}));
  // Malformed NAME:... arguments.
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-f", "B", "--emit-c"}));
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-f", ":ds", "--emit-c"}));
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-i", "B:", "-i", arg("c", "c.tns")}));
  // Duplicate -i.
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-i", arg("B", "B.mtx"), "-i",
                       arg("B", "B.mtx"), "-i", arg("c", "c.tns")}),
                  {"B"});
  EXPECT_FALSE(fs::exists(path("z.tns")));
}

TEST_F(Cli, MissingInput) {
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-i", arg("B", "B.mtx")}), {"c"});
}

TEST_F(Cli, BadFormats) {
  // Unknown level letter.
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-f", "B:dz", "--emit-c"}));
  // Wrong number of levels for the tensor's order.
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-f", "B:dss", "--emit-c"}));
}

TEST_F(Cli, BadInputFiles) {
  write("bad.tns", "1 1\n2 x\n3 3\n");
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-i", arg("B", "B.mtx"), "-i",
                       arg("c", "bad.tns")}),
                  {"bad.tns:2"});
  write("bad.mtx",
        "%%MatrixMarket matrix coordinate real general\n3 4 2\n1 1 1.0\n9 1 2.0\n");
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-i", arg("B", "bad.mtx"), "-i",
                       arg("c", "c.tns")}),
                  {"bad.mtx:4"});
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-i", arg("B", "missing.mtx"), "-i",
                       arg("c", "c.tns")}),
                  {"missing.mtx"});
  // A file whose order differs from the access's arity.
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-i", arg("B", "c.tns"), "-i",
                       arg("c", "c.tns")}));
}

TEST_F(Cli, DimensionMismatch) {
  write("c5.tns", "1 1\n5 5\n");
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-i", arg("B", "B.mtx"), "-i",
                       arg("c", "c5.tns"), "-o", arg("a", "a.tns")}));
  EXPECT_FALSE(fs::exists(path("a.tns")));
}

TEST_F(Cli, OutputExtentNotInferable) {
  write("b.tns", "1 1\n2 2\n");
  expectUserError(run({"run", "A(i,j) = b(i)", "-i", arg("b", "b.tns")}), {"j"});
}

TEST_F(Cli, OutputIntoMissingDirectoryLeavesNoFile) {
  fs::path target = path("no-such-dir") / "a.tns";
  Result r = run({"run", "a(i) = B(i,j) * c(j)", "-i", arg("B", "B.mtx"), "-i", arg("c", "c.tns"),
                  "-o", "a:" + target.string()});
  EXPECT_NE(r.code, 0) << show(r);
  EXPECT_FALSE(fs::exists(target));
  EXPECT_FALSE(fs::exists(path("no-such-dir")));
}

}  // namespace

namespace {

/// Runs the tool with stdout on /dev/full; returns its exit status and stderr.
std::pair<int, std::string> runIntoFullDevice(const fs::path& dir, const std::vector<std::string>& args) {
  fs::path errFile = dir / "full.err";
  pid_t pid = fork();
  if (pid == 0) {
    int out = open("/dev/full", O_WRONLY), err = open(errFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0 || err < 0) _exit(127);
    dup2(out, 1);
    dup2(err, 2);
    std::vector<char*> argv{const_cast<char*>(TESSEL_TOOL)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(TESSEL_TOOL, argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(errFile)};
}

}  // namespace

TEST_F(Cli, WritesToAFullDeviceFail) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  // A scalar result and emitted C go to stdout: a failed write is an error, not success.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", "s = c(i) * c(i)", "-i", arg("c", "c.tns")},
        std::vector<std::string>{"emit", "a(i) = B(i,j) * c(j)", "-f", "B:ds"}}) {
    auto [code, err] = runIntoFullDevice(dir_, args);
    EXPECT_EQ(code, 1) << args[0] << ": " << err;
    EXPECT_NE(err.find("writing to standard output failed"), std::string::npos) << err;
  }
}
