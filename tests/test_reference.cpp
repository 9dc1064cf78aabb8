// The reference evaluator (the test oracle) against hand-computed results, and tensorsClose.
#include <gtest/gtest.h>

#include "support/test_support.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "tessel/tessel.h"

using namespace tessel;

namespace {

using Entries = std::vector<std::pair<std::vector<int64_t>, double>>;

template <typename T = double>
Tensor<T> make(const std::string& name, std::vector<int64_t> dims, const Format& f,
               const std::vector<std::pair<std::vector<int64_t>, T>>& entries) {
  Tensor<T> t(name, std::move(dims), f);
  for (const auto& [c, v] : entries) t.insert(c, v);
  t.pack();
  return t;
}

template <typename T = double>
Tensor<T> sparseVec(const std::string& name, int64_t n,
                    const std::vector<std::pair<std::vector<int64_t>, T>>& entries) {
  return make<T>(name, {n}, Format({LevelKind::Compressed}), entries);
}

Assignment assign(const IndexExpr& lhs, const IndexExpr& rhs, bool acc = false) {
  return tessel::testing::makeAssignment(lhs, rhs, acc);
}

// Exact comparison: same dims, same coordinates in the same (sorted) order, same values.
void expectCoo(const CooData& got, const std::vector<int64_t>& dims, const Entries& want) {
  EXPECT_EQ(got.dims, dims);
  ASSERT_EQ(got.nnz(), static_cast<int64_t>(want.size()));
  ASSERT_EQ(got.coords.size(), want.size() * dims.size());
  for (size_t e = 0; e < want.size(); e++) {
    std::vector<int64_t> c(got.coords.begin() + e * dims.size(),
                           got.coords.begin() + (e + 1) * dims.size());
    EXPECT_EQ(c, want[e].first) << "entry " << e;
    EXPECT_EQ(got.values[e], want[e].second) << "entry " << e;
  }
}

CooData coo(std::vector<int64_t> dims, const Entries& entries) {
  CooData c;
  c.dims = std::move(dims);
  for (const auto& [k, v] : entries) c.add(k, v);
  return c;
}

}  // namespace

TEST(Reference, SpMV) {
  // B = [1 0 2 0; 0 0 0 0; 0 3 0 4], c = [1 2 3 4]
  auto B = make("B", {3, 4}, CSR(), Entries{{{0, 0}, 1}, {{0, 2}, 2}, {{2, 1}, 3}, {{2, 3}, 4}});
  Tensor<double> c("c", {4});
  for (int64_t j = 0; j < 4; j++) c.insert({j}, double(j + 1));
  c.pack();
  Tensor<double> a("a", {3});
  IndexVar i("i"), j("j");
  // Row 1 of B is empty, so a has no entry there.
  expectCoo(referenceEvaluate(assign(a(i), B(i, j) * c(j))), {3}, {{{0}, 7}, {{2}, 22}});
  // Same through the recorded assignment, and with B stored column-major.
  a(i) = B(i, j) * c(j);
  expectCoo(referenceEvaluate(a.assignment()), {3}, {{{0}, 7}, {{2}, 22}});
  auto Bc = make("Bc", {3, 4}, CSC(), Entries{{{2, 3}, 4}, {{0, 0}, 1}, {{2, 1}, 3}, {{0, 2}, 2}});
  expectCoo(referenceEvaluate(assign(a(i), Bc(i, j) * c(j))), {3}, {{{0}, 7}, {{2}, 22}});
  // Operand order does not matter.
  expectCoo(referenceEvaluate(assign(a(i), c(j) * B(i, j))), {3}, {{{0}, 7}, {{2}, 22}});
}

TEST(Reference, SpMM) {
  // B = [1 0 2; 0 3 0], C = [0 4; 5 0; 6 7]
  auto B = make("B", {2, 3}, CSR(), Entries{{{0, 0}, 1}, {{0, 2}, 2}, {{1, 1}, 3}});
  auto C = make("C", {3, 2}, CSR(), Entries{{{0, 1}, 4}, {{1, 0}, 5}, {{2, 0}, 6}, {{2, 1}, 7}});
  Tensor<double> A("A", {2, 2});
  IndexVar i("i"), j("j"), k("k");
  // A(1,1) = B(1,1)*C(1,1) with C(1,1) missing: not in the support.
  expectCoo(referenceEvaluate(assign(A(i, j), B(i, k) * C(k, j))), {2, 2},
            {{{0, 0}, 12}, {{0, 1}, 18}, {{1, 0}, 15}});
  // Transposed output: At(j,i) lists entries in At's mode order, sorted.
  Tensor<double> At("At", {2, 2});
  expectCoo(referenceEvaluate(assign(At(j, i), B(i, k) * C(k, j))), {2, 2},
            {{{0, 0}, 12}, {{0, 1}, 15}, {{1, 0}, 18}});
}

TEST(Reference, Transpose) {
  auto B = make("B", {2, 3}, CSR(), Entries{{{0, 2}, 1}, {{1, 0}, 2}});
  Tensor<double> A("A", {3, 2});
  IndexVar i("i"), j("j");
  expectCoo(referenceEvaluate(assign(A(j, i), B(i, j))), {3, 2}, {{{0, 1}, 2}, {{2, 0}, 1}});
}

TEST(Reference, SpAddAndSub) {
  auto B = make("B", {2, 3}, CSR(), Entries{{{0, 0}, 1}, {{1, 2}, 2}});
  auto C = make("C", {2, 3}, DCSR(), Entries{{{0, 0}, 10}, {{0, 1}, 20}});
  Tensor<double> A("A", {2, 3});
  IndexVar i("i"), j("j");
  expectCoo(referenceEvaluate(assign(A(i, j), B(i, j) + C(i, j))), {2, 3},
            {{{0, 0}, 11}, {{0, 1}, 20}, {{1, 2}, 2}});
  expectCoo(referenceEvaluate(assign(A(i, j), B(i, j) - C(i, j))), {2, 3},
            {{{0, 0}, -9}, {{0, 1}, -20}, {{1, 2}, 2}});
  expectCoo(referenceEvaluate(assign(A(i, j), -B(i, j))), {2, 3}, {{{0, 0}, -1}, {{1, 2}, -2}});
}

TEST(Reference, MulOfSum) {
  // B*(C+D): support = support(B) ∩ (support(C) ∪ support(D)); a sum that cancels to 0
  // is still in the support.
  auto B = make("B", {2, 2}, CSR(), Entries{{{0, 0}, 2}, {{0, 1}, 3}, {{1, 1}, 4}});
  auto C = make("C", {2, 2}, CSR(), Entries{{{0, 0}, 1}, {{1, 0}, 5}, {{1, 1}, 4}});
  auto D = make("D", {2, 2}, CSR(), Entries{{{0, 1}, 6}, {{1, 1}, -4}});
  Tensor<double> A("A", {2, 2});
  IndexVar i("i"), j("j");
  expectCoo(referenceEvaluate(assign(A(i, j), B(i, j) * (C(i, j) + D(i, j)))), {2, 2},
            {{{0, 0}, 2}, {{0, 1}, 18}, {{1, 1}, 0}});
  // B*C + D: union of (B∩C) and D.
  expectCoo(referenceEvaluate(assign(A(i, j), B(i, j) * C(i, j) + D(i, j))), {2, 2},
            {{{0, 0}, 2}, {{0, 1}, 6}, {{1, 1}, 12}});
}

TEST(Reference, ExplicitZerosAreStored) {
  // An explicitly stored zero is part of the support.
  auto b = sparseVec("b", 3, {{{0}, 0.0}, {{2}, 5.0}});
  auto c = sparseVec("c", 3, {{{0}, 7.0}, {{1}, 1.0}, {{2}, 2.0}});
  Tensor<double> a("a", {3});
  IndexVar i("i");
  expectCoo(referenceEvaluate(assign(a(i), b(i) * c(i))), {3}, {{{0}, 0}, {{2}, 10}});
}

TEST(Reference, DuplicatesAreSummed) {
  auto b = sparseVec("b", 3, {{{1}, 1.5}, {{1}, 2.0}, {{0}, 1.0}});
  Tensor<double> a("a", {3});
  IndexVar i("i");
  expectCoo(referenceEvaluate(assign(a(i), b(i))), {3}, {{{0}, 1}, {{1}, 3.5}});
}

TEST(Reference, Division) {
  auto b = sparseVec("b", 5, {{{0}, 6.0}, {{1}, 1.0}, {{2}, 0.0}, {{3}, -2.0}});
  auto c = sparseVec("c", 5, {{{0}, 3.0}, {{3}, 4.0}, {{4}, 9.0}});
  Tensor<double> a("a", {5});
  IndexVar i("i"), j("j");
  CooData r = referenceEvaluate(assign(a(i), b(i) / c(i)));
  // support(b/c) = support(b): c(4) alone gives nothing; missing c is 0.
  ASSERT_EQ(r.nnz(), 4);
  EXPECT_EQ(r.coords, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(r.values[0], 2.0);
  EXPECT_TRUE(std::isinf(r.values[1]) && r.values[1] > 0);  // 1/0
  EXPECT_TRUE(std::isnan(r.values[2]));                     // 0/0
  EXPECT_EQ(r.values[3], -0.5);

  // The divisor's extra variables broadcast the dividend: a(i,j) = b(i) / C(i,j).
  auto b2 = sparseVec("b2", 1, {{{0}, 4.0}});
  auto C = make("C", {1, 2}, CSR(), Entries{{{0, 1}, 2}});
  Tensor<double> A("A", {1, 2});
  CooData r2 = referenceEvaluate(assign(A(i, j), b2(i) / C(i, j)));
  ASSERT_EQ(r2.nnz(), 2);
  EXPECT_EQ(r2.coords, (std::vector<int64_t>{0, 0, 0, 1}));
  EXPECT_TRUE(std::isinf(r2.values[0]));
  EXPECT_EQ(r2.values[1], 2.0);

  // Negative dividend over a missing divisor: -inf.
  auto m = sparseVec("m", 5, {{{1}, -3.0}});
  CooData r3 = referenceEvaluate(assign(a(i), m(i) / c(i)));
  ASSERT_EQ(r3.nnz(), 1);
  EXPECT_TRUE(std::isinf(r3.values[0]) && r3.values[0] < 0);

  // Literal divisor.
  expectCoo(referenceEvaluate(assign(a(i), c(i) / 2)), {5}, {{{0}, 1.5}, {{3}, 2}, {{4}, 4.5}});
}

TEST(Reference, IntegerDivision) {
  using E = std::vector<std::pair<std::vector<int64_t>, int64_t>>;
  auto b = make<int64_t>("b", {5}, Format({LevelKind::Compressed}),
                         E{{{0}, 7}, {{1}, -7}, {{2}, 5}, {{3}, 9}, {{4}, 1}});
  auto c = make<int64_t>("c", {5}, Format({LevelKind::Compressed}),
                         E{{{0}, 2}, {{1}, 2}, {{2}, 0}, {{4}, -3}});
  Tensor<int64_t> a("a", {5});
  IndexVar i("i");
  // Truncating division; division by zero (stored or missing) gives 0.
  expectCoo(referenceEvaluate(assign(a(i), b(i) / c(i))), {5},
            {{{0}, 3}, {{1}, -3}, {{2}, 0}, {{3}, 0}, {{4}, 0}});
  // int32 output as well.
  Tensor<int32_t> a32("a32", {5});
  expectCoo(referenceEvaluate(assign(a32(i), b(i) / c(i) + 1)), {5},
            {{{0}, 4}, {{1}, -2}, {{2}, 1}, {{3}, 1}, {{4}, 1}});
}

TEST(Reference, BoolOutput) {
  using E = std::vector<std::pair<std::vector<int64_t>, int64_t>>;
  auto b = make<int64_t>("b", {3}, Format({LevelKind::Compressed}), E{{{0}, 3}, {{1}, 2}});
  auto c = make<int64_t>("c", {3}, Format({LevelKind::Compressed}), E{{{0}, 3}, {{2}, -5}});
  Tensor<bool> a("a", {3}, Format({LevelKind::Compressed}));
  IndexVar i("i");
  // 3-3 = 0 -> 0; 2 -> 1; -(-5)... 0-(-5) = 5 -> 1.
  expectCoo(referenceEvaluate(assign(a(i), b(i) - c(i))), {3}, {{{0}, 0}, {{1}, 1}, {{2}, 1}});
}

TEST(Reference, Broadcast) {
  auto c = sparseVec("c", 2, {{{1}, 5.0}});
  auto B = make("B", {2, 3}, CSR(), Entries{{{0, 1}, 1}});
  Tensor<double> A("A", {2, 3});
  IndexVar i("i"), j("j"), k("k");
  // A variable only on the lhs takes every value of its range.
  expectCoo(referenceEvaluate(assign(A(i, j), c(i))), {2, 3},
            {{{1, 0}, 5}, {{1, 1}, 5}, {{1, 2}, 5}});
  // In a sum, c(i) covers (i, every j).
  expectCoo(referenceEvaluate(assign(A(i, j), B(i, j) + c(i))), {2, 3},
            {{{0, 1}, 1}, {{1, 0}, 5}, {{1, 1}, 5}, {{1, 2}, 5}});
  expectCoo(referenceEvaluate(assign(A(i, j), c(i) - B(i, j))), {2, 3},
            {{{0, 1}, -1}, {{1, 0}, 5}, {{1, 1}, 5}, {{1, 2}, 5}});
  // In a product it does not widen the support: B(0,1)*c(0) with c(0) missing.
  expectCoo(referenceEvaluate(assign(A(i, j), B(i, j) * c(i))), {2, 3}, {});

  // A reduction broadcast to every output coordinate: A(i,j) = sum_k d(k)*e(k) = 6.
  auto d = sparseVec("d", 2, {{{0}, 1.0}, {{1}, 2.0}});
  auto e = sparseVec("e", 2, {{{1}, 3.0}});
  Tensor<double> S("S", {2, 2});
  expectCoo(referenceEvaluate(assign(S(i, j), d(k) * e(k))), {2, 2},
            {{{0, 0}, 6}, {{0, 1}, 6}, {{1, 0}, 6}, {{1, 1}, 6}});
}

TEST(Reference, ProductDoesNotWidenSupport) {
  auto c = sparseVec("c", 2, {{{1}, 5.0}});
  auto B = make("B", {2, 3}, CSR(), Entries{{{0, 1}, 1}, {{1, 2}, 2}});
  Tensor<double> A("A", {2, 3});
  IndexVar i("i"), j("j");
  expectCoo(referenceEvaluate(assign(A(i, j), B(i, j) * c(i))), {2, 3}, {{{1, 2}, 10}});
}

TEST(Reference, Literals) {
  auto b = sparseVec("b", 3, {{{1}, 2.0}});
  Tensor<double> a("a", {3});
  IndexVar i("i");
  // A literal is dense: in a sum it fills the whole range.
  expectCoo(referenceEvaluate(assign(a(i), b(i) + 1)), {3}, {{{0}, 1}, {{1}, 3}, {{2}, 1}});
  expectCoo(referenceEvaluate(assign(a(i), 1 - b(i))), {3}, {{{0}, 1}, {{1}, -1}, {{2}, 1}});
  // In a product it keeps the other operand's support.
  expectCoo(referenceEvaluate(assign(a(i), 2 * b(i))), {3}, {{{1}, 4}});
  expectCoo(referenceEvaluate(assign(a(i), IndexExpr(3))), {3}, {{{0}, 3}, {{1}, 3}, {{2}, 3}});
  expectCoo(referenceEvaluate(assign(a(i), IndexExpr(2) * 0.25 - 1)), {3},
            {{{0}, -0.5}, {{1}, -0.5}, {{2}, -0.5}});
}

TEST(Reference, Scalars) {
  auto b = sparseVec("b", 4, {{{0}, 1.0}, {{2}, 3.0}, {{3}, 4.0}});
  auto c = sparseVec("c", 4, {{{2}, 2.0}, {{3}, 0.5}, {{1}, 9.0}});
  Tensor<double> s("s", {});
  IndexVar i("i");
  // Dot product: 3*2 + 4*0.5.
  expectCoo(referenceEvaluate(assign(s(), b(i) * c(i))), {}, {{{}, 8}});
  // Sum of all entries.
  expectCoo(referenceEvaluate(assign(s(), b(i))), {}, {{{}, 8}});
  // Disjoint supports: the scalar still has one entry, 0.
  auto d = sparseVec("d", 4, {{{1}, 5.0}});
  expectCoo(referenceEvaluate(assign(s(), b(i) * d(i))), {}, {{{}, 0}});
  expectCoo(referenceEvaluate(assign(s(), IndexExpr(2.5))), {}, {{{}, 2.5}});
  // A scalar input scales a vector.
  Tensor<double> t("t", {});
  t.insert({}, 3.0);
  t.pack();
  Tensor<double> a("a", {4});
  expectCoo(referenceEvaluate(assign(a(i), t() * b(i))), {4}, {{{0}, 3}, {{2}, 9}, {{3}, 12}});
}

TEST(Reference, Accumulate) {
  auto a = sparseVec("a", 3, {{{0}, 1.0}, {{2}, 5.0}});
  auto b = sparseVec("b", 3, {{{0}, 2.0}, {{1}, 3.0}});
  IndexVar i("i");
  expectCoo(referenceEvaluate(assign(a(i), b(i), true)), {3}, {{{0}, 3}, {{1}, 3}, {{2}, 5}});
  // `=` ignores the current values.
  expectCoo(referenceEvaluate(assign(a(i), b(i), false)), {3}, {{{0}, 2}, {{1}, 3}});
  // Scalar +=.
  Tensor<double> s("s", {});
  s.insert({}, 10.0);
  s.pack();
  expectCoo(referenceEvaluate(assign(s(), b(i), true)), {}, {{{}, 15}});
  // += with an empty right-hand side keeps the current entries.
  auto e = sparseVec("e", 3, {});
  expectCoo(referenceEvaluate(assign(a(i), e(i), true)), {3}, {{{0}, 1}, {{2}, 5}});
}

TEST(Reference, EmptyTensors) {
  auto B = make("B", {3, 4}, CSR(), Entries{});
  Tensor<double> c("c", {4});
  for (int64_t j = 0; j < 4; j++) c.insert({j}, 1.0);
  c.pack();
  Tensor<double> a("a", {3});
  IndexVar i("i"), j("j");
  expectCoo(referenceEvaluate(assign(a(i), B(i, j) * c(j))), {3}, {});
  expectCoo(referenceEvaluate(assign(a(i), B(i, j))), {3}, {});
  // Zero extents.
  auto Z = make("Z", {0, 4}, CSR(), Entries{});
  Tensor<double> z("z", {0});
  expectCoo(referenceEvaluate(assign(z(i), Z(i, j) * c(j))), {0}, {});
  Tensor<double> W("W", {3, 0});
  auto v = sparseVec("v", 3, {{{1}, 1.0}});
  expectCoo(referenceEvaluate(assign(W(i, j), v(i))), {3, 0}, {});
  expectCoo(referenceEvaluate(assign(W(i, j), v(i) + 1)), {3, 0}, {});
  // Sum over an empty range gives a scalar 0.
  Tensor<double> s("s", {});
  expectCoo(referenceEvaluate(assign(s(), z(i))), {}, {{{}, 0}});
}

TEST(Reference, RejectsInvalidAssignments) {
  Tensor<double> a("a", {3}), B("B", {3, 4}), c("c", {5});
  IndexVar i("i"), j("j");
  EXPECT_THROW(referenceEvaluate(assign(a(i), B(i, j) * c(j))), DimensionError);
  EXPECT_THROW(referenceEvaluate(assign(a(i), a(i) + 1)), NotationError);
}

TEST(Reference, HandlesManyEntries) {
  // 300k entries: 3 per row of a 100k x 100k matrix, times a vector of ones.
  const int64_t n = 100000;
  Tensor<double> B("B", {n, n}, CSR());
  for (int64_t r = 0; r < n; r++)
    for (int64_t k = 0; k < 3; k++) B.insert({r, (r * 7 + k * 13) % n}, double(k + 1));
  B.pack();
  Tensor<double> c("c", {n});
  for (int64_t j = 0; j < n; j++) c.insert({j}, j % 2 ? 1.0 : 2.0);
  c.pack();
  Tensor<double> a("a", {n});
  IndexVar i("i"), j("j");
  auto t0 = std::chrono::steady_clock::now();
  CooData r = referenceEvaluate(assign(a(i), B(i, j) * c(j)));
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(secs, 20.0);
  ASSERT_EQ(r.nnz(), n);
  for (int64_t row : {int64_t(0), int64_t(1), int64_t(4242), n - 1}) {
    double want = 0;
    for (int64_t k = 0; k < 3; k++) want += double(k + 1) * (((row * 7 + k * 13) % n) % 2 ? 1.0 : 2.0);
    EXPECT_EQ(r.values[row], want) << row;
    EXPECT_EQ(r.coords[row], row);
  }
}

// ---------------------------------------------------------------- tensorsClose

TEST(TensorsClose, EqualAndMissingIsZero) {
  std::string why;
  EXPECT_TRUE(tensorsClose(coo({3}, {{{0}, 1}, {{2}, 2}}), coo({3}, {{{2}, 2}, {{0}, 1}}), 0, 0, &why)) << why;
  // An explicit zero equals a missing entry.
  EXPECT_TRUE(tensorsClose(coo({3}, {{{0}, 1}, {{1}, 0}}), coo({3}, {{{0}, 1}}), 0, 0));
  EXPECT_TRUE(tensorsClose(coo({3}, {{{0}, 1}}), coo({3}, {{{0}, 1}, {{1}, 0}}), 0, 0));
  // Duplicates are summed.
  EXPECT_TRUE(tensorsClose(coo({3}, {{{0}, 1}, {{0}, 1}}), coo({3}, {{{0}, 2}}), 0, 0));
  // Empty vs empty, and scalars.
  EXPECT_TRUE(tensorsClose(coo({2, 2}, {}), coo({2, 2}, {}), 0, 0));
  EXPECT_TRUE(tensorsClose(coo({}, {{{}, 4}}), coo({}, {{{}, 4}}), 0, 0));
  EXPECT_FALSE(tensorsClose(coo({}, {{{}, 4}}), coo({}, {{{}, 5}}), 0, 0, &why));
  EXPECT_NE(why.find("expected 4 but got 5"), std::string::npos) << why;
}

TEST(TensorsClose, Tolerances) {
  std::string why;
  EXPECT_TRUE(tensorsClose(coo({1}, {{{0}, 100}}), coo({1}, {{{0}, 100.5}}), 1e-2, 0));
  EXPECT_FALSE(tensorsClose(coo({1}, {{{0}, 100}}), coo({1}, {{{0}, 100.5}}), 1e-3, 0));
  EXPECT_TRUE(tensorsClose(coo({1}, {{{0}, 100}}), coo({1}, {{{0}, 100.5}}), 1e-3, 0.5));
  // rtol scales with the expected value |y|: |1-2| <= 0.6*2 but not <= 0.6*1.
  EXPECT_TRUE(tensorsClose(coo({1}, {{{0}, 2}}), coo({1}, {{{0}, 1}}), 0.6, 0));
  EXPECT_FALSE(tensorsClose(coo({1}, {{{0}, 1}}), coo({1}, {{{0}, 2}}), 0.6, 0));
  // atol against missing entries.
  EXPECT_TRUE(tensorsClose(coo({4}, {}), coo({4}, {{{3}, 1e-9}}), 1e-5, 1e-8));
  EXPECT_FALSE(tensorsClose(coo({4}, {}), coo({4}, {{{3}, 1e-9}}), 1e-5, 0, &why));
  EXPECT_NE(why.find("(3)"), std::string::npos) << why;
  EXPECT_NE(why.find("expected 0 but got 1.0000000000000001e-09"), std::string::npos) << why;
}

TEST(TensorsClose, NanAndInf) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(tensorsClose(coo({2}, {{{0}, nan}}), coo({2}, {{{0}, nan}}), 0, 0));
  EXPECT_FALSE(tensorsClose(coo({2}, {{{0}, nan}}), coo({2}, {{{0}, 0}}), 1, 1));
  EXPECT_FALSE(tensorsClose(coo({2}, {{{0}, nan}}), coo({2}, {}), 1, 1));
  EXPECT_FALSE(tensorsClose(coo({2}, {{{0}, 1}}), coo({2}, {{{0}, nan}}), 1, 1));
  EXPECT_TRUE(tensorsClose(coo({2}, {{{1}, inf}}), coo({2}, {{{1}, inf}}), 0, 0));
  EXPECT_TRUE(tensorsClose(coo({2}, {{{1}, -inf}}), coo({2}, {{{1}, -inf}}), 0, 0));
  EXPECT_FALSE(tensorsClose(coo({2}, {{{1}, inf}}), coo({2}, {{{1}, -inf}}), 1, 1));
  // A huge tolerance does not make a finite value equal to inf, either way round.
  EXPECT_FALSE(tensorsClose(coo({2}, {{{1}, inf}}), coo({2}, {{{1}, 1e308}}), 10, 10));
  EXPECT_FALSE(tensorsClose(coo({2}, {{{1}, 1e308}}), coo({2}, {{{1}, inf}}), 10, 10));
}

TEST(TensorsClose, DimsAndFirstMismatch) {
  std::string why;
  EXPECT_FALSE(tensorsClose(coo({2, 3}, {}), coo({2, 4}, {}), 1, 1, &why));
  EXPECT_NE(why.find("dimensions"), std::string::npos) << why;
  EXPECT_FALSE(tensorsClose(coo({3}, {}), coo({3, 1}, {}), 1, 1, &why));
  // The first differing coordinate in coordinate order is reported.
  why.clear();
  EXPECT_FALSE(tensorsClose(coo({2, 3}, {{{1, 0}, 5}, {{0, 2}, 3}, {{0, 0}, 1}}),
                            coo({2, 3}, {{{0, 0}, 1}, {{0, 2}, 4}, {{1, 0}, 6}}), 0, 0, &why));
  EXPECT_NE(why.find("(0, 2)"), std::string::npos) << why;
  EXPECT_NE(why.find("expected 3 but got 4"), std::string::npos) << why;
  // A missing expected entry is reported with 0.
  EXPECT_FALSE(tensorsClose(coo({2, 3}, {}), coo({2, 3}, {{{1, 2}, 7}}), 0, 0, &why));
  EXPECT_NE(why.find("(1, 2): expected 0 but got 7"), std::string::npos) << why;
  // why may be null.
  EXPECT_FALSE(tensorsClose(coo({1}, {{{0}, 1}}), coo({1}, {}), 0, 0));
}
