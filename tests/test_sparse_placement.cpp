// SpDISTAL's sparse distributions (issue 29): the notation (xy->~x, (xy)->~f, ...), its
// rules, and where entries go, against hand-computed placements.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "format/sparse_placement.h"
#include "tessel/distribution.h"
#include "tessel/error.h"

namespace tessel {
namespace {

/// 6 x 5, rows hold 4, 0, 1, 1, 0, 2 entries (row-major, storage order).
std::vector<int64_t> skewed() {
  return {0, 0, 0, 1, 0, 2, 0, 4,  //
          2, 3,                    //
          3, 0,                    //
          5, 1, 5, 4};
}
const std::vector<int64_t> kDims = {6, 5};

std::vector<int> partsAlong(const EntryPlacement& p, int d) {
  std::vector<int> out;
  for (size_t e = 0; e < p.at.size() / static_cast<size_t>(p.gridOrder); e++) out.push_back(p.where(static_cast<int64_t>(e), d));
  return out;
}

void expectError(const std::string& text, const std::string& part) {
  try {
    Distribution::parse(text);
    ADD_FAILURE() << text << ": no error";
  } catch (const DistributionError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << text << ": " << e.what();
  }
}

TEST(SparseDistribution, NotationRoundTrips) {
  for (const char* t : {"xy->~x", "xy->~y", "(xy)->~f", "(xy)z->~f", "(xyz)->~f", "xyz->~x", "xy->~xy", "xy->x"})
    EXPECT_EQ(Distribution::parse(t).str(), t);
  EXPECT_TRUE(Distribution::parse("xy->~x").byNonZeros());
  EXPECT_TRUE(Distribution::parse("(xy)->~f").byNonZeros());
  EXPECT_FALSE(Distribution::parse("xy->x").byNonZeros());
  const Distribution tubes = Distribution::parse("(xy)z->~f");
  const auto& st = tubes.levels()[0];
  EXPECT_EQ(st.fused, 2);
  EXPECT_EQ(st.fusedName, 'f');
  EXPECT_EQ(st.machine[0].tensorDim, MachineDim::kFused);
}

TEST(SparseDistribution, NotationErrorsSayWhatIsWrong) {
  expectError("(xy)->f", "partitioned by non-zeros: write ~f");
  expectError("(x)y->~f", "at least two");
  expectError("(xy->~f", "without ')'");
  expectError("(xy)->~x", "is fused");
  expectError("(xy)->*", "partitioned by no machine dimension");
  expectError("xy->~3", "'~'");
  expectError("xy->x~", "at the end");
  expectError("xy->~~x", "'~~'");
  expectError("xy->~f", "names no tensor dimension");
}

TEST(SparseDistribution, FormatRules) {
  Distribution nz = Distribution::parse("xy->~x");
  EXPECT_NO_THROW(nz.checkFormat("B", {true, false}, {0, 1}));  // CSR
  try {
    nz.checkFormat("B", {true, true}, {0, 1});
    ADD_FAILURE() << "dense";
  } catch (const DistributionError& e) {
    EXPECT_NE(std::string(e.what()).find("every level of B is dense"), std::string::npos) << e.what();
  }
  Distribution fused = Distribution::parse("(xy)->~f");
  EXPECT_NO_THROW(fused.checkFormat("B", {false, false}, {0, 1}));  // DCSR
  EXPECT_THROW(fused.checkFormat("B", {true, false}, {1, 0}), DistributionError);  // CSC
  EXPECT_THROW(fused.checkFormat("B", {true, false, false}, {0, 1, 2}), DistributionError);  // order 3
  // Data-dependent pieces are not boxes of the dense kind.
  EXPECT_THROW(nz.piece(kDims, Grid(2), {0}), DistributionError);
  EXPECT_THROW(nz.owners(kDims, Grid(2), {0, 0}), DistributionError);
}

TEST(SparsePlacement, RowsByNonZerosKeepRowsWholeAndContiguous) {
  // s (entries before each row) = 0, 4, 4, 5, 6, 6 of 8.
  // 2 parts: floor(2s/8) = 0, 1, 1, 1, 1, 1.
  auto p2 = placeEntries(kDims, skewed(), Distribution::parse("xy->~x"), Grid(2));
  EXPECT_EQ(p2.blocks[0], (std::vector<Extent>{{0, 1}, {1, 6}}));
  EXPECT_EQ(partsAlong(p2, 0), (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
  // 3 parts: floor(3s/8) = 0, 1, 1, 1, 2, 2 (empty row 1 joins row 2's part, row 4 row 5's).
  auto p3 = placeEntries(kDims, skewed(), Distribution::parse("xy->~x"), Grid(3));
  EXPECT_EQ(p3.blocks[0], (std::vector<Extent>{{0, 1}, {1, 4}, {4, 6}}));
  EXPECT_EQ(partsAlong(p3, 0), (std::vector<int>{0, 0, 0, 0, 1, 1, 2, 2}));
  // One heavy row holding everything: the other parts get empty blocks, the last the tail.
  std::vector<int64_t> heavy = {2, 0, 2, 1, 2, 2, 2, 3};
  auto h = placeEntries(kDims, heavy, Distribution::parse("xy->~x"), Grid(3));
  EXPECT_EQ(h.blocks[0], (std::vector<Extent>{{0, 3}, {3, 3}, {3, 6}}));
  EXPECT_EQ(partsAlong(h, 0), (std::vector<int>{0, 0, 0, 0}));
  // No entries: equal coordinate blocks.
  auto none = placeEntries(kDims, {}, Distribution::parse("xy->~x"), Grid(4));
  EXPECT_EQ(none.blocks[0], (std::vector<Extent>{{0, 2}, {2, 4}, {4, 6}, {6, 6}}));
}

TEST(SparsePlacement, FusedNonZerosSplitAcrossRows) {
  // 8 entries on 3 parts: floor(3k/8) = 0,0,0,1,1,1,2,2.
  auto p = placeEntries(kDims, skewed(), Distribution::parse("(xy)->~f"), Grid(3));
  EXPECT_EQ(partsAlong(p, 0), (std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2}));
  EXPECT_EQ(p.entryBlocks[0], (std::vector<Extent>{{0, 3}, {3, 6}, {6, 8}}));
  // Row 0 is split between parts 0 and 1; part 1 spans rows 0..3.
  auto box = [&](int q) { return *placedBox(p, kDims, skewed(), Distribution::parse("(xy)->~f"), {q}); };
  EXPECT_EQ(box(0), (std::vector<Extent>{{0, 1}, {0, 5}}));
  EXPECT_EQ(box(1), (std::vector<Extent>{{0, 4}, {0, 5}}));
  EXPECT_EQ(box(2), (std::vector<Extent>{{5, 6}, {0, 5}}));
  // More parts than entries: some hold nothing (an empty box).
  std::vector<int64_t> two = {1, 1, 4, 4};
  auto q = placeEntries(kDims, two, Distribution::parse("(xy)->~f"), Grid(4));
  EXPECT_EQ(partsAlong(q, 0), (std::vector<int>{0, 2}));
  EXPECT_EQ(placedBox(q, kDims, two, Distribution::parse("(xy)->~f"), {1})->at(0).size(), 0);
}

TEST(SparsePlacement, UniverseBlocksMatchDenseDistributions) {
  // Equal coordinate blocks of ceil(6/4) = 2 rows, as the dense pieces and divide().
  Distribution rows = Distribution::parse("xy->x");
  auto p = placeEntries(kDims, skewed(), rows, Grid(4));
  EXPECT_EQ(p.blocks[0], (std::vector<Extent>{{0, 2}, {2, 4}, {4, 6}, {6, 6}}));
  EXPECT_EQ(partsAlong(p, 0), (std::vector<int>{0, 0, 0, 0, 1, 1, 2, 2}));
  for (int q = 0; q < 4; q++)
    EXPECT_EQ(*placedBox(p, kDims, skewed(), rows, {q}), *rows.piece(kDims, Grid(4), {q})) << q;
  // 2-D blocks, a broadcast and a fixed coordinate.
  auto b = placeEntries(kDims, skewed(), Distribution::parse("xy->xy"), Grid(2, 2));
  EXPECT_EQ(partsAlong(b, 1), (std::vector<int>{0, 0, 0, 1, 1, 0, 0, 1}));  // columns in blocks of 3
  auto bc = placeEntries(kDims, skewed(), Distribution::parse("xy->x*"), Grid(2, 2));
  EXPECT_TRUE(bc.held(0, {0, 0}));
  EXPECT_TRUE(bc.held(0, {0, 1}));
  EXPECT_FALSE(bc.held(0, {1, 1}));
  Distribution fixed = Distribution::parse("xy->~x1");
  auto f = placeEntries(kDims, skewed(), fixed, Grid(2, 2));
  EXPECT_FALSE(placedBox(f, kDims, skewed(), fixed, {0, 0}).has_value());
  EXPECT_TRUE(placedBox(f, kDims, skewed(), fixed, {0, 1}).has_value());
  EXPECT_FALSE(f.held(0, {0, 0}));
  EXPECT_TRUE(f.held(0, {0, 1}));
}

TEST(SparsePlacement, NoDistributionHoldsEverythingEverywhere) {
  auto p = placeEntries(kDims, skewed(), Distribution(), Grid(3));
  for (int q = 0; q < 3; q++) EXPECT_TRUE(p.held(5, {q}));
}

}  // namespace
}  // namespace tessel
