// The host CPU's tuning: the code choices that pay on one CPU and lose on another, made
// for the CPU a kernel runs on.
//
// tessel's generated C is the same on every machine; what differs is how it is compiled:
// the instruction set (`-march`) and how the sparse dot products of SpMV and SpTTV rows
// run: AVX-512 gathers (on a Sapphire Rapids Xeon they ran SpMV 1.3-1.8x the scalar loop,
// on a Zen 4 EPYC 0.6-0.75x), two-lane vector steps without gathers (1.2x the scalar
// loop on Zen 4's long rows), or the scalar loop of two chains. These choices are C macros and compiler flags, so a choice
// changes no source, only the JIT's flags and thereby its cache key.
//
// The first kernel compiled on a CPU model measures the choices (calibrateTuning: a
// generated SpMV on synthetic rows, well under a second) and caches the result next to
// the JIT cache, keyed by the CPU and the compiler; later processes read it. The
// environment variable TESSEL_TUNING overrides it:
//   - unset: the cached tuning, else calibrate and cache;
//   - "calibrate": measure again and replace the cached tuning;
//   - "default": tessel's built-in choices (native ISA, both gathers, mean 12), no measuring;
//   - "isa=native,gathers=off,pairs=on,short-gathers=on,gather-mean=16": those settings over the
//     built-in choices (isa: native, generic, or any -march value such as x86-64-v3; also
//     steal=on|peek|off, stream-prefetch=on|off and blocks=N for parallel loops; align-loops=N
//     for the JIT's loop alignment; llc=N[K|M|G]
//     and beyond-llc=F for the automatic fusion choice's cache model).
// `tessel tune` prints the tuning in use and its evidence; `tessel run --time` and
// `tessel explain` name it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessel/jit.h"

namespace tessel {

/// The choices made for one CPU, and why.
struct CpuTuning {
  std::string isa = "native";  ///< `-march=<isa>`; "generic": no -march (the compiler's baseline)
  bool gathers = true;         ///< 8-entry AVX-512 gather dot products on rows of mean >= gatherMean
  bool pairs = false;          ///< two-lane steps on those rows where the gathers are not used
  bool shortGathers = true;    ///< 4-entry gathers on shorter rows of irregular lengths
  int gatherMean = 12;         ///< mean row length from which the 8-entry gathers are used
  /// Parallel block loops, once a thread's own share of blocks is done: "peek" takes the
  /// blocks left in the others' shares, reading a share before taking from it; "on"
  /// takes without reading first; "off" takes none (a static split).
  std::string steal = "peek";
  bool streamPrefetch = true;  ///< software prefetch ahead of long streamed rows
  int blocksPerThread = 16;    ///< blocks a thread's share holds in default parallel schedules (up to 4x for ample work)
  /// The JIT's `-falign-loops=N`: loops start at an N-byte boundary, so that a short loop
  /// does not straddle two 64-byte lines; the padding before a loop runs each time the loop
  /// is entered (0: the compiler's own alignment).
  int alignLoops = kJitDefaultLoopAlign;
  /// The automatic fusion choice's cache model (defaultSchedule): the last-level cache one
  /// core reaches, in bytes (0: detected, capped at a core complex's 32 MB on AMD), and
  /// how much dearer a separate kernels' temporary is per entry beyond it (0: 1 on Intel,
  /// 4 elsewhere). Settings llc=N[K|M|G] and beyond-llc=F; shown only when set.
  int64_t llcBytes = 0;
  double beyondLlc = 0;
  std::string cpu;             ///< the CPU's model name
  std::string origin;          ///< "calibrated in 0.41 s", "cached in FILE", "TESSEL_TUNING=..."
  std::string evidence;        ///< what was measured (times of each variant), if anything
  std::string cacheFile;       ///< the file hostTuning() read it from or wrote it to; empty: none

  /// The JIT flags of a kernel compiled with this tuning (base flags included).
  std::vector<std::string> jitFlags() const;
  /// "isa=native,gathers=off,pairs=on,short-gathers=on,gather-mean=12" (TESSEL_TUNING's syntax).
  std::string settings() const;
  /// One line: the settings, the CPU and the origin (`tessel tune` adds the evidence).
  std::string str() const;
  bool operator==(const CpuTuning& o) const {
    return isa == o.isa && gathers == o.gathers && pairs == o.pairs && shortGathers == o.shortGathers &&
           gatherMean == o.gatherMean && steal == o.steal && streamPrefetch == o.streamPrefetch &&
           blocksPerThread == o.blocksPerThread && alignLoops == o.alignLoops && llcBytes == o.llcBytes &&
           beyondLlc == o.beyondLlc;
  }
};

/// The tuning kernels are compiled with in this process: from TESSEL_TUNING, else the
/// cache, else calibrateTuning() (then cached). Computed once per process (thread-safe);
/// throws EnvironmentError for a malformed TESSEL_TUNING.
const CpuTuning& hostTuning();

/// Measures the choices on this CPU now: a generated CSR SpMV compiled three ways (the
/// gathers, the pairs, the scalar loop), timed on synthetic rows of irregular lengths
/// (long: mean 32; short: mean 6; each near the diagonal and scattered), interleaved, the
/// least of several runs each. The long rows' faster vector form is kept when the
/// geometric mean of its time over the scalar loop's is at most 0.95; the short rows'
/// gathers likewise. Does not read or write the cache.
CpuTuning calibrateTuning();

/// Settings in TESSEL_TUNING's syntax over the built-in choices ("" or "default": those).
/// Throws EnvironmentError naming the bad setting.
CpuTuning tuningFromSettings(const std::string& settings);

/// The file the host's calibrated tuning is cached in (in the JIT cache directory).
std::string tuningCachePath();

/// The last-level cache one core reaches, in bytes, as the kernel describes cpu0's caches
/// under `cacheDir` (sysfs: index*/level, type and size such as "32768K"): the size of the
/// highest-level data or unified cache. This is the core complex's L3 on AMD (32 MB on
/// Zen 4, where glibc's sysconf reports the chip's 320 MB on the 2-core EPYC VM) and the
/// socket's on Intel. 0 where the directory holds no readable cache.
int64_t lastLevelCacheBytes(const std::string& cacheDir = "/sys/devices/system/cpu/cpu0/cache");

/// The automatic fusion choice's cache model (defaultSchedule): the last-level cache one
/// core reaches, and how much dearer an entry of a separate kernels' temporary is beyond
/// it, with where each came from. `tessel tune` prints it.
struct FusionCacheModel {
  int64_t llcBytes = 0;
  double beyondLlc = 1;
  std::string source;  ///< "TESSEL_TUNING llc=...", "sysfs", "sysconf" or "assumed"
  /// "32 MB" (whole MB, else KB)
  std::string size() const;
  /// "last-level cache 32 MB (sysfs); a separate kernels' temporary beyond it 4x dearer an entry"
  std::string str() const;
};

/// `tuning`'s llc and beyond-llc where set, else detected for this CPU.
FusionCacheModel fusionCacheModel(const CpuTuning& tuning);

}  // namespace tessel
