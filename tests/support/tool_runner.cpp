// Running the built `tessel` tool in tests.
#include "support/tool_runner.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace tessel::testing {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Entries of a .tns (1-based, '#' comments) or .mtx (coordinate) file, 0-based.
Entries readEntries(const fs::path& p) {
  Entries e;
  std::ifstream in(p);
  std::string line;
  bool mtx = p.extension() == ".mtx", sizeLineSeen = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line[0] == '%') continue;
    if (mtx && !sizeLineSeen) {
      sizeLineSeen = true;
      continue;
    }
    std::istringstream ls(line);
    std::vector<double> nums;
    double x;
    while (ls >> x) nums.push_back(x);
    if (nums.empty()) continue;
    std::vector<int64_t> c;
    for (size_t k = 0; k + 1 < nums.size(); k++) c.push_back(static_cast<int64_t>(nums[k]) - 1);
    e[c] += nums.back();
  }
  return e;
}

/// Compare as dense functions (missing = 0).
::testing::AssertionResult sameEntries(const Entries& expected, const Entries& actual) {
  auto get = [](const Entries& m, const std::vector<int64_t>& c) {
    auto it = m.find(c);
    return it == m.end() ? 0.0 : it->second;
  };
  std::vector<std::vector<int64_t>> keys;
  for (const auto& [c, v] : expected) keys.push_back(c);
  for (const auto& [c, v] : actual) keys.push_back(c);
  for (const auto& c : keys) {
    double x = get(expected, c), y = get(actual, c);
    if (std::fabs(x - y) > 1e-12 * (1 + std::fabs(x))) {
      std::string s = "at (";
      for (size_t k = 0; k < c.size(); k++) s += (k ? "," : "") + std::to_string(c[k]);
      return ::testing::AssertionFailure()
             << s << "): expected " << x << ", got " << y;
    }
  }
  return ::testing::AssertionSuccess();
}

Result runTool(const fs::path& scratchDir, const std::vector<std::string>& args) {
  fs::path outFile = scratchDir / ".stdout", errFile = scratchDir / ".stderr";
  std::vector<char*> argv;
  std::string tool = TESSEL_TOOL;
  argv.push_back(tool.data());
  std::vector<std::string> copy = args;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    int o = open(outFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = open(errFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0) _exit(126);
    close(o);
    close(e);
    execv(argv[0], argv.data());
    _exit(127);
  }
  Result r;
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(outFile);
  r.err = slurp(errFile);
  fs::remove(outFile);
  fs::remove(errFile);
  return r;
}

std::string show(const Result& r) {
  return "exit " + std::to_string(r.code) + "\n--- stdout:\n" + r.out + "--- stderr:\n" + r.err;
}

/// Exit 2 with exactly one line "tessel: error: ..." on stderr.
void expectUserError(const Result& r, const std::vector<std::string>& mentions) {
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_EQ(r.err.rfind("tessel: error: ", 0), 0u) << show(r);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << show(r);
  EXPECT_FALSE(r.err.empty() || r.err.back() != '\n') << show(r);
  for (const auto& m : mentions) EXPECT_NE(r.err.find(m), std::string::npos) << m << "\n" << show(r);
}

}  // namespace tessel::testing
