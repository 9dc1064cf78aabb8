// Issue 26, through the tool: exit codes by error class (2 input, 3 environment), sizes
// over the memory limit, inputs that are not regular files, escaped bytes, and a kill
// while writing an output (no temporary left behind).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "support/test_support.h"
#include "support/tool_runner.h"

namespace fs = std::filesystem;
using namespace tessel::testing;

namespace {

struct Options {
  std::map<std::string, std::string> env;  // set in the child ("" unsets)
  rlim_t addressSpace = 0;                 // RLIMIT_AS in the child, when non-zero
  double timeoutSeconds = 120;             // then SIGKILL: a test fails, never hangs
};

class HardeningCli : public tessel::testing::ScratchDirTest {
 protected:
  pid_t spawn(const std::vector<std::string>& args, const Options& o) {
    std::vector<std::string> copy = args;
    std::string tool = TESSEL_TOOL;
    std::vector<char*> argv{tool.data()};
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string out = path(".stdout"), err = path(".stderr");
    pid_t pid = ::fork();
    if (pid == 0) {
      int fo = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      int fe = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(fo, 1);
      ::dup2(fe, 2);
      for (const auto& [k, v] : o.env) v.empty() ? ::unsetenv(k.c_str()) : ::setenv(k.c_str(), v.c_str(), 1);
      if (o.addressSpace) {
        struct rlimit rl {o.addressSpace, o.addressSpace};
        ::setrlimit(RLIMIT_AS, &rl);
      }
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    return pid;
  }

  /// Waits for `pid` at most o.timeoutSeconds; status as waitpid gives it (-1: killed
  /// for taking too long).
  int wait(pid_t pid, const Options& o) {
    auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(o.timeoutSeconds);
    int status = 0;
    while (std::chrono::steady_clock::now() < end) {
      if (::waitpid(pid, &status, WNOHANG) == pid) return status;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return -1;
  }

  Result run(const std::vector<std::string>& args, const Options& o = {}) {
    int status = wait(spawn(args, o), o);
    Result r;
    r.code = status == -1 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(path(".stdout"));
    r.err = slurp(path(".stderr"));
    return r;
  }
};

/// Exactly one line on stderr, starting with `prefix`, mentioning each string.
void expectOneLine(const Result& r, int code, const std::string& prefix, const std::vector<std::string>& mentions) {
  EXPECT_EQ(r.code, code) << show(r);
  EXPECT_EQ(r.err.rfind(prefix, 0), 0u) << show(r);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << show(r);
  for (const auto& m : mentions) EXPECT_NE(r.err.find(m), std::string::npos) << m << "\n" << show(r);
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << show(r);
}

const Options kSmallLimit{{{"TESSEL_MAX_MEMORY", "64M"}}};

TEST_F(HardeningCli, HugeMtxHeaderRefusedBeforeAllocating) {
  // 78 bytes: 2^28 (and 2^31) rows declared, one entry.
  for (const char* rows : {"268435456", "2147483648"}) {
    SCOPED_TRACE(rows);
    std::string a = file("A.mtx", std::string("%%MatrixMarket matrix coordinate real general\n") + rows +
                                      " 4 1\n1 1 1.0\n");
    // Default (ds: a dense root level), CSC-like sd, and a dense output under DCSR input.
    for (const char* fmt : {"ds", "sd", "ss"}) {
      SCOPED_TRACE(fmt);
      Result r = run({"run", "y(i) = A(i,j) * x(j)", "-i", "A:" + a, "-f", std::string("A:") + fmt,
                      "-g", "x:dense:4", "-o", "y:" + path("y.tns")},
                     kSmallLimit);
      expectOneLine(r, 2, "tessel: error: ", {"memory limit", "TESSEL_MAX_MEMORY"});
      EXPECT_FALSE(fs::exists(path("y.tns")));
    }
  }
  // Without TESSEL_MAX_MEMORY the default limit (a fraction of memory) refuses 2^31 x 2^31 dense.
  std::string a = file("A.mtx", "%%MatrixMarket matrix coordinate real general\n2147483648 2147483648 1\n1 1 1.0\n");
  Result r = run({"run", "y(i) = A(i,j) * x(j)", "-i", "A:" + a, "-f", "A:dd", "-g", "x:dense:4"},
                 Options{{{"TESSEL_MAX_MEMORY", ""}}});
  EXPECT_EQ(r.code, 2) << show(r);
}

TEST_F(HardeningCli, GeneratorSizesOverTheLimit) {
  expectOneLine(run({"generate", "dense:100000", "-o", path("x.tns")}, Options{{{"TESSEL_MAX_MEMORY", "100K"}}}),
                2, "tessel: error: ", {"memory limit"});
  expectOneLine(run({"run", "y(i) = x(i)", "-g", "x:dense:100000", "-o", "y:" + path("y.tns")},
                    Options{{{"TESSEL_MAX_MEMORY", "100K"}}}),
                2, "tessel: error: ", {"memory limit"});
  EXPECT_FALSE(fs::exists(path("x.tns")));
}

TEST_F(HardeningCli, KernelWorkspacesUnderTheLimit) {
  // CSR x CSR -> CSR keeps a dense row workspace as wide as C: 10^8 columns of 8 bytes
  // under a 64 MB limit. The kernel asks tessel_alloc, which refuses it (exit 2, the size).
  Result r = run({"run", "A(i,j) = B(i,k) * C(k,j)", "-f", "A:ds", "-f", "B:ds", "-f", "C:ds", "-g",
                  "B:uniform:50,50,2", "-g", "C:uniform:50,100000000,2", "-o", "A:" + path("A.tns")},
                 kSmallLimit);
  expectOneLine(r, 2, "tessel: error: ", {"workspace or temporary", "memory limit"});
  EXPECT_FALSE(fs::exists(path("A.tns")));
  // Under the limit the same kernel runs.
  Result ok = run({"run", "A(i,j) = B(i,k) * C(k,j)", "-f", "A:ds", "-f", "B:ds", "-f", "C:ds", "-g",
                   "B:uniform:50,50,2", "-g", "C:uniform:50,100000,2", "-o", "A:" + path("A.tns")},
                  kSmallLimit);
  EXPECT_EQ(ok.code, 0) << show(ok);
}

TEST_F(HardeningCli, OutOfMemoryIsExit3NotInternalError) {
  // The limit lifted, the address space capped: the allocation itself fails.
#ifdef __SANITIZE_ADDRESS__
  GTEST_SKIP() << "ASan reserves terabytes of address space: RLIMIT_AS cannot apply";
#endif
  Options o{{{"TESSEL_MAX_MEMORY", "1T"}}, rlim_t{768} << 20};
  Result r = run({"generate", "dense:15000,15000", "-o", path("x.tns")}, o);
  expectOneLine(r, 3, "tessel: out of memory", {});
}

TEST_F(HardeningCli, EnvironmentErrorsAreExit3) {
  Result r = run({"run", "y(i) = x(i)", "-g", "x:dense:4"}, Options{{{"TESSEL_CC", "/nonexistent/cc"},
                                                                     {"TESSEL_CACHE_DIR", path("cache")}}});
  expectOneLine(r, 3, "tessel: environment error: ", {"/nonexistent/cc"});
  file("notadir", "x");
  r = run({"run", "y(i) = x(i)", "-g", "x:dense:4"}, Options{{{"TESSEL_CACHE_DIR", path("notadir")}}});
  expectOneLine(r, 3, "tessel: environment error: ", {"notadir"});
}

TEST_F(HardeningCli, FifoAndDirectoryInputsDoNotHang) {
  ASSERT_EQ(::mkfifo(path("p.mtx").c_str(), 0600), 0);
  fs::create_directory(path("d.tns"));
  Options o;
  o.timeoutSeconds = 20;
  expectOneLine(run({"info", path("p.mtx")}, o), 2, "tessel: error: ", {"p.mtx", "FIFO"});
  expectOneLine(run({"run", "y(i) = A(i,j) * x(j)", "-i", "A:" + path("p.mtx"), "-g", "x:dense:4"}, o), 2,
                "tessel: error: ", {"FIFO"});
  expectOneLine(run({"convert", path("d.tns"), path("o.mtx")}, o), 2, "tessel: error: ", {"d.tns", "directory"});
}

TEST_F(HardeningCli, InputBytesEscaped) {
  std::string a = file("A.tns", "1 1 2.0\n1 2 \x1b]0;pwned\x07\n");
  Result r = run({"info", a});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_NE(r.err.find("\\x1b]0;pwned\\x07"), std::string::npos) << show(r);
  for (size_t i = 0; i + 1 < r.err.size(); i++)
    EXPECT_FALSE(static_cast<unsigned char>(r.err[i]) < 0x20) << show(r);
}

TEST_F(HardeningCli, KilledWhileWritingLeavesNoTemporary) {
  const std::string out = path("big.tns");
  // Compile first (outside the timed part): the kernel is then a cache hit.
  ASSERT_EQ(run({"run", "A(i,j) = B(i,j)", "-g", "B:dense:4,4", "-o", "A:" + out}).code, 0);
  fs::remove(out);
  for (int sig : {SIGTERM, SIGINT}) {
    SCOPED_TRACE(sig);
    // About 5M entries (~150 MB of text): the signal arrives once the temporary exists.
    Options o;
    pid_t pid = spawn({"run", "A(i,j) = B(i,j)", "-g", "B:dense:2300,2300", "-o", "A:" + out}, o);
    bool sent = false;
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!sent && std::chrono::steady_clock::now() < end) {
      for (const auto& e : fs::directory_iterator(dir_))
        if (e.path().filename().string().rfind(".big.tns.tessel-tmp.", 0) == 0) {
          ::kill(pid, sig);
          sent = true;
          break;
        }
      int status;
      if (!sent && ::waitpid(pid, &status, WNOHANG) == pid) break;  // finished too fast
      std::this_thread::yield();
    }
    ASSERT_TRUE(sent) << "the run ended before its temporary was seen";
    int status = wait(pid, o);
    ASSERT_TRUE(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0)) << status;
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.path().filename().string().find("tessel-tmp") != std::string::npos) left.push_back(e.path());
    EXPECT_TRUE(left.empty()) << left.front();
    if (WIFSIGNALED(status)) {
      EXPECT_EQ(WTERMSIG(status), sig);
      EXPECT_FALSE(fs::exists(out));  // the previous output is never half-replaced
    }
    fs::remove(out);
  }
}

}  // namespace
