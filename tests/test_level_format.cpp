// Level formats: properties of each kind and the SpDISTAL Table I partition functions
// of Dense and Compressed levels, against partitions computed by hand for a small CSR
// matrix.
#include <gtest/gtest.h>

#include "format/level_format.h"

using namespace tessel;

namespace {

using Colors = std::vector<std::vector<Range>>;

// B (4 x 4, CSR):  row 0: cols 0, 2   row 1: -   row 2: cols 1, 2, 3   row 3: col 0
const Format csr = Format::parse("ds");
LevelView rows() { return {4, 1, {}, {}}; }
LevelView cols() { return {4, 4, {0, 2, 2, 5, 6}, {0, 2, 1, 2, 3, 0}}; }

}  // namespace

TEST(LevelFormat, Properties) {
  const LevelFormat &d = levelFormat(csr, 0), &s = levelFormat(csr, 1);
  EXPECT_TRUE(d.full() && d.locatable() && d.unique() && d.compact() && d.supportsInsert());
  EXPECT_FALSE(d.hasPosArray() || d.hasCrdArray() || d.hasFlagArray() || d.supportsAppend());
  EXPECT_TRUE(s.hasPosArray() && s.hasCrdArray() && s.unique() && s.supportsAppend() && s.ordered());
  EXPECT_FALSE(s.full() || s.locatable() || s.supportsInsert());
  Format coo = Format::parse("uq");
  const LevelFormat &u = levelFormat(coo, 0), &q = levelFormat(coo, 1);
  EXPECT_FALSE(u.unique());
  EXPECT_TRUE(q.branchless() && q.unique() && !q.ownsPositions() && !q.hasPosArray());
  EXPECT_FALSE(levelFormat(Format::parse("uqq"), 1).unique());  // not the last singleton
  EXPECT_EQ(d.positions(1, 4, 0), 4);
  EXPECT_EQ(s.positions(4, 4, 6), 6);
  EXPECT_EQ(q.positions(7, 3, 0), 7);
  EXPECT_EQ(s.posArraySize(4), 5);
  EXPECT_EQ(d.posArraySize(4), 0);
  EXPECT_TRUE(isDenseOverCompressed(csr));
  EXPECT_FALSE(isDenseOverCompressed(Format::parse("ss")));
  EXPECT_FALSE(isDenseOverCompressed(Format::parse("db")));
  EXPECT_TRUE(allLevelsInsert(Format::parse("db")));
  EXPECT_FALSE(allLevelsInsert(csr));
}

TEST(LevelFormat, DenseUniverseRowsThenCompressedFromParent) {
  // Rows [0,2) to color 0, [2,4) to color 1 (row-based SpMV, Figure 9b).
  auto b = levelFormat(csr, 0).initUniversePartition(rows());
  b->createEntry(0, {0, 2});
  b->createEntry(1, {2, 4});
  PartitionPair p = b->finalize();
  EXPECT_EQ(p.forChild.colors, (Colors{{{0, 2}}, {{2, 4}}}));
  EXPECT_EQ(p.forParent.colors, (Colors{{{0, 1}}, {{0, 1}}}));  // both need the root
  // image(pos): color 0 holds positions [pos[0], pos[2]) = [0, 2), color 1 [2, 6).
  Partition crd = levelFormat(csr, 1).partitionFromParent(cols(), p.forChild);
  EXPECT_EQ(crd.colors, (Colors{{{0, 2}}, {{2, 6}}}));
}

TEST(LevelFormat, CompressedUniverseByColumnValues) {
  // Columns [0,2) to color 0, [2,4) to color 1: crd bucketed by value.
  auto b = levelFormat(csr, 1).initUniversePartition(cols());
  b->createEntry(0, {0, 2});
  b->createEntry(1, {2, 4});
  PartitionPair p = b->finalize();
  EXPECT_EQ(p.forChild.colors, (Colors{{{0, 1}, {2, 3}, {5, 6}}, {{1, 2}, {3, 5}}}));
  // preimage(pos): rows whose segments hold those positions.
  EXPECT_EQ(p.forParent.colors, (Colors{{{0, 1}, {2, 4}}, {{0, 1}, {2, 3}}}));
  // Dense rows from the child's row partition: the root, for both colors.
  Partition root = levelFormat(csr, 0).partitionFromChild(rows(), p.forParent);
  EXPECT_EQ(root.colors, (Colors{{{0, 1}}, {{0, 1}}}));
}

TEST(LevelFormat, CompressedNonZeroSplit) {
  // Non-zeros [0,3) and [3,6): an even split of the stored entries (Figure 9d).
  auto b = levelFormat(csr, 1).initNonZeroPartition(cols());
  b->createEntry(0, {0, 3});
  b->createEntry(1, {3, 6});
  PartitionPair p = b->finalize();
  EXPECT_EQ(p.forChild.colors, (Colors{{{0, 3}}, {{3, 6}}}));
  EXPECT_EQ(p.forParent.colors, (Colors{{{0, 1}, {2, 3}}, {{2, 4}}}));  // row 1 is empty: nobody's
  EXPECT_EQ(levelFormat(csr, 1).partitionFromChild(cols(), p.forChild).colors, p.forParent.colors);
}

TEST(LevelFormat, DenseUnderDenseAndNonZero) {
  // Level 1 of a dense 4 x 4 matrix: slot = row * 4 + col.
  Format dd = Format::parse("dd");
  LevelView l{4, 4, {}, {}};
  auto b = levelFormat(dd, 1).initUniversePartition(l);
  b->createEntry(0, {1, 3});
  PartitionPair p = b->finalize();
  EXPECT_EQ(p.forChild.colors, (Colors{{{1, 3}, {5, 7}, {9, 11}, {13, 15}}}));
  EXPECT_EQ(p.forParent.colors, (Colors{{{0, 4}}}));
  EXPECT_EQ(levelFormat(dd, 1).partitionFromParent(l, Partition{{{{2, 4}}}}).colors, (Colors{{{8, 16}}}));
  EXPECT_EQ(levelFormat(dd, 1).partitionFromChild(l, Partition{{{{5, 7}}}}).colors, (Colors{{{1, 2}}}));
  auto nz = levelFormat(dd, 1).initNonZeroPartition(l);
  nz->createEntry(1, {6, 10});  // color 0 gets nothing
  PartitionPair q = nz->finalize();
  EXPECT_EQ(q.forChild.colors, (Colors{{}, {{6, 10}}}));
  EXPECT_EQ(q.forParent.colors, (Colors{{}, {{1, 3}}}));
}

TEST(LevelFormat, NormalizeRanges) {
  EXPECT_EQ(normalizeRanges({{5, 6}, {0, 2}, {2, 3}, {4, 4}, {1, 2}}), (std::vector<Range>{{0, 3}, {5, 6}}));
}
