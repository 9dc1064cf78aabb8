// JIT: compile C source into a shared object with the system compiler and load it.
//
// The compiler runs with an argument vector (fork/execvp, never a shell), in its own
// process group, with a time limit ($TESSEL_CC_TIMEOUT seconds, default 300). Objects are
// cached on disk by a content hash of (source, compiler, flags) in a private directory
// (mode 0700): $TESSEL_CACHE_DIR, else $XDG_CACHE_HOME/tessel, else ~/.cache/tessel, of at
// most $TESSEL_CACHE_MAX_MB megabytes (default 512; least recently used objects go). A
// cache hit reads the object once, checks its checksum, loads that copy and checks the
// cache key compiled into it; anything else recompiles.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace tessel {

struct JitOptions {
  /// Compiler executable; empty means $TESSEL_CC, else "cc".
  std::string compiler;
  /// Flags before the source; "-shared -fPIC -o OUT" are always added. Empty (the
  /// default): jitDefaultFlags() here; a kernel's compile (Kernel::compile) then uses
  /// the flags of the host's tuning instead (tessel/tuning.h), so its choices follow
  /// the CPU. Given flags are used as they are.
  std::vector<std::string> flags;
  /// Seconds the compiler may run before its process group is killed; 0 means
  /// $TESSEL_CC_TIMEOUT, else 300. A negative value: no limit.
  double timeoutSeconds = 0;
};

/// A loaded shared object. dlclose()s on destruction.
class JitModule {
 public:
  ~JitModule();
  JitModule(const JitModule&) = delete;
  JitModule& operator=(const JitModule&) = delete;
  /// Address of an exported symbol; throws CompileError if missing.
  void* symbol(const std::string& name) const;
  /// Path of the cached shared object.
  const std::string& path() const { return path_; }
  /// True if the object was found in the cache (no compiler run).
  bool cacheHit() const { return cacheHit_; }

 private:
  friend std::shared_ptr<JitModule> jitCompile(const std::string&, const JitOptions&);
  JitModule(void* handle, std::string path, bool hit, int fd)
      : handle_(handle), path_(std::move(path)), cacheHit_(hit), fd_(fd) {}
  void* handle_;
  std::string path_;
  bool cacheHit_;
  int fd_;  ///< the private copy it was loaded from (kept open: its name stays unique), or -1
};

/// The loop alignment of the default flags, in bytes (CpuTuning::alignLoops starts from it).
inline constexpr int kJitDefaultLoopAlign = 64;

/// The flags of an empty JitOptions::flags: -O3 -march=native
/// -falign-loops=kJitDefaultLoopAlign -fopenmp -std=gnu11.
std::vector<std::string> jitDefaultFlags();

/// The host CPU as the cache keys objects built with `-march=native`: vendor, model name
/// and feature flags from /proc/cpuinfo (empty where there is none).
const std::string& jitHostCpuIdentity();

/// The value of `key`'s line in jitHostCpuIdentity() ("model name", "cpu family",
/// "model", "stepping", "flags"...; "" when it has none).
std::string jitHostCpuField(const std::string& key);

/// Identity of the compiler `compiler` (empty: $TESSEL_CC, else cc) as the cache keys
/// objects: its resolved path and the file's size and times ("missing" when not found).
std::string jitCompilerIdentity(const std::string& compiler = "");

/// Compile (or fetch from the cache) and load. Throws CompileError on failure: one line
/// with the compiler's first error and the path of the full log (`<key>.log` in the cache);
/// with TESSEL_CC_LOG=1 the message holds the command and the whole log.
std::shared_ptr<JitModule> jitCompile(const std::string& cSource, const JitOptions& opts = {});

/// The cache directory in use (created with mode 0700 if missing). Refused (CompileError)
/// when it or a parent could be changed by another user; a warning on stderr when others
/// can read it.
std::string jitCacheDirectory();

/// Kills the process groups of the C compilers running now. Async-signal-safe: for a
/// SIGINT/SIGTERM handler that then ends the process (each compiler has its own process
/// group, so a terminal's Ctrl-C reaches only tessel).
void jitKillRunningCompilers() noexcept;

}  // namespace tessel
