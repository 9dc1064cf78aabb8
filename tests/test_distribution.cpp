// Machines and tensor distribution notation (DISTAL §3): parsing and printing, the
// validity rules with messages naming the tensor and rule, and the pieces each rank
// holds, against hand-computed blocks (uneven, empty, fixed, broadcast).
#include <gtest/gtest.h>

#include <functional>

#include "tessel/distribution.h"
#include "tessel/error.h"

using namespace tessel;

namespace {

void expectError(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no DistributionError";
  } catch (const DistributionError& e) {
    for (const std::string& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(Distribution, GridsParsePrintAndNumberRanksRowMajor) {
  EXPECT_EQ(Grid::parse("4"), Grid(4));
  EXPECT_EQ(Grid::parse("2x2"), Grid(2, 2));
  EXPECT_EQ(Grid::parse("2x3x2").str(), "2x3x2");
  Grid g(2, 3);
  EXPECT_EQ(g.size(), 6);
  EXPECT_EQ(g.coordOf(4), (std::vector<int>{1, 1}));  // the last dimension fastest
  for (int r = 0; r < g.size(); r++) EXPECT_EQ(g.rankOf(g.coordOf(r)), r);
  for (const char* bad : {"", "x2", "2x", "2xx2", "0x2", "two", "2 x 2", "-2"})
    expectError([&] { Grid::parse(bad); }, {"machine '" + std::string(bad) + "'"});
}

TEST(Distribution, StatementsParseAndPrint) {
  for (const char* s : {"xy->xy", "xy->x", "xy->y", "xy->xy0", "xy->xy*", "x->*", "xyz->x0z", "xyz->0yz"})
    EXPECT_EQ(Distribution::parse(s).str(), s);
  Distribution h = Distribution::parse("[xy->xy, xy->x]");
  ASSERT_EQ(h.levels().size(), 2u);
  EXPECT_EQ(h.str(), "[xy->xy, xy->x]");
  Distribution d = Distribution::parse("xy->y0*");
  const DistributionStatement& st = d.levels()[0];
  ASSERT_EQ(st.machine.size(), 3u);
  EXPECT_EQ(st.machine[0].kind, MachineDim::Kind::Partition);
  EXPECT_EQ(st.machine[0].tensorDim, 1);
  EXPECT_EQ(st.machine[1].kind, MachineDim::Kind::Fix);
  EXPECT_EQ(st.machine[2].kind, MachineDim::Kind::Broadcast);
}

TEST(Distribution, ParseErrorsNameTheRule) {
  expectError([] { Distribution::parse("xy"); }, {"'xy'", "expected TENSOR_DIMS->MACHINE_DIMS"});
  expectError([] { Distribution::parse("->x"); }, {"no tensor dimensions"});
  expectError([] { Distribution::parse("xy->"); }, {"no machine dimensions"});
  expectError([] { Distribution::parse("xx->x"); }, {"'x' is named twice"});
  expectError([] { Distribution::parse("xy->xx"); }, {"partitioned by two machine dimensions"});
  expectError([] { Distribution::parse("xy->z"); }, {"'z' names no tensor dimension (xy)"});
  expectError([] { Distribution::parse("x1->x"); }, {"tensor dimensions are letters"});
  expectError([] { Distribution::parse("xy->x-"); }, {"not '-'"});
  expectError([] { Distribution::parse("[xy->x"); }, {"missing ']'"});
}

TEST(Distribution, ValidityAgainstTensorAndMachine) {
  Distribution::parse("xy->xy").check("A", 2, Grid(2, 2));
  Distribution::parse("x->*").check("x", 1, Grid(4));
  expectError([] { Distribution::parse("xy->xy").check("B", 3, Grid(2, 2)); },
              {"distribution of B (xy->xy)", "2 tensor dimension(s), and B has 3"});
  expectError([] { Distribution::parse("xy->xy").check("C", 2, Grid(4)); },
              {"distribution of C", "2 machine dimension(s), and machine 4 has 1"});
  expectError([] { Distribution::parse("xy->xy2").check("A", 2, Grid(2, 2, 2)); },
              {"fixes machine dimension 2 at 2, outside its 2 rank(s)"});
  expectError([] { Distribution::parse("[xy->xy, xy->x]").check("A", 2, Grid(2, 2)); }, {"has one level"});
}

TEST(Distribution, BlocksAreCeilDividedAndMayBeEmpty) {
  // 7 rows on 4 ranks: blocks of 2 -> [0,2) [2,4) [4,6) [6,7).
  std::vector<Extent> want = {{0, 2}, {2, 4}, {4, 6}, {6, 7}};
  for (int p = 0; p < 4; p++) EXPECT_EQ(blockOf(7, 4, p), want[p]) << p;
  // More ranks than rows: 2 rows on 4 ranks -> [0,1) [1,2) then empty.
  EXPECT_EQ(blockOf(2, 4, 1), (Extent{1, 2}));
  EXPECT_EQ(blockOf(2, 4, 2).size(), 0);
  EXPECT_EQ(blockOf(2, 4, 3).size(), 0);
  EXPECT_EQ(blockOf(0, 3, 0).size(), 0);
}

TEST(Distribution, PiecesAndOwners) {
  // Rows of a 7 x 5 matrix over 4 ranks.
  Distribution rows = Distribution::parse("xy->x");
  auto p3 = rows.piece({7, 5}, Grid(4), {3});
  ASSERT_TRUE(p3);
  EXPECT_EQ((*p3)[0], (Extent{6, 7}));
  EXPECT_EQ((*p3)[1], (Extent{0, 5}));
  EXPECT_EQ(rows.owners({7, 5}, Grid(4), {5, 4}), (std::vector<int>{2}));
  // Tiles of a 5 x 3 matrix on a 2 x 2 grid: rank (1,0) = 2 holds rows [3,5), cols [0,2).
  Distribution tiles = Distribution::parse("xy->xy");
  auto t = tiles.piece({5, 3}, Grid(2, 2), {1, 0});
  EXPECT_EQ((*t)[0], (Extent{3, 5}));
  EXPECT_EQ((*t)[1], (Extent{0, 2}));
  EXPECT_EQ(tiles.owners({5, 3}, Grid(2, 2), {4, 2}), (std::vector<int>{3}));
  // Fixed to the face z = 0 of a 2x2x2 cube: ranks with z = 1 hold nothing.
  Distribution face = Distribution::parse("xy->xy0");
  EXPECT_FALSE(face.piece({4, 4}, Grid(2, 2, 2), {0, 1, 1}));
  EXPECT_TRUE(face.piece({4, 4}, Grid(2, 2, 2), {0, 1, 0}));
  EXPECT_EQ(face.owners({4, 4}, Grid(2, 2, 2), {0, 3}), (std::vector<int>{2}));
  // Broadcast over z (DISTAL Figure 5e): both ranks of the z dimension hold the tile.
  Distribution bcast = Distribution::parse("xy->xy*");
  EXPECT_EQ(bcast.owners({2, 2}, Grid(2, 2, 2), {1, 0}), (std::vector<int>{4, 5}));
  // Replicated vector: every rank holds all of it.
  Distribution all = Distribution::parse("x->*");
  EXPECT_EQ(all.owners({10}, Grid(3), {9}), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ((*all.piece({10}, Grid(3), {1}))[0], (Extent{0, 10}));
}
