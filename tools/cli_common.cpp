// Shared plumbing of the tool's subcommands.
#include "cli_common.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <new>
#include <system_error>
#include <thread>

namespace tessel::cli {

/// Split "NAME:REST" at the first ':'; both parts must be non-empty.
std::pair<std::string, std::string> splitNamed(const std::string& arg, const char* option,
                                               const char* what) {
  auto colon = arg.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == arg.size())
    throw UsageError(std::string("malformed ") + option + " argument '" + arg + "': expected NAME:" +
                     what);
  return {arg.substr(0, colon), arg.substr(colon + 1)};
}

/// Turn any message into one line, other unprintable bytes escaped (\xNN): a message
/// may quote an input file or argument, which must not reach the terminal raw.
std::string oneLine(const std::string& s) {
  std::string out;
  for (char c : s) out += (c == '\n' || c == '\r') ? ' ' : c;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return escapeBytes(out);
}

/// One-line message for a UserError. A ParseError's message may carry the source text
/// and a caret line; keep only its first line and make sure the column is on it.
std::string userMessage(const UserError& e) {
  if (auto* pe = dynamic_cast<const ParseError*>(&e)) {
    std::string msg = e.what();
    auto nl = msg.find('\n');
    if (nl != std::string::npos) msg = msg.substr(0, nl);
    while (!msg.empty() && msg.back() == ' ') msg.pop_back();
    if (msg.find("column") == std::string::npos)
      msg += " at column " + std::to_string(pe->column());
    return oneLine(msg);
  }
  return oneLine(e.what());
}

/// Default format: inputs dense in the first level and compressed below; outputs dense.
Format defaultFormat(int order, bool isOutput) {
  if (isOutput) return DenseFormat(order);
  if (order == 0) return DenseFormat(0);
  return Format::parse("d" + std::string(static_cast<size_t>(order - 1), 's'));
}

bool hasExtension(const std::string& path, const std::string& ext) {
  return std::filesystem::path(path).extension() == ext;
}

std::string textExtension(const std::string& path) {
  std::filesystem::path p(path);
  if (p.extension() == ".gz") p = p.stem();
  return p.extension().string();
}

int defaultThreads() {
  const char* env = std::getenv("OMP_NUM_THREADS");
  if (!env || !*env) return 1;
  // OMP_NUM_THREADS may be a list ("4,2" for nested levels): the first entry counts.
  char* end = nullptr;
  long n = std::strtol(env, &end, 10);
  if (end == env || n < 1 || (*end != '\0' && *end != ',')) {
    std::fprintf(stderr, "tessel: warning: ignoring OMP_NUM_THREADS='%s' (not a positive number); using 1 thread\n",
                 oneLine(env).c_str());
    return 1;
  }
  return static_cast<int>(std::min<long>(n, 4096));
}

void warnAboutThreads(const std::string& schedule, int threads) {
  if (threads == 1 && schedule.find("parallelize") != std::string::npos)
    std::fprintf(stderr, "tessel: warning: the schedule parallelizes a loop, but it runs on 1 thread "
                         "(give --threads N or set OMP_NUM_THREADS)\n");
  const unsigned cores = std::thread::hardware_concurrency();
  if (cores > 0 && static_cast<unsigned>(threads) > cores)
    std::fprintf(stderr, "tessel: warning: %d threads on %u cores: threads will share cores\n", threads, cores);
}

/// Saturating product of the dims (an upper bound on a result's non-zeros).
int64_t dimsProduct(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) {
    if (d <= 0) return 0;
    if (p > std::numeric_limits<int64_t>::max() / d) return std::numeric_limits<int64_t>::max();
    p *= d;
  }
  return p;
}

double millis(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

int runGuarded(const std::function<int()>& action) {
  // Exit codes: 2 the input or usage was wrong, 3 the environment failed (out of memory,
  // no compiler, unusable cache, no threads), 4 --check found a mismatch, 1 a bug. A message is always one line.
  try {
    return action();
  } catch (const UsageError& e) {
    std::fprintf(stderr, "tessel: error: %s\n", oneLine(e.what()).c_str());
    return 2;
  } catch (const CheckMismatch& e) {
    std::fprintf(stderr, "tessel: check failed: %s\n", oneLine(e.what()).c_str());
    return kCheckMismatchExit;
  } catch (const UserError& e) {
    std::fprintf(stderr, "tessel: error: %s\n", userMessage(e).c_str());
    return 2;
  } catch (const OutOfMemoryError& e) {
    std::fprintf(stderr, "tessel: out of memory: %s\n", oneLine(e.what()).c_str());
    return 3;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "tessel: out of memory (set TESSEL_MAX_MEMORY lower to be told "
                         "before allocating)\n");
    return 3;
  } catch (const EnvironmentError& e) {
    std::fprintf(stderr, "tessel: environment error: %s\n", oneLine(e.what()).c_str());
    return 3;
  } catch (const std::system_error& e) {
    // Threads or processes refused, a file system call failing: the system, not tessel.
    std::fprintf(stderr, "tessel: environment error: %s\n", oneLine(e.what()).c_str());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessel: internal error: %s\n", oneLine(e.what()).c_str());
    return 1;
  }
}

int finishStdout(int rc) {
  // A full disk or a closed pipe must not pass for success: what was printed (a scalar,
  // emitted C, info) is the result. Flush both streams and check them once, at the end.
  errno = 0;
  std::cout.flush();
  bool failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (!failed) return rc;
  int err = errno;
  std::fprintf(stderr, "tessel: error: writing to standard output failed%s%s\n", err ? ": " : "",
               err ? std::strerror(err) : "");
  return rc == 0 ? 1 : rc;
}

std::string showDims(const std::vector<int64_t>& d) {
  std::string s;
  for (int64_t x : d) s += (s.empty() ? "" : "x") + std::to_string(x);
  return s;
}

void applyDims(CooData& coo, const std::string& name, const std::vector<int64_t>& dims, const std::string& origin) {
  const int order = coo.order();
  for (int64_t e = 0; e < coo.nnz(); e++)
    for (int m = 0; m < order; m++)
      if (coo.coords[static_cast<size_t>(e * order + m)] >= dims[static_cast<size_t>(m)])
        throw DimensionError("--dims " + name + ":" + showDims(dims) + " is too small: " + origin + " has index " +
                             std::to_string(coo.coords[static_cast<size_t>(e * order + m)] + 1) + " in mode " +
                             std::to_string(m));
  coo.dims = dims;
}

}  // namespace tessel::cli
