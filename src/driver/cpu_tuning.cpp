// The host CPU's tuning (tessel/tuning.h): settings, the cache file, and the calibration
// that compiles a generated SpMV three ways and has the runtime time them
// (runtime/spmv_timing.h: the data is the runtime's, the compiler sees no storage).
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <future>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "driver/pipeline.h"
#include "runtime/jit_cache.h"
#include "runtime/sha256.h"
#include "runtime/spmv_timing.h"
#include "tessel/error.h"
#include "tessel/jit.h"
#include "tessel/tuning.h"

namespace tessel {

namespace {

constexpr const char* kCacheVersion = "tessel-tuning-v2";  // v2: pairs

/// The CPU as figures name it: its model name, and its family, model and stepping
/// numbers (a VM's name can be generic).
std::string modelName() {
  std::string m = jitHostCpuField("model name");
  if (m.empty()) m = "unknown CPU";
  const std::string family = jitHostCpuField("cpu family"), model = jitHostCpuField("model"),
                    stepping = jitHostCpuField("stepping");
  if (!family.empty() && !model.empty())
    m += " (family " + family + ", model " + model + (stepping.empty() ? "" : ", stepping " + stepping) + ")";
  return m;
}

/// A factor as TESSEL_TUNING writes it: "4", "1.5".
std::string number(double x) {
  std::ostringstream o;
  o << x;
  return o.str();
}

bool parseSwitch(const std::string& key, const std::string& v) {
  if (v == "on" || v == "1" || v == "true") return true;
  if (v == "off" || v == "0" || v == "false") return false;
  throw EnvironmentError("TESSEL_TUNING: " + key + " must be on or off, not '" + v + "'");
}

/// v as a whole number in [lo, hi] for which `valid` holds, or an EnvironmentError saying `what` and quoting v.
int wholeNumber(const std::string& v, long lo, long hi, const char* what, bool (*valid)(long) = nullptr) {
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end || errno == ERANGE || n < lo || n > hi || (valid && !valid(n)))
    throw EnvironmentError(std::string("TESSEL_TUNING: ") + what + ", not '" + v + "'");
  return static_cast<int>(n);
}

/// A cache size as sysfs and the llc setting write it ("32768K", "2M", "512": bytes, or
/// K, M or G of them) in bytes, from 1 to 1T; 0 if it is not one.
int64_t cacheSizeBytes(const std::string& text) {
  char* end = nullptr;
  const long long n = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || n <= 0) return 0;
  const std::string unit(end);
  const int shift = unit.empty() ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : -1;
  return shift < 0 || n > (int64_t{1} << 40 >> shift) ? 0 : static_cast<int64_t>(n) << shift;
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
                             "gather-mean=N, steal=on|peek|off, stream-prefetch=on|off, blocks=N, align-loops=N, "
                             "llc=N[K|M|G], beyond-llc=F; "
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
    } else if (key == "steal") {
      if (v != "on" && v != "peek" && v != "off")
        throw EnvironmentError("TESSEL_TUNING: steal must be on, peek or off, not '" + v + "'");
      t.steal = v;
    } else if (key == "stream-prefetch") {
      t.streamPrefetch = parseSwitch(key, v);
    } else if (key == "blocks") {
      t.blocksPerThread =
          wholeNumber(v, 1, 4096, "blocks (a thread's blocks of rows) must be a whole number from 1 to 4096");
    } else if (key == "align-loops") {
      const char* what = "align-loops (the JIT's loop alignment in bytes) must be 0 (the compiler's own) or a power "
                         "of two up to 256";
      t.alignLoops = wholeNumber(v, 0, 256, what, [](long n) { return (n & (n - 1)) == 0; });
    } else if (key == "gather-mean") {
      t.gatherMean = wholeNumber(v, 1, 100000, "gather-mean must be a whole number from 1 to 100000");
    } else if (key == "llc") {
      t.llcBytes = cacheSizeBytes(v);
      if (t.llcBytes == 0)
        throw EnvironmentError("TESSEL_TUNING: llc (the last-level cache) must be a size in bytes from 1 to 1T, "
                               "with K, M or G, not '" + v + "'");
    } else if (key == "beyond-llc") {
      char* end = nullptr;
      double f = std::strtod(v.c_str(), &end);
      if (v.empty() || *end || !(f >= 0.1 && f <= 100))
        throw EnvironmentError("TESSEL_TUNING: beyond-llc (a temporary's cost beyond the last-level cache) must be a "
                               "factor from 0.1 to 100, not '" + v + "'");
      t.beyondLlc = f;
    } else {
      throw EnvironmentError("TESSEL_TUNING: unknown setting '" + key +
                             "' (known: isa, gathers, pairs, short-gathers, gather-mean, steal, stream-prefetch, "
                             "blocks, align-loops, llc, beyond-llc)");
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

/// True when written (an unwritable cache only costs a calibration next time).
bool writeCache(const std::string& path, const CpuTuning& t) {
  std::ostringstream out;
  out << "version=" << kCacheVersion << "\ncpu=" << t.cpu << "\nsettings=" << t.settings()
      << "\nevidence=" << t.evidence << "\ncalibration=" << t.origin << "\n";
  try {
    detail::writeCacheFile(path, out.str(), ".txt");
    return true;
  } catch (const EnvironmentError&) {
    return false;
  }
}

// ---- calibration ----

/// y(i) = B(i,j) * x(j), B CSR, compiled with `tuning`'s flags, and its tensors' slots.
runtime::SpmvKernel compileSpmv(const CpuTuning& tuning, std::vector<std::shared_ptr<JitModule>>& keep) {
  IndexVar i("i"), j("j");
  TensorVar y("y", Datatype::Float64, {1}, DenseFormat(1)), x("x", Datatype::Float64, {1}, DenseFormat(1));
  TensorVar B("B", Datatype::Float64, {1, 1}, Format::parse("ds"));
  Assignment a;
  a.lhs = y(i);
  a.rhs = B(i, j) * x(j);
  driver::PipelineOptions opt;
  opt.jit.flags = tuning.jitFlags();
  driver::CompiledStages compiled = driver::compilePipeline(a, {}, opt);
  TESSEL_CHECK(compiled.stages.size() == 1, "tuning: SpMV compiled to more than one stage");
  driver::CompiledStage& st = compiled.stages[0];
  runtime::SpmvKernel k;
  k.assemble = st.assemble;
  k.compute = st.compute;
  const auto& args = st.lowered.problem.args;
  for (int slot = 0; slot < static_cast<int>(args.size()); slot++) {
    if (args[slot].tensor == y) k.ySlot = slot;
    if (args[slot].tensor == B) k.bSlot = slot;
    if (args[slot].tensor == x) k.xSlot = slot;
  }
  keep.push_back(st.module);
  return k;
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
  if (alignLoops > 0) f.push_back("-falign-loops=" + std::to_string(alignLoops));
  f.insert(f.end(), {"-fopenmp", "-std=gnu11"});
  if (!gathers) f.push_back("-DTESSEL_USE_GATHERS=0");
  if (pairs) f.push_back("-DTESSEL_USE_PAIRS=1");
  if (!shortGathers) f.push_back("-DTESSEL_USE_SHORT_GATHERS=0");
  if (gatherMean != 12) f.push_back("-DTESSEL_GATHER_MEAN=" + std::to_string(gatherMean));
  if (steal != "peek") f.push_back(steal == "on" ? "-DTESSEL_STEAL=1" : "-DTESSEL_STEAL=0");
  if (!streamPrefetch) f.push_back("-DTESSEL_STREAM_PREFETCH=0");
  return f;
}

std::string CpuTuning::settings() const {
  return "isa=" + isa + ",gathers=" + (gathers ? "on" : "off") + ",pairs=" + (pairs ? "on" : "off") +
         ",short-gathers=" + (shortGathers ? "on" : "off") +
         ",gather-mean=" + std::to_string(gatherMean) + ",steal=" + steal +
         ",stream-prefetch=" + (streamPrefetch ? "on" : "off") + ",blocks=" + std::to_string(blocksPerThread) +
         ",align-loops=" + std::to_string(alignLoops) +
         (llcBytes > 0 ? ",llc=" + std::to_string(llcBytes) : "") +
         (beyondLlc > 0 ? ",beyond-llc=" + number(beyondLlc) : "");
}

std::string CpuTuning::str() const { return settings() + " for " + cpu + " (" + origin + ")"; }

int64_t lastLevelCacheBytes(const std::string& cacheDir) {
  int bestLevel = 0;
  int64_t bytes = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(cacheDir, ec)) {
    if (entry.path().filename().string().rfind("index", 0) != 0) continue;
    auto field = [&](const char* name) {
      std::ifstream in(entry.path() / name);
      std::string v;
      std::getline(in, v);
      return v;
    };
    const std::string type = field("type");
    if (type != "Unified" && type != "Data") continue;
    const int level = std::atoi(field("level").c_str());
    const int64_t size = cacheSizeBytes(field("size"));
    if (size > 0 && level > bestLevel) bestLevel = level, bytes = size;
  }
  return bytes;
}

// The cost model's last-level cache: its size one core reaches, and how much dearer a
// separate kernels' temporary is per entry beyond it. The tuning's llc and beyond-llc
// settings where set; else detected:
// - the size: as sysfs describes cpu0's last level (lastLevelCacheBytes). AMD's L3
//   belongs to a core complex (32 MB on Zen 4; glibc's sysconf reports the whole chip's
//   320 MB on the 2-core EPYC VM, so without sysfs AMD's is at most 32 MB). Intel's is
//   shared by the socket's cores, and one core reaches all of it: the 16-core Xeon's
//   300 MB held <SpMM, GEMM>'s 77 MB temporary, and separate kernels ran 1.05-1.2x
//   faster than the fused nest a 32 MB cap had chosen.
// - the factor: on the 2-core AMD EPYC VM (Zen 4), <SpMM, GEMM>'s separate kernels ran
//   0.9-1.8x the fused nest with T beyond the L3: 4. On the 2-core Intel Xeon VM
//   (Emerald Rapids, 260 MB L3) separate kernels with a dense T twice the L3 ran
//   1.03-1.16x faster than the fused nest (<SpMM, GEMM> and <SpMMH, GEMM> at 1 thread,
//   <MTTKRP, GEMM> at 1 and 2), where 4 had chosen the fused nest (<MTTKRP, GEMM> 1.11x
//   the best): T is written once and read back in order, a stream, so no premium there.
//   Other CPUs, unmeasured, keep the fitted 4.
FusionCacheModel fusionCacheModel(const CpuTuning& tuning) {
  bool amd = true;  // (and other non-Intel CPUs: the fitted values)
#if defined(__x86_64__) || defined(__i386__)
  amd = __builtin_cpu_is("amd");
#endif
  // What this machine says, read once: sysfs, else sysconf (AMD's capped), else assumed.
  static const std::pair<int64_t, std::string> detected = [amd] {
    const int64_t ccx = int64_t{32} << 20;
    if (const int64_t described = lastLevelCacheBytes(); described > 0) return std::pair{described, std::string("sysfs")};
    if (const long reported = sysconf(_SC_LEVEL3_CACHE_SIZE); reported > 0)
      return std::pair{amd ? std::min<int64_t>(reported, ccx) : int64_t{reported}, std::string("sysconf")};
    return std::pair{ccx, std::string("assumed")};
  }();
  FusionCacheModel m;
  if (tuning.llcBytes > 0) {
    m.llcBytes = tuning.llcBytes;
    m.source = "TESSEL_TUNING llc=" + std::to_string(tuning.llcBytes);
  } else {
    m.llcBytes = detected.first;
    m.source = detected.second;
  }
  m.beyondLlc = tuning.beyondLlc > 0 ? tuning.beyondLlc : amd ? 4.0 : 1.0;
  return m;
}

std::string FusionCacheModel::size() const {
  const bool mb = llcBytes >= (1 << 20);
  return std::to_string(mb ? llcBytes >> 20 : llcBytes >> 10) + (mb ? " MB" : " KB");
}

std::string FusionCacheModel::str() const {
  std::ostringstream o;
  o << "last-level cache " << size() << " (" << source << "); a separate kernels' temporary beyond it " << beyondLlc
    << "x dearer an entry";
  return o.str();
}

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
  CpuTuning gathers = t, pairs = t, scalar = t;
  gathers.gathers = gathers.shortGathers = true;
  pairs.gathers = pairs.shortGathers = false;
  pairs.pairs = true;
  scalar.gathers = scalar.shortGathers = false;
  std::vector<std::shared_ptr<JitModule>> loaded[3];  // the objects stay loaded while timed
  auto second = std::async(std::launch::async, [&] { return compileSpmv(pairs, loaded[1]); });
  auto third = std::async(std::launch::async, [&] { return compileSpmv(scalar, loaded[2]); });
  std::vector<runtime::SpmvKernel> kernels = {compileSpmv(gathers, loaded[0]), second.get(), third.get()};
  constexpr int64_t n = 1 << 15;

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
    runtime::SyntheticRows rows{k.rows, n, k.lo, k.hi, k.band, static_cast<uint32_t>(7 + c)};
    std::vector<double> least = runtime::leastSpmvTimes(kernels, rows, 15);
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
      tuning.cacheFile = path;
      return;
    }
    tuning = calibrateTuning();
    if (writeCache(path, tuning)) tuning.cacheFile = path;
  });
  return tuning;
}

}  // namespace tessel
