// Sparsity pictures: ownership under each distribution, PNG decoding, SVG
// well-formedness (library), and `tessel plot` / `tessel generate` end to end
// (fork/execv of the built tool, as in test_cli.cpp).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_support.h"

#include "support/tool_runner.h"

#include "tessel/generate.h"
#include "tessel/plot.h"

namespace fs = std::filesystem;

namespace tessel {
namespace {

// ---------------------------------------------------------------- helpers

/// 4x4, rows hold 4, 1, 1, 2 non-zeros; given out of row-major order on purpose.
CooData tinyMatrix() {
  CooData c;
  c.dims = {4, 4};
  const int64_t entries[][2] = {{3, 3}, {0, 0}, {0, 1}, {2, 2}, {0, 2}, {0, 3}, {1, 1}, {3, 0}};
  for (auto& e : entries) c.add({e[0], e[1]}, 1.0);
  return c;
}

PlotDistribution dist(PlotPartition k, int gx, int gy = 1) {
  PlotDistribution d;
  d.kind = k;
  d.gridX = gx;
  d.gridY = gy;
  return d;
}

/// Owner of each entry of tinyMatrix(), listed by coordinate.
std::map<std::pair<int64_t, int64_t>, int> ownersByCoord(const PlotDistribution& d) {
  CooData c = tinyMatrix();
  auto owners = plotOwners(c, d);
  std::map<std::pair<int64_t, int64_t>, int> m;
  for (int64_t e = 0; e < c.nnz(); e++) m[{c.coords[2 * e], c.coords[2 * e + 1]}] = owners[e];
  return m;
}

uint32_t be32(const std::string& s, size_t at) {
  return (uint32_t(uint8_t(s[at])) << 24) | (uint32_t(uint8_t(s[at + 1])) << 16) |
         (uint32_t(uint8_t(s[at + 2])) << 8) | uint32_t(uint8_t(s[at + 3]));
}

struct DecodedPng {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
  std::array<uint8_t, 3> at(int x, int y) const {
    size_t o = (size_t(y) * size_t(width) + size_t(x)) * 3;
    return {rgb[o], rgb[o + 1], rgb[o + 2]};
  }
};

/// Checks signature, chunk CRCs, IHDR (8-bit RGB), inflates IDAT (filter 0 rows).
::testing::AssertionResult decodePng(const std::string& png, DecodedPng& out) {
  if (png.size() < 8 || png.compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) != 0)
    return ::testing::AssertionFailure() << "bad signature";
  size_t pos = 8;
  std::string idat;
  bool sawEnd = false, sawHeader = false;
  while (pos + 12 <= png.size()) {
    uint32_t len = be32(png, pos);
    std::string type = png.substr(pos + 4, 4);
    if (pos + 12 + len > png.size()) return ::testing::AssertionFailure() << "truncated chunk " << type;
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(png.data() + pos + 4), len + 4);
    if (crc != be32(png, pos + 8 + len)) return ::testing::AssertionFailure() << "bad CRC in " << type;
    std::string data = png.substr(pos + 8, len);
    if (type == "IHDR") {
      if (len != 13) return ::testing::AssertionFailure() << "IHDR length " << len;
      out.width = int(be32(data, 0));
      out.height = int(be32(data, 4));
      if (data[8] != 8 || data[9] != 2 || data[10] || data[11] || data[12])
        return ::testing::AssertionFailure() << "not 8-bit RGB non-interlaced";
      sawHeader = true;
    } else if (type == "IDAT") {
      idat += data;
    } else if (type == "IEND") {
      sawEnd = true;
    }
    pos += 12 + len;
  }
  if (!sawHeader || !sawEnd || pos != png.size()) return ::testing::AssertionFailure() << "bad chunk layout";
  size_t stride = size_t(out.width) * 3;
  std::vector<uint8_t> raw((stride + 1) * size_t(out.height));
  uLongf rawLen = raw.size();
  if (uncompress(raw.data(), &rawLen, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK ||
      rawLen != raw.size())
    return ::testing::AssertionFailure() << "IDAT does not inflate to " << raw.size() << " bytes";
  out.rgb.clear();
  for (int y = 0; y < out.height; y++) {
    if (raw[size_t(y) * (stride + 1)] != 0) return ::testing::AssertionFailure() << "row filter not 0";
    out.rgb.insert(out.rgb.end(), raw.begin() + y * (stride + 1) + 1, raw.begin() + (y + 1) * (stride + 1));
  }
  return ::testing::AssertionSuccess();
}

/// Minimal XML well-formedness: balanced tags, quoted attributes, one root.
::testing::AssertionResult wellFormedXml(const std::string& s) {
  std::vector<std::string> stack;
  size_t pos = 0;
  int roots = 0;
  while ((pos = s.find('<', pos)) != std::string::npos) {
    size_t end = s.find('>', pos);
    if (end == std::string::npos) return ::testing::AssertionFailure() << "unclosed tag at " << pos;
    std::string tag = s.substr(pos + 1, end - pos - 1);
    pos = end + 1;
    if (tag.empty()) return ::testing::AssertionFailure() << "empty tag";
    if (tag[0] == '?' || tag[0] == '!') continue;
    if (tag[0] == '/') {
      if (stack.empty() || stack.back() != tag.substr(1))
        return ::testing::AssertionFailure() << "mismatched </" << tag.substr(1) << ">";
      stack.pop_back();
      continue;
    }
    if (std::count(tag.begin(), tag.end(), '"') % 2) return ::testing::AssertionFailure() << "unbalanced quotes: " << tag;
    bool selfClosing = tag.back() == '/';
    std::string name = tag.substr(0, tag.find_first_of(" /"));
    if (stack.empty()) roots++;
    if (!selfClosing) stack.push_back(name);
  }
  if (!stack.empty()) return ::testing::AssertionFailure() << "unclosed <" << stack.back() << ">";
  if (roots != 1) return ::testing::AssertionFailure() << roots << " root elements";
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------- library

TEST(PlotOwners, RowsInEqualBlocks) {
  auto m = ownersByCoord(dist(PlotPartition::Rows, 2));
  for (auto& [c, r] : m) EXPECT_EQ(r, c.first < 2 ? 0 : 1) << c.first << "," << c.second;
}

TEST(PlotOwners, ColumnsInEqualBlocks) {
  auto m = ownersByCoord(dist(PlotPartition::Columns, 2));
  for (auto& [c, r] : m) EXPECT_EQ(r, c.second < 2 ? 0 : 1) << c.first << "," << c.second;
}

TEST(PlotOwners, RowsByNonzerosBalance) {
  // Row 0 holds half the non-zeros: rank 0 gets row 0 alone, rank 1 rows 1..3 (4 and 4),
  // where equal row blocks would give 5 and 3.
  auto m = ownersByCoord(dist(PlotPartition::RowsByNonzeros, 2));
  for (auto& [c, r] : m) EXPECT_EQ(r, c.first == 0 ? 0 : 1) << c.first << "," << c.second;
  // Four ranks: a row goes to the owner of its first non-zero (positions 0, 4, 5, 6 of 8).
  auto m4 = ownersByCoord(dist(PlotPartition::RowsByNonzeros, 4));
  const int expect[4] = {0, 2, 2, 3};
  for (auto& [c, r] : m4) EXPECT_EQ(r, expect[c.first]) << c.first << "," << c.second;
}

TEST(PlotOwners, FusedNonzerosInRowMajorOrder) {
  // Row-major order: (0,0) (0,1) (0,2) (0,3) (1,1) (2,2) (3,0) (3,3); 3 ranks: 0 0 0 1 1 1 2 2.
  auto m = ownersByCoord(dist(PlotPartition::FusedNonzeros, 3));
  std::vector<int> got;
  for (auto& [c, r] : m) got.push_back(r);  // map order is row-major
  EXPECT_EQ(got, (std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2}));
}

TEST(PlotOwners, Blocks2D) {
  auto m = ownersByCoord(dist(PlotPartition::Blocks2D, 2, 2));
  for (auto& [c, r] : m) EXPECT_EQ(r, int(c.first / 2) * 2 + int(c.second / 2)) << c.first << "," << c.second;
  // 1x2 grid: columns split.
  auto m2 = ownersByCoord(dist(PlotPartition::Blocks2D, 1, 2));
  for (auto& [c, r] : m2) EXPECT_EQ(r, c.second < 2 ? 0 : 1);
}

TEST(PlotOwners, NoneAndEmpty) {
  EXPECT_TRUE(plotOwners(tinyMatrix(), PlotDistribution{}).empty());
  CooData empty;
  empty.dims = {5, 5};
  EXPECT_TRUE(plotOwners(empty, dist(PlotPartition::RowsByNonzeros, 3)).empty());
  EXPECT_TRUE(plotOwners(empty, dist(PlotPartition::FusedNonzeros, 3)).empty());
}

TEST(PlotImage, SizeKeepsAspectRatio) {
  CooData c;
  c.dims = {1000, 500};
  c.add({999, 499}, 1);
  PlotOptions o;
  PlotImage img = renderPlot(c, o);
  EXPECT_EQ(img.width, 256);
  EXPECT_EQ(img.height, 512);
  EXPECT_EQ(img.gridWidth, 256);
  EXPECT_EQ(img.gridHeight, 512);
  // Small matrices are scaled up: each cell becomes a block of pixels.
  PlotImage small = renderPlot(tinyMatrix(), o);
  EXPECT_EQ(small.width, 512);
  EXPECT_EQ(small.height, 512);
  EXPECT_EQ(small.gridWidth, 4);
  EXPECT_EQ(small.pixel(10, 10), (std::array<uint8_t, 3>{0, 0, 0}));          // (0,0) entry
  EXPECT_EQ(small.pixel(130, 10), (std::array<uint8_t, 3>{0, 0, 0}));         // (0,1)
  EXPECT_EQ(small.pixel(10, 130), (std::array<uint8_t, 3>{255, 255, 255}));   // (1,0) empty
  EXPECT_THROW(renderPlot(c, PlotOptions{0, {}, "x"}), UserError);
}

TEST(PlotImage, DarknessIsLogScaledCount) {
  CooData c;
  c.dims = {100, 100};
  for (int j = 0; j < 50; j++) c.add({0, j}, 1);  // 50 non-zeros in one cell
  c.add({99, 99}, 1);                             // one in another
  PlotOptions o;
  o.size = 2;
  PlotImage img = renderPlot(c, o);
  ASSERT_EQ(img.width, 2);
  auto heavy = img.pixel(0, 0), light = img.pixel(1, 1), none = img.pixel(1, 0);
  EXPECT_EQ(heavy, (std::array<uint8_t, 3>{0, 0, 0}));
  EXPECT_GT(light[0], heavy[0]);
  EXPECT_LT(light[0], 255);
  EXPECT_EQ(none, (std::array<uint8_t, 3>{255, 255, 255}));
}

TEST(PlotImage, OwnerColoursPerDistribution) {
  PlotOptions o;
  o.size = 4;  // one pixel per cell
  for (auto d : {dist(PlotPartition::Rows, 2), dist(PlotPartition::Columns, 2),
                 dist(PlotPartition::RowsByNonzeros, 2), dist(PlotPartition::FusedNonzeros, 3),
                 dist(PlotPartition::Blocks2D, 2, 2)}) {
    o.dist = d;
    PlotImage img = renderPlot(tinyMatrix(), o);
    auto owners = ownersByCoord(d);
    for (int y = 0; y < 4; y++)
      for (int x = 0; x < 4; x++) {
        auto it = owners.find({y, x});
        auto expect = it == owners.end() ? std::array<uint8_t, 3>{255, 255, 255} : plotRankColour(it->second);
        EXPECT_EQ(img.pixel(x, y), expect) << "kind " << int(d.kind) << " at row " << y << " col " << x;
      }
    int64_t total = 0;
    for (auto n : img.rankNonzeros) total += n;
    EXPECT_EQ(total, 8);
  }
}

TEST(PlotImage, PngDecodes) {
  PlotOptions o;
  o.size = 4;
  o.dist = dist(PlotPartition::Rows, 2);
  DecodedPng png;
  ASSERT_TRUE(decodePng(encodePng(renderPlot(tinyMatrix(), o)), png));
  EXPECT_EQ(png.width, 4);
  EXPECT_EQ(png.height, 4);
  EXPECT_EQ(png.at(0, 0), plotRankColour(0));
  EXPECT_EQ(png.at(3, 3), plotRankColour(1));
  EXPECT_EQ(png.at(0, 1), (std::array<uint8_t, 3>{255, 255, 255}));
}

TEST(PlotImage, ThreeTensorProjection) {
  CooData t;
  t.dims = {3, 4, 5};
  t.add({1, 2, 0}, 1);
  t.add({1, 2, 4}, 1);
  PlotOptions o;
  o.size = 4;
  PlotImage img = renderPlot(t, o);
  EXPECT_EQ(img.width, 4);
  EXPECT_EQ(img.height, 3);
  EXPECT_EQ(img.pixel(2, 1), (std::array<uint8_t, 3>{0, 0, 0}));
  CooData four;
  four.dims = {2, 2, 2, 2};
  EXPECT_THROW(renderPlot(four, o), UserError);
}

TEST(PlotSvg, WellFormedWithRectsAndLegend) {
  PlotOptions o;
  o.size = 4;
  o.dist = dist(PlotPartition::Blocks2D, 2, 2);
  o.dist.label = "B:xy->xy on 2x2";
  o.name = "B";
  std::string svg = renderSvg(tinyMatrix(), o);
  EXPECT_TRUE(wellFormedXml(svg)) << svg;
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  // background + border + 8 cells + 4 legend swatches
  size_t rects = 0;
  for (size_t p = 0; (p = svg.find("<rect", p)) != std::string::npos; p++) rects++;
  EXPECT_EQ(rects, 2u + 8u + 4u) << svg;
  EXPECT_NE(svg.find("B:xy-&gt;xy on 2x2"), std::string::npos);
  EXPECT_NE(svg.find("rank 3: 2 nnz"), std::string::npos) << svg;
}

TEST(PlotSvg, RectCountIsCapped) {
  CooData c = generateFromSpec("uniform:2000,2000,100", 1);
  PlotOptions o;
  o.size = 2000;
  std::string svg = renderSvg(c, o);
  size_t rects = 0;
  for (size_t p = 0; (p = svg.find("<rect", p)) != std::string::npos; p++) rects++;
  EXPECT_LE(rects, 65536u + 2);
  EXPECT_GT(rects, 1000u);
  EXPECT_TRUE(wellFormedXml(svg));
}

// ---------------------------------------------------------------- the tool

using tessel::testing::Result;
using tessel::testing::runTool;
using tessel::testing::show;
using tessel::testing::slurp;

class PlotTool : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tessel::testing::makeScratchDir("tessel-plot");
    ASSERT_TRUE(fs::exists(TESSEL_TOOL)) << "tool not built: " << TESSEL_TOOL;
    // tinyMatrix() as a file.
    std::ofstream(path("B.mtx")) << "%%MatrixMarket matrix coordinate real general\n4 4 8\n"
                                    "4 4 1\n1 1 1\n1 2 1\n3 3 1\n1 3 1\n1 4 1\n2 2 1\n4 1 1\n";
    std::ofstream(path("T.tns")) << "1 1 1 1.0\n2 3 4 2.0\n";
  }
  void TearDown() override { tessel::testing::removeScratchDir(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  Result run(const std::vector<std::string>& args) { return runTool(dir_, args); }

  fs::path dir_;
};

void expectUsageError(const Result& r, const std::string& mention = "") {
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_EQ(r.err.rfind("tessel: error: ", 0), 0u) << show(r);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << show(r);
  if (!mention.empty()) {
    EXPECT_NE(r.err.find(mention), std::string::npos) << mention << "\n" << show(r);
  }
}

TEST_F(PlotTool, PngWithEachDistribution) {
  struct Case {
    std::string d, m;
    PlotDistribution dist;
  };
  std::vector<Case> cases = {{"B:xy->x", "2", dist(PlotPartition::Rows, 2)},
                             {"B:xy->y", "2", dist(PlotPartition::Columns, 2)},
                             {"B:xy->~x", "2", dist(PlotPartition::RowsByNonzeros, 2)},
                             {"B:(xy)->~f", "3", dist(PlotPartition::FusedNonzeros, 3)},
                             {"B:xy->xy", "2x2", dist(PlotPartition::Blocks2D, 2, 2)}};
  for (const auto& c : cases) {
    Result r = run({"plot", path("B.mtx"), "-o", path("B.png"), "-d", c.d, "-m", c.m, "--size", "4"});
    ASSERT_EQ(r.code, 0) << c.d << "\n" << show(r);
    DecodedPng png;
    ASSERT_TRUE(decodePng(slurp(path("B.png")), png)) << c.d;
    ASSERT_EQ(png.width, 4);
    ASSERT_EQ(png.height, 4);
    auto owners = ownersByCoord(c.dist);
    for (int y = 0; y < 4; y++)
      for (int x = 0; x < 4; x++) {
        auto it = owners.find({y, x});
        auto expect = it == owners.end() ? std::array<uint8_t, 3>{255, 255, 255} : plotRankColour(it->second);
        EXPECT_EQ(png.at(x, y), expect) << c.d << " at row " << y << " col " << x;
      }
    EXPECT_NE(r.out.find("rank 0"), std::string::npos) << show(r);
  }
}

TEST_F(PlotTool, DefaultSizeAndSvg) {
  Result r = run({"plot", path("B.mtx"), "-o", path("B.png")});
  ASSERT_EQ(r.code, 0) << show(r);
  DecodedPng png;
  ASSERT_TRUE(decodePng(slurp(path("B.png")), png));
  EXPECT_EQ(png.width, 512);
  EXPECT_EQ(png.height, 512);
  EXPECT_EQ(png.at(511, 511), (std::array<uint8_t, 3>{0, 0, 0}));       // (3,3)
  EXPECT_EQ(png.at(0, 511), (std::array<uint8_t, 3>{0, 0, 0}));         // (3,0)
  EXPECT_EQ(png.at(511, 200), (std::array<uint8_t, 3>{255, 255, 255}));  // (1,3) empty
  r = run({"plot", path("B.mtx"), "-o", path("B.svg"), "-d", "B:xy->~x", "-m", "2"});
  ASSERT_EQ(r.code, 0) << show(r);
  std::string svg = slurp(path("B.svg"));
  EXPECT_TRUE(wellFormedXml(svg)) << svg;
  EXPECT_NE(svg.find("rank 1: 4 nnz"), std::string::npos) << svg;
}

TEST_F(PlotTool, ThreeTensorIsProjected) {
  Result r = run({"plot", path("T.tns"), "-o", path("T.png"), "--size", "3"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.out.find("projected"), std::string::npos) << show(r);
  DecodedPng png;
  ASSERT_TRUE(decodePng(slurp(path("T.png")), png));
  EXPECT_EQ(png.width, 3);
  EXPECT_EQ(png.height, 2);
  EXPECT_EQ(png.at(2, 1), (std::array<uint8_t, 3>{0, 0, 0}));
}

TEST_F(PlotTool, BadDistributionOrMachineExit2) {
  const std::vector<std::vector<std::string>> bad = {
      {"-d", "B:xy->z", "-m", "4"},      {"-d", "B:xy->x0", "-m", "4"},  {"-d", "B:xyz->x", "-m", "4"},
      {"-d", "B:xy->x", "-m", "0"},      {"-d", "B:xy->x", "-m", "2x"},  {"-d", "B:xy->x", "-m", "axb"},
      {"-d", "B:xy->x", "-m", "-3"},     {"-d", "B:xy->x"},              {"-m", "4"},
      {"-d", "B:xy->xy", "-m", "4"},     {"-d", "B:xy->x", "-m", "2x2"}, {"-d", "xy->x", "-m", "4"},
      {"-d", "B:xy->x", "-m", "100000"}, {"-d", "B:xy->x", "-m", "2x2:threads=8"}};
  for (const auto& extra : bad) {
    std::vector<std::string> args = {"plot", path("B.mtx"), "-o", path("B.png")};
    args.insert(args.end(), extra.begin(), extra.end());
    Result r = run(args);
    std::string joined;
    for (auto& a : extra) joined += a + " ";
    SCOPED_TRACE(joined);
    expectUsageError(r);
    EXPECT_FALSE(fs::exists(path("B.png")));
  }
  expectUsageError(run({"plot", path("B.mtx"), "-o", path("B.png"), "-d", "B:xy->z", "-m", "4"}),
                   "unsupported distribution 'xy->z'");
  expectUsageError(run({"plot", path("B.mtx"), "-o", path("B.jpg")}), ".png or .svg");
  expectUsageError(run({"plot", path("B.mtx"), "-o", path("B.png"), "--size", "0"}), "--size");
  expectUsageError(run({"plot", path("missing.mtx"), "-o", path("B.png")}));
}

TEST_F(PlotTool, GenerateWritesDeterministicFiles) {
  Result r = run({"generate", "uniform", "20,30,3", "-o", path("a.mtx")});
  ASSERT_EQ(r.code, 0) << show(r);
  r = run({"generate", "uniform:20,30,3", "-o", path("b.mtx")});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(slurp(path("a.mtx")), slurp(path("b.mtx")));
  r = run({"generate", "uniform:20,30,3", "-o", path("c.mtx"), "--seed", "9"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_NE(slurp(path("a.mtx")), slurp(path("c.mtx")));
  EXPECT_NE(slurp(path("a.mtx")).find("20 30 60"), std::string::npos) << slurp(path("a.mtx"));
  r = run({"generate", "skewed", "10,12,14,50", "-o", path("s.tns")});
  ASSERT_EQ(r.code, 0) << show(r);
  std::string tns = slurp(path("s.tns"));
  // 50 entries after the dims line the writer records (10 12 14, a hand-checked shape).
  EXPECT_EQ(tns.rfind("# tessel dims: 10 12 14\n", 0), 0u) << tns;
  EXPECT_EQ(std::count(tns.begin(), tns.end(), '\n'), 51) << tns;
  r = run({"generate", "rmat:6,4", "-o", path("g.mtx")});
  ASSERT_EQ(r.code, 0) << show(r);
}

TEST_F(PlotTool, GenerateErrorsExit2) {
  expectUsageError(run({"generate", "uniform", "20,30", "-o", path("a.mtx")}), "uniform:ROWS,COLS,NNZ_PER_ROW");
  expectUsageError(run({"generate", "bogus:1", "-o", path("a.mtx")}), "unknown kind");
  expectUsageError(run({"generate", "dense:2,2,2", "-o", path("a.mtx")}), ".tns");
  expectUsageError(run({"generate", "dense:2,2", "-o", path("a.txt")}), ".mtx");
  expectUsageError(run({"generate", "uniform:2,2,1", "2,2,1", "-o", path("a.mtx")}), "not both");
  expectUsageError(run({"generate", "dense:100000,100000", "-o", path("a.tns")}), "8 GiB");
  expectUsageError(run({"generate", "dense:2,2", "-o", path("nodir/a.tns")}), "does not exist");
  EXPECT_EQ(run({"generate", "dense:2,2"}).code, 2);
  EXPECT_FALSE(fs::exists(path("a.mtx")));
  EXPECT_FALSE(fs::exists(path("a.tns")));
}

}  // namespace
}  // namespace tessel
