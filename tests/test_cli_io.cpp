// End-to-end tests of `tessel convert` and `tessel info`: runs the built binary with an
// argument vector (support/tool_runner.h: fork/execv, no shell).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_support.h"

#include "support/tool_runner.h"
#include <nlohmann/json.hpp>

#include "tessel/tessel.h"

namespace fs = std::filesystem;

using namespace tessel::testing;

namespace {

Entries entriesOf(const tessel::CooData& c) {
  Entries e;
  for (int64_t i = 0; i < c.nnz(); i++) {
    std::vector<int64_t> k(c.coords.begin() + i * c.order(), c.coords.begin() + (i + 1) * c.order());
    e[k] += c.values[i];
  }
  return e;
}

class CliIo : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tessel::testing::makeScratchDir("tessel-cli-io");
    ASSERT_TRUE(fs::exists(TESSEL_TOOL)) << "tool not built: " << TESSEL_TOOL;
    // B is 3x4:  [1 0 2 0; 0 3 0 0; 4 0 0 5]
    write("B.mtx",
          "%%MatrixMarket matrix coordinate real general\n"
          "3 4 5\n"
          "1 1 1.0\n1 3 2.0\n2 2 3.0\n3 1 4.0\n3 4 5.25\n");
    write("T.tns", "1 1 1 1.5\n1 2 3 2\n2 2 2 -3\n2 2 3 4\n");
  }
  void TearDown() override { tessel::testing::removeScratchDir(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(path(name), std::ios::binary) << text;
  }

  Result run(const std::vector<std::string>& args) { return runTool(dir_, args); }

  /// Exit 2, nothing on stdout, exactly one "tessel: error: ..." line naming `name`.
  void expectBadInput(const std::vector<std::string>& args, const std::string& name) {
    Result r = run(args);
    EXPECT_EQ(r.code, 2) << show(r);
    EXPECT_EQ(r.out, "") << show(r);
    EXPECT_EQ(r.err.rfind("tessel: error: ", 0), 0u) << show(r);
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "not one line: " << r.err;
    EXPECT_NE(r.err.find(name), std::string::npos) << show(r);
  }

  fs::path dir_;
};

}  // namespace

TEST_F(CliIo, MtxToTsbToTnsRoundTrip) {
  Result r = run({"convert", path("B.mtx"), path("B.tsb")});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(r.out + r.err, "");
  tessel::TensorBase b = tessel::readBinary(path("B.tsb"));
  EXPECT_EQ(b.format(), tessel::CSR());
  r = run({"convert", path("B.tsb"), path("B.tns")});
  ASSERT_EQ(r.code, 0) << show(r);
  r = run({"convert", path("B.tns"), path("B2.mtx")});
  ASSERT_EQ(r.code, 0) << show(r);
  auto orig = entriesOf(tessel::readTensorFile(path("B.mtx")).data);
  EXPECT_EQ(entriesOf(tessel::readTensorFile(path("B.tns")).data), orig);
  EXPECT_EQ(entriesOf(tessel::readTensorFile(path("B2.mtx")).data), orig);
  EXPECT_EQ(orig.size(), 5u);
  // Order 3: default d s s; .tns -> .tsb -> .tns.
  r = run({"convert", path("T.tns"), path("T.tsb")});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(tessel::readBinary(path("T.tsb")).format().str(), "dss");
  r = run({"convert", path("T.tsb"), path("T2.tns")});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(entriesOf(tessel::readTensorFile(path("T2.tns")).data),
            entriesOf(tessel::readTensorFile(path("T.tns")).data));
}

TEST_F(CliIo, FormatOptionIsStored) {
  Result r = run({"convert", path("B.mtx"), path("C.tsb"), "-f", "ds:1,0"});
  ASSERT_EQ(r.code, 0) << show(r);
  tessel::TensorBase c = tessel::readBinary(path("C.tsb"));
  EXPECT_EQ(c.format(), tessel::CSC());
  EXPECT_EQ(c.format().str(), "ds:1,0");
  EXPECT_EQ(entriesOf(c.toCoo()), entriesOf(tessel::readTensorFile(path("B.mtx")).data));
  // .tsb -> .tsb keeps the stored format, or converts with -f.
  r = run({"convert", path("C.tsb"), path("D.tsb")});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(tessel::readBinary(path("D.tsb")).format(), tessel::CSC());
  r = run({"convert", path("C.tsb"), path("E.tsb"), "-f", "ss"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(tessel::readBinary(path("E.tsb")).format(), tessel::DCSR());
  // info reports the stored format.
  r = run({"info", path("C.tsb")});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.out.find("ds:1,0"), std::string::npos) << r.out;
}

TEST_F(CliIo, InfoOnSharedMatrix) {
  fs::path m = fs::path(TESSEL_DATA_DIR) / "matrices" / "bcsstk01.mtx";
  if (!fs::exists(m)) GTEST_SKIP() << "shared data missing: " << m;
  Result r = run({"info", m.string()});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.out.find("48 x 48"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("400"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CSR"), std::string::npos) << r.out;
  r = run({"info", m.string(), "--json"});
  ASSERT_EQ(r.code, 0) << show(r);
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["order"], 2);
  EXPECT_EQ(j["dims"], nlohmann::json::array({48, 48}));
  EXPECT_EQ(j["nnz"], 400);
  EXPECT_EQ(j["rows"]["count"], 48);
  EXPECT_EQ(j["rows"]["empty"], 0);
  EXPECT_NEAR(j["rows"]["mean"].get<double>(), 400.0 / 48, 1e-12);
  // CSR with 32-bit indices: 49 pos + 400 crd (4 bytes) + 400 values (8 bytes).
  EXPECT_EQ(j["bytes"]["CSR"], 49 * 4 + 400 * 4 + 400 * 8);
  EXPECT_EQ(j["bytes"]["dense"], 48 * 48 * 8);
  EXPECT_EQ(j["bytes"]["bitmap (bb)"], 48 * 48 * 9);  // a value and a flag byte per cell
  EXPECT_EQ(j["bytes"]["COO"], 2 * 4 + 400 * 2 * 4 + 400 * 8);
}

TEST_F(CliIo, BitmapFormatIsRefusedForTsbWithTypedError) {
  Result r = run({"convert", path("B.mtx"), path("X.tsb"), "-f", "db"});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("bitmap levels cannot be written to .tsb yet"), std::string::npos) << show(r);
  EXPECT_FALSE(fs::exists(path("X.tsb")));
}

TEST_F(CliIo, InfoJsonOnSmallFiles) {
  Result r = run({"info", path("B.mtx"), "--json"});
  ASSERT_EQ(r.code, 0) << show(r);
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["nnz"], 5);
  EXPECT_EQ(j["rows"]["min"], 1);
  EXPECT_EQ(j["rows"]["max"], 2);
  EXPECT_EQ(j["columns"]["empty"], 0);
  EXPECT_EQ(j["columns"]["count"], 4);
  // DCSR: pos 2 + crd 3 (non-empty rows), pos 4 + crd 5, vals 5 doubles.
  EXPECT_EQ(j["bytes"]["DCSR"], 2 * 4 + 3 * 4 + 4 * 4 + 5 * 4 + 5 * 8);
  r = run({"info", path("T.tns"), "--json"});
  ASSERT_EQ(r.code, 0) << show(r);
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["order"], 3);
  EXPECT_EQ(j["nnz"], 4);
  EXPECT_EQ(j["fibers"]["count"], 3);  // (0,0) (0,1) (1,1)
  EXPECT_EQ(j["fibers"]["max"], 2);
  EXPECT_EQ(j["nonempty_slices"], nlohmann::json::array({2, 2, 3}));
}

TEST_F(CliIo, BadInputsExit2WithOneLine) {
  write("bad.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n9 9 1.0\n");
  write("garbage.tsb", "not a binary tensor file at all");
  // A valid .tsb with one payload byte flipped.
  ASSERT_EQ(run({"convert", path("B.mtx"), path("ok.tsb")}).code, 0);
  std::string bytes = slurp(path("ok.tsb"));
  bytes[bytes.size() - 100] ^= 0x40;
  write("flipped.tsb", bytes);
  write("short.tsb", slurp(path("ok.tsb")).substr(0, 800));

  expectBadInput({"convert", path("missing.mtx"), path("x.tsb")}, path("missing.mtx"));
  expectBadInput({"convert", path("bad.mtx"), path("x.tsb")}, path("bad.mtx"));
  expectBadInput({"convert", path("garbage.tsb"), path("x.tns")}, path("garbage.tsb"));
  expectBadInput({"convert", path("flipped.tsb"), path("x.tns")}, path("flipped.tsb"));
  expectBadInput({"convert", path("short.tsb"), path("x.tns")}, path("short.tsb"));
  expectBadInput({"convert", path("B.mtx"), path("x.txt")}, path("x.txt"));
  expectBadInput({"convert", path("B.mtx"), path("x.tns"), "-f", "ds"}, "-f only applies to .tsb");
  expectBadInput({"convert", path("B.mtx"), path("x.tsb"), "-f", "dss"}, path("B.mtx"));
  expectBadInput({"convert", path("B.mtx"), path("x.tsb"), "-f", "zz"}, "zz");
  expectBadInput({"convert", path("T.tns"), path("x.mtx")}, path("x.mtx"));
  expectBadInput({"convert", path("B.mtx"), path("nodir/x.tsb")}, path("nodir/x.tsb"));
  expectBadInput({"info", path("missing.tns")}, path("missing.tns"));
  expectBadInput({"info", path("bad.mtx")}, path("bad.mtx"));
  expectBadInput({"info", path("flipped.tsb"), "--json"}, path("flipped.tsb"));
  expectBadInput({"info", path("garbage.tsb")}, path("garbage.tsb"));
  for (const char* f : {"x.tsb", "x.tns", "x.mtx", "nodir"}) EXPECT_FALSE(fs::exists(path(f))) << f;
}

TEST_F(CliIo, Help) {
  Result r = run({"convert", "--help"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.out.find("tessel convert B.mtx B.tsb -f ds:1,0"), std::string::npos) << r.out;
  r = run({"info", "--help"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.out.find("--json"), std::string::npos) << r.out;
}
