// Bounds on untrusted sizes that would otherwise recurse without limit: expression nesting
// and long flat sums (text parser and C++ API), long schedules, many splits, huge unroll
// factors. Each is refused with a typed error naming the limit, or handled: never a stack
// overflow, never a C-compiler failure.
#include <gtest/gtest.h>

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
