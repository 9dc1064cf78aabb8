// Tensor storage: packing into level arrays, reading back, conversion, errors.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "format/level_format.h"
#include "support/test_support.h"
#include "tessel/tensor.h"

using namespace tessel;
using LK = LevelKind;

namespace {

// ---------------------------------------------------------------------------------------
// Raw array access

std::vector<int64_t> posOf(const TensorBase& t, int k) {
  EXPECT_NE(t.raw().pos[k], nullptr) << "level " << k;
  if (!t.raw().pos[k]) return {};
  return tessel::testing::indexArray(t.raw().pos[k], t.raw().pos_size[k], t.format().posWidth());
}
std::vector<int64_t> crdOf(const TensorBase& t, int k) {
  EXPECT_NE(t.raw().crd[k], nullptr) << "level " << k;
  if (!t.raw().crd[k]) return {};
  return tessel::testing::indexArray(t.raw().crd[k], t.raw().crd_size[k], t.format().crdWidth());
}
template <typename T>
std::vector<T> valsOf(const Tensor<T>& t) {
  const T* v = static_cast<const T*>(t.raw().vals);
  return std::vector<T>(v, v + t.raw().vals_size);
}

using V = std::vector<int64_t>;

// ---------------------------------------------------------------------------------------
// Reference model: the expected toCoo() of a format, computed naively from the summed
// entries by enumerating positions level by level (independent of the implementation).

using Model = std::map<V, double>;  // mode-order coords -> summed value

struct Pos {
  V prefix;        // storage-order coordinates so far
  int entry = -1;  // for positions below a CompressedNU level: the entry it stands for
};

CooData expectedCoo(const Format& f, const V& dims, const Model& model) {
  const int r = f.order();
  // Entries in storage order, sorted.
  std::vector<std::pair<V, double>> ents;
  {
    std::map<V, double> s;
    for (const auto& [c, v] : model) {
      V sc(r);
      for (int k = 0; k < r; k++) sc[k] = c[f.modeOfLevel(k)];
      s[sc] = v;
    }
    ents.assign(s.begin(), s.end());
  }
  std::vector<Pos> level{Pos{}};
  for (int k = 0; k < r; k++) {
    int64_t N = dims[f.modeOfLevel(k)];
    std::vector<Pos> next;
    for (const Pos& p : level) {
      auto matches = [&](const V& sc) {
        for (size_t i = 0; i < p.prefix.size(); i++)
          if (sc[i] != p.prefix[i]) return false;
        return true;
      };
      switch (f.level(k)) {
        case LK::Dense:
          for (int64_t c = 0; c < N; c++) {
            Pos q = p;
            q.prefix.push_back(c);
            next.push_back(q);
          }
          break;
        case LK::Bitmap:  // present coordinates only, like a unique compressed level
        case LK::Compressed: {
          int64_t last = -1;
          for (const auto& e : ents)
            if (matches(e.first) && e.first[k] != last) {
              last = e.first[k];
              Pos q = p;
              q.prefix.push_back(last);
              next.push_back(q);
            }
          break;
        }
        case LK::CompressedNU:
          for (size_t i = 0; i < ents.size(); i++)
            if (matches(ents[i].first)) {
              Pos q = p;
              q.prefix.push_back(ents[i].first[k]);
              q.entry = static_cast<int>(i);
              next.push_back(q);
            }
          break;
        case LK::Singleton: {
          Pos q = p;
          q.prefix.push_back(ents.at(p.entry).first[k]);
          next.push_back(q);
          break;
        }
      }
    }
    level.swap(next);
  }
  CooData out;
  out.dims = dims;
  std::map<V, double> bySc(ents.begin(), ents.end());
  for (const Pos& p : level) {
    V mc(r);
    for (int k = 0; k < r; k++) mc[f.modeOfLevel(k)] = p.prefix[k];
    out.coords.insert(out.coords.end(), mc.begin(), mc.end());
    auto it = bySc.find(p.prefix);
    out.values.push_back(it == bySc.end() ? 0.0 : it->second);
  }
  return out;
}

/// Structural invariants of the level arrays.
void checkInvariants(const TensorBase& t) {
  const Format& f = t.format();
  const tessel_tensor_t& raw = t.raw();
  ASSERT_EQ(raw.order, t.order());
  int64_t P = 1;
  std::vector<int64_t> parentOfPrev;  // unused for dense
  for (int k = 0; k < f.order(); k++) {
    EXPECT_EQ(raw.dims[k], t.dim(f.modeOfLevel(k))) << "level " << k;
    switch (f.level(k)) {
      case LK::Dense:
        EXPECT_EQ(raw.pos[k], nullptr);
        EXPECT_EQ(raw.crd[k], nullptr);
        P *= raw.dims[k];
        break;
      case LK::Bitmap: {  // uint8 flags, one per slot, in the crd slot
        EXPECT_EQ(raw.pos[k], nullptr);
        P *= raw.dims[k];
        ASSERT_EQ(raw.crd_size[k], P) << "level " << k;
        for (int64_t q = 0; q < P; q++) EXPECT_LE(static_cast<const uint8_t*>(raw.crd[k])[q], 1);
        break;
      }
      case LK::Compressed:
      case LK::CompressedNU: {
        ASSERT_EQ(raw.pos_size[k], P + 1) << "level " << k;
        V pos = posOf(t, k), crd = crdOf(t, k);
        EXPECT_EQ(pos[0], 0);
        for (int64_t p = 0; p < P; p++) {
          ASSERT_LE(pos[p], pos[p + 1]);
          for (int64_t q = pos[p]; q < pos[p + 1]; q++) {
            EXPECT_GE(crd[q], 0);
            EXPECT_LT(crd[q], raw.dims[k]);
            if (q > pos[p]) {
              if (f.level(k) == LK::Compressed)
                EXPECT_LT(crd[q - 1], crd[q]) << "level " << k;
              else
                EXPECT_LE(crd[q - 1], crd[q]) << "level " << k;
            }
          }
        }
        ASSERT_EQ(pos[P], raw.crd_size[k]);
        P = pos[P];
        break;
      }
      case LK::Singleton: {
        EXPECT_EQ(raw.pos[k], nullptr);
        ASSERT_EQ(raw.crd_size[k], P);
        V crd = crdOf(t, k);
        for (int64_t q = 0; q < P; q++) {
          EXPECT_GE(crd[q], 0);
          EXPECT_LT(crd[q], raw.dims[k]);
        }
        break;
      }
    }
  }
  EXPECT_EQ(raw.vals_size, P);
  EXPECT_NE(raw.vals, nullptr);
  for (int k = f.order(); k < TESSEL_MAX_ORDER; k++) {
    EXPECT_EQ(raw.pos[k], nullptr);
    EXPECT_EQ(raw.crd[k], nullptr);
  }
}

void expectCooEq(const CooData& got, const CooData& want, const std::string& what) {
  EXPECT_EQ(got.dims, want.dims) << what;
  EXPECT_EQ(got.coords, want.coords) << what;
  EXPECT_EQ(got.values, want.values) << what;
}

int64_t product(const V& d) {
  int64_t p = 1;
  for (int64_t x : d) p *= x;
  return p;
}

/// Every coordinate of a small tensor, in row-major mode order.
std::vector<V> allCoords(const V& dims) {
  std::vector<V> out;
  int64_t n = product(dims);
  for (int64_t i = 0; i < n; i++) {
    V c(dims.size());
    int64_t x = i;
    for (int m = static_cast<int>(dims.size()) - 1; m >= 0; m--) {
      c[m] = x % dims[m];
      x /= dims[m];
    }
    out.push_back(c);
  }
  return out;
}

template <typename T>
T valueFor(int64_t i) {
  if constexpr (std::is_same_v<T, bool>)
    return true;
  else if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(0.5 * static_cast<double>(i % 7 + 1));  // exact in float
  else
    return static_cast<T>(i % 9 + 1);
}
template <typename T>
double combine(double a, T v) {
  if constexpr (std::is_same_v<T, bool>)
    return (a != 0 || v) ? 1.0 : 0.0;
  else
    return a + static_cast<double>(v);
}

/// All formats used by the round-trip tests, by order.
std::vector<Format> formatsOfOrder(int r) {
  std::vector<std::string> s;
  switch (r) {
    case 0: s = {""}; break;
    case 1: s = {"d", "s", "b"}; break;
    case 2: s = {"ds:1,0", "uq:1,0", "sd", "dd:1,0", "sd:1,0", "db", "bs:1,0", "bb"}; break;
    case 3: s = {"dds", "dss", "dbs", "sbd:2,0,1", "sds:2,0,1", "dss:2,0,1", "uqq:2,1,0", "duq", "sdd", "dsd:1,2,0",
                 "suq:0,2,1"};
      break;
    case 4: s = {"dsss", "ssss:3,1,0,2", "ddss", "suqq", "dduq:2,3,0,1", "sdsd"}; break;
    case 5: s = {"dssss", "sdsds:4,3,2,1,0", "dsuqq"}; break;
  }
  // Named formats.
  std::vector<Format> fs{DenseFormat(r), CSF(r), COO(r)};
  if (r == 2) {
    fs = {DenseFormat(2), CSR(), CSC(), DCSR(), DCSC(), COO(2)};
  }
  for (const auto& x : s) fs.push_back(Format::parse(x));
  return fs;
}

/// Insert `n` random entries (with duplicates, unsorted) into t and a model; pack; check.
template <typename T>
void roundTrip(const Format& f, const V& dims, int n, uint32_t seed, bool fullyDense = false) {
  SCOPED_TRACE("format " + f.str() + " dims " + ::testing::PrintToString(dims) + " n " +
               std::to_string(n) + " type " + datatypeName(datatypeOf<T>()));
  Tensor<T> t("B", dims, f);
  Model model;
  std::mt19937 rng(seed);
  const int r = static_cast<int>(dims.size());
  auto add = [&](const V& c, int64_t i) {
    T v = valueFor<T>(i);
    t.insert(c, v);
    model[c] = combine<T>(model.count(c) ? model[c] : 0.0, v);
  };
  if (fullyDense) {
    std::vector<V> all = allCoords(dims);
    std::shuffle(all.begin(), all.end(), rng);
    for (size_t i = 0; i < all.size(); i++) add(all[i], static_cast<int64_t>(i));
  } else if (product(dims) > 0 || r == 0) {
    for (int i = 0; i < n; i++) {
      V c(r);
      for (int m = 0; m < r; m++) c[m] = std::uniform_int_distribution<int64_t>(0, dims[m] - 1)(rng);
      add(c, i);
      if (i % 5 == 0) add(c, i + 1);  // explicit duplicate
    }
  }
  t.pack();
  checkInvariants(t);
  CooData want = expectedCoo(f, dims, model);
  expectCooEq(t.toCoo(), want, "toCoo after pack");
  // A bitmap level keeps a value slot per coordinate, present or not.
  if (!anyFlagLevel(f)) EXPECT_EQ(t.storedCount(), want.nnz());
  EXPECT_TRUE(t.impl()->pendingCoords.empty());
  EXPECT_TRUE(t.impl()->packed);

  // at() agrees with the model everywhere (small tensors only).
  if (product(dims) <= 4096)
    for (const V& c : allCoords(dims)) {
      auto it = model.find(c);
      ASSERT_EQ(t.at(c), it == model.end() ? 0.0 : it->second) << ::testing::PrintToString(c);
    }

  // forEachStored matches vals order (entry e at vals position at[e]: bitmap levels skip slots).
  int64_t e = 0;
  std::vector<int64_t> at;
  t.toCoo(at);
  t.forEachStored([&](const V& c, T v) {
    ASSERT_LT(e, want.nnz());
    for (int m = 0; m < r; m++) EXPECT_EQ(c[m], want.coords[e * r + m]);
    EXPECT_EQ(static_cast<double>(v), want.values[e]);
    EXPECT_EQ(v, t.valueAt(at[e]));
    e++;
  });
  EXPECT_EQ(e, want.nnz());

  // Conversion to every other format of this order keeps the values.
  for (const Format& g : formatsOfOrder(r)) {
    Tensor<T> u = t.convert(g);
    EXPECT_EQ(u.name(), "B_" + g.str());
    checkInvariants(u);
    CooData got = u.toCoo();
    // Explicit zeros of dense levels are carried over as stored entries.
    Model m2;
    for (int64_t i = 0; i < got.nnz(); i++) {
      V c(got.coords.begin() + i * r, got.coords.begin() + (i + 1) * r);
      m2[c] = got.values[i];
    }
    for (const auto& [c, v] : model) EXPECT_EQ(m2[c], v) << g.str();
    for (const auto& [c, v] : m2)
      if (v != 0) {
        EXPECT_EQ(model.count(c), 1u) << g.str();
        if (model.count(c)) {
          EXPECT_EQ(model.at(c), v) << g.str();
        }
      }
  }

  // setFromCoo of the model reproduces the same storage.
  Tensor<T> w("W", dims, f);
  CooData mc;
  mc.dims = dims;
  for (const auto& [c, v] : model) mc.add(c, v);
  w.setFromCoo(mc);
  expectCooEq(w.toCoo(), want, "setFromCoo");
}

template <typename T>
void roundTripAllShapes() {
  const std::vector<V> shapes[6] = {
      {{}},
      {{1}, {7}, {0}, {20}},
      {{3, 4}, {1, 1}, {0, 5}, {5, 0}, {6, 9}},
      {{2, 3, 4}, {3, 1, 5}, {4, 0, 2}},
      {{2, 3, 2, 3}, {1, 4, 2, 3}},
      {{2, 2, 3, 2, 2}, {3, 1, 2, 1, 4}},
  };
  uint32_t seed = 1;
  for (int r = 0; r <= 5; r++)
    for (const Format& f : formatsOfOrder(r))
      for (const V& d : shapes[r]) {
        roundTrip<T>(f, d, 0, seed++);            // empty
        roundTrip<T>(f, d, 1, seed++);            // one entry (+ a duplicate)
        roundTrip<T>(f, d, 12, seed++);           // random, unsorted, duplicates
        roundTrip<T>(f, d, 0, seed++, true);      // fully dense, shuffled
        if (::testing::Test::HasFailure()) return;
      }
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Round trips

TEST(TensorStorage, RoundTripDouble) { roundTripAllShapes<double>(); }
TEST(TensorStorage, RoundTripFloat) { roundTripAllShapes<float>(); }
TEST(TensorStorage, RoundTripInt32) { roundTripAllShapes<int32_t>(); }
TEST(TensorStorage, RoundTripInt64) { roundTripAllShapes<int64_t>(); }
TEST(TensorStorage, RoundTripBool) { roundTripAllShapes<bool>(); }

TEST(TensorStorage, RoundTripWideIndices) {
  for (const char* s : {"ds", "uq:1,0", "sss", "dsd"}) {
    Format f = Format::parse(s);
    V dims = f.order() == 2 ? V{5, 7} : V{3, 4, 5};
    roundTrip<double>(f.withWidths(IndexWidth::W64, IndexWidth::W64), dims, 15, 99);
    roundTrip<double>(f.withWidths(IndexWidth::W64, IndexWidth::W32), dims, 15, 98);
    roundTrip<int64_t>(f.withWidths(IndexWidth::W32, IndexWidth::W64), dims, 15, 97);
  }
}

namespace {

// Huge, sparse key spaces: coordinates near the ends of dimensions up to 2^40, so the
// product of the dimensions may or may not fit 64 bits (two sorting paths).
void roundTripHuge(const Format& f0, const V& dims, uint32_t seed) {
  Format f = f0.withWidths(IndexWidth::W64, IndexWidth::W64);
  SCOPED_TRACE("format " + f.str() + " dims " + ::testing::PrintToString(dims));
  const int r = static_cast<int>(dims.size());
  Tensor<int64_t> t("H", dims, f);
  Model model;
  std::mt19937 rng(seed);
  for (int i = 0; i < 300; i++) {
    V c(r);
    for (int m = 0; m < r; m++) {
      const int64_t choices[] = {0, 1, dims[m] / 2, dims[m] - 2, dims[m] - 1};
      c[m] = choices[rng() % 5];
    }
    t.insert(c, i + 1);
    model[c] += i + 1;
  }
  t.pack();
  checkInvariants(t);
  CooData want = expectedCoo(f, dims, model);
  expectCooEq(t.toCoo(), want, "toCoo");
  EXPECT_EQ(t.storedCount(), static_cast<int64_t>(model.size()));
  for (const auto& [c, v] : model) EXPECT_EQ(t.at(c), v);
  for (int i = 0; i < 50; i++) {
    V c(r);
    for (int m = 0; m < r; m++) c[m] = static_cast<int64_t>(rng() % static_cast<uint32_t>(std::min<int64_t>(dims[m], 1 << 30)));
    EXPECT_EQ(t.at(c), model.count(c) ? model[c] : 0);
  }
  for (const char* g : {"ss", "uq", "ss:1,0", "sss", "uqq:2,0,1", "ssss:3,2,0,1", "uqqq"}) {
    Format gf = Format::parse(g).withWidths(IndexWidth::W64, IndexWidth::W64);
    if (gf.order() != r) continue;
    auto u = t.convert(gf);
    checkInvariants(u);
    expectCooEq(u.toCoo(), expectedCoo(gf, dims, model), g);
  }
}

}  // namespace

TEST(TensorStorage, HugeSparseKeySpaces) {
  const int64_t T31 = int64_t{1} << 31, T33 = int64_t{1} << 33, T40 = int64_t{1} << 40;
  uint32_t seed = 5;
  for (const char* f : {"ss", "uq", "ss:1,0", "uq:1,0"}) {
    roundTripHuge(Format::parse(f), {T33, T33}, seed++);  // 2^66: general path
    roundTripHuge(Format::parse(f), {T31, T31}, seed++);  // 2^62: keyed path
    roundTripHuge(Format::parse(f), {T40, 3}, seed++);
  }
  for (const char* f : {"sss", "uqq", "uqq:2,0,1", "sss:1,2,0"}) {
    roundTripHuge(Format::parse(f), {T31, T31, 4}, seed++);  // exactly 2^64: general
    roundTripHuge(Format::parse(f), {T31, T31, 3}, seed++);  // 3 * 2^62: keyed, top bits
    roundTripHuge(Format::parse(f), {T40, T40, T40}, seed++);
  }
  for (const char* f : {"ssss:3,2,0,1", "uqqq"})
    roundTripHuge(Format::parse(f), {T40, 5, T40, 7}, seed++);
}

TEST(TensorStorage, SortedAndReversedInput) {
  // Both sorting paths (keyed: 3x4 fits 64 bits; general: 2^33 x 2^33 does not), with
  // input already sorted, reversed, and with adjacent duplicates.
  const int64_t T33 = int64_t{1} << 33;
  for (int64_t scale : {int64_t{1}, T33 / 4}) {
    Format f = DCSR().withWidths(IndexWidth::W64, IndexWidth::W64);
    const V dims{3 * scale, 4 * scale};
    const std::vector<V> sorted{{0, 1}, {0, 3}, {2, 0}, {2, 2}, {2, 3}, {2, 3}};
    for (bool reverse : {false, true}) {
      SCOPED_TRACE("scale " + std::to_string(scale) + (reverse ? " reversed" : " sorted"));
      Tensor<double> t("B", dims, f);
      for (size_t i = 0; i < sorted.size(); i++) {
        const V& c = sorted[reverse ? sorted.size() - 1 - i : i];
        t.insert({c[0] * scale, c[1] * scale}, static_cast<double>(c[0] + c[1]));
      }
      t.pack();
      EXPECT_EQ(posOf(t, 0), (V{0, 2}));
      EXPECT_EQ(crdOf(t, 0), (V{0, 2 * scale}));
      EXPECT_EQ(posOf(t, 1), (V{0, 2, 5}));
      EXPECT_EQ(crdOf(t, 1), (V{scale, 3 * scale, 0, 2 * scale, 3 * scale}));
      EXPECT_EQ(valsOf(t), (std::vector<double>{1, 3, 2, 4, 10}));
    }
  }
}

// ---------------------------------------------------------------------------------------
// Hand-worked raw arrays for the 3x4 matrix
//   [ . 1 . 2 ]
//   [ . . . . ]
//   [ 3 . 4 5 ]

template <typename T>
Tensor<T> small(const Format& f) {
  Tensor<T> t("B", {3, 4}, f);
  // Unsorted, with a duplicate: (2,3) = 2 + 3.
  t.insert({2, 3}, 2);
  t.insert({0, 3}, 2);
  t.insert({2, 0}, 3);
  t.insert({0, 1}, 1);
  t.insert({2, 2}, 4);
  t.insert({2, 3}, 3);
  t.pack();
  return t;
}

TEST(TensorStorage, CsrArrays) {
  auto t = small<double>(CSR());
  EXPECT_EQ(t.raw().order, 2);
  EXPECT_EQ(t.raw().dims[0], 3);
  EXPECT_EQ(t.raw().dims[1], 4);
  EXPECT_EQ(t.raw().pos[0], nullptr);
  EXPECT_EQ(t.raw().crd[0], nullptr);
  EXPECT_EQ(posOf(t, 1), (V{0, 2, 2, 5}));
  EXPECT_EQ(crdOf(t, 1), (V{1, 3, 0, 2, 3}));
  EXPECT_EQ(valsOf(t), (std::vector<double>{1, 2, 3, 4, 5}));
  EXPECT_EQ(t.raw().pos_size[1], 4);
  EXPECT_EQ(t.raw().crd_size[1], 5);
  EXPECT_EQ(t.storedCount(), 5);
}

TEST(TensorStorage, CscArrays) {
  auto t = small<int32_t>(CSC());
  EXPECT_EQ(t.raw().dims[0], 4);  // storage order: columns first
  EXPECT_EQ(t.raw().dims[1], 3);
  EXPECT_EQ(posOf(t, 1), (V{0, 1, 2, 3, 5}));
  EXPECT_EQ(crdOf(t, 1), (V{2, 0, 2, 0, 2}));
  EXPECT_EQ(valsOf(t), (std::vector<int32_t>{3, 1, 4, 2, 5}));
  CooData c = t.toCoo();  // mode order coords, vals order
  EXPECT_EQ(c.coords, (V{2, 0, 0, 1, 2, 2, 0, 3, 2, 3}));
}

TEST(TensorStorage, DcsrArrays) {
  auto t = small<int64_t>(DCSR());
  EXPECT_EQ(posOf(t, 0), (V{0, 2}));
  EXPECT_EQ(crdOf(t, 0), (V{0, 2}));
  EXPECT_EQ(posOf(t, 1), (V{0, 2, 5}));
  EXPECT_EQ(crdOf(t, 1), (V{1, 3, 0, 2, 3}));
  EXPECT_EQ(valsOf(t), (std::vector<int64_t>{1, 2, 3, 4, 5}));
}

TEST(TensorStorage, CooArrays) {
  auto t = small<float>(COO());
  EXPECT_EQ(posOf(t, 0), (V{0, 5}));
  EXPECT_EQ(crdOf(t, 0), (V{0, 0, 2, 2, 2}));
  EXPECT_EQ(t.raw().pos[1], nullptr);
  EXPECT_EQ(crdOf(t, 1), (V{1, 3, 0, 2, 3}));
  EXPECT_EQ(valsOf(t), (std::vector<float>{1, 2, 3, 4, 5}));
  EXPECT_EQ(t.raw().crd_size[0], 5);
  EXPECT_EQ(t.raw().crd_size[1], 5);
}

TEST(TensorStorage, SparseDenseArrays) {
  auto t = small<double>(Format::parse("sd"));
  EXPECT_EQ(posOf(t, 0), (V{0, 2}));
  EXPECT_EQ(crdOf(t, 0), (V{0, 2}));
  EXPECT_EQ(valsOf(t), (std::vector<double>{0, 1, 0, 2, 3, 0, 4, 5}));
  CooData c = t.toCoo();
  EXPECT_EQ(c.coords, (V{0, 0, 0, 1, 0, 2, 0, 3, 2, 0, 2, 1, 2, 2, 2, 3}));
  EXPECT_EQ(c.values, (std::vector<double>{0, 1, 0, 2, 3, 0, 4, 5}));
}

TEST(TensorStorage, DenseArrays) {
  auto t = small<double>(DenseFormat(2));
  EXPECT_EQ(valsOf(t), (std::vector<double>{0, 1, 0, 2, 0, 0, 0, 0, 3, 0, 4, 5}));
  auto tt = small<double>(Format::parse("dd:1,0"));
  EXPECT_EQ(valsOf(tt), (std::vector<double>{0, 0, 3, 1, 0, 0, 0, 0, 4, 2, 0, 5}));
}

TEST(TensorStorage, Coo3Arrays) {
  Tensor<double> t("T", {2, 3, 4}, COO(3));
  t.insert({1, 2, 3}, 4);
  t.insert({0, 1, 1}, 2);
  t.insert({0, 0, 2}, 1);
  t.insert({1, 2, 0}, 3);
  t.insert({0, 1, 1}, 0.5);
  t.pack();
  EXPECT_EQ(posOf(t, 0), (V{0, 4}));
  EXPECT_EQ(crdOf(t, 0), (V{0, 0, 1, 1}));
  EXPECT_EQ(crdOf(t, 1), (V{0, 1, 2, 2}));  // middle singleton: non-unique
  EXPECT_EQ(crdOf(t, 2), (V{2, 1, 0, 3}));
  EXPECT_EQ(valsOf(t), (std::vector<double>{1, 2.5, 3, 4}));
  EXPECT_EQ(t.at({1, 2, 3}), 4);
  EXPECT_EQ(t.at({1, 2, 0}), 3);
  EXPECT_EQ(t.at({1, 2, 1}), 0);
  EXPECT_EQ(t.at({0, 2, 0}), 0);
}

TEST(TensorStorage, DenseOverCooArrays) {
  // d u q with mode order {2,0,1}: level 0 = mode 2.
  Tensor<double> t("T", {2, 3, 2}, Format::parse("duq:2,0,1"));
  t.insert({1, 2, 1}, 1);
  t.insert({0, 0, 1}, 2);
  t.insert({1, 0, 1}, 3);
  t.pack();
  EXPECT_EQ(posOf(t, 1), (V{0, 0, 3}));  // mode-2 coordinate 0 has nothing
  EXPECT_EQ(crdOf(t, 1), (V{0, 1, 1}));
  EXPECT_EQ(crdOf(t, 2), (V{0, 0, 2}));
  EXPECT_EQ(valsOf(t), (std::vector<double>{2, 3, 1}));
}

TEST(TensorStorage, BoolDuplicatesAreOred) {
  Tensor<bool> t("P", {2, 2}, CSR());
  t.insert({1, 1}, true);
  t.insert({1, 1}, true);
  t.insert({0, 1}, false);
  t.insert({0, 1}, true);
  t.insert({0, 0}, false);
  t.pack();
  EXPECT_EQ(valsOf(t), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(crdOf(t, 1), (V{0, 1, 1}));
}

TEST(TensorStorage, Scalar) {
  Tensor<double> s("s", {}, Format());
  EXPECT_EQ(s.order(), 0);
  EXPECT_EQ(s.storedCount(), 1);  // valid before packing
  EXPECT_EQ(s.at({}), 0);
  s.insert({}, 2.5);
  s.insert({}, 1);
  s.pack();
  EXPECT_EQ(s.storedCount(), 1);
  EXPECT_EQ(s.at({}), 3.5);
  CooData c = s.toCoo();
  EXPECT_EQ(c.nnz(), 1);
  EXPECT_TRUE(c.coords.empty());
  EXPECT_EQ(c.values[0], 3.5);
  s.insert({}, 4);
  s.pack();  // pack replaces the content
  EXPECT_EQ(s.at({}), 4);
  s.pack();  // nothing pending: zero
  EXPECT_EQ(s.at({}), 0);
  EXPECT_THROW(s.insert({0}, 1.0), DimensionError);
  Tensor<int32_t> d("d", {});  // dense constructor, order 0
  EXPECT_EQ(d.storedCount(), 1);
}

// ---------------------------------------------------------------------------------------
// Unpacked and repacked tensors

TEST(TensorStorage, UnpackedTensorIsValidEmpty) {
  for (const char* s : {"ds", "ds:1,0", "ss", "uq", "dd", "sd", "dsd", "duq"}) {
    Format f = Format::parse(s);
    V dims = f.order() == 2 ? V{3, 4} : V{2, 3, 2};
    Tensor<double> t("E", dims, f);
    EXPECT_FALSE(t.impl()->packed);
    checkInvariants(t);
    expectCooEq(t.toCoo(), expectedCoo(f, dims, {}), s);
    EXPECT_EQ(t.at(V(dims.size(), 1)), 0) << s;
    for (int k = 0; k < f.order(); k++)
      if (t.raw().pos[k]) {
        V pos = posOf(t, k);
        for (int64_t x : pos) EXPECT_EQ(x, 0);
      }
  }
  Tensor<double> d("D", {2, 3});
  EXPECT_EQ(valsOf(d), std::vector<double>(6, 0.0));
}

TEST(TensorStorage, PackReplacesContent) {
  Tensor<double> t("B", {3, 3}, CSR());
  t.insert({0, 0}, 1);
  t.pack();
  t.insert({1, 1}, 2);
  EXPECT_FALSE(t.impl()->packed);
  EXPECT_EQ(t.at({0, 0}), 1);  // storage unchanged until pack
  t.pack();
  EXPECT_EQ(t.at({0, 0}), 0);
  EXPECT_EQ(t.at({1, 1}), 2);
  EXPECT_EQ(t.storedCount(), 1);
}

TEST(TensorStorage, HandlesShareStorage) {
  Tensor<double> a("A", {2, 2}, CSR());
  Tensor<double> b = a;
  b.insert({1, 0}, 7);
  b.pack();
  EXPECT_EQ(a.at({1, 0}), 7);
  TensorBase base = a;
  Tensor<double> c(base);
  EXPECT_EQ(c.at({1, 0}), 7);
  EXPECT_THROW(Tensor<float>{base}, UserError);
}

TEST(TensorStorage, ConvertNamesAndValues) {
  auto t = small<double>(CSR());
  auto u = t.convert(CSC());
  EXPECT_EQ(u.name(), "B_ds:1,0");
  EXPECT_EQ(u.format(), CSC());
  EXPECT_EQ(crdOf(u, 1), (V{2, 0, 2, 0, 2}));
  auto v = t.convert(COO(), "C");
  EXPECT_EQ(v.name(), "C");
  EXPECT_EQ(crdOf(v, 0), (V{0, 0, 2, 2, 2}));
  // Source untouched.
  EXPECT_EQ(posOf(t, 1), (V{0, 2, 2, 5}));
  // int64 values beyond 2^53 survive conversion exactly.
  Tensor<int64_t> big("I", {2}, CSF(1));
  const int64_t x = (int64_t{1} << 60) + 1;
  big.insert({1}, x);
  big.pack();
  auto bd = big.convert(DenseFormat(1));
  EXPECT_EQ(bd.valueAt(1), x);
}

TEST(TensorStorage, SetFromCoo) {
  Tensor<int32_t> t("B", {3, 4}, DCSR());
  CooData c;
  c.dims = {3, 4};
  c.add({2, 1}, 3);
  c.add({0, 0}, 1);
  c.add({2, 1}, 4);
  t.setFromCoo(c);
  EXPECT_EQ(crdOf(t, 0), (V{0, 2}));
  EXPECT_EQ(valsOf(t), (std::vector<int32_t>{1, 7}));
  CooData bad = c;
  bad.dims = {4, 3};
  EXPECT_THROW(t.setFromCoo(bad), DimensionError);
  CooData out = c;
  out.add({3, 0}, 1);
  EXPECT_THROW(t.setFromCoo(out), DimensionError);
  CooData ragged = c;
  ragged.coords.push_back(1);
  EXPECT_THROW(t.setFromCoo(ragged), DimensionError);
  CooData huge = c;
  huge.values[0] = 1e12;  // does not fit int32
  EXPECT_THROW(t.setFromCoo(huge), OverflowError);
  EXPECT_EQ(t.at({2, 1}), 7);  // failed calls leave the contents alone
}

// ---------------------------------------------------------------------------------------
// Errors

TEST(TensorStorage, InsertErrors) {
  Tensor<double> t("B", {3, 4}, CSR());
  try {
    t.insert({1, 2, 3}, 1);
    FAIL();
  } catch (const DimensionError& e) {
    EXPECT_NE(std::string(e.what()).find("B"), std::string::npos);
  }
  EXPECT_THROW(t.insert({1}, 1), DimensionError);
  try {
    t.insert({1, 4}, 1);
    FAIL();
  } catch (const DimensionError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("B"), std::string::npos) << m;
    EXPECT_NE(m.find("mode 1"), std::string::npos) << m;
    EXPECT_NE(m.find("4"), std::string::npos) << m;
  }
  EXPECT_THROW(t.insert({-1, 0}, 1), DimensionError);
  EXPECT_THROW(t.at({3, 0}), DimensionError);
  EXPECT_THROW(t.at({0}), DimensionError);
  t.pack();  // the rejected inserts left nothing behind
  EXPECT_EQ(t.storedCount(), 0);
}

TEST(TensorStorage, ConstructorErrors) {
  try {
    Tensor<double>("B", {3, 4}, Format::parse("dss"));
    FAIL();
  } catch (const FormatError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("B"), std::string::npos) << m;
    EXPECT_NE(m.find("dss"), std::string::npos) << m;
  }
  EXPECT_THROW(Tensor<double>("B", {3}, CSR()), FormatError);
  EXPECT_THROW(Tensor<double>("B", {3, -1}, CSR()), DimensionError);
  EXPECT_THROW(Tensor<double>("B", {-3}), DimensionError);
}

TEST(TensorStorage, CrdWidthOverflow) {
  const int64_t big = 3000000000LL;
  try {
    Tensor<double>("B", {big, 5}, DCSR());
    FAIL();
  } catch (const OverflowError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("B"), std::string::npos) << m;
    EXPECT_NE(m.find("3000000000"), std::string::npos) << m;
    EXPECT_NE(m.find("32"), std::string::npos) << m;
  }
  EXPECT_THROW(Tensor<double>("B", {5, big}, CSR()), OverflowError);
  // 2^31 fits (largest coordinate 2^31-1); 2^31+1 does not.
  EXPECT_NO_THROW(Tensor<double>("B", {int64_t{1} << 31}, CSF(1)));
  EXPECT_THROW(Tensor<double>("B", {(int64_t{1} << 31) + 1}, CSF(1)), OverflowError);

  // 64-bit coordinates: fine, and no dense-sized arrays for sparse levels.
  Format f = DCSR().withWidths(IndexWidth::W64, IndexWidth::W64);
  Tensor<double> t("B", {big, big}, f);
  EXPECT_EQ(t.raw().pos_size[0], 2);
  EXPECT_EQ(t.raw().pos_size[1], 1);
  EXPECT_EQ(t.storedCount(), 0);
  t.insert({big - 1, 7}, 1.5);
  t.insert({5, big - 2}, 2.5);
  t.pack();
  EXPECT_EQ(crdOf(t, 0), (V{5, big - 1}));
  EXPECT_EQ(crdOf(t, 1), (V{big - 2, 7}));
  EXPECT_EQ(t.at({big - 1, 7}), 1.5);
  EXPECT_EQ(t.at({big - 1, 8}), 0);
  Tensor<double> coo("C", {big, big, big}, COO(3).withWidths(IndexWidth::W32, IndexWidth::W64));
  coo.insert({big - 1, big - 1, big - 1}, 1);
  coo.pack();
  EXPECT_EQ(crdOf(coo, 2), (V{big - 1}));
}

TEST(TensorStorage, DenseSizeOverflow) {
  Format f = DenseFormat(2).withWidths(IndexWidth::W64, IndexWidth::W64);
  try {
    Tensor<double>("D", {int64_t{1} << 40, int64_t{1} << 40}, f);
    FAIL();
  } catch (const OverflowError& e) {
    EXPECT_NE(std::string(e.what()).find("D"), std::string::npos);
  }
  // Below a sparse level with no entries the dense product is 0: fine.
  Format sd = Format::parse("sd").withWidths(IndexWidth::W64, IndexWidth::W64);
  EXPECT_NO_THROW(Tensor<double>("S", {int64_t{1} << 62, int64_t{1} << 40}, sd));
}

TEST(TensorStorage, ValueOverflowIsNotSilent) {
  Tensor<int32_t> t("I", {2}, CSF(1));
  t.insert({0}, std::numeric_limits<int32_t>::max());
  t.insert({0}, 1);
  EXPECT_THROW(t.pack(), OverflowError);
}

TEST(TensorStorage, NoAssignment) {
  Tensor<double> t("X", {2}, CSF(1));
  try {
    t.assignment();
    FAIL();
  } catch (const NotationError& e) {
    EXPECT_NE(std::string(e.what()).find("X"), std::string::npos);
  }
}

TEST(TensorStorage, ReleaseZeroes) {
  auto t = small<double>(COO());
  Storage& s = t.impl()->storage;
  s.release();
  EXPECT_EQ(s.raw.vals, nullptr);
  EXPECT_EQ(s.raw.pos[0], nullptr);
  EXPECT_EQ(s.raw.crd[1], nullptr);
  EXPECT_EQ(s.raw.vals_size, 0);
  EXPECT_EQ(s.raw.order, 0);
  s.release();  // idempotent
}

// ---------------------------------------------------------------------------------------
// Scale: many random entries (unsorted, duplicates) pack in well under a second.

TEST(TensorStorage, ManyEntries) {
  const int64_t n = 2000000, rows = 50000, cols = 3000000;
  Tensor<double> t("L", {rows, cols}, CSR());
  std::mt19937_64 rng(7);
  double sum = 0;
  for (int64_t i = 0; i < n; i++) {
    double v = static_cast<double>(i % 3 + 1);
    t.insert({static_cast<int64_t>(rng() % rows), static_cast<int64_t>(rng() % cols)}, v);
    sum += v;
  }
  auto t0 = std::chrono::steady_clock::now();
  t.pack();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(secs, 10.0);
  checkInvariants(t);
  const double* v = static_cast<const double*>(t.raw().vals);
  double got = 0;
  for (int64_t p = 0; p < t.storedCount(); p++) got += v[p];
  EXPECT_EQ(got, sum);
  EXPECT_LE(t.storedCount(), n);
  auto c = t.convert(COO());
  EXPECT_EQ(c.storedCount(), t.storedCount());
}

TEST(TensorStorage, DenseToSparseConversionStoresOnlyNonZeros) {
  tessel::Tensor<double> d("D", {2, 3});
  d.insert({0, 1}, 2.0);
  d.insert({1, 2}, -1.0);
  d.pack();
  EXPECT_EQ(d.storedCount(), 6);
  tessel::Tensor<double> s = d.convert(tessel::CSR());
  EXPECT_EQ(s.storedCount(), 2);
  EXPECT_EQ(s.at({0, 1}), 2.0);
  EXPECT_EQ(s.at({1, 2}), -1.0);
  // Explicit zeros stored by a sparse level survive conversion.
  tessel::Tensor<double> e("E", {2, 2}, tessel::CSR());
  e.insert({1, 0}, 0.0);
  e.pack();
  EXPECT_EQ(e.convert(tessel::COO(2)).storedCount(), 1);
}
