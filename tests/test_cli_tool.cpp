// The tool keeps what it reads and says what it does (issue 32 item 3): dims survive a
// round trip (.tns dims comment, --dims, n x 1 .mtx as a vector, gzip output), --time
// phases and --json, explain / emit --kernel-only, --check's exit 4, OMP_NUM_THREADS,
// --version, unknown subcommands, TACO-style hints, pos(f,fp,B(i,j)), bound() and
// function-call messages.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/test_support.h"
#include "support/tool_runner.h"
#include "tessel/tessel.h"

using namespace tessel::testing;
namespace fs = std::filesystem;

namespace {

class CliTool : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tessel::testing::makeScratchDir("tessel-cli-tool");
    ASSERT_TRUE(fs::exists(TESSEL_TOOL)) << "tool not built: " << TESSEL_TOOL;
  }
  void TearDown() override { tessel::testing::removeScratchDir(dir_); }
  Result run(const std::vector<std::string>& args) { return runTool(dir_, args); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, const std::string& text) { std::ofstream(path(name), std::ios::binary) << text; }
  fs::path dir_;
};

/// Sets an environment variable for one scope (the tool inherits it).
struct ScopedEnv {
  std::string name;
  ScopedEnv(const std::string& n, const char* value) : name(n) {
    if (value)
      ::setenv(n.c_str(), value, 1);
    else
      ::unsetenv(n.c_str());
  }
  ~ScopedEnv() { ::unsetenv(name.c_str()); }
};

}  // namespace

// ---- dims survive a round trip --------------------------------------------------------

/// A 5x7 matrix whose last row and column are empty: written .tns records 5x7, read back 5x7.
TEST_F(CliTool, TnsRecordsItsDimsAndReadsThemBack) {
  tessel::CooData c;
  c.dims = {5, 7};
  c.coords = {0, 0, 2, 3};
  c.values = {1.5, -2};
  tessel::writeTns(path("A.tns"), c);
  std::string text = slurp(path("A.tns"));
  EXPECT_EQ(text, "# tessel dims: 5 7\n1 1 1.5\n3 4 -2\n");
  tessel::FileContents back = tessel::readTns(path("A.tns"));
  EXPECT_EQ(back.data.dims, (std::vector<int64_t>{5, 7}));
  EXPECT_EQ(back.data.nnz(), 2);
  // A file without the comment reads as before: the largest index in each mode.
  write("old.tns", "1 1 1.5\n3 4 -2\n");
  EXPECT_EQ(tessel::readTns(path("old.tns")).data.dims, (std::vector<int64_t>{3, 4}));
  // A comment after the entries counts too; an index beyond it grows the dim.
  write("late.tns", "1 1 1\n# tessel dims: 4 2\n2 3 1\n");
  EXPECT_EQ(tessel::readTns(path("late.tns")).data.dims, (std::vector<int64_t>{4, 3}));
  // Other comments are ignored; one with the wrong number of dims is an error naming the line.
  write("other.tns", "# a FROSTT comment\n1 1 1\n");
  EXPECT_EQ(tessel::readTns(path("other.tns")).data.dims, (std::vector<int64_t>{1, 1}));
  write("bad.tns", "# tessel dims: 4 2 9\n1 1 1\n");
  try {
    tessel::readTns(path("bad.tns"));
    ADD_FAILURE() << "no error";
  } catch (const tessel::FileError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.tns:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("3 dimensions"), std::string::npos) << e.what();
  }
}

/// Through the tool: B's file shows 3x4 but --dims says 5x7; A = 2B keeps 5x7 in its .tns,
/// and reading A back (no --dims) gives 5x7 again.
TEST_F(CliTool, DimsOptionAndRoundTripThroughTheTool) {
  write("B.tns", "1 1 2\n3 4 5\n");
  Result r = run({"run", "A(i,j) = B(i,j) * 2", "-i", "B:" + path("B.tns"), "--dims", "B:5,7", "-f", "A:ds", "-o",
                  "A:" + path("A.tns")});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(slurp(path("A.tns")), "# tessel dims: 5 7\n1 1 4\n3 4 10\n");
  Result info = run({"info", path("A.tns"), "--json"});
  ASSERT_EQ(info.code, 0) << show(info);
  EXPECT_EQ(nlohmann::json::parse(info.out)["dims"], nlohmann::json::array({5, 7})) << info.out;
  // s = sum of A's row 5 (empty) times a 7-vector: needs A to be 5x7.
  Result s = run({"run", "s = A(i,j) * c(j)", "-i", "A:" + path("A.tns"), "-g", "c:dense:7"});
  EXPECT_EQ(s.code, 0) << show(s);
  // Too small, or the wrong number of dims, or a tensor not in the expression: exit 2.
  expectUserError(run({"run", "A(i,j) = B(i,j)", "-i", "B:" + path("B.tns"), "--dims", "B:2,7"}),
                  {"--dims B:2x7 is too small", "index 3 in mode 0"});
  expectUserError(run({"run", "A(i,j) = B(i,j)", "-i", "B:" + path("B.tns"), "--dims", "B:5"}), {"1 dimensions"});
  expectUserError(run({"run", "A(i,j) = B(i,j)", "-i", "B:" + path("B.tns"), "--dims", "B:5,x"}), {"--dims"});
  expectUserError(run({"run", "A(i,j) = B(i,j)", "-i", "B:" + path("B.tns"), "--dims", "Z:5,7"}), {"Z"});
}

/// An n x 1 and a 1 x n .mtx are vectors where the expression uses one index; a vector
/// output to .mtx is written n x 1 and reads back.
TEST_F(CliTool, ColumnAndRowMatricesAreVectors) {
  write("col.mtx", "%%MatrixMarket matrix coordinate real general\n3 1 2\n1 1 4\n3 1 5\n");
  write("row.mtx", "%%MatrixMarket matrix coordinate real general\n1 3 2\n1 2 3\n1 3 1\n");
  Result r = run({"run", "s = x(i) * y(i)", "-i", "x:" + path("col.mtx"), "-i", "y:" + path("row.mtx")});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(r.out, "5\n");  // 4*0 + 0*3 + 5*1
  Result v = run({"run", "a(i) = x(i) * 2", "-i", "x:" + path("col.mtx"), "-o", "a:" + path("a.mtx")});
  ASSERT_EQ(v.code, 0) << show(v);
  tessel::FileContents back = tessel::readMtx(path("a.mtx"));
  EXPECT_EQ(back.data.dims, (std::vector<int64_t>{3, 1}));
  EXPECT_TRUE(sameEntries({{{0, 0}, 8}, {{2, 0}, 10}}, readEntries(path("a.mtx"))));
  // A real matrix is not a vector.
  write("M.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n");
  expectUserError(run({"run", "s = x(i) * x(i)", "-i", "x:" + path("M.mtx")}), {"n x 1 or 1 x n"});
}

TEST_F(CliTool, GzipOutput) {
  write("B.tns", "1 1 2\n3 2 5\n");
  for (const std::string out : {"A.tns.gz", "A.mtx.gz"}) {
    Result r = run({"run", "A(i,j) = B(i,j) * 2", "-i", "B:" + path("B.tns"), "-f", "A:ds", "-o", "A:" + path(out)});
    ASSERT_EQ(r.code, 0) << show(r);
    std::string bytes = slurp(path(out));
    ASSERT_GE(bytes.size(), 2u);
    EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f) << out;  // the gzip magic
    EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b) << out;
    tessel::FileContents back = tessel::readTensorFile(path(out));
    EXPECT_EQ(back.data.dims, (std::vector<int64_t>{3, 2})) << out;
    EXPECT_EQ(back.data.values, (std::vector<double>{4, 10})) << out;
  }
  Result c = run({"convert", path("B.tns"), path("B.mtx.gz")});
  ASSERT_EQ(c.code, 0) << show(c);
  EXPECT_EQ(tessel::readTensorFile(path("B.mtx.gz")).data.nnz(), 2);
  // Larger than zlib's buffers: many flushes, every entry back.
  tessel::CooData big;
  big.dims = {4000, 50};
  for (int64_t i = 0; i < 4000; i++)
    for (int64_t j = 0; j < 50; j += 7) {
      big.coords.insert(big.coords.end(), {i, j});
      big.values.push_back(static_cast<double>(i * 50 + j) + 0.25);
    }
  tessel::writeTensorFile(path("big.tns.gz"), big);
  tessel::FileContents back = tessel::readTensorFile(path("big.tns.gz"));
  EXPECT_EQ(back.data.dims, big.dims);
  EXPECT_EQ(back.data.values, big.values);
  EXPECT_EQ(back.data.coords, big.coords);
}

// ---- --check --------------------------------------------------------------------------

TEST_F(CliTool, CheckMismatchExitsFour) {
  // int32 sums wrap in the kernel (2e9 + 2e9 + ...), not in the reference evaluator.
  write("y.tns", "1 2000000000\n2 2000000000\n");
  Result r = run({"run", "s = y(i) + z(i)", "-i", "y:" + path("y.tns"), "-i", "z:" + path("y.tns"), "-t", "y:int32",
                  "-t", "z:int32", "-t", "s:int32", "--check"});
  EXPECT_EQ(r.code, 4) << show(r);
  EXPECT_EQ(r.err.rfind("tessel: check failed: ", 0), 0u) << show(r);
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << show(r);
  EXPECT_NE(r.err.find("expected 8000000000"), std::string::npos) << show(r);
}

/// A sum that cancels to nearly 0: the tolerance follows the summands (1e8), not the result.
TEST_F(CliTool, CheckToleranceScalesWithTheSummands) {
  write("x.tns", "1 100000000.1\n2 -100000000\n3 0.3\n");
  Result r = run({"run", "s = x(i) * w(i)", "-i", "x:" + path("x.tns"), "-g", "w:dense:3", "--check"});
  EXPECT_EQ(r.code, 0) << show(r);
  Result d = run({"run", "a(i) = B(i,j) * c(j) - D(i,j) * c(j)", "-g", "B:uniform:80,60,6", "-g", "c:dense:60", "-g",
                  "D:uniform:80,60,6", "--check", "--threads", "2"});
  EXPECT_EQ(d.code, 0) << show(d);
  // float32 is compared at float32's precision.
  Result f = run({"run", "a(i) = B(i,j) * c(j)", "-g", "B:uniform:50,50,5", "-g", "c:dense:50", "-t", "B:float32", "-t",
                  "c:float32", "-t", "a:float32", "--check"});
  EXPECT_EQ(f.code, 0) << show(f);
}

// ---- --time and --json ----------------------------------------------------------------

TEST_F(CliTool, TimeReportsEveryPhase) {
  write("c.tns", "1 1\n2 2\n3 3\n");
  Result r = run({"run", "a(i) = B(i,j) * c(j)", "-g", "B:uniform:3,3,2", "-i", "c:" + path("c.tns"), "-o",
                  "a:" + path("a.tns"), "--check", "--time=3"});
  ASSERT_EQ(r.code, 0) << show(r);
  for (const char* phase : {"threads: 1\n", "schedule: ", "read: ", "pack: ", "compile: ", "assemble: ", "compute: ",
                            "write: ", "check: OK", "check: "})
    EXPECT_NE(r.err.find(phase), std::string::npos) << phase << "\n" << show(r);
  EXPECT_NE(r.err.find("compute: "), std::string::npos);
  EXPECT_NE(r.err.find("(median of 3 runs; min "), std::string::npos) << show(r);
  EXPECT_NE(r.err.find(", max "), std::string::npos) << show(r);
}

TEST_F(CliTool, JsonIsOneObject) {
  Result r = run({"run", "s = B(i,j) * B(i,j)", "-g", "B:uniform:10,10,2", "--time=4", "--json", "--threads", "2"});
  ASSERT_EQ(r.code, 0) << show(r);
  nlohmann::json j = nlohmann::json::parse(r.out);  // stdout is exactly one object
  EXPECT_EQ(j["threads"], 2);
  EXPECT_TRUE(j["schedule"].is_string());
  for (const char* phase : {"read", "pack", "compile", "assemble", "compute"}) {
    ASSERT_TRUE(j["phases"].contains(phase)) << phase << " in " << r.out;
    const auto& p = j["phases"][phase];
    EXPECT_LE(p["min_ms"].get<double>(), p["median_ms"].get<double>()) << phase;
    EXPECT_LE(p["median_ms"].get<double>(), p["max_ms"].get<double>()) << phase;
  }
  EXPECT_EQ(j["phases"]["compute"]["runs"], 4);
  EXPECT_EQ(j["phases"]["read"]["runs"], 1);
  EXPECT_FALSE(j["phases"].contains("write"));
  EXPECT_TRUE(j["value"].is_number());
}

// ---- threads --------------------------------------------------------------------------

TEST_F(CliTool, OmpNumThreadsAndThreadWarnings) {
  std::vector<std::string> spmv = {"run", "a(i) = B(i,j) * c(j)", "-g", "B:uniform:20,20,2", "-g", "c:dense:20", "--time"};
  {
    ScopedEnv env("OMP_NUM_THREADS", "2");
    Result r = run(spmv);
    ASSERT_EQ(r.code, 0) << show(r);
    EXPECT_NE(r.err.find("threads: 2\n"), std::string::npos) << show(r);
    std::vector<std::string> given = spmv;
    given.insert(given.end(), {"--threads", "1"});  // --threads wins
    Result g = run(given);
    EXPECT_NE(g.err.find("threads: 1\n"), std::string::npos) << show(g);
  }
  {
    ScopedEnv env("OMP_NUM_THREADS", nullptr);
    std::vector<std::string> par = spmv;
    par.insert(par.end(), {"-s", "parallelize(i)"});
    Result r = run(par);
    ASSERT_EQ(r.code, 0) << show(r);
    EXPECT_NE(r.err.find("tessel: warning: the schedule parallelizes a loop, but it runs on 1 thread"), std::string::npos)
        << show(r);
    std::vector<std::string> many = spmv;
    many.insert(many.end(), {"--threads", "4096"});
    Result m = run(many);
    ASSERT_EQ(m.code, 0) << show(m);
    EXPECT_NE(m.err.find("tessel: warning: 4096 threads on "), std::string::npos) << show(m);
  }
}

// ---- the command line -----------------------------------------------------------------

TEST_F(CliTool, VersionUnknownSubcommandAndTacoHints) {
  Result v = run({"--version"});
  EXPECT_EQ(v.code, 0) << show(v);
  EXPECT_EQ(v.out.rfind("tessel ", 0), 0u) << show(v);
  EXPECT_NE(v.out.find('.'), std::string::npos) << show(v);
  expectUserError(run({"frob", "x"}), {"unknown subcommand 'frob'", "run", "explain"});
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-f=B:ds"}), {"'-f=B:ds' is TACO's spelling", "'-f B:ds'"});
  expectUserError(run({"run", "-time", "a(i) = B(i,j) * c(j)"}), {"'--time'"});
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-nthreads=4"}), {"'--threads 4'"});
  Result h = run({"run", "--help"});
  EXPECT_NE(h.out.find("--dims"), std::string::npos);
  EXPECT_NE(h.out.find("exits with status 4"), std::string::npos);
}

TEST_F(CliTool, PosTakesAnAccessAsInCxx) {
  for (const std::string t : {"B", "B(i,j)", "B( i , j )"}) {
    Result r = run({"run", "a(i) = B(i,j) * c(j)", "-f", "B:ds", "-g", "B:uniform:30,20,3", "-g", "c:dense:20", "-s",
                    "fuse(i,j,f),pos(f,fp," + t + ")", "--check"});
    EXPECT_EQ(r.code, 0) << t << "\n" << show(r);
  }
  expectUserError(run({"run", "a(i) = B(i,j) * c(j)", "-f", "B:ds", "-g", "B:uniform:30,20,3", "-g", "c:dense:20", "-s",
                       "fuse(i,j,f),pos(f,fp,B(j,i))"}),
                  {"B(j,i)", "B(i,j)"});
}

TEST_F(CliTool, BoundErrorNamesTheBoundAndTheExtent) {
  Result r = run({"run", "A(i,j) = B(i,j)", "-g", "B:uniform:10,10,2", "-s", "bound(i,ib,5,max_exact)"});
  expectUserError(r, {"bound(i,ib,5", "extent 10", "exactly 5"});
}

TEST_F(CliTool, FunctionCallsThatDoNotExistSaySo) {
  expectUserError(run({"run", "A(i,j) = foo(B(i,j))", "-g", "B:uniform:10,10,2"}),
                  {"no function foo", "sum(j, e)"});
  expectUserError(run({"run", "A(i,j) = sqrt(2 * B(i,j))", "-g", "B:uniform:10,10,2"}), {"no function sqrt"});
}

// ---- explain / emit --kernel-only -----------------------------------------------------

TEST_F(CliTool, ExplainAndKernelOnly) {
  Result e = run({"explain", "A(i,j) = B(i,j) + C(j,i)", "-f", "B:ds", "-f", "C:ds", "-f", "A:ds", "--threads", "2"});
  ASSERT_EQ(e.code, 0) << show(e);
  for (const char* part : {"loop order: i j", "transposes:\n", "tessel transposes C", "schedule: ",
                           "default parallel schedule for 2 threads", "output plan: ", "kernel:\n",
                           "int tessel_compute("})
    EXPECT_NE(e.out.find(part), std::string::npos) << part << "\n" << e.out;
  EXPECT_EQ(e.out.find("static inline int64_t tessel_min"), std::string::npos);  // no helpers
  Result s = run({"explain", "a(i) = B(i,j) * c(j)", "-f", "B:ds", "-s", "split(i,i0,i1,8)"});
  ASSERT_EQ(s.code, 0) << show(s);
  EXPECT_NE(s.out.find("transposes: none"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("split(i,i0,i1,8) (given with -s)"), std::string::npos) << s.out;
  Result k = run({"emit", "a(i) = B(i,j) * c(j)", "-f", "B:ds", "--kernel-only"});
  Result full = run({"emit", "a(i) = B(i,j) * c(j)", "-f", "B:ds"});
  ASSERT_EQ(k.code, 0) << show(k);
  EXPECT_LT(k.out.size(), full.out.size());
  EXPECT_EQ(k.out.find("static inline"), std::string::npos) << k.out;
  EXPECT_NE(k.out.find("int tessel_compute("), std::string::npos) << k.out;
  EXPECT_NE(full.out.find(k.out), std::string::npos);  // the end of the full code
}
