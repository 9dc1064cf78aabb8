// Tensor files: the shared data sets, every malformed-input error (type and line number),
// round trips, safe writing, and index widths.
#include <gtest/gtest.h>

#include "support/test_support.h"
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "tessel/error.h"
#include "tessel/io.h"

#ifndef TESSEL_DATA_DIR
#define TESSEL_DATA_DIR "../shared/data"
#endif

namespace fs = std::filesystem;
using namespace tessel;

namespace {

// ---------------------------------------------------------------------------------------
// Helpers

/// A private temporary directory, removed at the end of each test.
class IoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tessel::testing::makeScratchDir("tessel-io-test");
  }
  void TearDown() override { tessel::testing::removeScratchDir(dir_); }
  /// Write `text` to dir/name and return the path.
  std::string file(const std::string& name, const std::string& text) {
    std::string p = dir_ + "/" + name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  std::vector<std::string> listDir() const {
    std::vector<std::string> names;
    for (auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  std::string dir_;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

/// Runs f, expecting exception E whose message contains every string in `parts`.
template <typename E, typename F>
void expectError(F f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "expected an exception containing '" << parts.front() << "'";
  } catch (const E& e) {
    std::string msg = e.what();
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

/// Entries as a sorted multiset of (coords..., value) for comparisons.
std::vector<std::pair<std::vector<int64_t>, double>> entries(const CooData& d) {
  std::vector<std::pair<std::vector<int64_t>, double>> out;
  for (int64_t e = 0; e < d.nnz(); ++e) {
    std::vector<int64_t> c(d.coords.begin() + e * d.order(), d.coords.begin() + (e + 1) * d.order());
    out.emplace_back(c, d.values[e]);
  }
  std::sort(out.begin(), out.end());
  return out;
}

const std::string kDataDir = TESSEL_DATA_DIR;

// ---------------------------------------------------------------------------------------
// MANIFEST.md: "| file | source | license | size | nnz | field | ..." rows.

struct ManifestRow {
  std::vector<int64_t> dims;
  int64_t nnz = 0;  // after symmetric expansion
  std::string field;
  std::string symmetry;
};

std::vector<std::string> splitCells(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, '|')) {
    size_t b = cell.find_first_not_of(" *");
    size_t e = cell.find_last_not_of(" *");
    cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
  }
  return cells;  // cells[0] is the text before the first '|'
}

/// All integers in a cell ("2,500 × 2,500", "14,496 (28,980)"), commas removed.
std::vector<int64_t> numbers(const std::string& s) {
  std::vector<int64_t> out;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) out.push_back(std::stoll(cur));
    cur.clear();
  };
  for (char c : s) {
    if (c >= '0' && c <= '9')
      cur += c;
    else if (c != ',')
      flush();
  }
  flush();
  return out;
}

std::map<std::string, ManifestRow> readManifest() {
  std::map<std::string, ManifestRow> rows;
  std::ifstream in(kDataDir + "/MANIFEST.md");
  std::string line;
  while (std::getline(in, line)) {
    auto cells = splitCells(line);
    if (cells.size() < 7) continue;
    const std::string& name = cells[1];
    bool mtx = name.size() > 4 && name.substr(name.size() - 4) == ".mtx";
    bool tns = name.size() > 4 && name.substr(name.size() - 4) == ".tns";
    if (!mtx && !tns) continue;
    ManifestRow r;
    r.dims = numbers(cells[4]);
    auto nnz = numbers(cells[5]);
    if (nnz.empty()) continue;
    r.nnz = nnz.back();  // "(full)" count when present
    r.field = cells[6];
    if (mtx && cells.size() > 7) r.symmetry = cells[7];
    rows[name] = r;
  }
  return rows;
}

FileField expectedField(const std::string& text) {
  if (text.rfind("pattern", 0) == 0) return FileField::Pattern;
  if (text.rfind("integer", 0) == 0) return FileField::Integer;
  return FileField::Real;
}

void checkDataFolder(const std::string& sub, const std::string& ext) {
  const std::string folder = kDataDir + "/" + sub;
  if (!fs::is_directory(folder)) GTEST_SKIP() << "shared data folder " << folder << " not present";
  auto manifest = readManifest();
  int checked = 0;
  for (auto& entry : fs::directory_iterator(folder)) {
    if (entry.path().extension() != ext) continue;
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    FileContents fc = readTensorFile(entry.path().string());
    const CooData& d = fc.data;
    ASSERT_EQ(d.coords.size(), d.values.size() * static_cast<size_t>(d.order()));
    for (int64_t e = 0; e < d.nnz(); ++e)
      for (int m = 0; m < d.order(); ++m) {
        int64_t c = d.coords[e * d.order() + m];
        ASSERT_TRUE(c >= 0 && c < d.dims[m]) << "entry " << e << " mode " << m << " = " << c;
      }
    auto it = manifest.find(name);
    ASSERT_NE(it, manifest.end()) << "no MANIFEST.md row for " << name;
    EXPECT_EQ(d.dims, it->second.dims);
    EXPECT_EQ(d.nnz(), it->second.nnz);
    EXPECT_EQ(fc.field, expectedField(it->second.field)) << it->second.field;
    if (it->second.symmetry == "symmetric") {
      std::vector<std::tuple<int64_t, int64_t, double>> a, t;
      for (int64_t e = 0; e < d.nnz(); ++e) {
        a.emplace_back(d.coords[2 * e], d.coords[2 * e + 1], d.values[e]);
        t.emplace_back(d.coords[2 * e + 1], d.coords[2 * e], d.values[e]);
      }
      std::sort(a.begin(), a.end());
      std::sort(t.begin(), t.end());
      EXPECT_TRUE(a == t) << "not symmetric after expansion";
    }
    ++checked;
  }
  EXPECT_GT(checked, 0) << "no " << ext << " files in " << folder;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Shared data sets

TEST(IoData, AllMatricesMatchManifest) { checkDataFolder("matrices", ".mtx"); }
TEST(IoData, AllTensorsMatchManifest) { checkDataFolder("tensors", ".tns"); }

TEST(IoData, KnownMatrices) {
  if (!fs::is_directory(kDataDir + "/matrices"))
    GTEST_SKIP() << "shared data folder " << kDataDir << "/matrices not present";
  auto m = readMtx(kDataDir + "/matrices/bcsstk01.mtx");
  EXPECT_EQ(m.data.dims, (std::vector<int64_t>{48, 48}));
  EXPECT_EQ(m.data.nnz(), 400);
  EXPECT_EQ(m.field, FileField::Real);
  auto afiro = readMtx(kDataDir + "/matrices/lp_afiro.mtx");
  EXPECT_EQ(afiro.data.dims, (std::vector<int64_t>{27, 51}));
  EXPECT_EQ(afiro.data.nnz(), 102);
  auto karate = readMtx(kDataDir + "/matrices/karate.mtx");
  EXPECT_EQ(karate.field, FileField::Pattern);
  EXPECT_EQ(karate.data.nnz(), 156);
  for (double v : karate.data.values) EXPECT_EQ(v, 1.0);
  auto ragusa = readMtx(kDataDir + "/matrices/Ragusa16.mtx");
  EXPECT_EQ(ragusa.field, FileField::Integer);
  auto fid = readMtx(kDataDir + "/matrices/fidapex6.mtx");
  EXPECT_EQ(std::count(fid.data.values.begin(), fid.data.values.end(), 0.0), 471);
}

TEST(IoData, KnownTensors) {
  if (!fs::is_directory(kDataDir + "/tensors"))
    GTEST_SKIP() << "shared data folder " << kDataDir << "/tensors not present";
  auto t = readTns(kDataDir + "/tensors/kg-nations.tns");
  EXPECT_EQ(t.data.dims, (std::vector<int64_t>{14, 55, 14}));
  EXPECT_EQ(t.data.nnz(), 1992);
  EXPECT_EQ(t.field, FileField::Integer);
  auto amino = readTns(kDataDir + "/tensors/aminoacid.tns");
  EXPECT_EQ(amino.data.dims, (std::vector<int64_t>{5, 201, 61}));
  EXPECT_EQ(amino.field, FileField::Real);
  EXPECT_EQ(std::count(amino.data.values.begin(), amino.data.values.end(), 0.0), 23);
  EXPECT_TRUE(std::any_of(amino.data.values.begin(), amino.data.values.end(), [](double v) { return v < 0; }));
}

TEST(IoData, ReadThroughput) {
  const std::string path = kDataDir + "/matrices/bcsstk33.mtx";
  if (!fs::exists(path)) GTEST_SKIP() << path << " not present";
  const double mb = static_cast<double>(fs::file_size(path)) / 1e6;
  double best = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    auto m = readMtx(path);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, s);
    ASSERT_EQ(m.data.nnz(), 591904);
  }
  std::cout << "bcsstk33.mtx: " << mb << " MB in " << best * 1e3 << " ms = " << mb / best
            << " MB/s\n";
  RecordProperty("mtx_MBps", static_cast<int>(mb / best));
}

// ---------------------------------------------------------------------------------------
// Matrix Market: valid inputs

TEST_F(IoTest, MtxGeneralReal) {
  auto p = file("a.mtx",
                "%%MatrixMarket matrix coordinate real general\n"
                "% a comment\n"
                "%\n"
                "\n"
                "3 4 3\n"
                "1 1 1.5\n"
                "3 4 -2e3\n"
                "  2\t2   +7  \n");
  auto fc = readMtx(p);
  EXPECT_EQ(fc.field, FileField::Real);
  EXPECT_EQ(fc.data.dims, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(fc.data.coords, (std::vector<int64_t>{0, 0, 2, 3, 1, 1}));
  EXPECT_EQ(fc.data.values, (std::vector<double>{1.5, -2000, 7}));
}

TEST_F(IoTest, MtxBannerIsCaseInsensitiveAndCrlf) {
  auto p = file("a.mtx", "%%matrixmarket MATRIX Coordinate Integer GENERAL\r\n2 2 1\r\n2 1 -4\r\n");
  auto fc = readMtx(p);
  EXPECT_EQ(fc.field, FileField::Integer);
  EXPECT_EQ(fc.data.coords, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(fc.data.values, (std::vector<double>{-4}));
}

TEST_F(IoTest, MtxNoTrailingNewline) {
  auto fc = readMtx(file("a.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n2 2 3"));
  EXPECT_EQ(fc.data.values, (std::vector<double>{3}));
}

TEST_F(IoTest, MtxSymmetricExpands) {
  auto fc = readMtx(file("s.mtx",
                         "%%MatrixMarket matrix coordinate real symmetric\n"
                         "3 3 3\n1 1 4\n3 1 2\n3 2 5\n"));
  EXPECT_EQ(fc.data.nnz(), 5);
  auto e = entries(fc.data);
  std::vector<std::pair<std::vector<int64_t>, double>> want = {
      {{0, 0}, 4}, {{0, 2}, 2}, {{1, 2}, 5}, {{2, 0}, 2}, {{2, 1}, 5}};
  EXPECT_EQ(e, want);
}

TEST_F(IoTest, MtxSkewSymmetricNegates) {
  auto fc = readMtx(file("s.mtx",
                         "%%MatrixMarket matrix coordinate real skew-symmetric\n"
                         "3 3 2\n2 1 3\n3 2 -1.5\n"));
  auto e = entries(fc.data);
  std::vector<std::pair<std::vector<int64_t>, double>> want = {
      {{0, 1}, -3}, {{1, 0}, 3}, {{1, 2}, 1.5}, {{2, 1}, -1.5}};
  EXPECT_EQ(e, want);
  // A zero diagonal entry is allowed.
  EXPECT_NO_THROW(readMtx(file("z.mtx",
                               "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 0\n")));
}

TEST_F(IoTest, MtxPatternIsOne) {
  auto fc = readMtx(file("p.mtx",
                         "%%MatrixMarket matrix coordinate pattern symmetric\n4 4 2\n2 1\n3 3\n"));
  EXPECT_EQ(fc.field, FileField::Pattern);
  EXPECT_EQ(fc.data.nnz(), 3);
  for (double v : fc.data.values) EXPECT_EQ(v, 1.0);
}

TEST_F(IoTest, MtxNanInfPreserved) {
  auto fc = readMtx(file("n.mtx",
                         "%%MatrixMarket matrix coordinate real general\n"
                         "2 2 4\n1 1 nan\n1 2 inf\n2 1 -Inf\n2 2 1e400\n"));
  EXPECT_TRUE(std::isnan(fc.data.values[0]));
  EXPECT_EQ(fc.data.values[1], std::numeric_limits<double>::infinity());
  EXPECT_EQ(fc.data.values[2], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(fc.data.values[3], std::numeric_limits<double>::infinity());
}

TEST_F(IoTest, MtxDuplicatesKept) {
  auto fc = readMtx(file("d.mtx",
                         "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n1 1 2\n2 2 3\n"));
  EXPECT_EQ(fc.data.nnz(), 3);
  EXPECT_EQ(fc.data.coords, (std::vector<int64_t>{0, 0, 0, 0, 1, 1}));
}

TEST_F(IoTest, MtxEmptyMatrix) {
  auto fc = readMtx(file("e.mtx", "%%MatrixMarket matrix coordinate real general\n0 5 0\n"));
  EXPECT_EQ(fc.data.dims, (std::vector<int64_t>{0, 5}));
  EXPECT_EQ(fc.data.nnz(), 0);
}

TEST_F(IoTest, MtxArrayGeneralColumnMajor) {
  auto fc = readMtx(file("a.mtx",
                         "%%MatrixMarket matrix array real general\n% c\n2 3\n1\n2\n3\n4\n5\n0\n"));
  EXPECT_EQ(fc.data.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(fc.data.coords, (std::vector<int64_t>{0, 0, 1, 0, 0, 1, 1, 1, 0, 2, 1, 2}));
  EXPECT_EQ(fc.data.values, (std::vector<double>{1, 2, 3, 4, 5, 0}));
}

TEST_F(IoTest, MtxArraySymmetricAndSkew) {
  auto s = readMtx(file("s.mtx", "%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n"));
  std::vector<std::pair<std::vector<int64_t>, double>> want = {
      {{0, 0}, 1}, {{0, 1}, 2}, {{1, 0}, 2}, {{1, 1}, 3}};
  EXPECT_EQ(entries(s.data), want);
  auto k = readMtx(file("k.mtx", "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n"));
  std::vector<std::pair<std::vector<int64_t>, double>> wantK = {
      {{0, 1}, -1}, {{0, 2}, -2}, {{1, 0}, 1}, {{1, 2}, -3}, {{2, 0}, 2}, {{2, 1}, 3}};
  EXPECT_EQ(entries(k.data), wantK);
}

// ---------------------------------------------------------------------------------------
// Matrix Market: malformed inputs (type and line number)

TEST_F(IoTest, MtxMissingBanner) {
  auto p = file("a.mtx", "3 3 1\n1 1 1\n");
  expectError<FileError>([&] { readMtx(p); }, {p + ":1:", "banner"});
  auto empty = file("empty.mtx", "");
  expectError<FileError>([&] { readMtx(empty); }, {empty + ":1:", "empty"});
}

TEST_F(IoTest, MtxBadBanner) {
  expectError<FileError>([&] { readMtx(file("a.mtx", "%%MatrixMarket matrix coordinate real\n1 1 0\n")); },
                         {"a.mtx:1:", "bad banner"});
  expectError<FileError>([&] { readMtx(file("b.mtx", "%%MatrixMarket vector coordinate real general\n")); },
                         {"b.mtx:1:", "vector"});
  expectError<FileError>([&] { readMtx(file("c.mtx", "%%MatrixMarket matrix sparse real general\n")); },
                         {"c.mtx:1:", "sparse"});
  expectError<FileError>([&] { readMtx(file("d.mtx", "%%MatrixMarket matrix coordinate float general\n")); },
                         {"d.mtx:1:", "float"});
  expectError<FileError>([&] { readMtx(file("e.mtx", "%%MatrixMarket matrix coordinate real upper\n")); },
                         {"e.mtx:1:", "upper"});
  expectError<FileError>([&] { readMtx(file("f.mtx", "%%MatrixMarket matrix array pattern general\n")); },
                         {"f.mtx:1:"});
}

TEST_F(IoTest, MtxComplexRejected) {
  expectError<FileError>(
      [&] { readMtx(file("c.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 2\n")); },
      {"c.mtx:1:", "complex matrices are not supported"});
  expectError<FileError>(
      [&] { readMtx(file("h.mtx", "%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n")); },
      {"h.mtx:1:", "complex matrices are not supported"});
}

TEST_F(IoTest, MtxMissingSizeLine) {
  expectError<FileError>(
      [&] { readMtx(file("a.mtx", "%%MatrixMarket matrix coordinate real general\n% only\n% comments\n")); },
      {"a.mtx:3:", "missing size line"});
  expectError<FileError>([&] { readMtx(file("b.mtx", "%%MatrixMarket matrix coordinate real general\n")); },
                         {"b.mtx:1:", "missing size line"});
}

TEST_F(IoTest, MtxBadSizeLine) {
  const std::string banner = "%%MatrixMarket matrix coordinate real general\n%c\n";
  expectError<FileError>([&] { readMtx(file("a.mtx", banner + "3 3\n")); }, {"a.mtx:3:", "size line"});
  expectError<FileError>([&] { readMtx(file("b.mtx", banner + "3 x 1\n")); }, {"b.mtx:3:", "'x'"});
  expectError<FileError>([&] { readMtx(file("c.mtx", banner + "-3 3 1\n")); }, {"c.mtx:3:", "negative"});
  expectError<FileError>([&] { readMtx(file("d.mtx", banner + "3 3 -1\n")); }, {"d.mtx:3:", "negative"});
  expectError<OverflowError>([&] { readMtx(file("e.mtx", banner + "99999999999999999999 3 1\n")); },
                             {"e.mtx:3:", "64-bit"});
  expectError<OverflowError>(
      [&] { readMtx(file("f.mtx", "%%MatrixMarket matrix array real general\n4000000000 4000000000\n")); },
      {"f.mtx:2:", "64-bit"});
  expectError<FileError>(
      [&] { readMtx(file("g.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n")); },
      {"g.mtx:2:", "square"});
}

TEST_F(IoTest, MtxNonNumericToken) {
  const std::string head = "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n";
  expectError<FileError>([&] { readMtx(file("a.mtx", head + "2 2 abc\n3 3 1\n")); },
                         {"a.mtx:4:", "non-numeric value 'abc'"});
  expectError<FileError>([&] { readMtx(file("b.mtx", head + "2 x 1\n3 3 1\n")); },
                         {"b.mtx:4:", "non-numeric column index 'x'"});
  expectError<FileError>([&] { readMtx(file("c.mtx", head + "1.5 2 1\n3 3 1\n")); },
                         {"c.mtx:4:", "row index"});
  expectError<FileError>([&] { readMtx(file("d.mtx", head + "2 2 1.0.0\n3 3 1\n")); },
                         {"d.mtx:4:", "non-numeric"});
  expectError<FileError>(
      [&] { readMtx(file("e.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 2.5\n")); },
      {"e.mtx:3:", "non-integer"});
}

TEST_F(IoTest, MtxWrongTokenCount) {
  const std::string head = "%%MatrixMarket matrix coordinate real general\n3 3 2\n";
  expectError<FileError>([&] { readMtx(file("a.mtx", head + "1 1\n2 2 1\n")); },
                         {"a.mtx:3:", "expected 3 tokens", "found 2"});
  expectError<FileError>([&] { readMtx(file("b.mtx", head + "1 1 1\n2 2 1 5\n")); },
                         {"b.mtx:4:", "found 4"});
  expectError<FileError>(
      [&] { readMtx(file("c.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1\n")); },
      {"c.mtx:3:", "expected 2 tokens"});
  expectError<FileError>(
      [&] { readMtx(file("d.mtx", "%%MatrixMarket matrix array real general\n1 2\n1 2\n3\n")); },
      {"d.mtx:3:", "expected 1 token"});
}

TEST_F(IoTest, MtxIndexOutOfRange) {
  const std::string head = "%%MatrixMarket matrix coordinate real general\n3 4 2\n1 1 1\n";
  expectError<FileError>([&] { readMtx(file("a.mtx", head + "0 1 1\n")); },
                         {"a.mtx:4:", "row index 0", "1-based"});
  expectError<FileError>([&] { readMtx(file("b.mtx", head + "1 0 1\n")); }, {"b.mtx:4:", "column index 0"});
  expectError<FileError>([&] { readMtx(file("c.mtx", head + "4 1 1\n")); }, {"c.mtx:4:", "row index 4", "1..3"});
  expectError<FileError>([&] { readMtx(file("d.mtx", head + "1 5 1\n")); }, {"d.mtx:4:", "1..4"});
  expectError<FileError>([&] { readMtx(file("e.mtx", head + "-1 1 1\n")); }, {"e.mtx:4:", "out of range"});
  expectError<FileError>([&] { readMtx(file("f.mtx", head + "99999999999999999999999 1 1\n")); },
                         {"f.mtx:4:", "out of range"});
}

TEST_F(IoTest, MtxTruncated) {
  auto p = file("t.mtx", "%%MatrixMarket matrix coordinate real general\n%c\n5 5 4\n1 1 1\n2 2 2\n");
  expectError<FileError>([&] { readMtx(p); }, {p + ":5:", "2 of the 4 entries", "line 3", "truncated"});
  // Without trailing lines the error names the last line of the file.
  auto q = file("u.mtx", "%%MatrixMarket matrix coordinate real general\n5 5 2\n1 1 1\n");
  expectError<FileError>([&] { readMtx(q); }, {q + ":3:", "1 of the 2"});
}

TEST_F(IoTest, MtxTooManyEntries) {
  auto p = file("t.mtx", "%%MatrixMarket matrix coordinate real general\n5 5 2\n1 1 1\n2 2 2\n% c\n3 3 3\n");
  expectError<FileError>([&] { readMtx(p); }, {p + ":6:", "more entries than the 2", "line 2"});
  auto a = file("a.mtx", "%%MatrixMarket matrix array real general\n1 1\n1\n2\n");
  expectError<FileError>([&] { readMtx(a); }, {a + ":4:", "more entries"});
}

TEST_F(IoTest, MtxSkewDiagonalMustBeZero) {
  auto p = file("s.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 5\n");
  expectError<FileError>([&] { readMtx(p); }, {p + ":4:", "diagonal"});
}

TEST_F(IoTest, MissingAndUnreadableFiles) {
  const std::string missing = dir_ + "/nope.mtx";
  expectError<FileError>([&] { readMtx(missing); }, {missing, "No such file or directory"});
  expectError<FileError>([&] { readTns(dir_ + "/nope.tns"); }, {"No such file or directory"});
  expectError<FileError>([&] { readTensorFile(missing); }, {"No such file or directory"});
  fs::create_directory(dir_ + "/d.mtx");
  expectError<FileError>([&] { readMtx(dir_ + "/d.mtx"); }, {"d.mtx", "directory"});
  auto p = file("x.csv", "1,2\n");
  expectError<FileError>([&] { readTensorFile(p); }, {"x.csv", ".mtx or .tns"});
}

// ---------------------------------------------------------------------------------------
// FROSTT

TEST_F(IoTest, TnsBasic) {
  auto fc = readTns(file("a.tns", "# header comment\n1 2 3 1\n\n  # indented comment\n2 1 5 -4\r\n1 1 1 7\n"));
  EXPECT_EQ(fc.field, FileField::Integer);
  EXPECT_EQ(fc.data.dims, (std::vector<int64_t>{2, 2, 5}));
  EXPECT_EQ(fc.data.coords, (std::vector<int64_t>{0, 1, 2, 1, 0, 4, 0, 0, 0}));
  EXPECT_EQ(fc.data.values, (std::vector<double>{1, -4, 7}));
  EXPECT_EQ(readTns(file("w.tns", "1 1 4.000000\n2 2 3\n")).field, FileField::Integer);
  auto real = readTns(file("b.tns", "1 1 1.5\n2 2 3\n"));
  EXPECT_EQ(real.field, FileField::Real);
  EXPECT_EQ(real.data.order(), 2);
  auto viaDispatch = readTensorFile(file("c.tns", "3 2.5e-1\n"));
  EXPECT_EQ(viaDispatch.data.dims, (std::vector<int64_t>{3}));
  EXPECT_EQ(viaDispatch.data.values, (std::vector<double>{0.25}));
}

TEST_F(IoTest, TnsGivenDims) {
  auto p = file("a.tns", "1 1 3\n2 3 4\n");
  auto fc = readTns(p, std::vector<int64_t>{5, 6});
  EXPECT_EQ(fc.data.dims, (std::vector<int64_t>{5, 6}));
  expectError<FileError>([&] { readTns(p, std::vector<int64_t>{5, 2}); }, {p + ":2:", "mode 1", "1..2"});
  expectError<FileError>([&] { readTns(p, std::vector<int64_t>{1, 6}); }, {p + ":2:", "mode 0", "1..1"});
  expectError<FileError>([&] { readTns(p, std::vector<int64_t>{5, 6, 7}); }, {p + ":1:", "order 2", "3 dimensions"});
}

TEST_F(IoTest, TnsEmpty) {
  auto p = file("e.tns", "# nothing here\n\n");
  expectError<FileError>([&] { readTns(p); }, {p + ":2:", "no entries; cannot infer the order"});
  auto fc = readTns(p, std::vector<int64_t>{3, 4});
  EXPECT_EQ(fc.data.dims, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(fc.data.nnz(), 0);
  expectError<FileError>([&] { readTns(file("z.tns", "")); }, {"no entries"});
}

TEST_F(IoTest, TnsMalformed) {
  expectError<FileError>([&] { readTns(file("a.tns", "1 1 1 1\n# c\n1 2 1\n")); },
                         {"a.tns:3:", "expected 4 tokens", "line 1", "found 3"});
  expectError<FileError>([&] { readTns(file("b.tns", "1 1 1 1\n1 0 1 1\n")); },
                         {"b.tns:2:", "index 0 in mode 1", "1-based"});
  expectError<FileError>([&] { readTns(file("c.tns", "1 1 1 1\n1 1 1 x\n")); },
                         {"c.tns:2:", "non-numeric value 'x'"});
  expectError<FileError>([&] { readTns(file("d.tns", "1 1 1 1\n\n1 q 1 1\n")); },
                         {"d.tns:3:", "non-numeric index 'q'"});
  expectError<FileError>([&] { readTns(file("e.tns", "1 1 1 1\n-2 1 1 1\n")); }, {"e.tns:2:"});
  expectError<OverflowError>([&] { readTns(file("f.tns", "1 99999999999999999999 1\n")); }, {"f.tns:1:"});
}

TEST_F(IoTest, TnsNanInf) {
  auto fc = readTns(file("n.tns", "1 nan\n2 -inf\n"));
  EXPECT_TRUE(std::isnan(fc.data.values[0]));
  EXPECT_EQ(fc.data.values[1], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(fc.field, FileField::Real);
}

TEST_F(IoTest, TnsScalar) {
  auto fc = readTns(file("s.tns", "# a scalar\n42\n"));
  EXPECT_EQ(fc.data.order(), 0);
  EXPECT_EQ(fc.data.values, (std::vector<double>{42}));
}

// ---------------------------------------------------------------------------------------
// Writers

TEST_F(IoTest, WriteMtxExactText) {
  CooData d;
  d.dims = {2, 3};
  d.add({0, 0}, 0.1);
  d.add({1, 2}, -3);
  writeMtx(dir_ + "/o.mtx", d);
  EXPECT_EQ(slurp(dir_ + "/o.mtx"),
            "%%MatrixMarket matrix coordinate real general\n2 3 2\n1 1 0.10000000000000001\n2 3 -3\n");
  EXPECT_EQ(listDir(), (std::vector<std::string>{"o.mtx"}));  // no temporaries
}

TEST_F(IoTest, MtxRoundTrip) {
  CooData d;
  d.dims = {1000, 7};
  for (int i = 0; i < 1000; ++i)
    d.add({i, (i * 5) % 7}, i == 3 ? 0.0 : std::ldexp(1.0 / (i + 3.0), (i % 40) - 20) * (i % 2 ? -1 : 1));
  d.add({5, 5}, std::numeric_limits<double>::infinity());
  d.add({6, 6}, 1e-310);  // denormal
  d.add({7, 6}, std::numeric_limits<double>::max());
  const std::string p = dir_ + "/r.mtx";
  writeTensorFile(p, d);
  auto back = readTensorFile(p);
  EXPECT_EQ(back.field, FileField::Real);
  EXPECT_EQ(back.data.dims, d.dims);
  EXPECT_EQ(back.data.coords, d.coords);
  EXPECT_EQ(back.data.values, d.values);  // %.17g round-trips exactly
  // NaN survives too.
  CooData n;
  n.dims = {1, 1};
  n.add({0, 0}, std::nan(""));
  writeMtx(p, n);
  EXPECT_TRUE(std::isnan(readMtx(p).data.values[0]));
}

TEST_F(IoTest, TnsRoundTrip) {
  CooData d;
  d.dims = {3, 4, 5};
  d.add({0, 0, 0}, 1.25);
  d.add({2, 3, 4}, 0.0);
  d.add({1, 2, 3}, -1e-5);
  const std::string p = dir_ + "/r.tns";
  writeTensorFile(p, d);  // skips zeros
  auto back = readTensorFile(p);
  EXPECT_EQ(back.data.nnz(), 2);
  EXPECT_EQ(back.data.coords, (std::vector<int64_t>{0, 0, 0, 1, 2, 3}));
  EXPECT_EQ(back.data.values, (std::vector<double>{1.25, -1e-5}));
  EXPECT_EQ(back.data.dims, (std::vector<int64_t>{3, 4, 5}));  // from the dims comment, not the largest index
  writeTns(p, d, /*skipZeros=*/false);
  auto all = readTns(p, d.dims);
  EXPECT_EQ(all.data.coords, d.coords);
  EXPECT_EQ(all.data.values, d.values);
  EXPECT_EQ(all.data.dims, d.dims);
  EXPECT_EQ(slurp(p), "# tessel dims: 3 4 5\n1 1 1 1.25\n3 4 5 0\n2 3 4 -1.0000000000000001e-05\n");
}

TEST_F(IoTest, TnsScalarWrite) {
  CooData s;  // order 0
  s.values = {2.5};
  const std::string p = dir_ + "/s.tns";
  writeTns(p, s);
  EXPECT_EQ(slurp(p), "2.5\n");
  auto back = readTns(p);
  EXPECT_EQ(back.data.order(), 0);
  EXPECT_EQ(back.data.values, (std::vector<double>{2.5}));
  s.values = {0.0};
  writeTns(p, s);  // a zero scalar is still written
  EXPECT_EQ(slurp(p), "0\n");
}

TEST_F(IoTest, WriteErrors) {
  CooData cube;
  cube.dims = {2, 2, 2};
  cube.add({0, 0, 0}, 1);
  expectError<UserError>([&] { writeMtx(dir_ + "/c.mtx", cube); }, {"order"});
  expectError<FileError>([&] { writeTensorFile(dir_ + "/c.txt", cube); }, {"c.txt"});
  EXPECT_TRUE(listDir().empty());

  // Target directory missing: an error and no file anywhere.
  CooData m;
  m.dims = {2, 2};
  m.add({1, 1}, 3);
  const std::string missingDir = dir_ + "/no/such/dir/m.mtx";
  expectError<FileError>([&] { writeMtx(missingDir, m); }, {missingDir, "No such file or directory"});
  EXPECT_FALSE(fs::exists(missingDir));
  EXPECT_TRUE(listDir().empty());

  // Target is a directory: rename fails, the temporary is removed.
  fs::create_directory(dir_ + "/taken.mtx");
  fs::create_directory(dir_ + "/taken.mtx/inside");
  expectError<FileError>([&] { writeMtx(dir_ + "/taken.mtx", m); }, {"taken.mtx"});
  EXPECT_EQ(listDir(), (std::vector<std::string>{"taken.mtx"}));
  expectError<FileError>([&] { writeTns(dir_ + "/taken.mtx", m); }, {"taken.mtx"});
  EXPECT_EQ(listDir(), (std::vector<std::string>{"taken.mtx"}));
}

TEST_F(IoTest, WriteIntoReadOnlyDirectory) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  fs::create_directory(dir_ + "/ro");
  fs::permissions(dir_ + "/ro", fs::perms::owner_read | fs::perms::owner_exec);
  CooData m;
  m.dims = {2, 2};
  m.add({1, 1}, 3);
  expectError<FileError>([&] { writeMtx(dir_ + "/ro/m.mtx", m); }, {"m.mtx"});
  fs::permissions(dir_ + "/ro", fs::perms::owner_all);
  EXPECT_TRUE(fs::is_empty(dir_ + "/ro"));
}

TEST_F(IoTest, WriteReplacesExistingFile) {
  const std::string p = file("m.mtx", "old contents\n");
  CooData m;
  m.dims = {1, 1};
  m.add({0, 0}, 9);
  writeMtx(p, m);
  EXPECT_EQ(readMtx(p).data.values, (std::vector<double>{9}));
  EXPECT_EQ(listDir(), (std::vector<std::string>{"m.mtx"}));
}

// ---------------------------------------------------------------------------------------
// gzip (optional: needs zlib in the library build)

using tessel::testing::gzipStored;


TEST_F(IoTest, GzipInput) {
  auto p = file("g.mtx.gz", gzipStored("%%MatrixMarket matrix coordinate real general\n2 2 1\n2 1 5\n"));
  try {
    auto fc = readTensorFile(p);
    EXPECT_EQ(fc.data.coords, (std::vector<int64_t>{1, 0}));
    EXPECT_EQ(fc.data.values, (std::vector<double>{5}));
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("zlib"), std::string::npos) << e.what();
    GTEST_SKIP() << "built without zlib";
  }
}

// ---------------------------------------------------------------------------------------
// Index widths

TEST(IoWidths, WithFittingWidths) {
  Format csr({LevelKind::Dense, LevelKind::Compressed});
  Format small = withFittingWidths(csr, {1000, 1000}, 5000);
  EXPECT_EQ(small.posWidth(), IndexWidth::W32);
  EXPECT_EQ(small.crdWidth(), IndexWidth::W32);
  const int64_t big = int64_t(INT32_MAX) + 1;
  // dim - 1 == INT32_MAX still fits 32-bit coordinates, but not positions.
  Format edge = withFittingWidths(csr, {10, big}, 10);
  EXPECT_EQ(edge.crdWidth(), IndexWidth::W32);
  EXPECT_EQ(edge.posWidth(), IndexWidth::W64);
  Format wide = withFittingWidths(csr, {10, big + 1}, 10);
  EXPECT_EQ(wide.crdWidth(), IndexWidth::W64);
  EXPECT_EQ(wide.posWidth(), IndexWidth::W64);
  Format manyNnz = withFittingWidths(csr, {100000, 100000}, big);
  EXPECT_EQ(manyNnz.posWidth(), IndexWidth::W64);
  EXPECT_EQ(manyNnz.crdWidth(), IndexWidth::W32);
  // Never narrows.
  Format already = csr.withWidths(IndexWidth::W64, IndexWidth::W64);
  EXPECT_EQ(withFittingWidths(already, {2, 2}, 1), already);
  EXPECT_EQ(withFittingWidths(csr, {2, 2}, 1).levels(), csr.levels());
}

TEST_F(IoTest, LinesLongerThanTheReadBlock) {
  // A 3 MB comment line forces the reader to grow its buffer; entries around it still parse.
  std::string text = "1 1 1\n# " + std::string(3 << 20, 'x') + "\n2 2 2\n";
  for (int i = 0; i < 100000; ++i) text += "3 3 3\n";
  auto fc = readTns(file("long.tns", text));
  EXPECT_EQ(fc.data.nnz(), 100002);
  EXPECT_EQ(fc.data.dims, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(fc.data.values[1], 2.0);
  // Errors after the long line still name the right line.
  text += "1 x 1\n";
  expectError<FileError>([&] { readTns(file("long2.tns", text)); }, {"long2.tns:100004:"});
}

// ---------------------------------------------------------------------------------------
// Absurd sizes are refused before allocating; fuzzer regressions; progress line.

namespace {
/// Sets an environment variable for the lifetime of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};
}  // namespace

TEST_F(IoTest, MtxHugeCoordinateHeaderRefusedBeforeAllocating) {
  // 1e11 entries need 2.4 TB: refused on the size line whatever the machine.
  auto p = file("h.mtx",
                "%%MatrixMarket matrix coordinate real general\n1000000000 1000000000 100000000000\n1 1 1\n");
  expectError<FileError>([&] { readMtx(p); }, {p + ":2:", "100000000000 entries", "memory"});
  // With a small limit, a modest header is refused too (symmetric entries count twice).
  ScopedEnv env("TESSEL_MAX_MEMORY", "1M");
  auto q = file("q.mtx", "%%MatrixMarket matrix coordinate real symmetric\n%c\n100 100 30000\n1 1 1\n");
  expectError<FileError>([&] { readMtx(q); }, {q + ":3:", "30000 entries", "TESSEL_MAX_MEMORY"});
  // Under the limit, the same reader still works.
  auto ok = file("ok.mtx", "%%MatrixMarket matrix coordinate real symmetric\n100 100 1\n2 1 1\n");
  EXPECT_EQ(readMtx(ok).data.nnz(), 2);
}

TEST_F(IoTest, MtxHugeArrayHeaderRefusedBeforeAllocating) {
  auto p = file("a.mtx", "%%MatrixMarket matrix array real general\n3000000000 3000000000\n1\n");
  expectError<FileError>([&] { readMtx(p); }, {p + ":2:", "entries", "memory"});
  ScopedEnv env("TESSEL_MAX_MEMORY", "100K");
  auto q = file("q.mtx", "%%MatrixMarket matrix array real general\n100 100\n1\n");
  expectError<FileError>([&] { readMtx(q); }, {q + ":2:", "10000 entries", "memory"});
}

TEST_F(IoTest, MtxHeaderClaimingMoreEntriesThanTheFileCanHold) {
  // 1000 entries need at least 4000 bytes ("i j\n" each); the file has far fewer.
  auto p = file("t.mtx", "%%MatrixMarket matrix coordinate real general\n10 10 1000\n1 1 1\n2 2 2\n");
  expectError<FileError>([&] { readMtx(p); }, {p + ":2:", "1000 entries", "bytes", "truncated"});
  auto a = file("a.mtx", "%%MatrixMarket matrix array real general\n100 100\n1\n2\n");
  expectError<FileError>([&] { readMtx(a); }, {a + ":2:", "10000 entries", "truncated"});
  // The smallest possible lines are still accepted: pattern entries without a final newline.
  auto s = file("s.mtx", "%%MatrixMarket matrix coordinate pattern general\n1 1 1\n1 1");
  EXPECT_EQ(readMtx(s).data.nnz(), 1);
  auto b = file("b.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4");
  EXPECT_EQ(readMtx(b).data.nnz(), 4);
}

TEST_F(IoTest, MaxMemoryEnvironmentVariable) {
  auto p = file("m.mtx", "%%MatrixMarket matrix coordinate real general\n10 10 3\n1 1 1\n2 2 2\n3 3 3\n");
  {
    ScopedEnv env("TESSEL_MAX_MEMORY", "71");  // 3 entries x 24 bytes = 72
    expectError<FileError>([&] { readMtx(p); }, {p + ":2:", "memory"});
  }
  {
    ScopedEnv env("TESSEL_MAX_MEMORY", "72");
    EXPECT_EQ(readMtx(p).data.nnz(), 3);
  }
  {
    ScopedEnv env("TESSEL_MAX_MEMORY", "not a size");  // ignored: physical memory applies
    EXPECT_EQ(readMtx(p).data.nnz(), 3);
  }
}

// Found by fuzz/fuzz_mtx: a "pattern skew-symmetric" file produced mirrored entries with
// value -1 although the field promises 1. The combination is invalid Matrix Market.
TEST_F(IoTest, FuzzRegressionPatternSkewSymmetricRejected) {
  auto p = file("p.mtx", "%%MatrixMarket matrix coordinate pattern skew-symmetric\n3 3 1\n2 1\n");
  expectError<FileError>([&] { readMtx(p); }, {p + ":1:", "pattern skew-symmetric"});
}

TEST_F(IoTest, ProgressLine) {
  CooData d;
  d.dims = {3, 3};
  d.add({0, 1}, 2.0);
  d.add({2, 2}, -1.0);
  {
    // Forced on: one line per operation, ending with the clear sequence.
    ScopedEnv env("TESSEL_PROGRESS", "1");
    ::testing::internal::CaptureStderr();
    writeMtx(dir_ + "/p.mtx", d);
    readMtx(dir_ + "/p.mtx");
    writeTns(dir_ + "/p.tns", d);
    readTns(dir_ + "/p.tns");
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("writing p.mtx"), std::string::npos) << err;
    EXPECT_NE(err.find("reading p.mtx"), std::string::npos) << err;
    EXPECT_NE(err.find("writing p.tns"), std::string::npos) << err;
    EXPECT_NE(err.find("reading p.tns"), std::string::npos) << err;
    EXPECT_NE(err.find("MB/s"), std::string::npos) << err;
    ASSERT_GE(err.size(), 4u);
    EXPECT_EQ(err.substr(err.size() - 4), "\r\033[K");
  }
  for (const char* mode : {"0", static_cast<const char*>(nullptr)}) {
    // Off, or automatic with small files (and stderr not a terminal under ctest): silent.
    ScopedEnv env("TESSEL_PROGRESS", mode);
    ::testing::internal::CaptureStderr();
    writeMtx(dir_ + "/q.mtx", d);
    readMtx(dir_ + "/q.mtx");
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  }
}

TEST_F(IoTest, EmptyTensorWrittenByTesselReadsBack) {
  // No entry tells an empty tensor's order or dims: writeTns adds a comment that does.
  for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{{5}, {3, 0, 7}, {2, 4}}) {
    CooData empty;
    empty.dims = dims;
    std::string p = dir_ + "/empty.tns";
    writeTns(p, empty);
    FileContents back = readTns(p);
    EXPECT_EQ(back.data.dims, dims);
    EXPECT_EQ(back.data.nnz(), 0);
  }
  // Only zeros (skipped) is empty too; a tensor with entries gets no comment.
  CooData zeros;
  zeros.dims = {4};
  zeros.add({1}, 0.0);
  writeTns(dir_ + "/zeros.tns", zeros);
  EXPECT_EQ(readTns(dir_ + "/zeros.tns").data.dims, std::vector<int64_t>{4});
  CooData one;
  one.dims = {4};
  one.add({1}, 2.5);
  writeTns(dir_ + "/one.tns", one);
  std::ifstream in(dir_ + "/one.tns");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "# tessel dims: 4\n2 2.5\n");  // the dims first, for every tensor
  // A malformed dims comment is an error naming the file and line.
  std::ofstream(dir_ + "/bad.tns") << "# tessel dims: 3 x\n";
  EXPECT_THROW(readTns(dir_ + "/bad.tns"), FileError);
}
