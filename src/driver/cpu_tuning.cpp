// The host CPU's tuning (tessel/tuning.h): settings, the cache file, and the calibration
// that measures a generated SpMV with and without the gather helpers.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>

#include "runtime/sha256.h"
#include "tessel/error.h"
#include "tessel/jit.h"
#include "tessel/kernel.h"
#include "tessel/tensor.h"
#include "tessel/tuning.h"

namespace tessel {

namespace {

constexpr const char* kCacheVersion = "tessel-tuning-v2";  // v2: pairs

std::string modelName() {
  const std::string& id = jitHostCpuIdentity();
  size_t at = id.find("model name");
  if (at == std::string::npos) return "unknown CPU";
  size_t colon = id.find(':', at), end = id.find('\n', at);
  if (colon == std::string::npos || colon > end) return "unknown CPU";
  std::string m = id.substr(colon + 1, end - colon - 1);
  m.erase(0, m.find_first_not_of(' '));
  return m;
}

bool parseSwitch(const std::string& key, const std::string& v) {
  if (v == "on" || v == "1" || v == "true") return true;
  if (v == "off" || v == "0" || v == "false") return false;
  throw EnvironmentError("TESSEL_TUNING: " + key + " must be on or off, not '" + v + "'");
}

/// Reads settings into t (EnvironmentError naming the bad one).
void applySettings(CpuTuning& t, const std::string& settings) {
  std::stringstream in(settings);
  std::string item;
  while (std::getline(in, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      throw EnvironmentError("TESSEL_TUNING: '" + item +
                             "' is not a setting (isa=..., gathers=on|off, pairs=on|off, short-gathers=on|off, "
                             "gather-mean=N; "
                             "or one word: calibrate, default)");
    std::string key = item.substr(0, eq), v = item.substr(eq + 1);
    if (key == "isa") {
      bool ok = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
      });
      if (!ok) throw EnvironmentError("TESSEL_TUNING: isa must be native, generic or a -march value, not '" + v + "'");
      t.isa = v;
    } else if (key == "gathers") {
      t.gathers = parseSwitch(key, v);
    } else if (key == "pairs") {
      t.pairs = parseSwitch(key, v);
    } else if (key == "short-gathers") {
      t.shortGathers = parseSwitch(key, v);
    } else if (key == "gather-mean") {
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n < 1 || n > 100000)
        throw EnvironmentError("TESSEL_TUNING: gather-mean must be a whole number from 1 to 100000, not '" + v + "'");
      t.gatherMean = static_cast<int>(n);
    } else {
      throw EnvironmentError("TESSEL_TUNING: unknown setting '" + key +
                             "' (known: isa, gathers, pairs, short-gathers, gather-mean)");
    }
  }
}

std::string hexKey(const std::string& text) {
  detail::Sha256 h;
  h.update(text.data(), text.size());
  return h.hexDigest().substr(0, 16);
}

/// Holds an exclusive lock on a file for its lifetime (one process calibrates; MPI ranks
/// started together wait for it and read its result).
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)) {
    if (fd_ >= 0)
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

/// The cached tuning at `path`, if it is there and whole.
bool readCache(const std::string& path, CpuTuning& t) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line, settings, calibration;
  bool version = false;
  while (std::getline(in, line)) {
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = line.substr(0, eq), v = line.substr(eq + 1);
    if (key == "version") version = v == kCacheVersion;
    if (key == "settings") settings = v;
    if (key == "evidence") t.evidence = v;
    if (key == "calibration") calibration = v;
  }
  if (!version || settings.empty()) return false;
  try {
    applySettings(t, settings);
  } catch (const EnvironmentError&) {
    return false;  // written by another version: calibrate again
  }
  t.origin = "cached in " + path + (calibration.empty() ? "" : ", " + calibration);
  return true;
}

void writeCache(const std::string& path, const CpuTuning& t) {
  std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "version=" << kCacheVersion << "\ncpu=" << t.cpu << "\nsettings=" << t.settings()
        << "\nevidence=" << t.evidence << "\ncalibration=" << t.origin << "\n";
    if (!out) return;  // an unwritable cache only costs a calibration next time
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) std::remove(tmp.c_str());
}

// ---- calibration ----

/// A CSR matrix of `rows` rows whose lengths are uniform in [lo, hi] (irregular, where
/// gathers and the scalar loop's branchy exits differ), columns distinct within a row:
/// near the diagonal (within `band`, as a mesh's matrix) or anywhere (band 0, a graph's).
Tensor<double> syntheticRows(int64_t rows, int64_t cols, int lo, int hi, int64_t band, uint32_t seed) {
  Tensor<double> B("B", {rows, cols}, Format::parse("ds"));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> len(lo, hi);
  std::uniform_int_distribution<int64_t> any(0, cols - 1), near(-band, band);
  std::uniform_real_distribution<double> val(0.5, 1.5);
  std::vector<int64_t> js;
  for (int64_t i = 0; i < rows; i++) {
    js.clear();
    const int64_t centre = i * cols / rows;
    const int n = len(rng);
    while (static_cast<int>(js.size()) < n) {
      int64_t j = band > 0 ? std::clamp<int64_t>(centre + near(rng), 0, cols - 1) : any(rng);
      if (std::find(js.begin(), js.end(), j) == js.end()) js.push_back(j);
    }
    for (int64_t j : js) B.insert({i, j}, val(rng));
  }
  B.pack();
  return B;
}

/// The least compute time of `reps` runs of each kernel on `a`, the variants interleaved.
std::vector<double> leastTimes(const std::vector<std::shared_ptr<Kernel>>& kernels, const Assignment& a, int reps) {
  std::vector<double> best(kernels.size(), 1e30);
  for (const auto& k : kernels) k->run(a, 1);  // warm: pages, caches
  for (int r = 0; r < reps; r++)
    for (size_t v = 0; v < kernels.size(); v++) best[v] = std::min(best[v], kernels[v]->run(a, 1).computeSeconds);
  return best;
}

std::string ms(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
  return buf;
}

}  // namespace

std::vector<std::string> CpuTuning::jitFlags() const {
  std::vector<std::string> f = {"-O3"};
  if (isa != "generic") f.push_back("-march=" + isa);
  f.insert(f.end(), {"-falign-loops=64", "-fopenmp", "-std=gnu11"});
  if (!gathers) f.push_back("-DTESSEL_USE_GATHERS=0");
  if (pairs) f.push_back("-DTESSEL_USE_PAIRS=1");
  if (!shortGathers) f.push_back("-DTESSEL_USE_SHORT_GATHERS=0");
  if (gatherMean != 12) f.push_back("-DTESSEL_GATHER_MEAN=" + std::to_string(gatherMean));
  return f;
}

std::string CpuTuning::settings() const {
  return "isa=" + isa + ",gathers=" + (gathers ? "on" : "off") + ",pairs=" + (pairs ? "on" : "off") +
         ",short-gathers=" + (shortGathers ? "on" : "off") +
         ",gather-mean=" + std::to_string(gatherMean);
}

std::string CpuTuning::str() const { return settings() + " for " + cpu + " (" + origin + ")"; }

CpuTuning tuningFromSettings(const std::string& settings) {
  CpuTuning t;
  t.cpu = modelName();
  if (settings != "default") applySettings(t, settings);
  t.origin = settings.empty() || settings == "default" ? "built-in choices" : "TESSEL_TUNING=" + settings;
  return t;
}

std::string tuningCachePath() {
  return jitCacheDirectory() + "/tuning-" +
         hexKey(std::string(kCacheVersion) + '\n' + jitHostCpuIdentity() + '\n' + jitCompilerIdentity()) + ".txt";
}

CpuTuning calibrateTuning() {
  auto t0 = std::chrono::steady_clock::now();
  CpuTuning t;
  t.cpu = modelName();
  // A CSR SpMV as tessel generates it, compiled three ways: the gathers (both kinds), the
  // pairs, and neither (the compiles at once: they are most of the cost).
  constexpr int64_t n = 1 << 15;
  IndexVar i("i"), j("j");
  Tensor<double> x("x", {n}, DenseFormat(1));
  for (int64_t k = 0; k < n; k++) x.insert({k}, 1.0 + static_cast<double>(k % 7));
  x.pack();
  CpuTuning gathers = t, pairs = t, scalar = t;
  gathers.gathers = gathers.shortGathers = true;
  pairs.gathers = pairs.shortGathers = false;
  pairs.pairs = true;
  scalar.gathers = scalar.shortGathers = false;
  Tensor<double> probe("y", {n}, DenseFormat(1));
  Tensor<double> shape = syntheticRows(n, n, 1, 1, 0, 1);
  probe(i) = shape(i, j) * x(j);
  auto compile = [&](const CpuTuning& v) {
    JitOptions o;
    o.flags = v.jitFlags();
    return Kernel::compile(probe.assignment(), {}, o);
  };
  auto second = std::async(std::launch::async, [&] { return compile(pairs); });
  auto third = std::async(std::launch::async, [&] { return compile(scalar); });
  std::vector<std::shared_ptr<Kernel>> kernels = {compile(gathers), second.get(), third.get()};

  // Long rows (mean 32: the 8-entry gathers or the pairs) and short ones (mean 6: the
  // 4-entry gathers), each near the diagonal and scattered.
  struct Case {
    int64_t rows;
    int lo, hi;
    int64_t band;
  };
  const Case cases[] = {{4096, 16, 48, 128}, {4096, 16, 48, 0}, {n, 1, 11, 16}, {n, 1, 11, 0}};
  double logRatio[2][2] = {{0, 0}, {0, 0}};  // [long, short][gathers, pairs] over scalar
  std::string evidence;
  const char* names[] = {"mean 32 banded", "mean 32 scattered", "mean 6 banded", "mean 6 scattered"};
  for (int c = 0; c < 4; c++) {
    const Case& k = cases[c];
    Tensor<double> B = syntheticRows(k.rows, n, k.lo, k.hi, k.band, 7 + c);
    Tensor<double> y("y", {k.rows}, DenseFormat(1));
    y(i) = B(i, j) * x(j);
    std::vector<double> least = leastTimes(kernels, y.assignment(), 15);
    logRatio[c / 2][0] += std::log(least[0] / least[2]) / 2;
    logRatio[c / 2][1] += std::log(least[1] / least[2]) / 2;
    evidence += std::string(c ? "; " : "") + names[c] + ": gathers " + ms(least[0]) +
                (c < 2 ? ", pairs " + ms(least[1]) : "") + ", scalar " + ms(least[2]);
  }
  // The long rows' form: the faster of gathers and pairs, if it beats the scalar loop.
  const double keep = std::log(0.95);
  const bool gathersWin = logRatio[0][0] <= logRatio[0][1];
  t.gathers = gathersWin && logRatio[0][0] <= keep;
  t.pairs = !gathersWin && logRatio[0][1] <= keep;
  t.shortGathers = logRatio[1][0] <= keep;
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  char buf[64];
  std::snprintf(buf, sizeof buf, "calibrated in %.2f s", took);
  t.origin = buf;
  t.evidence = "SpMV rows of " + evidence;
  return t;
}

const CpuTuning& hostTuning() {
  static std::once_flag once;
  static CpuTuning tuning;
  std::call_once(once, [] {
    const char* env = std::getenv("TESSEL_TUNING");
    std::string setting = env ? env : "";
    if (!setting.empty() && setting != "calibrate") {
      tuning = tuningFromSettings(setting);
      return;
    }
    const std::string path = tuningCachePath();
    FileLock lock(path + ".lock");
    CpuTuning cached;
    cached.cpu = modelName();
    if (setting.empty() && readCache(path, cached)) {
      tuning = cached;
      return;
    }
    tuning = calibrateTuning();
    writeCache(path, tuning);
  });
  return tuning;
}

}  // namespace tessel
