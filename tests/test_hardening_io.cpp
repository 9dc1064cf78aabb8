// Issue 26, in the library: complete inputs or an error (gzip streams, non-regular files,
// a .tsb changed while mapped), sizes over the memory limit refused before allocating,
// escaped file bytes in messages, stale output temporaries swept.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "io/file_bytes.h"
#include "io/io_util.h"
#include "support/test_support.h"
#include "tessel/binary_format.h"
#include "tessel/error.h"
#include "tessel/generate.h"
#include "tessel/io.h"
#include "tessel/tensor.h"

namespace fs = std::filesystem;
using namespace tessel;

namespace {

class Hardening : public tessel::testing::ScratchDirTest {};

/// The message of the FileError `f` throws ("" and a test failure if it throws none).
std::string fileErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const FileError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a FileError, got: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected a FileError, nothing thrown";
  return {};
}

/// Runs `f` in a child process; true if it finished (exit 0) within `seconds`. A child
/// that blocks is killed: the test fails instead of hanging.
bool finishesWithin(double seconds, const std::function<void()>& f) {
  pid_t pid = ::fork();
  if (pid == 0) {
    try {
      f();
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(0);
  }
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (std::chrono::steady_clock::now() < end) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return false;
}

// ---- gzip streams ------------------------------------------------------------------------

using tessel::testing::gzipStored;

bool haveZlib(const std::string& anyGz) {
  try {
    readTensorFile(anyGz);
  } catch (const FileError& e) {
    return std::string(e.what()).find("zlib") == std::string::npos;
  }
  return true;
}

TEST_F(Hardening, GzipMustBeCompleteMtxAndTns) {
  std::string mtx = "%%MatrixMarket matrix coordinate real general\n4 4 4\n";
  std::string tns;
  for (int i = 1; i <= 4; i++) {
    mtx += std::to_string(i) + " " + std::to_string(i) + " " + std::to_string(i) + ".5\n";
    tns += std::to_string(i) + " " + std::to_string(i) + " 1 " + std::to_string(i) + ".5\n";
  }
  if (!haveZlib(file("ok.mtx.gz", gzipStored(mtx)))) GTEST_SKIP() << "built without zlib";
  for (const auto& [ext, text] : {std::pair{std::string(".mtx.gz"), mtx}, std::pair{std::string(".tns.gz"), tns}}) {
    SCOPED_TRACE(ext);
    const std::string whole = gzipStored(text);
    EXPECT_EQ(readTensorFile(file("whole" + ext, whole)).data.nnz(), 4);
    // Cut inside the data, on a line boundary: the lines read would parse.
    const size_t lastLine = text.rfind('\n', text.size() - 2) + 1;
    std::string cut = file("cut" + ext, whole.substr(0, 15 + lastLine));
    std::string m = fileErrorOf([&] { readTensorFile(cut); });
    EXPECT_NE(m.find(cut), std::string::npos) << m;
    EXPECT_NE(m.find("truncated"), std::string::npos) << m;
    // All the data, no trailer (CRC and length).
    std::string noTrailer = file("notrailer" + ext, whole.substr(0, whole.size() - 8));
    m = fileErrorOf([&] { readTensorFile(noTrailer); });
    EXPECT_NE(m.find(noTrailer), std::string::npos) << m;
    // Half a trailer, and a wrong CRC.
    EXPECT_FALSE(fileErrorOf([&] { readTensorFile(file("half" + ext, whole.substr(0, whole.size() - 3))); }).empty());
    std::string badCrc = whole;
    badCrc[badCrc.size() - 8] ^= 0x5a;
    m = fileErrorOf([&] { readTensorFile(file("crc" + ext, badCrc)); });
    EXPECT_NE(m.find("crc" + ext), std::string::npos) << m;
  }
}

// ---- non-regular files ------------------------------------------------------------------

TEST_F(Hardening, FifoDeviceAndDirectoryRefusedWithoutBlocking) {
  for (const char* name : {"f.mtx", "f.tns", "f.tsb", "f.mtx.gz"}) {
    ASSERT_EQ(::mkfifo(path(name).c_str(), 0600), 0);
    std::string p = path(name);
    EXPECT_TRUE(finishesWithin(10, [&] {
      std::string m = fileErrorOf([&] { readTensorFile(p); });
      if (m.find("FIFO") == std::string::npos) ::_exit(4);
    })) << name;
  }
  fs::create_symlink("/dev/zero", path("zero.tns"));  // a character device that never ends
  EXPECT_TRUE(finishesWithin(10, [&] {
    std::string m = fileErrorOf([&] { readTensorFile(path("zero.tns")); });
    if (m.find("character device") == std::string::npos) ::_exit(4);
  }));
  fs::create_directory(path("d.tns"));
  fs::create_directory(path("d.tsb"));
  EXPECT_NE(fileErrorOf([&] { readTensorFile(path("d.tns")); }).find("directory"), std::string::npos);
  EXPECT_NE(fileErrorOf([&] { mapBinary(path("d.tsb")); }).find("directory"), std::string::npos);
  EXPECT_NE(fileErrorOf([&] { readBinary(path("d.tsb")); }).find("directory"), std::string::npos);
}

// ---- a .tsb changed while mapped ----------------------------------------------------------

/// A dense vector of n doubles (i + 0.5) written to `p`.
void writeVector(const std::string& p, int64_t n) {
  TensorBase t("v", Datatype::Float64, {n}, Format({LevelKind::Dense}));
  CooData c;
  c.dims = {n};
  for (int64_t i = 0; i < n; i++) {
    c.coords.push_back(i);
    c.values.push_back(static_cast<double>(i) + 0.5);
  }
  t.setFromCoo(c);
  writeBinary(p, t);
}

double sumValues(const TensorBase& t) {
  const double* v = static_cast<const double*>(t.raw().vals);
  double s = 0;
  for (int64_t i = 0; i < t.raw().vals_size; i++) s += v[i];
  return s;
}

TEST_F(Hardening, SmallTsbIsASnapshot) {
  const std::string p = path("small.tsb");
  writeVector(p, 1000);
  TensorBase t = mapBinary(p);
  ASSERT_EQ(::truncate(p.c_str(), 800), 0);
  EXPECT_DOUBLE_EQ(sumValues(t), 1000.0 * 999 / 2 + 500);  // the bytes as validated
  EXPECT_FALSE(fileErrorOf([&] { mapBinary(p); }).empty());  // and the cut file is refused
}

TEST_F(Hardening, LargeTsbTruncatedWhileMappedIsAnErrorNotSigbus) {
  const std::string p = path("large.tsb");
  const int64_t n = io_detail::FileBytes::kCopyBelow / 8 + 100000;
  writeVector(p, n);
  // The file is mapped (too large to copy); cut after validation, then the values are
  // read: one line naming the file and exit status 2, not SIGBUS.
  EXPECT_EXIT(
      {
        TensorBase t = mapBinary(p);
        if (::truncate(p.c_str(), 4096) != 0) std::_Exit(5);
        std::printf("%f\n", sumValues(t));
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(2), "large.tsb: the file was truncated or changed while tessel had it mapped");
  // readBinary of the cut file: a FileError (the header's sizes no longer fit).
  EXPECT_FALSE(fileErrorOf([&] { readBinary(p); }).empty());
}

// ---- sizes over the memory limit ------------------------------------------------------------

class MemoryLimit : public Hardening {
 protected:
  void SetUp() override {
    Hardening::SetUp();
    ::setenv("TESSEL_MAX_MEMORY", "1M", 1);
  }
  void TearDown() override {
    ::unsetenv("TESSEL_MAX_MEMORY");
    Hardening::TearDown();
  }
};

template <typename F>
std::string limitErrorOf(F&& f) {
  try {
    f();
  } catch (const MemoryLimitError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a MemoryLimitError, got: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected a MemoryLimitError, nothing thrown";
  return {};
}

TEST_F(MemoryLimit, DenseLevelsOverTheLimit) {
  for (const char* fmt : {"d", "sd", "dd"}) {
    SCOPED_TRACE(fmt);
    Format f = Format::parse(fmt);
    std::vector<int64_t> dims = f.order() == 1 ? std::vector<int64_t>{int64_t{1} << 28}
                                               : std::vector<int64_t>{4, int64_t{1} << 28};
    CooData c;
    c.dims = dims;
    c.coords.assign(dims.size(), 1);
    c.values = {2.0};
    std::string m = limitErrorOf([&] {  // the constructor allocates an empty tensor already
      TensorBase t("T", Datatype::Float64, dims, f);
      t.setFromCoo(c);
    });
    EXPECT_NE(m.find("TESSEL_MAX_MEMORY"), std::string::npos) << m;
  }
  // A sparse format of the same tensor needs a few bytes: loads.
  TensorBase s("S", Datatype::Float64, {4, int64_t{1} << 28}, Format::parse("ss"));
  s.setFromCoo(CooData{{4, int64_t{1} << 28}, {1, 1}, {2.0}});
  EXPECT_EQ(s.raw().vals_size, 1);
}

TEST_F(MemoryLimit, FileHeadersAndGenerators) {
  // A 78-byte .mtx header declaring 2^31 x 2^31 with 2^31 entries.
  std::string p = file("h.mtx", "%%MatrixMarket matrix coordinate real general\n2147483648 2147483648 2147483648\n");
  EXPECT_NE(fileErrorOf([&] { readMtx(p); }).find("TESSEL_MAX_MEMORY"), std::string::npos);
  for (const char* spec : {"dense:1000000", "uniform:100000,100000,10", "density:1000,1000,0.5",
                           "banded:1000000,4", "rmat:20,16", "skewed:1000,1000,1000,100000"}) {
    SCOPED_TRACE(spec);
    std::string m = limitErrorOf([&] { generateFromSpec(spec, 1); });
    EXPECT_NE(m.find("generator"), std::string::npos) << m;
  }
}

// ---- messages and temporaries ------------------------------------------------------------------

TEST_F(Hardening, FileBytesEscapedInMessages) {
  std::string p = file("esc.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 \x1b[31mred\x01\xff\n");
  std::string m = fileErrorOf([&] { readMtx(p); });
  EXPECT_NE(m.find("\\x1b[31mred\\x01\\xff"), std::string::npos) << m;
  for (char c : m) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == '\x7f') << m;
  // Valid UTF-8 stays readable.
  EXPECT_EQ(escapeBytes("\xc3\xa9t\xc3\xa9\n"), "\xc3\xa9t\xc3\xa9\\x0a");
  EXPECT_EQ(escapeBytes("\xc3(\xed\xa0\x80"), "\\xc3(\\xed\\xa0\\x80");  // bad lead, surrogate
}

TEST_F(Hardening, StaleTemporariesSwept) {
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  const std::string marker = io_detail::kTempMarker;
  auto temp = [&](long pid, const char* tail) { return ".out.tns" + marker + std::to_string(pid) + tail; };
  const std::string oldDead = temp(dead, ".0.0000abcd"), newDead = temp(dead, ".1.0000abcd"),
                    oldLive = temp(1, ".0.0000abcd"), other = ".notes.tmp.1.txt";
  for (const auto& n : {oldDead, newDead, oldLive, other}) file(n, "partial");
  const auto hourAgo = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (const auto& n : {oldDead, oldLive, other}) fs::last_write_time(path(n), hourAgo);
  writeTensorFile(path("out.tns"), CooData{{2}, {1}, {3.0}});
  EXPECT_FALSE(fs::exists(path(oldDead)));  // dead writer, old: swept
  EXPECT_TRUE(fs::exists(path(newDead)));   // too recent to be sure
  EXPECT_TRUE(fs::exists(path(oldLive)));   // its process (init) lives
  EXPECT_TRUE(fs::exists(path(other)));     // not tessel's
  EXPECT_TRUE(fs::exists(path("out.tns")));
}

}  // namespace
