// JIT: compile C source into a shared object with the system compiler and load it.
//
// The compiler runs with an argument vector (fork/execvp, never a shell). Objects are
// cached on disk by a content hash of (source, compiler, flags) in a private directory
// (mode 0700): $TESSEL_CACHE_DIR, else $XDG_CACHE_HOME/tessel, else ~/.cache/tessel.
// A cache hit only dlopen()s the existing object.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace tessel {

struct JitOptions {
  /// Compiler executable; empty means $TESSEL_CC, else "cc".
  std::string compiler;
  /// Flags before the source; "-shared -fPIC -o OUT" are always added.
  std::vector<std::string> flags = {"-O3", "-march=native", "-falign-loops=64", "-fopenmp", "-std=gnu11"};
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
  JitModule(void* handle, std::string path, bool hit)
      : handle_(handle), path_(std::move(path)), cacheHit_(hit) {}
  void* handle_;
  std::string path_;
  bool cacheHit_;
};

/// Compile (or fetch from the cache) and load. Throws CompileError with the
/// compiler's diagnostics on failure.
std::shared_ptr<JitModule> jitCompile(const std::string& cSource, const JitOptions& opts = {});

/// The cache directory in use (created with mode 0700 if missing).
std::string jitCacheDirectory();

}  // namespace tessel
