// JIT: compile C source with the system compiler into a cached shared object and load it.
//
// Cache layout (one directory, mode 0700, owned by the user):
//   <key>.c    the source (written to a temporary name, then renamed into place)
//   <key>.so   the object (compiled to a temporary name, then renamed into place)
//   <key>.sum  SHA-256 of <key>.so, written after a successful compile; checked on every hit
// <key> is the SHA-256 of (compiler path and identity, flags, host CPU when a flag says
// "native", source). Everything is written under a unique temporary name in the cache
// directory and rename()d into place, so processes sharing the cache never see a partial
// file. A hit costs one hash of the object plus dlopen().
#include "tessel/jit.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <fstream>
#include <mutex>
#include <sstream>

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

/// SHA-256 of a file's contents; false if it cannot be read.
bool hashFile(const std::string& path, std::string& hex) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  detail::Sha256 h;
  std::vector<char> buf(1 << 16);
  bool ok = true;
  for (;;) {
    ssize_t r = ::read(fd, buf.data(), buf.size());
    if (r < 0) {
      if (errno == EINTR) continue;
      ok = false;
      break;
    }
    if (r == 0) break;
    h.update(buf.data(), static_cast<size_t>(r));
  }
  ::close(fd);
  if (ok) hex = h.hexDigest();
  return ok;
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

/// Host CPU description, for flags like -march=native whose meaning depends on the machine
/// (a cache shared between different hosts must not mix their objects).
const std::string& hostCpuIdentity() {
  static std::once_flag once;
  static std::string id;
  std::call_once(once, [] {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    bool vendor = false, model = false, flags = false;
    while (std::getline(in, line) && !(vendor && model && flags)) {
      auto take = [&](const char* key, bool& seen) {
        if (!seen && line.rfind(key, 0) == 0) {
          id += line;
          id += '\n';
          seen = true;
        }
      };
      take("vendor_id", vendor);
      take("model name", model);
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
  std::string output;  ///< stdout + stderr, at most kMaxOutput bytes
};

constexpr size_t kMaxOutput = 256 * 1024;

/// fork + execvp with stdout/stderr captured through a pipe; TMPDIR points at `tmpDir`
/// so the compiler's own intermediate files do not land in /tmp.
CompilerRun runCompiler(const std::vector<std::string>& args, const std::string& tmpDir) {
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
  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    for (int fd : {outPipe[0], outPipe[1], errPipe[0], errPipe[1]}) ::close(fd);
    throw CompileError("JIT: fork() failed: " + errnoText(e));
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
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
  ::close(outPipe[1]);
  ::close(errPipe[1]);

  CompilerRun run;
  char buf[8192];
  for (;;) {
    ssize_t r = ::read(outPipe[0], buf, sizeof buf);
    if (r < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (r == 0) break;
    size_t room = kMaxOutput - std::min(kMaxOutput, run.output.size());
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

std::string firstLines(const std::string& text, int maxLines) {
  std::string out;
  int lines = 0;
  size_t pos = 0;
  while (pos < text.size() && lines < maxLines) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    out.append(text, pos, nl - pos);
    out += '\n';
    ++lines;
    pos = nl + 1;
  }
  if (pos < text.size()) out += "[... further diagnostics omitted ...]\n";
  return out;
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

void* loadObject(const std::string& path) {
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h) pinThreadRuntimes();
  return h;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

JitModule::~JitModule() {
  if (handle_) ::dlclose(handle_);
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
  if (dir[0] != '/') {  // make relative settings independent of later chdir()
    if (char* abs = ::realpath(dir.c_str(), nullptr)) {
      dir = abs;
      std::free(abs);
    }
  }
  return dir;
}

std::shared_ptr<JitModule> jitCompile(const std::string& cSource, const JitOptions& opts) {
  std::string compiler = opts.compiler;
  if (compiler.empty()) compiler = getEnv("TESSEL_CC");
  if (compiler.empty()) compiler = "cc";

  // Cache key.
  detail::Sha256 keyHash;
  auto field = [&](const std::string& s) {
    std::string len = std::to_string(s.size()) + ":";
    keyHash.update(len);
    keyHash.update(s);
  };
  field("tessel-jit-v1");
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

  // Hit: the object exists and matches its recorded checksum.
  {
    std::string recorded, actual;
    if (readSmallFile(sumPath, recorded) && hashFile(soPath, actual) &&
        trim(recorded) == actual) {
      void* h = loadObject(soPath);
      if (h) return std::shared_ptr<JitModule>(new JitModule(h, soPath, true));
      // A verified object that does not load: fall through and rebuild it.
    }
  }

  // Miss: source first (so diagnostics name a file that exists), then the object.
  writeFileAtomically(cPath, cSource, ".c");

  TempFile tmpSo;
  ::close(tmpSo.create(stem, ".so"));
  std::vector<std::string> args;
  args.push_back(compiler);
  args.insert(args.end(), opts.flags.begin(), opts.flags.end());
  args.insert(args.end(), {"-shared", "-fPIC", "-o", tmpSo.path(), cPath});

  CompilerRun run = runCompiler(args, dir);
  if (run.execFailed) {
    if (run.execErrno == ENOENT)
      throw CompileError("JIT: C compiler '" + compiler +
                         "' not found (set TESSEL_CC or JitOptions::compiler); command: " +
                         commandLine(args));
    throw CompileError("JIT: cannot run C compiler '" + compiler +
                       "': " + errnoText(run.execErrno) + "; command: " + commandLine(args));
  }
  struct stat st;
  bool produced = ::stat(tmpSo.path().c_str(), &st) == 0 && st.st_size > 0;
  if (!run.exitedNormally || run.exitCode != 0 || !produced) {
    std::string why = run.signal ? "killed by signal " + std::to_string(run.signal)
                      : run.exitCode != 0 ? "exit status " + std::to_string(run.exitCode)
                                          : "no output object";
    std::string msg = "C compilation failed (" + why + ")\ncommand: " + commandLine(args);
    if (!run.output.empty()) msg += "\n" + firstLines(run.output, 40);
    throw CompileError(msg);
  }

  std::string soHash;
  if (!hashFile(tmpSo.path(), soHash))
    throw CompileError("JIT cache: cannot read compiled object '" + tmpSo.path() + "'");
  tmpSo.renameTo(soPath);
  writeFileAtomically(sumPath, soHash + "\n", ".sum");

  void* h = loadObject(soPath);
  if (!h) {
    const char* err = ::dlerror();
    throw CompileError("JIT: cannot load '" + soPath + "': " + (err ? err : "unknown error"));
  }
  return std::shared_ptr<JitModule>(new JitModule(h, soPath, false));
}

}  // namespace tessel
