// Pieces of sparse tensors on a grid (issue 29): every distribution form on skewed,
// empty and generated matrices and a 3-tensor: the pieces hold every entry exactly once
// (or once per replica), in the tensor's format, inside their boxes; partitions by
// non-zeros are balanced. The oracle is the tensor's own entry list, counted here.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "runtime/spmd/sparse_pieces.h"
#include "tessel/error.h"
#include "tessel/generate.h"
#include "tessel/tensor.h"

namespace tessel::spmd {
namespace {

TensorBase matrix(const CooData& c, const std::string& fmt) {
  TensorBase t("B", Datatype::Float64, c.dims, Format::parse(fmt));
  t.setFromCoo(c);
  return t;
}

/// Every entry of `t` lands in exactly `copies` pieces, at its coordinates minus the box.
void expectPartition(const TensorBase& t, const std::string& dist, const Grid& grid, int copies = 1) {
  SCOPED_TRACE(dist + " on " + grid.str() + " (" + t.format().str() + ")");
  auto pieces = sparsePieces(t, Distribution::parse(dist), grid);
  std::map<std::vector<int64_t>, std::pair<double, int>> seen;
  int64_t total = 0;
  for (const SparsePiece& p : pieces) {
    if (!p.box) continue;
    ASSERT_TRUE(p.tensor.defined());
    EXPECT_EQ(p.tensor.format(), t.format());
    CooData local = p.tensor.toCoo();
    total += local.nnz();
    for (int64_t e = 0; e < local.nnz(); e++) {
      std::vector<int64_t> g;
      for (int m = 0; m < t.order(); m++) {
        int64_t v = local.coords[static_cast<size_t>(e * t.order() + m)] + (*p.box)[static_cast<size_t>(m)].lo;
        EXPECT_LT(v, (*p.box)[static_cast<size_t>(m)].hi);
        g.push_back(v);
      }
      auto& s = seen[g];
      s.first = local.values[static_cast<size_t>(e)];
      s.second++;
    }
  }
  CooData all = t.toCoo();
  EXPECT_EQ(total, all.nnz() * copies);
  for (int64_t e = 0; e < all.nnz(); e++) {
    std::vector<int64_t> g(all.coords.begin() + e * t.order(), all.coords.begin() + (e + 1) * t.order());
    ASSERT_TRUE(seen.count(g)) << "entry " << e << " in no piece";
    EXPECT_EQ(seen[g].first, all.values[static_cast<size_t>(e)]);
    EXPECT_EQ(seen[g].second, copies);
  }
}

CooData skewed() {  // 6 x 5: rows of 4, 0, 1, 1, 0, 2 entries
  CooData c;
  c.dims = {6, 5};
  for (auto [i, j] : std::vector<std::pair<int, int>>{{0, 0}, {0, 1}, {0, 2}, {0, 4}, {2, 3}, {3, 0}, {5, 1}, {5, 4}})
    c.add({i, j}, 1.0 + i * 10 + j);
  return c;
}

TEST(SparsePieces, EveryFormPartitionsTheEntries) {
  for (const char* fmt : {"ds", "ss", "uq"}) {
    TensorBase t = matrix(skewed(), fmt);
    for (int p : {1, 2, 3, 4, 7}) {
      expectPartition(t, "xy->x", Grid(p));
      expectPartition(t, "xy->~x", Grid(p));
      expectPartition(t, "xy->~y", Grid(p));
      expectPartition(t, "(xy)->~f", Grid(p));
    }
    expectPartition(t, "xy->xy", Grid(2, 2));
    expectPartition(t, "xy->~xy", Grid(3, 2));
    expectPartition(t, "xy->x*", Grid(2, 3), 3);
  }
}

TEST(SparsePieces, RowsByNonZerosAreBalancedOnGeneratedMatrices) {
  // R-MAT rows are skewed; a uniform matrix is not. Each rank's non-zeros stay within a
  // row of the even share (rows stay whole).
  for (int kind = 0; kind < 2; kind++) {
    CooData c = kind == 0 ? generateRmat(12, 8, 0.57, 0.19, 0.19, 7) : generateUniformMatrix(3000, 2000, 6, 7);
    TensorBase t = matrix(c, "ds");
    int64_t heaviest = 0;
    {
      std::map<int64_t, int64_t> rows;
      for (int64_t e = 0; e < c.nnz(); e++) heaviest = std::max(heaviest, ++rows[c.coords[static_cast<size_t>(2 * e)]]);
    }
    for (int p : {2, 4, 16}) {
      auto pieces = sparsePieces(t, Distribution::parse("xy->~x"), Grid(p));
      for (const SparsePiece& q : pieces) EXPECT_LE(q.nnz, t.storedCount() / p + heaviest) << p;
      auto fused = sparsePieces(t, Distribution::parse("(xy)->~f"), Grid(p));
      for (const SparsePiece& q : fused) EXPECT_LE(q.nnz, t.storedCount() / p + 1) << p;
    }
    expectPartition(t, "xy->~x", Grid(5));
    expectPartition(t, "(xy)->~f", Grid(5));
  }
}

TEST(SparsePieces, EmptyTensorsAndTheThirdOrder) {
  CooData empty;
  empty.dims = {4, 4};
  TensorBase e = matrix(empty, "ds");
  auto pieces = sparsePieces(e, Distribution::parse("(xy)->~f"), Grid(3));
  for (const SparsePiece& p : pieces) EXPECT_EQ(p.nnz, 0);
  expectPartition(e, "xy->~x", Grid(3));
  CooData c = generateUniformTensor({9, 7, 5}, 60, 3);
  TensorBase t("T", Datatype::Float64, c.dims, Format::parse("sss"));
  t.setFromCoo(c);
  expectPartition(t, "xyz->~x", Grid(4));
  expectPartition(t, "(xy)z->~f", Grid(4));
  expectPartition(t, "(xyz)->~f", Grid(4));
  expectPartition(t, "xyz->xy", Grid(2, 2));
}

TEST(SparsePieces, BadDistributionsNameTheTensor) {
  TensorBase dense = matrix(skewed(), "dd");
  EXPECT_THROW(sparsePieces(dense, Distribution::parse("xy->~x"), Grid(2)), DistributionError);
  TensorBase csc("B", Datatype::Float64, {6, 5}, Format::parse("ds:1,0"));
  csc.setFromCoo(skewed());
  EXPECT_THROW(sparsePieces(csc, Distribution::parse("(xy)->~f"), Grid(2)), DistributionError);
  TensorBase csr = matrix(skewed(), "ds");
  EXPECT_THROW(sparsePieces(csr, Distribution::parse("xyz->~x"), Grid(2)), DistributionError);
  EXPECT_THROW(sparsePieces(csr, Distribution::parse("xy->~x"), Grid(2, 2)), DistributionError);
}

}  // namespace
}  // namespace tessel::spmd
