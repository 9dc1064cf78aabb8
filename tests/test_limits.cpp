// Bounds on untrusted sizes that would otherwise recurse without limit: expression nesting
// and long flat sums (text parser and C++ API), long schedules, many splits, huge unroll
// factors. Each is refused with a typed error naming the limit, or handled: never a stack
// overflow, never a C-compiler failure. And the C compiler's own time limit, seen from
// the tool.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "support/test_support.h"
#include "support/tool_runner.h"
#include "tessel/tessel.h"

namespace fs = std::filesystem;
using namespace tessel;

namespace {

std::map<std::string, TensorBase> tensors() {
  std::map<std::string, TensorBase> m;
  m["a"] = Tensor<double>("a", {4});
  m["b"] = Tensor<double>("b", {4});
  m["B"] = Tensor<double>("B", {4, 4});
  return m;
}

std::string repeat(const std::string& s, int n, const std::string& sep = "") {
  std::string out;
  for (int k = 0; k < n; k++) out += (k ? sep : "") + s;
  return out;
}

/// The parse throws a ParseError whose message names the limit: the tree's depth, or (for
/// parentheses, negations and sums open around one point) twice that.
void expectTooDeep(const std::string& text, bool nesting = false) {
  std::string limit = nesting ? "has more than " + std::to_string(2 * kMaxExpressionDepth) + " nested"
                              : "nests deeper than " + std::to_string(kMaxExpressionDepth) + " levels";
  try {
    parseAssignment(text, tensors());
    ADD_FAILURE() << "accepted an expression of " << text.size() << " bytes";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find(limit), std::string::npos) << std::string(e.what()).substr(0, 300);
  }
}

Tensor<double> filled(const std::string& name, int64_t n) {
  Tensor<double> t(name, {n});
  for (int64_t k = 0; k < n; k++) t.insert({k}, static_cast<double>(k + 1));
  t.pack();
  return t;
}

}  // namespace

TEST(ExpressionLimits, ParserRefusesDeepNesting) {
  expectTooDeep("a(i) = " + repeat("(", 100000) + "b(i)" + repeat(")", 100000), true);
  expectTooDeep("a(i) = " + repeat("-", 100000) + "b(i)", true);
  expectTooDeep("a(i) = " + repeat("-(", 50000) + "b(i)" + repeat(")", 50000), true);
  expectTooDeep("a(i) = sum(j, " + repeat("(", 5000) + "B(i,j)" + repeat(")", 5001), true);
  // Unbalanced: the limit is met before the missing ')'.
  expectTooDeep("a(i) = " + repeat("(", 100000), true);
  // Within the nesting bound, negations still nest the tree itself.
  expectTooDeep("a(i) = " + repeat("-", kMaxExpressionDepth) + "b(i)");
}

TEST(ExpressionLimits, ParserRefusesLongFlatSums) {
  expectTooDeep("a(i) = " + repeat("b(i)", 40000, " + "));
  expectTooDeep("a(i) = " + repeat("b(i)", 40000, " * "));
  expectTooDeep("a(i) = " + repeat("b(i)", 40000, " - "));
  expectTooDeep("a(i) = " + repeat("(b(i) + b(i))", 20000, " + "));
}

TEST(ExpressionLimits, ParserAcceptsUpToTheLimit) {
  int n = kMaxExpressionDepth;
  Assignment s = parseAssignment("a(i) = " + repeat("b(i)", n, " + "), tensors());
  EXPECT_EQ(s.rhs.node().depth, n);
  Assignment p = parseAssignment("a(i) = " + repeat("(", n) + "b(i)" + repeat(")", n), tensors());
  EXPECT_EQ(p.rhs.node().depth, 1);
  Assignment g = parseAssignment("a(i) = " + repeat("-", n - 1) + "b(i)", tensors());
  EXPECT_EQ(g.rhs.node().depth, n);
  // Prints as "-(-(-(...b(i))))" and parses back; so do right-nested products.
  EXPECT_EQ(parseAssignment(g.str(), tensors()).str(), g.str());
  Assignment m = parseAssignment("a(i) = " + repeat("b(i) * (", n - 2) + "b(i)" + repeat(")", n - 2), tensors());
  EXPECT_EQ(parseAssignment(m.str(), tensors()).str(), m.str());
}

TEST(ExpressionLimits, ApiRefusesDeepExpressions) {
  Tensor<double> a("a", {4}), b("b", {4});
  IndexVar i("i");
  // A flat sum of 40,000 terms: refused at the term past the limit, as it is built.
  IndexExpr e = b(i);
  int terms = 1;
  try {
    for (; terms < 40000; terms++) e = e + b(i);
    ADD_FAILURE() << "built a sum of 40000 terms";
  } catch (const NotationError& err) {
    EXPECT_NE(std::string(err.what()).find(std::to_string(kMaxExpressionDepth)), std::string::npos) << err.what();
  }
  EXPECT_EQ(terms, kMaxExpressionDepth);
  EXPECT_EQ(e.node().depth, kMaxExpressionDepth);
  // 100,000 nested negations, products and sums: the same.
  IndexExpr n = b(i);
  EXPECT_THROW(for (int k = 0; k < 100000; k++) n = -n, NotationError);
  IndexExpr m = b(i);
  EXPECT_THROW(for (int k = 0; k < 100000; k++) m = b(i) * m, NotationError);
  IndexVar j("j");
  Tensor<double> B("B", {4, 4});
  IndexExpr s = B(i, j);
  EXPECT_THROW(for (int k = 0; k < 100000; k++) s = sum(j, s) * B(i, j), NotationError);
  // What was built is printed, checked and destroyed without running out of stack.
  EXPECT_GT(n.str().size(), static_cast<size_t>(kMaxExpressionDepth));
  EXPECT_NO_THROW(a(i) = n);
}

TEST(ExpressionLimits, LongestSumEvaluatesThroughApiAndReference) {
  const int64_t len = 4;
  Tensor<double> a("a", {len});
  Tensor<double> b = filled("b", len);
  IndexVar i("i");
  IndexExpr e = b(i);
  for (int k = 1; k < kMaxExpressionDepth; k++) e = e + b(i);
  a(i) = e;
  EXPECT_NO_THROW(referenceEvaluate(a.assignment()));
  a.evaluate();
  for (int64_t k = 0; k < len; k++) EXPECT_DOUBLE_EQ(a.at({k}), kMaxExpressionDepth * (k + 1.0));
}

TEST(ScheduleLimits, LongSchedulesAreRefused) {
  auto t = tensors();
  Assignment a = parseAssignment("a(i) = B(i,j) * b(j)", t);
  // 5000 commands (each valid alone): refused by count, before any is applied.
  try {
    parseSchedule(repeat("reorder(i,j)", 5000, ","), a);
    ADD_FAILURE() << "accepted 5000 commands";
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("at most " + std::to_string(kMaxScheduleCommands)), std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(parseSchedule(repeat("reorder(i,j)", static_cast<int>(kMaxScheduleCommands), ","), a));
  // Through the C++ API as well.
  Schedule s;
  IndexVar i("i"), j("j");
  for (size_t k = 0; k < kMaxScheduleCommands; k++) s.reorder({i, j});
  EXPECT_THROW(s.reorder({i, j}), ScheduleError);
  EXPECT_EQ(s.commands().size(), kMaxScheduleCommands);
}

TEST(ScheduleLimits, SplitChainsAreBounded) {
  auto t = tensors();
  Assignment a = parseAssignment("a(i) = b(i)", t);
  auto chain = [](int n) {
    std::string s = "split(i,o0,n0,2)";
    for (int k = 1; k < n; k++)
      s += ",split(n" + std::to_string(k - 1) + ",o" + std::to_string(k) + ",n" + std::to_string(k) + ",2)";
    return s;
  };
  EXPECT_NO_THROW(parseSchedule(chain(kMaxScheduleSplits), a));
  try {
    parseSchedule(chain(5000 / 20), a);
    ADD_FAILURE() << "accepted a chain of 250 splits";
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("at most " + std::to_string(kMaxScheduleSplits) + " split"),
              std::string::npos)
        << e.what();
  }
}

TEST(ScheduleLimits, HugeUnrollFactorIsRefused) {
  auto t = tensors();
  Assignment a = parseAssignment("a(i) = b(i)", t);
  EXPECT_NO_THROW(parseSchedule("unroll(i," + std::to_string(kMaxUnrollFactor) + ")", a));
  for (const char* f : {"1025", "65535", "4294967297", "9223372036854775807"}) {
    SCOPED_TRACE(f);
    try {
      parseSchedule(std::string("unroll(i,") + f + ")", a);
      ADD_FAILURE() << "accepted unroll factor " << f;
    } catch (const ScheduleError& e) {
      EXPECT_NE(std::string(e.what()).find("at most " + std::to_string(kMaxUnrollFactor)), std::string::npos)
          << e.what();
    }
  }
  IndexVar i("i");
  EXPECT_THROW(Schedule().unroll(i, int64_t(1) << 40), ScheduleError);
}

// The tool: exit 2 and one line naming the limit, for every case above.
TEST(LimitsCli, RefusedWithExitTwo) {
  fs::path dir = tessel::testing::makeScratchDir("tessel-limits");
  auto run = [&](const std::vector<std::string>& args) { return tessel::testing::runTool(dir, args); };
  // Arguments stay under the kernel's 128 KB limit per argument.
  tessel::testing::expectUserError(run({"run", "a(i) = " + repeat("(", 30000) + "b(i)" + repeat(")", 30000), "-g",
                                "b:dense:4"}),
                           {"nested parentheses"});
  tessel::testing::expectUserError(run({"run", "a(i) = " + repeat("-", 100000) + "b(i)", "-g", "b:dense:4"}),
                           {"nested parentheses"});
  tessel::testing::expectUserError(run({"run", "a(i) = " + repeat("b(i)", 15000, "+"), "-g", "b:dense:4"}),
                           {"nests deeper than"});
  tessel::testing::expectUserError(run({"emit", "a(i) = b(i)", "-s", repeat("unroll(i,2)", 5000, ",")}),
                           {"at most " + std::to_string(kMaxScheduleCommands)});
  tessel::testing::expectUserError(run({"emit", "a(i) = b(i)", "-s", "unroll(i,100000)"}), {"unroll factor"});
  tessel::testing::removeScratchDir(dir);
}

// A C compiler that never finishes: stopped at TESSEL_CC_TIMEOUT, reported in one line.
TEST(LimitsCli, CompilerTimeoutIsOneLine) {
  fs::path dir = tessel::testing::makeScratchDir("tessel-limits");
  std::string script = (dir / "slow-cc").string();
  std::ofstream(script) << "#!/bin/sh\nsleep 300 &\necho $! > " << (dir / "helper.pid").string()
                        << "\necho 'slow-cc: thinking'\nwait\n";
  ASSERT_EQ(::chmod(script.c_str(), 0755), 0);
  // A fresh cache: the suite's shared one may already hold this kernel.
  std::string cache = (dir / "cache").string();
  ::setenv("TESSEL_CC", script.c_str(), 1);
  ::setenv("TESSEL_CC_TIMEOUT", "1", 1);
  ::setenv("TESSEL_CACHE_DIR", cache.c_str(), 1);
  auto t0 = std::chrono::steady_clock::now();
  tessel::testing::Result r = tessel::testing::runTool(dir, {"run", "a(i) = b(i) * 2", "-g", "b:dense:4"});
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ::unsetenv("TESSEL_CC");
  ::unsetenv("TESSEL_CC_TIMEOUT");
  ::unsetenv("TESSEL_CACHE_DIR");
  EXPECT_NE(r.code, 0) << tessel::testing::show(r);
  EXPECT_NE(r.code, 2) << tessel::testing::show(r);  // not the input's fault
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << tessel::testing::show(r);
  EXPECT_NE(r.err.find("timed out after 1 s"), std::string::npos) << tessel::testing::show(r);
  EXPECT_NE(r.err.find("slow-cc: thinking"), std::string::npos) << tessel::testing::show(r);
  EXPECT_LT(s, 20.0);
  std::ifstream in(dir / "helper.pid");
  pid_t helper = 0;
  in >> helper;
  ASSERT_GT(helper, 0);
  // The helper the "compiler" started died with it (its process group was killed).
  bool gone = false;
  for (int k = 0; k < 200 && !gone; ++k) {
    std::ifstream st("/proc/" + std::to_string(helper) + "/stat");
    std::string line;
    gone = !std::getline(st, line) || line.find(") Z") != std::string::npos;
    if (!gone) ::usleep(10000);
  }
  EXPECT_TRUE(gone) << "pid " << helper;
  tessel::testing::removeScratchDir(dir);
}
