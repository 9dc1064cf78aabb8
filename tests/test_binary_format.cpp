// The .tsb binary tensor file: round trips (every named format, datatype, order 0..5,
// empty tensors, 64-bit widths), exactness, mmap loading, corruption detection, safe
// writes, and a load-throughput measurement (printed, not asserted).
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_support.h"
#include "tessel/tessel.h"

namespace fs = std::filesystem;
using namespace tessel;

namespace {

class Binary : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tessel::testing::makeScratchDir("tessel-tsb");
  }
  void TearDown() override { tessel::testing::removeScratchDir(dir_); }
  std::string path(const std::string& n) const { return (dir_ / n).string(); }
  fs::path dir_;
};

std::vector<unsigned char> slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), {});
}
void spit(const std::string& p, const std::vector<unsigned char>& b) {
  std::ofstream(p, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

/// Same format, datatype, dims, array sizes, and identical array bytes.
::testing::AssertionResult sameStorage(const TensorBase& a, const TensorBase& b) {
  if (a.format() != b.format()) return ::testing::AssertionFailure() << "format differs";
  if (a.datatype() != b.datatype()) return ::testing::AssertionFailure() << "datatype differs";
  if (a.dims() != b.dims()) return ::testing::AssertionFailure() << "dims differ";
  const auto &x = a.raw(), &y = b.raw();
  const int pw = a.format().posWidth() == IndexWidth::W32 ? 4 : 8;
  const int cw = a.format().crdWidth() == IndexWidth::W32 ? 4 : 8;
  for (int k = 0; k < a.order(); k++) {
    if (x.pos_size[k] != y.pos_size[k] || x.crd_size[k] != y.crd_size[k])
      return ::testing::AssertionFailure() << "level " << k << " sizes differ";
    if (x.pos_size[k] && std::memcmp(x.pos[k], y.pos[k], x.pos_size[k] * pw))
      return ::testing::AssertionFailure() << "level " << k << " pos differs";
    if (x.crd_size[k] && std::memcmp(x.crd[k], y.crd[k], x.crd_size[k] * cw))
      return ::testing::AssertionFailure() << "level " << k << " crd differs";
  }
  if (x.vals_size != y.vals_size) return ::testing::AssertionFailure() << "vals size differs";
  if (x.vals_size && std::memcmp(x.vals, y.vals, x.vals_size * datatypeSize(a.datatype())))
    return ::testing::AssertionFailure() << "vals bytes differ";
  return ::testing::AssertionSuccess();
}

Format allCompressed(int order) {
  return Format(std::vector<LevelKind>(order, LevelKind::Compressed));
}

}  // namespace

TEST_F(Binary, RoundTripNamedFormatsAndTypes) {
  std::mt19937_64 rng(7);
  std::vector<std::pair<std::string, Format>> formats = {
      {"CSR", CSR()},   {"CSC", CSC()},         {"DCSR", DCSR()},
      {"DCSC", DCSC()}, {"COO", COO(2)},        {"dense", DenseFormat(2)},
      {"CSF", CSF(3)},  {"COO3", COO(3)},       {"dense3", DenseFormat(3)},
      {"duq", Format::parse("duq")},
  };
  for (const auto& [label, f] : formats) {
    std::vector<int64_t> dims = f.order() == 2 ? std::vector<int64_t>{7, 9} : std::vector<int64_t>{4, 5, 6};
    CooData data = tessel::testing::randomCoo(dims, 0.3, rng, false, true);
    for (Datatype type : {Datatype::Bool, Datatype::Int32, Datatype::Int64, Datatype::Float32,
                          Datatype::Float64}) {
      SCOPED_TRACE(label + " " + datatypeName(type));
      TensorBase t = tessel::testing::makeTensor("T", data, f, type);
      std::string p = path("t.tsb");
      writeBinary(p, t);
      TensorBase r = readBinary(p);
      EXPECT_TRUE(sameStorage(t, r));
      TensorBase m = mapBinary(p, "M");
      EXPECT_TRUE(sameStorage(t, m));
      EXPECT_EQ(m.name(), "M");
    }
  }
}

TEST_F(Binary, OrdersZeroToFiveAndEmpty) {
  std::mt19937_64 rng(11);
  for (int order = 0; order <= 5; order++) {
    std::vector<int64_t> dims(order, 3);
    for (bool empty : {false, true}) {
      for (const Format& f : {defaultBinaryFormat(order), allCompressed(order), DenseFormat(order)}) {
        SCOPED_TRACE("order " + std::to_string(order) + " " + f.str() + (empty ? " empty" : ""));
        CooData data = empty ? CooData{dims, {}, {}} : tessel::testing::randomCoo(dims, 0.4, rng);
        if (order == 0 && !empty) data = CooData{{}, {}, {2.5}};
        TensorBase t = tessel::testing::makeTensor("T", data, f);
        writeBinary(path("o.tsb"), t);
        TensorBase r = readBinary(path("o.tsb"));
        EXPECT_TRUE(sameStorage(t, r));
        EXPECT_TRUE(sameStorage(t, mapBinary(path("o.tsb"))));
        EXPECT_EQ(fs::file_size(path("o.tsb")) % 64, 0u);
      }
    }
  }
}

TEST_F(Binary, WideIndicesAndExactValues) {
  CooData data{{5, 4}, {0, 1, 2, 3, 4, 0}, {0.1, -1e-300, 7.0}};
  data.add({3, 2}, std::nextafter(1.0, 2.0));
  Format f = CSR().withWidths(IndexWidth::W64, IndexWidth::W64);
  TensorBase t = tessel::testing::makeTensor("T", data, f);
  writeBinary(path("w.tsb"), t);
  TensorBase r = readBinary(path("w.tsb"));
  EXPECT_EQ(r.format().posWidth(), IndexWidth::W64);
  EXPECT_EQ(r.format().crdWidth(), IndexWidth::W64);
  EXPECT_TRUE(sameStorage(t, r));
  // Large dims need 64-bit crd: a 2^33 x 3 matrix.
  CooData big{{int64_t(1) << 33, 3}, {(int64_t(1) << 33) - 1, 2}, {4.0}};
  Format bf = withFittingWidths(DCSR(), big.dims, 1);
  TensorBase b = tessel::testing::makeTensor("B", big, bf);
  writeBinary(path("big.tsb"), b);
  EXPECT_LT(fs::file_size(path("big.tsb")), 4096u);
  TensorBase rb = readBinary(path("big.tsb"));
  EXPECT_TRUE(sameStorage(b, rb));
  EXPECT_EQ(rb.at({(int64_t(1) << 33) - 1, 2}), 4.0);
}

TEST_F(Binary, MappedTensorRunsInAKernel) {
  std::mt19937_64 rng(3);
  CooData bdata = tessel::testing::randomCoo({40, 30}, 0.2, rng);
  TensorBase B = tessel::testing::makeTensor("B", bdata, CSR());
  writeBinary(path("B.tsb"), B);
  Tensor<double> Bm(mapBinary(path("B.tsb"), "B"));
  Tensor<double> c("c", {30});
  for (int j = 0; j < 30; j++) c.insert({j}, 1.0 + j);
  c.pack();
  Tensor<double> a("a", {40}), a2("a2", {40});
  IndexVar i("i"), j("j");
  a(i) = Bm(i, j) * c(j);
  a.evaluate();
  a2(i) = B(i, j) * c(j);
  a2.evaluate();
  for (int64_t r = 0; r < 40; r++) EXPECT_DOUBLE_EQ(a.at({r}), a2.at({r}));
  // A mapped tensor cannot be an output (its pages are read-only).
  Tensor<double> Am(mapBinary(path("B.tsb"), "Am"));
  Tensor<double> ones("ones", {40, 30}, CSR());
  ones.insert({0, 0}, 1.0);
  ones.pack();
  Am(i, j) = ones(i, j) * 2.0;
  EXPECT_THROW(Am.evaluate(), UserError);
  EXPECT_EQ(Am.at({0, 0}), Bm.at({0, 0}));  // untouched
  // Converting / repacking a mapped tensor replaces the mapping with owned arrays.
  TensorBase conv = Bm.convert(CSC());
  EXPECT_EQ(conv.toCoo().nnz(), B.toCoo().nnz());
  Bm.setFromCoo(bdata);
  EXPECT_EQ(Bm.impl()->storage.external, nullptr);
}

TEST_F(Binary, TensorFileDispatch) {
  CooData d{{3, 4}, {}, {}};
  d.add({0, 1}, 1.5);
  d.add({2, 3}, -2.0);
  writeTensorFile(path("x.tsb"), d);
  TensorBase t = readBinary(path("x.tsb"));
  EXPECT_EQ(t.format(), CSR());
  FileContents fc = readTensorFile(path("x.tsb"));
  EXPECT_EQ(fc.data.dims, d.dims);
  EXPECT_EQ(fc.data.coords, d.coords);
  EXPECT_EQ(fc.data.values, d.values);
  CooData v{{10}, {4}, {1.0}};
  writeTensorFile(path("v.tsb"), v);
  EXPECT_EQ(readBinary(path("v.tsb")).format(), defaultBinaryFormat(1));
}

// ---- corruption ------------------------------------------------------------------------

namespace {

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const FileError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("NOT A FileError: ") + e.what();
  }
  return "no error";
}

uint64_t get64(const std::vector<unsigned char>& b, size_t off) {
  uint64_t v;
  std::memcpy(&v, b.data() + off, 8);
  return v;
}
void set64(std::vector<unsigned char>& b, size_t off, uint64_t v) { std::memcpy(b.data() + off, &v, 8); }
void set32(std::vector<unsigned char>& b, size_t off, uint32_t v) { std::memcpy(b.data() + off, &v, 4); }
/// Recompute the header checksum after editing header fields.
void reseal(std::vector<unsigned char>& b) { set64(b, 736, binaryChecksum(b.data(), 736, 0)); }
void resealPayload(std::vector<unsigned char>& b, const std::vector<std::pair<size_t, size_t>>& arrays) {
  uint64_t h = 0;
  for (auto [off, bytes] : arrays) h = binaryChecksum(b.data() + off, bytes, h);
  set64(b, 728, h);
  reseal(b);
}

}  // namespace

TEST_F(Binary, CorruptionIsDetected) {
  std::mt19937_64 rng(5);
  CooData data = tessel::testing::randomCoo({50, 60}, 0.2, rng);
  TensorBase t = tessel::testing::makeTensor("T", data, CSR());
  const std::string good = path("good.tsb"), bad = path("bad.tsb");
  writeBinary(good, t);
  const std::vector<unsigned char> orig = slurp(good);
  auto both = [&](const std::vector<unsigned char>& bytes) {
    spit(bad, bytes);
    std::string a = errorOf([&] { readBinary(bad); });
    std::string b = errorOf([&] { mapBinary(bad); });
    EXPECT_EQ(a, b);
    EXPECT_NE(a.find(bad + ":byte "), std::string::npos) << a;
    return a;
  };
  auto has = [](const std::string& msg, const std::string& what) {
    return msg.find(what) != std::string::npos;
  };

  {  // wrong magic
    auto b = orig;
    b[0] = 'X';
    EXPECT_TRUE(has(both(b), "bad magic")) << both(b);
  }
  {  // version 99
    auto b = orig;
    set32(b, 8, 99);
    reseal(b);
    EXPECT_TRUE(has(both(b), "unsupported format version 99")) << both(b);
  }
  // every header byte
  for (size_t i = 12; i < 768; i++) {
    auto b = orig;
    b[i] ^= 0x10;
    std::string m = both(b);
    ASSERT_TRUE(has(m, "corrupted header")) << "byte " << i << ": " << m;
  }
  // a byte in each array: pos (768), crd (at pos offset + ...), vals
  // CSR: level 0 is dense, level 1 arrays are described at 224 (pos) and 240 (crd).
  for (int field : {224, 224 + 16, 704}) {
    size_t off = get64(orig, field), cnt = get64(orig, field + 8);
    ASSERT_GT(cnt, 2u);
    auto b = orig;
    b[off + 5] ^= 0x01;
    std::string m = both(b);
    EXPECT_TRUE(has(m, "checksum mismatch in payload")) << m;
    // With the checksum skipped, structural validation still catches index damage.
    if (field != 704) {
      spit(bad, b);
      std::string u = errorOf([&] { mapBinary(bad, "", false); });
      EXPECT_TRUE(has(u, "corrupted payload")) << u;
    }
  }
  {  // a padding byte (right after the pos array, which is 51 * 4 bytes)
    auto b = orig;
    size_t end = get64(b, 224) + get64(b, 232) * 4;
    ASSERT_NE(end % 64, 0u);
    b[end] = 1;
    std::string m = both(b);
    EXPECT_TRUE(has(m, "nonzero padding")) << m;
  }
  {  // crd out of range with a valid checksum: the structure check must catch it
    auto b = orig;
    size_t posOff = get64(b, 224), posCnt = get64(b, 232);
    size_t crdOff = get64(b, 240), crdCnt = get64(b, 248);
    size_t valOff = get64(b, 704), valCnt = get64(b, 712);
    set32(b, crdOff + 4 * (crdCnt - 1), 1000000);
    resealPayload(b, {{posOff, posCnt * 4}, {crdOff, crdCnt * 4}, {valOff, valCnt * 8}});
    std::string m = both(b);
    EXPECT_TRUE(has(m, "corrupted payload") && has(m, "outside [0, 60)")) << m;
    // decreasing pos
    b = orig;
    set32(b, posOff + 4 * 10, 0x7fffffff);
    resealPayload(b, {{posOff, posCnt * 4}, {crdOff, crdCnt * 4}, {valOff, valCnt * 8}});
    m = both(b);
    EXPECT_TRUE(has(m, "corrupted payload") && has(m, "pos")) << m;
  }
  {  // truncated
    for (size_t keep : {size_t(0), size_t(5), size_t(100), size_t(767), orig.size() - 64, orig.size() - 1}) {
      auto b = orig;
      b.resize(keep);
      std::string m = both(b);
      if (keep < 8) {
        EXPECT_TRUE(has(m, "truncated: needs 768 bytes, file has " + std::to_string(keep))) << m;
      } else {
        EXPECT_TRUE(has(m, "truncated: needs ")) << m;
        EXPECT_TRUE(has(m, "file has " + std::to_string(keep))) << m;
      }
    }
  }
  {  // huge dims: dense levels whose positions overflow, and counts far beyond the file
    auto b = orig;
    set64(b, 64, uint64_t(1) << 40);
    set32(b, 24, 64);
    set32(b, 28, 64);
    reseal(b);
    std::string m = both(b);
    EXPECT_TRUE(has(m, "corrupted header")) << m;
    b = orig;
    set64(b, 64, uint64_t(1) << 30);  // 2^30 rows: pos count no longer matches
    reseal(b);
    m = both(b);
    EXPECT_TRUE(has(m, "corrupted header") && has(m, "pos count")) << m;
    b = orig;
    set64(b, 712, uint64_t(1) << 60);  // vals count
    reseal(b);
    m = both(b);
    EXPECT_TRUE(has(m, "corrupted header")) << m;
    b = orig;  // all-dense 2^40 x 2^40 with the count claimed: overflow, never allocated
    b[32] = 0;
    b[33] = 0;
    set64(b, 64, uint64_t(1) << 40);
    set64(b, 72, uint64_t(1) << 40);
    for (int f = 192; f < 704; f++) b[f] = 0;
    set32(b, 24, 64);
    set32(b, 28, 64);
    reseal(b);
    m = both(b);
    EXPECT_TRUE(has(m, "overflow")) << m;
  }
  // The original still loads.
  EXPECT_TRUE(sameStorage(t, readBinary(good)));
}

TEST_F(Binary, FailedWriteLeavesNothing) {
  TensorBase t = tessel::testing::makeTensor("T", CooData{{2, 2}, {0, 0}, {1.0}}, CSR());
  EXPECT_THROW(writeBinary(path("nodir/x.tsb"), t), FileError);
  EXPECT_FALSE(fs::exists(path("nodir")));
  // A read-only directory: cannot create the temporary.
  fs::create_directory(path("ro"));
  ::chmod(path("ro").c_str(), 0500);
  if (::access(path("ro").c_str(), W_OK) != 0) {  // (root can write anyway)
    EXPECT_THROW(writeBinary(path("ro/x.tsb"), t), FileError);
  }
  ::chmod(path("ro").c_str(), 0700);
  EXPECT_TRUE(fs::is_empty(path("ro")));
  // Unpacked inserts are refused before anything is created.
  Tensor<double> u("u", {3}, Format({LevelKind::Compressed}));
  u.insert({1}, 2.0);
  EXPECT_THROW(writeBinary(path("u.tsb"), u), UserError);
  EXPECT_FALSE(fs::exists(path("u.tsb")));
  // Writing over an existing file replaces it atomically; no temporaries remain.
  writeBinary(path("x.tsb"), t);
  writeBinary(path("x.tsb"), t);
  int files = 0;
  for (auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST_F(Binary, LoadThroughput) {
  // Writes ~110 MB to the temp dir and takes seconds: only on request.
  if (!std::getenv("TESSEL_IO_THROUGHPUT")) GTEST_SKIP() << "set TESSEL_IO_THROUGHPUT=1 to measure";
  // ~100 MB: 2M rows, ~4.2 entries per row -> 8.4M entries * 12 bytes + 8 MB of pos.
  CooData data = generateUniformMatrix(2'000'000, 2'000'000, 4.2, 42);
  TensorBase t("B", Datatype::Float64, data.dims, CSR());
  t.setFromCoo(data);
  data = CooData();
  const std::string p = path("big.tsb");
  auto t0 = std::chrono::steady_clock::now();
  writeBinary(p, t);
  auto t1 = std::chrono::steady_clock::now();
  const double mb = static_cast<double>(fs::file_size(p)) / 1e6;
  auto secs = [](auto d) { return std::chrono::duration<double>(d).count(); };
  double best[3] = {1e9, 1e9, 1e9};
  for (int rep = 0; rep < 3; rep++) {
    auto a = std::chrono::steady_clock::now();
    TensorBase r = readBinary(p);
    auto b = std::chrono::steady_clock::now();
    TensorBase m = mapBinary(p);
    auto c = std::chrono::steady_clock::now();
    TensorBase mu = mapBinary(p, "", false);
    auto d = std::chrono::steady_clock::now();
    best[0] = std::min(best[0], secs(b - a));
    best[1] = std::min(best[1], secs(c - b));
    best[2] = std::min(best[2], secs(d - c));
    if (rep == 0) {
      EXPECT_TRUE(sameStorage(t, r));
      EXPECT_TRUE(sameStorage(t, m));
    }
  }
  std::printf("[throughput] file %.1f MB, write %.1f ms (%.0f MB/s)\n", mb, secs(t1 - t0) * 1e3,
              mb / secs(t1 - t0));
  std::printf("[throughput] readBinary (copy+checksum+validate): %.1f ms, %.0f MB/s\n", best[0] * 1e3,
              mb / best[0]);
  std::printf("[throughput] mapBinary (checksum+validate):      %.1f ms, %.0f MB/s\n", best[1] * 1e3,
              mb / best[1]);
  std::printf("[throughput] mapBinary verify=false (validate):  %.1f ms, %.0f MB/s\n", best[2] * 1e3,
              mb / best[2]);
}
