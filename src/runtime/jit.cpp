// JIT: compile C source with the system compiler into a cached shared object and load it.
//
// Cache layout (one directory, mode 0700, owned by the user; see also jit_cache.cpp):
//   <key>.c    the source, ending in the key as a constant (tessel_cache_key)
//   <key>.so   the object (compiled to a temporary name, then renamed into place)
//   <key>.sum  SHA-256 of <key>.so, written after a successful compile; checked on every hit
//   <key>.log  the compiler's output, when it failed
// <key> is the SHA-256 of (compiler path and identity, flags, host CPU when a flag says
// "native", source). Everything is written under a unique temporary name in the cache
// directory and rename()d into place, so processes sharing the cache never see a partial
// file. A hit reads the object once, hashes it, loads that very copy (a sealed memfd) and
// checks the key compiled into it: an object renamed, copied or swapped in from another
// kernel is never run for this one. It costs one read and hash of the object plus dlopen(),
// once per kernel: nothing on kernel runs.
#include "tessel/jit.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <fstream>
#include <mutex>
#include <sstream>

#include "io/io_util.h"
#include "runtime/jit_cache.h"
#include "runtime/sha256.h"
#include "tessel/error.h"

extern char** environ;

namespace tessel {

namespace {

std::string errnoText(int e) { return std::strerror(e); }

std::string getEnv(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

/// Quote an argument for display only (the compiler never runs through a shell).
std::string shellQuote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_=./+,:@%") == std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string commandLine(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    s += shellQuote(a);
  }
  return s;
}

/// mkdir -p with mode 0700 for every directory created.
void makeDirectories(const std::string& path) {
  std::string prefix;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    prefix = path.substr(0, next);
    pos = next + 1;
    if (prefix.empty() || prefix == "." || prefix == "..") continue;
    if (::mkdir(prefix.c_str(), 0700) != 0) {
      int e = errno;
      struct stat st;
      if (::stat(prefix.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) continue;
        throw CompileError("JIT cache: '" + prefix + "' exists but is not a directory");
      }
      throw CompileError("JIT cache: cannot create directory '" + prefix + "': " + errnoText(e));
    }
  }
}

void writeAll(int fd, const char* data, size_t n, const std::string& what) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw CompileError("JIT cache: cannot write '" + what + "': " + errnoText(errno));
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
}

/// Removes a file on scope exit unless released.
class TempFile {
 public:
  TempFile() = default;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  /// Create "<stem>.tmp.XXXXXX<suffix>" (mode 0600); returns an open fd.
  int create(const std::string& stem, const std::string& suffix) {
    std::string tmpl = stem + ".tmp.XXXXXX" + suffix;
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    int fd = ::mkstemps(buf.data(), static_cast<int>(suffix.size()));
    if (fd < 0)
      throw CompileError("JIT cache: cannot create a temporary file '" + tmpl +
                         "': " + errnoText(errno));
    path_ = buf.data();
    return fd;
  }
  const std::string& path() const { return path_; }
  /// Atomically move into place; afterwards nothing is removed.
  void renameTo(const std::string& target) {
    if (::rename(path_.c_str(), target.c_str()) != 0)
      throw CompileError("JIT cache: cannot rename '" + path_ + "' to '" + target +
                         "': " + errnoText(errno));
    path_.clear();
  }

 private:
  std::string path_;
};

/// Write `content` to a unique temporary next to `target`, then rename it over `target`.
void writeFileAtomically(const std::string& target, const std::string& content,
                         const std::string& suffix) {
  std::string stem = target.substr(0, target.size() - suffix.size());
  TempFile tmp;
  int fd = tmp.create(stem, suffix);
  try {
    writeAll(fd, content.data(), content.size(), tmp.path());
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0)
    throw CompileError("JIT cache: cannot write '" + tmp.path() + "': " + errnoText(errno));
  tmp.renameTo(target);
}

bool readSmallFile(const std::string& path, std::string& out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  out.clear();
  char buf[256];
  bool ok = true;
  for (;;) {
    ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0) {
      if (errno == EINTR) continue;
      ok = false;
      break;
    }
    if (r == 0) break;
    out.append(buf, static_cast<size_t>(r));
    if (out.size() > 4096) {
      ok = false;
      break;
    }
  }
  ::close(fd);
  return ok;
}

/// Resolve an executable name the way execvp does; empty if not found.
std::string resolveExecutable(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  std::string path = getEnv("PATH");
  if (path.empty()) path = "/bin:/usr/bin";
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find(':', pos);
    if (next == std::string::npos) next = path.size();
    std::string dir = path.substr(pos, next - pos);
    pos = next + 1;
    std::string cand = (dir.empty() ? std::string(".") : dir) + "/" + name;
    struct stat st;
    if (::stat(cand.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(cand.c_str(), X_OK) == 0)
      return cand;
  }
  return "";
}

/// Identity of the compiler binary (so an upgraded compiler does not reuse stale objects).
std::string compilerIdentity(const std::string& compiler) {
  std::string resolved = resolveExecutable(compiler);
  if (resolved.empty()) return "missing";
  struct stat st;
  if (::stat(resolved.c_str(), &st) != 0) return "missing";
  std::ostringstream os;
  os << resolved << ' ' << st.st_dev << ' ' << st.st_ino << ' ' << st.st_size << ' '
     << st.st_mtim.tv_sec << '.' << st.st_mtim.tv_nsec;
  return os.str();
}

/// The key of a /proc/cpuinfo line: the whole text before its colon, trailing blanks
/// dropped ("model" is not "model name"); "" without a colon.
std::string cpuinfoKey(const std::string& line) {
  const size_t colon = line.find(':');
  if (colon == std::string::npos) return "";
  std::string k = line.substr(0, colon);
  k.erase(k.find_last_not_of(" \t") + 1);
  return k;
}

/// Host CPU description, for flags like -march=native whose meaning depends on the machine
/// (a cache shared between different hosts must not mix their objects).
const std::string& hostCpuIdentity() {
  static std::once_flag once;
  static std::string id;
  std::call_once(once, [] {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    // A VM's model name may be generic ("Intel(R) Xeon(R) Processor" on Sapphire and
    // Emerald Rapids alike): the family, model and stepping numbers tell them apart.
    bool vendor = false, name = false, family = false, model = false, stepping = false, flags = false;
    while (std::getline(in, line) && !(vendor && name && family && model && stepping && flags)) {
      auto take = [&](const char* key, bool& seen) {
        if (!seen && cpuinfoKey(line) == key) {
          id += line;
          id += '\n';
          seen = true;
        }
      };
      take("vendor_id", vendor);
      take("model name", name);
      take("cpu family", family);
      take("model", model);
      take("stepping", stepping);
      take("flags", flags);
    }
  });
  return id;
}

struct CompilerRun {
  bool execFailed = false;
  int execErrno = 0;
  bool exitedNormally = false;
  int exitCode = -1;
  int signal = 0;
  bool timedOut = false;
  bool outputTruncated = false;
  std::string output;  ///< stdout + stderr, at most kMaxOutput bytes
};

constexpr size_t kMaxOutput = 256 * 1024;

/// Process groups of the compilers running now, for jitKillRunningCompilers (a signal
/// handler may read them: lock-free atomics only).
constexpr int kCompilerSlots = 64;
std::atomic<pid_t> runningCompilers[kCompilerSlots];

int registerCompiler(pid_t group) {
  for (int k = 0; k < kCompilerSlots; ++k) {
    pid_t expected = 0;
    if (runningCompilers[k].compare_exchange_strong(expected, group)) return k;
  }
  return -1;
}

/// Seconds the compiler may run: the option, else $TESSEL_CC_TIMEOUT, else 300; <= 0: none.
double compilerTimeout(const JitOptions& opts) {
  if (opts.timeoutSeconds != 0) return opts.timeoutSeconds;
  std::string v = getEnv("TESSEL_CC_TIMEOUT");
  if (v.empty()) return 300;
  char* end = nullptr;
  double t = std::strtod(v.c_str(), &end);
  if (*end != '\0' || !(t >= 0) || t > 1e9)
    throw CompileError("JIT: TESSEL_CC_TIMEOUT must be a number of seconds (0: no limit), not '" + v + "'");
  return t > 0 ? t : -1;
}

/// fork + execvp with stdout/stderr captured through a pipe; TMPDIR points at `tmpDir`
/// so the compiler's own intermediate files do not land in /tmp. The compiler leads its
/// own process group, so that a timeout kills the driver and what it started (cc1, as,
/// ld) together; it also dies with the thread that started it (PR_SET_PDEATHSIG).
CompilerRun runCompiler(const std::vector<std::string>& args, const std::string& tmpDir, double timeout) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  std::vector<std::string> envStrings;
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, "TMPDIR=", 7) != 0) envStrings.emplace_back(*e);
  envStrings.push_back("TMPDIR=" + tmpDir);
  std::vector<char*> envp;
  for (auto& s : envStrings) envp.push_back(s.data());
  envp.push_back(nullptr);

  int outPipe[2], errPipe[2];
  if (::pipe2(outPipe, O_CLOEXEC) != 0)
    throw CompileError("JIT: pipe() failed: " + errnoText(errno));
  if (::pipe2(errPipe, O_CLOEXEC) != 0) {
    int e = errno;
    ::close(outPipe[0]);
    ::close(outPipe[1]);
    throw CompileError("JIT: pipe() failed: " + errnoText(e));
  }
  // The compiler has its own process group (a timeout kills all of it), so a terminal's
  // Ctrl-C reaches only tessel: its handler kills the compilers before tessel ends.
  io_detail::addFatalSignalHook(jitKillRunningCompilers);
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    for (int fd : {outPipe[0], outPipe[1], errPipe[0], errPipe[1]}) ::close(fd);
    throw CompileError("JIT: fork() failed: " + errnoText(e));
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent is already gone
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(outPipe[1], 1);
    ::dup2(outPipe[1], 2);
    environ = envp.data();
    ::execvp(argv[0], argv.data());
    int e = errno;
    ssize_t ignored = ::write(errPipe[1], &e, sizeof e);
    (void)ignored;
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here: the group must exist before a timeout may kill it
  const int slot = registerCompiler(pid);
  ::close(outPipe[1]);
  ::close(errPipe[1]);

  CompilerRun run;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout > 0 ? timeout : 0);
  char buf[8192];
  for (;;) {
    int waitMs = -1;
    if (timeout > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        run.timedOut = true;
        ::kill(-pid, SIGKILL);
        ::kill(pid, SIGKILL);  // in case its group could not be made
        break;
      }
      waitMs = static_cast<int>(std::min<int64_t>(left.count() + 1, 1 << 30));
    }
    struct pollfd pfd = {outPipe[0], POLLIN, 0};
    int ready = ::poll(&pfd, 1, waitMs);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    ssize_t r = ::read(outPipe[0], buf, sizeof buf);
    if (r < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (r == 0) break;
    size_t room = kMaxOutput - std::min(kMaxOutput, run.output.size());
    if (static_cast<size_t>(r) > room) run.outputTruncated = true;
    run.output.append(buf, std::min(room, static_cast<size_t>(r)));
  }
  ::close(outPipe[0]);
  int childErrno = 0;
  ssize_t got;
  do {
    got = ::read(errPipe[0], &childErrno, sizeof childErrno);
  } while (got < 0 && errno == EINTR);
  ::close(errPipe[0]);
  if (got == static_cast<ssize_t>(sizeof childErrno)) {
    run.execFailed = true;
    run.execErrno = childErrno;
  }
  int status = 0;
  pid_t w;
  do {
    w = ::waitpid(pid, &status, 0);
  } while (w < 0 && errno == EINTR);
  if (run.timedOut) ::kill(-pid, SIGKILL);  // anything the group started since
  if (slot >= 0) runningCompilers[slot].store(0);
  if (w == pid) {
    if (WIFEXITED(status)) {
      run.exitedNormally = true;
      run.exitCode = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      run.signal = WTERMSIG(status);
    }
  } else if (!run.execFailed) {
    // Someone else reaped the child (SIGCHLD ignored); judge by the output file later.
    run.exitedNormally = true;
    run.exitCode = 0;
  }
  return run;
}

/// The line of the compiler's output that says what failed: the first with "error", else
/// the first non-empty one; at most 300 bytes, control bytes shown as '?'.
std::string firstDiagnostic(const std::string& output) {
  std::string first, line;
  size_t pos = 0;
  while (pos < output.size()) {
    size_t nl = output.find('\n', pos);
    if (nl == std::string::npos) nl = output.size();
    line = output.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (first.empty()) first = line;
    if (line.find("error") != std::string::npos) {
      first = line;
      break;
    }
  }
  if (first.size() > 300) first = first.substr(0, 300) + "...";
  for (char& c : first)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t') c = '?';
  return first;
}

/// OpenMP runtimes start worker threads that outlive a parallel region. If a module was the
/// first to pull such a runtime in, dlclose() of the module would unmap the runtime under
/// its sleeping workers (a crash). Mark any runtime that is loaded as never-unloaded.
void pinThreadRuntimes() {
  static const char* const kRuntimes[] = {"libgomp.so.1", "libomp.so", "libomp.so.5",
                                          "libiomp5.so"};
  static std::mutex mu;
  static bool pinned[std::size(kRuntimes)] = {};
  std::lock_guard<std::mutex> lock(mu);
  for (size_t i = 0; i < std::size(kRuntimes); ++i) {
    if (pinned[i]) continue;
    // The extra reference is deliberately never released.
    if (::dlopen(kRuntimes[i], RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) pinned[i] = true;
  }
}

constexpr const char* kKeySymbol = "tessel_cache_key";
constexpr size_t kMaxObjectBytes = size_t(1) << 30;

/// The source as compiled: `cSource` and the cache key as an exported constant, which a
/// load checks, so that an object is only ever used for the source and options it was
/// built from (whatever its file name or checksum say).
std::string withCacheKey(const std::string& cSource, const std::string& key) {
  std::string s = cSource;
  if (!s.empty() && s.back() != '\n') s += '\n';
  s += "\n/* The cache key of this object (source, compiler and flags); tessel checks it on load. */\n";
  s += std::string("extern const char ") + kKeySymbol + "[];\n";
  s += std::string("__attribute__((visibility(\"default\"), used)) const char ") + kKeySymbol + "[] = \"" +
       key + "\";\n";
  return s;
}

/// The whole regular file behind `fd`; false if it cannot be read or is too large.
bool readAll(int fd, std::string& out) {
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
      static_cast<uint64_t>(st.st_size) > kMaxObjectBytes)
    return false;
  out.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < out.size()) {
    ssize_t r = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;  // shrunk while read: not the object its checksum names
    done += static_cast<size_t>(r);
  }
  return true;
}

struct Loaded {
  void* handle = nullptr;
  int fd = -1;          ///< the private copy (memfd), kept open while loaded; -1 if none
  std::string problem;  ///< why not, when handle is null
};

/// dlopen() of `path`, making sure no loaded object already has that name: glibc hands
/// back an already loaded object of the same name instead of opening the file. Null with
/// `taken` set when one has.
void* openFresh(const std::string& path, bool& taken) {
  taken = false;
  if (void* old = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {
    ::dlclose(old);
    taken = true;
    return nullptr;
  }
  return ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
}

/// Loads exactly `bytes` (already verified against the checksum) from a private copy, so
/// that nothing that changes the cache file after the check is what runs, and checks the
/// key compiled into it. The copy is a sealed memfd loaded through /proc/self/fd (kept
/// open while loaded, so its name names no other object), else a temporary file in the
/// cache directory, removed once loaded.
Loaded loadCopy(const std::string& bytes, const std::string& key, const std::string& stem) {
  Loaded out;
  int fd = ::memfd_create("tessel-kernel", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd >= 0) {
    try {
      writeAll(fd, bytes.data(), bytes.size(), "memfd");
      ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
      // A name still taken by an object that outlived its copy: move to another number.
      for (int tries = 0; tries < 8 && !out.handle; ++tries) {
        bool taken = false;
        out.handle = openFresh("/proc/self/fd/" + std::to_string(fd), taken);
        if (out.handle) break;
        const char* err = ::dlerror();
        if (err) out.problem = err;
        if (!taken) break;  // no /proc, or not loadable: the temporary below says which
        int next = ::fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
        if (next < 0) break;
        ::close(fd);
        fd = next;
      }
    } catch (const CompileError& e) {
      out.problem = e.what();
    }
    if (!out.handle) ::close(fd);
    else out.fd = fd;
  }
  if (!out.handle) {  // no memfd or no /proc: a private temporary next to the object
    TempFile tmp;
    int tfd = tmp.create(stem, ".so");
    try {
      writeAll(tfd, bytes.data(), bytes.size(), tmp.path());
    } catch (...) {
      ::close(tfd);
      throw;
    }
    ::close(tfd);
    bool taken = false;
    out.handle = openFresh(tmp.path(), taken);
    if (!out.handle) {
      const char* err = taken ? nullptr : ::dlerror();
      out.problem = err ? err : "a loaded object has the name of its temporary copy";
      return out;
    }
  }
  pinThreadRuntimes();
  ::dlerror();
  const char* k = static_cast<const char*>(::dlsym(out.handle, kKeySymbol));
  if (!k || std::strncmp(k, key.c_str(), key.size() + 1) != 0) {
    ::dlclose(out.handle);
    if (out.fd >= 0) ::close(out.fd);
    out = Loaded();
    out.problem = k ? "it was built for another source or options (cache key mismatch)"
                    : "it carries no cache key";
  }
  return out;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

/// The cached object of `stem`, if its checksum and its compiled-in key match: the file
/// is opened once (no symlink, no FIFO), read whole through that descriptor, verified,
/// and that copy is loaded. A hit touches the object's mtime (least recently used goes
/// first when the cache is over its size).
Loaded loadCached(const std::string& stem, const std::string& key) {
  std::string recorded, bytes;
  if (!readSmallFile(stem + ".sum", recorded)) return {};
  int fd = ::open((stem + ".so").c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return {};
  Loaded out;
  if (readAll(fd, bytes) && detail::Sha256::hex(bytes) == trim(recorded)) {
    out = loadCopy(bytes, key, stem);
    if (out.handle) ::futimens(fd, nullptr);
  }
  ::close(fd);
  return out;
}

/// Writes the compiler's full output next to the source; returns the log's path, or ""
/// if it could not be written.
std::string writeLog(const std::string& stem, const std::vector<std::string>& args, const CompilerRun& run,
                     const std::string& status) {
  std::string text = "command: " + commandLine(args) + "\n" + status + "\n" + run.output;
  if (run.outputTruncated) text += "\n[output truncated at " + std::to_string(kMaxOutput / 1024) + " KB]\n";
  try {
    writeFileAtomically(stem + ".log", text, ".log");
  } catch (const CompileError&) {
    return "";
  }
  return stem + ".log";
}

/// One line for a failed compile (TESSEL_CC_LOG=1: the command and the whole output too).
[[noreturn]] void compileFailed(const std::string& stem, const std::vector<std::string>& args,
                                const CompilerRun& run, double timeout) {
  std::string why = run.timedOut   ? "timed out after " + std::to_string(static_cast<int64_t>(std::ceil(timeout))) +
                                       " s and was stopped (TESSEL_CC_TIMEOUT sets the limit)"
                    : run.signal   ? "killed by signal " + std::to_string(run.signal)
                    : run.exitCode ? "exit status " + std::to_string(run.exitCode)
                                   : "no output object";
  std::string log = writeLog(stem, args, run, "C compilation " + why);
  std::string msg = "C compilation " + (run.timedOut ? why : "failed (" + why + ")");
  std::string first = firstDiagnostic(run.output);
  if (!first.empty()) msg += ": " + first;
  msg += log.empty() ? "; no log (the cache directory is not writable)"
                     : "; full log: " + log + " (TESSEL_CC_LOG=1 prints it here)";
  std::string verbose = getEnv("TESSEL_CC_LOG");
  if (!verbose.empty() && verbose != "0") msg += "\ncommand: " + commandLine(args) + "\n" + run.output;
  throw CompileError(msg);
}

}  // namespace

JitModule::~JitModule() {
  if (handle_) ::dlclose(handle_);
  if (fd_ >= 0) ::close(fd_);
}

void* JitModule::symbol(const std::string& name) const {
  ::dlerror();
  void* p = ::dlsym(handle_, name.c_str());
  if (!p) {
    const char* err = ::dlerror();
    throw CompileError("JIT: symbol '" + name + "' not found in '" + path_ + "'" +
                       (err ? std::string(": ") + err : std::string()));
  }
  return p;
}

void jitKillRunningCompilers() noexcept {
  for (auto& slot : runningCompilers) {
    pid_t group = slot.load();
    if (group > 0) ::kill(-group, SIGKILL);
  }
}

std::string jitCacheDirectory() {
  std::string dir = getEnv("TESSEL_CACHE_DIR");
  if (dir.empty()) {
    std::string xdg = getEnv("XDG_CACHE_HOME");
    if (!xdg.empty() && xdg[0] == '/') {
      dir = xdg + "/tessel";
    } else {
      std::string home = getEnv("HOME");
      if (home.empty()) {
        struct passwd pw;
        struct passwd* res = nullptr;
        std::vector<char> buf(16384);
        if (::getpwuid_r(::geteuid(), &pw, buf.data(), buf.size(), &res) == 0 && res &&
            res->pw_dir)
          home = res->pw_dir;
      }
      if (home.empty())
        throw CompileError(
            "JIT cache: no cache directory (set TESSEL_CACHE_DIR, XDG_CACHE_HOME or HOME)");
      dir = home + "/.cache/tessel";
    }
  }
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  makeDirectories(dir);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0)
    throw CompileError("JIT cache: cannot access '" + dir + "': " + errnoText(errno));
  if (!S_ISDIR(st.st_mode))
    throw CompileError("JIT cache: '" + dir + "' exists but is not a directory");
  if (st.st_uid != ::geteuid())
    throw CompileError("JIT cache: refusing to use '" + dir +
                       "': it is owned by another user (uid " + std::to_string(st.st_uid) + ")");
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    throw CompileError("JIT cache: refusing to use '" + dir +
                       "': it is group- or world-writable (chmod 700 it)");
  detail::checkCacheDirectorySafety(dir, st.st_mode);
  if (dir[0] != '/') {  // make relative settings independent of later chdir()
    if (char* abs = ::realpath(dir.c_str(), nullptr)) {
      dir = abs;
      std::free(abs);
    }
  }
  return dir;
}

std::vector<std::string> jitDefaultFlags() {
  return {"-O3", "-march=native", "-falign-loops=" + std::to_string(kJitDefaultLoopAlign), "-fopenmp", "-std=gnu11"};
}

const std::string& jitHostCpuIdentity() { return hostCpuIdentity(); }

std::string jitHostCpuField(const std::string& key) {
  std::istringstream in(hostCpuIdentity());
  for (std::string line; std::getline(in, line);)
    if (cpuinfoKey(line) == key) {
      std::string v = line.substr(line.find(':') + 1);
      v.erase(0, v.find_first_not_of(' '));
      return v;
    }
  return "";
}

void detail::writeCacheFile(const std::string& target, const std::string& content, const std::string& suffix) {
  writeFileAtomically(target, content, suffix);
}

namespace {
std::string compilerOf(const std::string& given) {
  std::string compiler = given;
  if (compiler.empty()) compiler = getEnv("TESSEL_CC");
  if (compiler.empty()) compiler = "cc";
  return compiler;
}
}  // namespace

std::string jitCompilerIdentity(const std::string& compiler) { return compilerIdentity(compilerOf(compiler)); }

std::shared_ptr<JitModule> jitCompile(const std::string& cSource, const JitOptions& given) {
  JitOptions opts = given;
  if (opts.flags.empty()) opts.flags = jitDefaultFlags();
#if defined(__SANITIZE_ADDRESS__)
  // A host under AddressSanitizer checks its kernels' loads and stores too: a wrong bound in
  // the lowering shows in the generated code, which the host's instrumentation never sees.
  opts.flags.insert(opts.flags.end(), {"-fsanitize=address", "-fno-omit-frame-pointer"});
#endif
#if defined(TESSEL_JIT_UBSAN)  // likewise undefined behaviour, where asked (CMake's TESSEL_JIT_UBSAN)
  opts.flags.insert(opts.flags.end(), {"-fsanitize=undefined", "-fno-sanitize-recover=undefined"});
#endif
  const std::string compiler = compilerOf(opts.compiler);

  // Cache key.
  detail::Sha256 keyHash;
  auto field = [&](const std::string& s) {
    std::string len = std::to_string(s.size()) + ":";
    keyHash.update(len);
    keyHash.update(s);
  };
  field("tessel-jit-v2");  // v2: the key is compiled into the object
  field(compiler);
  field(compilerIdentity(compiler));
  field(std::to_string(opts.flags.size()));
  bool native = false;
  for (const auto& f : opts.flags) {
    field(f);
    if (f.find("native") != std::string::npos) native = true;
  }
  if (native) field(hostCpuIdentity());
  field(cSource);
  const std::string key = keyHash.hexDigest();

  const std::string dir = jitCacheDirectory();
  const std::string stem = dir + "/" + key;
  const std::string cPath = stem + ".c", soPath = stem + ".so", sumPath = stem + ".sum";

  // Hit: the object's checksum and the key compiled into it match (else rebuild it).
  Loaded hit = loadCached(stem, key);
  if (hit.handle) return std::shared_ptr<JitModule>(new JitModule(hit.handle, soPath, true, hit.fd));

  // Miss: source first (so diagnostics name a file that exists), then the object.
  const int64_t maxBytes = detail::cacheMaxBytes();
  const double timeout = compilerTimeout(opts);
  writeFileAtomically(cPath, withCacheKey(cSource, key), ".c");

  TempFile tmpSo;
  ::close(tmpSo.create(stem, ".so"));
  std::vector<std::string> args;
  args.push_back(compiler);
  args.insert(args.end(), opts.flags.begin(), opts.flags.end());
  args.insert(args.end(), {"-shared", "-fPIC", "-o", tmpSo.path(), cPath});

  CompilerRun run = runCompiler(args, dir, timeout);
  if (run.execFailed) {
    if (run.execErrno == ENOENT)
      throw CompileError("JIT: C compiler '" + compiler +
                         "' not found (set TESSEL_CC or JitOptions::compiler); command: " +
                         commandLine(args));
    throw CompileError("JIT: cannot run C compiler '" + compiler +
                       "': " + errnoText(run.execErrno) + "; command: " + commandLine(args));
  }
  // The object is read once, through one descriptor: what is hashed is what is loaded.
  std::string bytes;
  int fd = ::open(tmpSo.path().c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  bool produced = fd >= 0 && readAll(fd, bytes);
  if (fd >= 0) ::close(fd);
  if (run.timedOut || !run.exitedNormally || run.exitCode != 0 || !produced)
    compileFailed(stem, args, run, timeout);
  tmpSo.renameTo(soPath);
  writeFileAtomically(sumPath, detail::Sha256::hex(bytes) + "\n", ".sum");

  Loaded fresh = loadCopy(bytes, key, stem);
  if (!fresh.handle)
    throw CompileError("JIT: cannot load '" + soPath + "': " + fresh.problem);
  detail::evictCache(dir, maxBytes, key);
  return std::shared_ptr<JitModule>(new JitModule(fresh.handle, soPath, false, fresh.fd));
}

}  // namespace tessel
