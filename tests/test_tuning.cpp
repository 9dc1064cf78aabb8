// The host CPU's tuning (tessel/tuning.h): TESSEL_TUNING's settings, the flags they
// give, the calibration and its cache (through `tessel tune`), and that every variant
// computes the same SpMV (the whole kernel suite runs under each variant as the ctest
// entries Tuning.*, see tests/CMakeLists.txt).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "support/tool_runner.h"
#include "tessel/tessel.h"

namespace fs = std::filesystem;
using namespace tessel;
using tessel::testing::Result;
using tessel::testing::runTool;
using tessel::testing::show;

namespace {

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

fs::path scratch(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("tessel-tuning-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST(Tuning, BuiltInChoicesAreTheOldDefaultFlags) {
  CpuTuning t = tuningFromSettings("default");
  EXPECT_EQ(t.settings(),
            "isa=native,gathers=on,pairs=off,short-gathers=on,gather-mean=12,steal=peek,stream-prefetch=on,blocks=16,"
            "align-loops=64");
  EXPECT_EQ(t.jitFlags(), jitDefaultFlags());  // the built-in choice adds no macro
  EXPECT_EQ(t.origin, "built-in choices");
}

TEST(Tuning, SettingsBecomeFlags) {
  CpuTuning t = tuningFromSettings("isa=generic, gathers=off,pairs=on,short-gathers=on,gather-mean=20");
  EXPECT_FALSE(t.gathers);
  EXPECT_TRUE(t.pairs);
  EXPECT_TRUE(t.shortGathers);
  EXPECT_EQ(t.gatherMean, 20);
  std::vector<std::string> f = t.jitFlags();
  EXPECT_TRUE(has(f, "-O3"));
  EXPECT_FALSE(std::any_of(f.begin(), f.end(), [](const std::string& x) { return x.rfind("-march", 0) == 0; }));
  EXPECT_TRUE(has(f, "-DTESSEL_USE_GATHERS=0"));
  EXPECT_TRUE(has(f, "-DTESSEL_USE_PAIRS=1"));
  EXPECT_FALSE(has(f, "-DTESSEL_USE_SHORT_GATHERS=0"));
  EXPECT_TRUE(has(f, "-DTESSEL_GATHER_MEAN=20"));
  EXPECT_TRUE(has(tuningFromSettings("isa=x86-64-v3").jitFlags(), "-march=x86-64-v3"));
  EXPECT_TRUE(has(tuningFromSettings("short-gathers=0").jitFlags(), "-DTESSEL_USE_SHORT_GATHERS=0"));
  // What settings() prints reads back as the same tuning.
  EXPECT_EQ(tuningFromSettings(t.settings()), t);
}

TEST(Tuning, ParallelLoopSettingsBecomeFlagsAndBlocks) {
  CpuTuning t = tuningFromSettings("steal=on,stream-prefetch=off,blocks=4");
  EXPECT_EQ(t.steal, "on");
  EXPECT_FALSE(t.streamPrefetch);
  EXPECT_EQ(t.blocksPerThread, 4);
  std::vector<std::string> f = t.jitFlags();
  EXPECT_TRUE(has(f, "-DTESSEL_STEAL=1"));
  EXPECT_TRUE(has(f, "-DTESSEL_STREAM_PREFETCH=0"));
  EXPECT_TRUE(has(tuningFromSettings("steal=off").jitFlags(), "-DTESSEL_STEAL=0"));
  EXPECT_EQ(tuningFromSettings(t.settings()), t);
  // blocks=N sets the rows of a default parallel schedule's blocks: 1000 rows on 5
  // threads in 4 blocks each are blocks of 50 rows; 16 each (the built-in), of 13.
  EXPECT_EQ(rowsPerParallelBlock(1000, 5, 4), 50);
  EXPECT_EQ(rowsPerParallelBlock(1000, 5, 16), 13);
  EXPECT_EQ(rowsPerParallelBlock(0, 5, 16), 1);
  TensorVar y("y", Datatype::Float64, {1000}, DenseFormat(1)), x("x", Datatype::Float64, {1000}, DenseFormat(1));
  TensorVar B("B", Datatype::Float64, {1000, 1000}, CSR());
  IndexVar i("i"), j("j");
  Assignment a;
  a.lhs = y(i);
  a.rhs = B(i, j) * x(j);
  EXPECT_EQ(defaultParallelSchedule(a, 5, 4).str(), "split(i,i_block,i_in,50),parallelize(i_block,cpu_thread,no_races)");
}

TEST(Tuning, AmpleWorkGetsMoreBlocksAThread) {
  // A thread starts from 16 blocks and doubles them (twice at most) while each block keeps
  // 16384 entries of work: SpMM's work is A's non-zeros times X's columns.
  auto spmmSchedule = [](int64_t rows, int perRow, int64_t cols, int threads) {
    IndexVar i("i"), j("j"), k("k");
    Tensor<double> Y("Y", {rows, cols}, DenseFormat(2)), A("A", {rows, rows}, CSR()), X("X", {rows, cols}, DenseFormat(2));
    for (int64_t r = 0; r < rows; r++)
      for (int e = 0; e < perRow; e++) A.insert({r, (r * 7 + e * 13) % rows}, 1.0);
    A.pack();
    Y(i, k) = A(i, j) * X(j, k);
    return defaultParallelSchedule(Y.assignment(), threads, 16).str();
  };
  // 4096 x 16 entries x 64 columns on 4 threads: 4.2M of work, 64 blocks a thread
  // (16384 each) of 16 rows.
  EXPECT_EQ(spmmSchedule(4096, 16, 64, 4), "split(i,i_block,i_in,16),parallelize(i_block,cpu_thread,no_races)");
  // 32 columns: 2.1M, 32 blocks a thread (64 would hold 8192 each): 32 rows.
  EXPECT_EQ(spmmSchedule(4096, 16, 32, 4), "split(i,i_block,i_in,32),parallelize(i_block,cpu_thread,no_races)");
  // One column, 2 entries a row: 8192 of work stays at 16 blocks a thread, 64 rows.
  EXPECT_EQ(spmmSchedule(4096, 2, 1, 4), "split(i,i_block,i_in,64),parallelize(i_block,cpu_thread,no_races)");
  // The rule alone (the fused nests' row blocks use it with their plan's estimate).
  EXPECT_EQ(blocksPerThreadFor(0, 16, 16), 16);
  EXPECT_EQ(blocksPerThreadFor(2.0 * 16 * 16 * 16384 - 1, 16, 16), 16);
  EXPECT_EQ(blocksPerThreadFor(2.0 * 16 * 16 * 16384, 16, 16), 32);
  EXPECT_EQ(blocksPerThreadFor(1e12, 16, 16), 64);  // twice at most
  EXPECT_EQ(blocksPerThreadFor(1e12, 0, 0), 4);     // no threads, no base: one thread, one block
}

TEST(Tuning, FusedBlocksHoldAboutTheirTemporary) {
  // A dense temporary's block holds about 2048 entries, at most 256 rows; one at a sparse
  // factor's positions about 32768; at least 4 blocks a thread; under 2 rows: no blocks.
  EXPECT_EQ(rowsPerFusedBlock(64, 10000, 1), 32);
  EXPECT_EQ(rowsPerFusedBlock(64, 10000, 2), 32);
  EXPECT_EQ(rowsPerFusedBlock(4, 100000, 1), 256);
  EXPECT_EQ(rowsPerFusedBlock(64, 200, 4), 12);  // 200 rows / (4 x 4 threads)
  EXPECT_EQ(rowsPerFusedBlock(4096, 100000, 1), 0);
  EXPECT_EQ(rowsPerFusedBlock(16, 1000000, 1, true), 2048);
  EXPECT_EQ(rowsPerFusedBlock(16, 1000, 2, true), 125);
  EXPECT_EQ(rowsPerFusedBlock(0, 1000000, 1, true), 32768);  // empty rows count as one entry
}

TEST(Tuning, BadSettingsNameTheSetting) {
  auto expectError = [](const std::string& s, const std::string& mention) {
    try {
      tuningFromSettings(s);
      ADD_FAILURE() << "accepted " << s;
    } catch (const EnvironmentError& e) {
      EXPECT_NE(std::string(e.what()).find("TESSEL_TUNING"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(mention), std::string::npos) << e.what();
    }
  };
  expectError("gathers=maybe", "gathers must be on or off");
  expectError("speed=11", "unknown setting 'speed'");
  expectError("fast", "'fast' is not a setting");
  expectError("gather-mean=0", "gather-mean");
  expectError("gather-mean=12x", "gather-mean");
  expectError("isa=native;rm", "isa must be");  // becomes a compiler flag: no shell characters
  expectError("isa=", "isa must be");
  expectError("steal=sometimes", "steal must be on, peek or off");
  expectError("blocks=0", "blocks");
  expectError("stream-prefetch=2", "stream-prefetch must be on or off");
  expectError("llc=0", "llc");
  expectError("llc=32X", "llc");
  expectError("llc=M", "llc");
  expectError("llc=2048G", "llc");
  expectError("beyond-llc=0", "beyond-llc");
  expectError("beyond-llc=4x", "beyond-llc");
  expectError("align-loops=48", "align-loops");  // not a power of two
  expectError("align-loops=512", "align-loops");
  expectError("align-loops=-1", "align-loops");
  expectError("align-loops=", "align-loops");
}

TEST(Tuning, LoopAlignmentSetting) {
  // The JIT's -falign-loops: 64 built in, any power of two up to 256, or 0 for the
  // compiler's own alignment (no flag).
  auto alignFlags = [](const CpuTuning& t) {
    std::vector<std::string> a;
    for (const std::string& f : t.jitFlags())
      if (f.rfind("-falign-loops", 0) == 0) a.push_back(f);
    return a;
  };
  EXPECT_EQ(alignFlags(tuningFromSettings("default")), std::vector<std::string>{"-falign-loops=64"});
  CpuTuning t = tuningFromSettings("align-loops=32");
  EXPECT_EQ(t.alignLoops, 32);
  EXPECT_EQ(alignFlags(t), std::vector<std::string>{"-falign-loops=32"});
  EXPECT_NE(t.settings().find(",align-loops=32"), std::string::npos) << t.settings();
  EXPECT_EQ(tuningFromSettings(t.settings()), t);
  EXPECT_TRUE(alignFlags(tuningFromSettings("align-loops=0")).empty());
  EXPECT_EQ(alignFlags(tuningFromSettings("align-loops=1")), std::vector<std::string>{"-falign-loops=1"});
}

TEST(Tuning, CacheModelSettings) {
  // llc and beyond-llc set the automatic fusion choice's cache model; unset, they are
  // detected and not shown.
  CpuTuning t = tuningFromSettings("llc=64K,beyond-llc=2.5");
  EXPECT_EQ(t.llcBytes, 64 << 10);
  EXPECT_EQ(t.beyondLlc, 2.5);
  EXPECT_NE(t.settings().find(",llc=65536,beyond-llc=2.5"), std::string::npos) << t.settings();
  EXPECT_EQ(tuningFromSettings(t.settings()), t);
  EXPECT_EQ(tuningFromSettings("llc=3M").llcBytes, 3 << 20);
  EXPECT_EQ(tuningFromSettings("llc=1G").llcBytes, int64_t{1} << 30);
  EXPECT_EQ(tuningFromSettings("llc=1000").llcBytes, 1000);
  EXPECT_EQ(tuningFromSettings("default").settings().find("llc"), std::string::npos);
  EXPECT_EQ(t.jitFlags(), tuningFromSettings("").jitFlags());  // no effect on the generated code
  // The cost model takes them over what it detects, and says where each came from.
  EXPECT_EQ(fusionCacheModel(t).str(),
            "last-level cache 64 KB (TESSEL_TUNING llc=65536); a separate kernels' temporary beyond it 2.5x dearer "
            "an entry");
  const FusionCacheModel detected = fusionCacheModel(tuningFromSettings("default"));
  EXPECT_GT(detected.llcBytes, 0);
  EXPECT_TRUE(detected.beyondLlc == 1 || detected.beyondLlc == 4) << detected.beyondLlc;
  if (lastLevelCacheBytes() > 0) {
    EXPECT_EQ(detected.source, "sysfs");
    EXPECT_EQ(detected.llcBytes, lastLevelCacheBytes());
  }
}

TEST(Tuning, LastLevelCacheIsTheHighestDataLevelSysfsDescribes) {
  // A cpu0/cache directory as Linux writes it on the 2-core EPYC VM (Zen 4): L1 data and
  // instruction, L2, and the core complex's L3, whose 32 MB the cost model must see (glibc's
  // sysconf says 320 MB there). An instruction cache never counts, whatever its level.
  fs::path d = scratch("sysfs");
  auto level = [&](const std::string& index, const std::string& lvl, const std::string& type,
                   const std::string& size) {
    fs::create_directories(d / index);
    std::ofstream(d / index / "level") << lvl << "\n";
    std::ofstream(d / index / "type") << type << "\n";
    std::ofstream(d / index / "size") << size << "\n";
  };
  EXPECT_EQ(lastLevelCacheBytes(d.string()), 0);  // no caches described
  level("index0", "1", "Data", "32K");
  level("index1", "1", "Instruction", "32K");
  EXPECT_EQ(lastLevelCacheBytes(d.string()), 32 << 10);
  level("index2", "2", "Unified", "1024K");
  level("index3", "3", "Unified", "32768K");
  EXPECT_EQ(lastLevelCacheBytes(d.string()), int64_t{32} << 20);
  level("index4", "4", "Instruction", "2M");  // not data
  level("index5", "4", "Unified", "lots");     // not a size
  EXPECT_EQ(lastLevelCacheBytes(d.string()), int64_t{32} << 20);
  level("index6", "4", "Unified", "1G");
  EXPECT_EQ(lastLevelCacheBytes(d.string()), int64_t{1} << 30);
  EXPECT_EQ(lastLevelCacheBytes((d / "missing").string()), 0);
  fs::remove_all(d);
  // This machine's, where it has sysfs: a size a CPU could have.
  if (const int64_t host = lastLevelCacheBytes(); host > 0) {
    EXPECT_GE(host, int64_t{256} << 10);
    EXPECT_LE(host, int64_t{4} << 30);
  }
}

TEST(Tuning, CalibrationDecidesBothKindsAndSaysWhy) {
  CpuTuning t = calibrateTuning();
  EXPECT_EQ(t.isa, "native");
  EXPECT_NE(t.origin.find("calibrated in"), std::string::npos);
  EXPECT_NE(t.evidence.find("mean 32"), std::string::npos) << t.evidence;
  EXPECT_NE(t.evidence.find("mean 6"), std::string::npos) << t.evidence;
  EXPECT_FALSE(t.cpu.empty());
}

TEST(Tuning, TheCpuIsNamedWithItsModelNumbers) {
  // A VM's model name can be generic ("Intel(R) Xeon(R) Processor" for two generations):
  // the family and model numbers, where /proc/cpuinfo has them, name the CPU and key the
  // caches.
  std::ifstream in("/proc/cpuinfo");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.find("\ncpu family") == std::string::npos) GTEST_SKIP() << "no cpu family in /proc/cpuinfo";
  const std::string& id = jitHostCpuIdentity();
  EXPECT_NE(id.find("cpu family"), std::string::npos) << id;
  EXPECT_NE(id.find("\nmodel\t"), std::string::npos) << id;  // the number, beside "model name"
  CpuTuning t = tuningFromSettings("default");
  EXPECT_NE(t.cpu.find("(family "), std::string::npos) << t.cpu;
  EXPECT_NE(t.cpu.find(", model "), std::string::npos) << t.cpu;
}

// Every variant the calibration can pick computes the sparse dot products (the code
// the variants change) alike, up to the gathers' summation order: SpMV and SpTTV, float
// and double, 32- and 64-bit indices, 1 and 2 threads, on rows of every length from
// empty to 70 whose lengths vary (where the short gathers are used) or do not.
namespace {

template <typename T>
void expectVariantsAgree(const Format& f, bool regular, int threads) {
  const int64_t n = 1500;
  Tensor<T> B("B", {n, n}, f), x("x", {n}, DenseFormat(1));
  std::mt19937 rng(5);
  for (int64_t i = 0; i < n; i++) {
    int len = regular ? 5 : i % 100 == 0 ? 0 : i < n / 2 ? static_cast<int>(rng() % 8) : 10 + static_cast<int>(rng() % 60);
    for (int k = 0; k < len; k++)
      B.insert({i, regular ? (i + k) % n : static_cast<int64_t>(rng() % n)}, static_cast<T>(0.25 + (rng() % 100) / 50.0));
  }
  B.pack();
  for (int64_t j = 0; j < n; j++) x.insert({j}, static_cast<T>(1.0 + (j % 13) / 7.0));
  x.pack();
  IndexVar i("i"), j("j");
  auto run = [&](const std::string& settings) {
    Tensor<T> y("y", {n}, DenseFormat(1));
    y(i) = B(i, j) * x(j);
    JitOptions o;
    o.flags = tuningFromSettings(settings).jitFlags();
    Kernel::compile(y.assignment(), {}, o)->run(y.assignment(), threads);
    std::vector<double> v(n);
    for (int64_t r = 0; r < n; r++) v[r] = static_cast<double>(y.valueAt(r));
    return v;
  };
  const std::vector<double> expected = run("isa=generic,gathers=off,short-gathers=off");
  const double tol = sizeof(T) == 4 ? 1e-5 : 1e-12;
  for (const char* s : {"default", "gathers=on,short-gathers=off,gather-mean=1", "gathers=off,short-gathers=on",
                        "gathers=off,pairs=on,gather-mean=1", "gathers=off,pairs=on", "isa=generic,gathers=off,pairs=on",
                        "gathers=off,short-gathers=off", "isa=generic", "align-loops=0", "align-loops=16"}) {
    std::vector<double> got = run(s);
    for (int64_t r = 0; r < n; r++)
      ASSERT_NEAR(got[r], expected[r], tol * (1 + std::abs(expected[r]))) << s << " row " << r;
  }
}

}  // namespace

TEST(Tuning, EveryVariantComputesTheSameSpmv) {
  for (int threads : {1, 2}) {
    expectVariantsAgree<double>(Format::parse("ds"), false, threads);
    expectVariantsAgree<float>(Format::parse("ds"), false, threads);
  }
  expectVariantsAgree<double>(Format::parse("ds"), true, 1);
  expectVariantsAgree<double>(Format::parse("ds").withWidths(IndexWidth::W64, IndexWidth::W32), false, 1);
}

TEST(Tuning, EveryVariantComputesTheSameSpttv) {
  const int64_t n = 60;
  Tensor<double> B("B", {n, n, n}, Format::parse("sss")), c("c", {n}, DenseFormat(1));
  std::mt19937 rng(9);
  for (int e = 0; e < 20000; e++)
    B.insert({static_cast<int64_t>(rng() % n), static_cast<int64_t>(rng() % n), static_cast<int64_t>(rng() % n)},
             0.5 + (rng() % 64) / 32.0);
  B.pack();
  for (int64_t k = 0; k < n; k++) c.insert({k}, 1.0 + k % 5);
  c.pack();
  IndexVar i("i"), j("j"), k("k");
  auto run = [&](const std::string& settings) {
    Tensor<double> A("A", {n, n}, DenseFormat(2));
    A(i, j) = B(i, j, k) * c(k);
    JitOptions o;
    o.flags = tuningFromSettings(settings).jitFlags();
    Kernel::compile(A.assignment(), {}, o)->run(A.assignment());
    std::vector<double> v(n * n);
    for (int64_t p = 0; p < n * n; p++) v[p] = A.valueAt(p);
    return v;
  };
  const std::vector<double> expected = run("isa=generic,gathers=off,short-gathers=off");
  for (const char* s : {"gathers=on,short-gathers=off,gather-mean=1", "gathers=off,short-gathers=on",
                        "gathers=off,pairs=on,gather-mean=1"}) {
    std::vector<double> got = run(s);
    for (int64_t p = 0; p < n * n; p++) ASSERT_NEAR(got[p], expected[p], 1e-12 * (1 + std::abs(expected[p]))) << s;
  }
}

TEST(Tuning, ToolCalibratesOnceThenReadsTheCache) {
  fs::path d = scratch("cache");
  ::setenv("TESSEL_CACHE_DIR", (d / "jit").c_str(), 1);
  ::unsetenv("TESSEL_TUNING");
  Result first = runTool(d, {"tune"});
  ASSERT_EQ(first.code, 0) << show(first);
  EXPECT_NE(first.out.find("origin: calibrated in"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("jit flags: -O3"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("fusion cost model: last-level cache "), std::string::npos) << first.out;
  Result second = runTool(d, {"tune", "--json"});
  ASSERT_EQ(second.code, 0) << show(second);
  EXPECT_NE(second.out.find("\"origin\": \"cached in"), std::string::npos) << second.out;
  // The cached settings are the calibrated ones.
  auto settingsOf = [](const std::string& out, const std::string& key) {
    size_t at = out.find(key);
    return at == std::string::npos ? std::string() : out.substr(at + key.size(), out.find_first_of("\"\n", at + key.size()) - at - key.size());
  };
  EXPECT_EQ(settingsOf(first.out, "settings: "), settingsOf(second.out, "\"settings\": \""));
  Result again = runTool(d, {"tune", "--calibrate"});
  EXPECT_NE(again.out.find("origin: calibrated in"), std::string::npos) << again.out;
  // A kernel's --time names the tuning it was compiled with.
  ::setenv("TESSEL_TUNING", "gathers=off", 1);
  Result run = runTool(d, {"run", "a(i) = B(i,j) * c(j)", "-g", "B:uniform:50,50,3", "-g", "c:dense:50", "--time"});
  ASSERT_EQ(run.code, 0) << show(run);
  EXPECT_NE(run.err.find("tuning: isa=native,gathers=off"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("TESSEL_TUNING=gathers=off"), std::string::npos) << run.err;
  // A malformed setting: exit 3 (the environment), one line naming it, no output file.
  ::setenv("TESSEL_TUNING", "gathers=sometimes", 1);
  Result bad = runTool(d, {"run", "a(i) = B(i,j) * c(j)", "-g", "B:uniform:50,50,3", "-g", "c:dense:50", "-o",
                           "a:" + (d / "a.tns").string()});
  EXPECT_EQ(bad.code, 3) << show(bad);
  EXPECT_NE(bad.err.find("TESSEL_TUNING: gathers must be on or off, not 'sometimes'"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(d / "a.tns"));
  ::unsetenv("TESSEL_TUNING");
  fs::remove_all(d);
}
