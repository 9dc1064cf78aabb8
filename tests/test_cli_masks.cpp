// `tessel run --mask` end to end: masked SpGEMM from files against values written out
// by hand (structural, valued, complemented, += with and without replace), a mask
// that is an input of the expression (triangle counting), the code with its mask, and
// bad input: exit 2, one line naming the problem, no output file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/test_support.h"
#include "support/tool_runner.h"

using namespace tessel::testing;
namespace fs = std::filesystem;

namespace {

class CliMasks : public ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    // A*B = (1,1) 7, (1,2) 8, (1,3) 2, (2,1) 9, (2,2) 12, (3,1) 4, (3,3) 33 (1-based);
    // M stores (1,3) as an explicit zero.
    a_ = file("A.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 5\n1 1 1\n1 2 2\n2 2 3\n3 1 4\n3 3 5\n");
    b_ = file("B.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 5\n1 1 1\n1 3 2\n2 1 3\n2 2 4\n3 3 5\n");
    m_ = file("M.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1\n1 3 0\n2 2 1\n3 2 1\n");
    old_ = file("C0.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 100\n2 3 200\n3 2 300\n");
  }
  Result spgemm(const std::vector<std::string>& extra, const std::string& op = "=") {
    std::vector<std::string> args = {"run", "C(i,j) " + op + " A(i,k) * B(k,j)", "-i", "A:" + a_, "-i", "B:" + b_,
                                     "-f", "C:ds", "-o", "C:" + path("C.tns"), "--check"};
    if (op == "+=") args.insert(args.end(), {"-i", "C:" + old_});
    args.insert(args.end(), extra.begin(), extra.end());
    return runTool(dir_, args);
  }
  Entries result() const { return readEntries(dir_ / "C.tns"); }
  std::string a_, b_, m_, old_;
};

}  // namespace

TEST_F(CliMasks, MaskedSpGEMMFromFiles) {
  Result r = spgemm({"--mask", m_});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.err.find("check: OK"), std::string::npos) << show(r);
  EXPECT_EQ(result(), (Entries{{{0, 0}, 7}, {{0, 2}, 2}, {{1, 1}, 12}}));
  r = spgemm({"--mask", m_, "--mask-values", "--mask-form", "pull"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(result(), (Entries{{{0, 0}, 7}, {{1, 1}, 12}}));
  r = spgemm({"--mask", m_, "--complement", "--mask-format", "ss"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(result(), (Entries{{{0, 1}, 8}, {{1, 0}, 9}, {{2, 0}, 4}, {{2, 2}, 33}}));
  r = spgemm({"--mask", m_, "--complement", "--mask-values", "--threads", "2"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(result(), (Entries{{{0, 1}, 8}, {{0, 2}, 2}, {{1, 0}, 9}, {{2, 0}, 4}, {{2, 2}, 33}}));
}

TEST_F(CliMasks, AccumulateMergesOrReplaces) {
  Result r = spgemm({"--mask", m_}, "+=");
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(result(), (Entries{{{0, 0}, 7}, {{0, 1}, 100}, {{0, 2}, 2}, {{1, 1}, 12}, {{1, 2}, 200}, {{2, 1}, 300}}));
  r = spgemm({"--mask", m_, "--replace"}, "+=");
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(result(), (Entries{{{0, 0}, 7}, {{0, 2}, 2}, {{1, 1}, 12}, {{2, 1}, 300}}));
  r = spgemm({"--mask", m_, "--complement", "--replace"}, "+=");
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(result(), (Entries{{{0, 1}, 108}, {{1, 0}, 9}, {{1, 2}, 200}, {{2, 0}, 4}, {{2, 2}, 33}}));
}

TEST_F(CliMasks, AnInputAsTheMaskCountsTriangles) {
  if (dataDir().empty()) GTEST_SKIP() << "no shared data";
  // L: the strictly lower triangle of karate (78 edges, 45 triangles).
  std::ifstream in(dataDir() + "/matrices/karate.mtx");
  std::string line, body;
  int64_t n = 0, edges = 0;
  bool header = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '%') continue;
    int64_t u, v;
    std::istringstream is(line);
    if (!header) {
      is >> n;
      header = true;
      continue;
    }
    is >> u >> v;
    if (u == v) continue;
    body += std::to_string(std::max(u, v)) + " " + std::to_string(std::min(u, v)) + " 1\n";
    edges++;
  }
  std::string l = file("L.mtx", "%%MatrixMarket matrix coordinate real general\n" + std::to_string(n) + " " +
                                    std::to_string(n) + " " + std::to_string(edges) + "\n" + body);
  Result r = runTool(dir_, {"run", "C(i,j) = L(i,k) * L(k,j)", "-i", "L:" + l, "-f", "C:ds", "--mask", "L",
                            "--semiring", "plus_pair", "-o", "C:" + path("C.tns"), "--check"});
  ASSERT_EQ(r.code, 0) << show(r);
  double triangles = 0;
  for (const auto& [at, v] : result()) triangles += v;
  EXPECT_EQ(triangles, 45);
}

TEST_F(CliMasks, TheCodeShowsTheMask) {
  Result r = runTool(dir_, {"run", "C(i,j) = A(i,k) * B(k,j)", "-f", "A:ds", "-f", "B:ds", "-f", "C:ds", "--mask", m_,
                            "--complement", "--mask-values", "--emit-c"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.out.find("C<!M,valued>(i,j) = A(i,k) * B(k,j)"), std::string::npos) << r.out.substr(0, 800);
  EXPECT_NE(r.out.find("mask(!(M(i,j) != 0)) * (A(i,k) * B(k,j))"), std::string::npos) << r.out.substr(0, 800);
}

TEST_F(CliMasks, EmitCompilesForAMaskWithoutData) {
  Result r = runTool(dir_, {"emit", "y(j) = x(i) * A(i,j)", "-f", "x:s", "-f", "A:ds", "-f", "y:s", "--mask",
                            "--mask-format", "b", "--complement"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.out.find("y<!M>(j) = x(i) * A(i,j)"), std::string::npos) << r.out.substr(0, 800);
  EXPECT_NE(r.out.find("mask(!M(j)) * (x(i) * A(i,j))"), std::string::npos) << r.out.substr(0, 800);
  expectUserError(runTool(dir_, {"emit", "y(j) = x(i) * A(i,j)", "--complement"}), {"--complement", "--mask"});
  expectUserError(runTool(dir_, {"emit", "y(j) = x(i) * A(i,j)", "--mask", "--mask-format", "ds"}), {"--mask-format"});
}

TEST_F(CliMasks, BadMasksExitTwoWithoutOutput) {
  // A mask option without --mask.
  Result r = spgemm({"--complement"});
  expectUserError(r, {"--complement", "--mask"});
  EXPECT_FALSE(fs::exists(dir_ / "C.tns"));
  expectUserError(spgemm({"--mask-values"}), {"--mask-values", "--mask"});
  // A mask of another shape.
  std::string wide = file("W.mtx", "%%MatrixMarket matrix coordinate real general\n3 4 1\n1 4 1\n");
  r = spgemm({"--mask", wide});
  expectUserError(r, {"mask", "3x4", "3x3", "shape"});
  EXPECT_FALSE(fs::exists(dir_ / "C.tns"));
  // A mask file that does not exist.
  r = spgemm({"--mask", path("missing.mtx")});
  expectUserError(r, {"missing.mtx"});
  EXPECT_FALSE(fs::exists(dir_ / "C.tns"));
  // A bad form, a mask format of the wrong order, the output as its own mask.
  expectUserError(spgemm({"--mask", m_, "--mask-form", "sideways"}), {"--mask-form", "sideways"});
  expectUserError(spgemm({"--mask", m_, "--mask-format", "s"}), {"--mask-format", "order"});
  expectUserError(spgemm({"--mask", "C"}), {"--mask", "output"});
  EXPECT_FALSE(fs::exists(dir_ / "C.tns"));
}
