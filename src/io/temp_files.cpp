// Temporaries of AtomicFileWriter: removed when a signal ends the process, and swept
// when a killed process (SIGKILL, a crash, a power cut) left them behind.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <set>
#include <string>

#include "io/io_util.h"

namespace tessel::io_detail {

namespace {

// Lock-free, fixed-size registry: the handler may neither lock nor allocate. A writer
// that finds no free slot is unregistered (its temporary is left to the sweep).
constexpr int kSlots = 32;
constexpr size_t kPathMax = 4096;
struct Slot {
  std::atomic<int> state{0};  // 0 free, 1 being filled, 2 registered
  char path[kPathMax];
};
Slot g_slots[kSlots];
const int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGXFSZ};
constexpr int kHooks = 4;
std::atomic<void (*)() noexcept> g_hooks[kHooks];

void onSignal(int sig) {
  for (auto& h : g_hooks)
    if (auto f = h.load(std::memory_order_acquire)) f();
  for (Slot& s : g_slots)
    if (s.state.load(std::memory_order_acquire) == 2) ::unlink(s.path);
  // Then die of the signal as if no handler had been installed (exit status and core
  // dump as the parent expects).
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);
}

void installHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : kSignals) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0) continue;
      // An application's own handler, or an ignored signal (nohup), stays as it is.
      if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL) {
        struct sigaction sa {};
        sa.sa_handler = onSignal;
        sa.sa_flags = SA_NODEFER;  // the re-raise in the handler is delivered at once
        sigemptyset(&sa.sa_mask);
        ::sigaction(sig, &sa, nullptr);
      }
    }
  });
}

/// "PID" of a name ".BASE<kTempMarker>PID.N.HEX", or -1.
long pidOfTemporary(const char* name) {
  if (name[0] != '.') return -1;
  const char* m = std::strstr(name, kTempMarker);
  if (!m) return -1;
  char* end = nullptr;
  long pid = std::strtol(m + std::strlen(kTempMarker), &end, 10);
  return end && *end == '.' && pid > 0 ? pid : -1;
}

}  // namespace

void addFatalSignalHook(void (*hook)() noexcept) {
  installHandlers();
  for (auto& h : g_hooks) {
    void (*expect)() noexcept = nullptr;
    if (h.load() == hook || h.compare_exchange_strong(expect, hook)) return;
  }
}

int registerTemporary(const std::string& path) {
  installHandlers();
  if (path.size() >= kPathMax) return -1;
  for (int i = 0; i < kSlots; i++) {
    int expect = 0;
    if (!g_slots[i].state.compare_exchange_strong(expect, 1)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(2, std::memory_order_release);
    return i;
  }
  return -1;
}

void unregisterTemporary(int slot) {
  if (slot >= 0 && slot < kSlots) g_slots[slot].state.store(0, std::memory_order_release);
}

void sweepStaleTemporaries(const std::string& dir) {
  // Once per directory per process: a directory is read once, not per output file.
  static std::mutex mu;
  static std::set<std::string> swept;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!swept.insert(dir).second) return;
  }
  const std::string d = dir.empty() ? "." : dir;
  DIR* dp = ::opendir(d.c_str());
  if (!dp) return;  // creating the temporary reports what is wrong with the directory
  const time_t now = std::time(nullptr);
  while (const dirent* e = ::readdir(dp)) {
    long pid = pidOfTemporary(e->d_name);
    if (pid < 0 || pid == static_cast<long>(::getpid())) continue;
    // Only a dead writer's, and only old ones: a pid may belong to another machine
    // (a shared file system), where kill() tells nothing; age makes that safe.
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    struct stat st;
    if (::fstatat(::dirfd(dp), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    if (now - st.st_mtime < kStaleTempSeconds) continue;
    ::unlinkat(::dirfd(dp), e->d_name, 0);
  }
  ::closedir(dp);
}

}  // namespace tessel::io_detail
