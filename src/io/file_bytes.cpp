// Whole-file bytes: a copy for small files, a guarded mapping for large ones (see
// file_bytes.h for why and for the limits).
#include "io/file_bytes.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "io/io_util.h"
#include "tessel/error.h"

namespace tessel::io_detail {

namespace {

// The registry the SIGBUS handler reads: lock-free, fixed size (a handler cannot
// allocate or lock). A mapping that finds no free slot is simply unguarded.
enum SlotState : int { kFree = 0, kClaimed, kValidating, kLive };
struct Slot {
  std::atomic<uintptr_t> begin{0}, end{0};
  std::atomic<int> state{kFree};
  std::atomic<int> torn{0};
  char message[640] = {};  // "tessel: error: PATH: ...\n", written on a fault after validation
  size_t messageLen = 0;
};
constexpr int kSlots = 64;
Slot g_slots[kSlots];
struct sigaction g_previous;
uintptr_t g_pageSize = 4096;

void onSigbus(int sig, siginfo_t* info, void* ctx) {
  const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
  for (Slot& s : g_slots) {
    const int state = s.state.load(std::memory_order_acquire);
    if ((state != kValidating && state != kLive) || addr < s.begin.load() || addr >= s.end.load())
      continue;
    if (state == kValidating) {
      // Let validation finish on zeros; checkIntact() reports the fault.
      void* page = reinterpret_cast<void*>(addr & ~(g_pageSize - 1));
      if (::mmap(page, g_pageSize, PROT_READ, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) != MAP_FAILED) {
        s.torn.store(1);
        return;
      }
    }
    ssize_t ignored = ::write(2, s.message, s.messageLen);
    (void)ignored;
    ::_exit(2);
  }
  // Not a file tessel maps: what would have happened without this handler.
  if ((g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_sigaction) {
    g_previous.sa_sigaction(sig, info, ctx);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
  } else {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGBUS, &dfl, nullptr);  // returning re-executes the access: default action
  }
}

void installHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    long ps = ::sysconf(_SC_PAGE_SIZE);
    if (ps > 0) g_pageSize = static_cast<uintptr_t>(ps);
    struct sigaction sa {};
    sa.sa_sigaction = onSigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, &g_previous);
  });
}

int claimSlot(const std::string& path, const unsigned char* base, size_t size) {
  for (int i = 0; i < kSlots; i++) {
    int expect = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expect, kClaimed)) continue;
    Slot& s = g_slots[i];
    std::string msg = "tessel: error: " + escapeBytes(path) +
                      ": the file was truncated or changed while tessel had it mapped\n";
    msg.resize(std::min(msg.size(), sizeof s.message));
    std::memcpy(s.message, msg.data(), msg.size());
    s.messageLen = msg.size();
    s.torn.store(0);
    s.begin.store(reinterpret_cast<uintptr_t>(base));
    s.end.store(reinterpret_cast<uintptr_t>(base) + size);
    s.state.store(kValidating, std::memory_order_release);
    return i;
  }
  return -1;
}

[[noreturn]] void changed(const std::string& path) {
  throw FileError(path, "the file changed (truncated or rewritten) while tessel read it");
}

}  // namespace

std::shared_ptr<FileBytes> FileBytes::load(const std::string& path, int fd, int64_t size, bool copy,
                                           bool populate) {
  std::shared_ptr<FileBytes> fb(new FileBytes);
  fb->path_ = path;
  fb->fd_ = fd;
  fb->size_ = static_cast<size_t>(size);
  if ((copy && size <= kCopyBelow) || size == 0) {
    fb->data_ = static_cast<unsigned char*>(std::malloc(std::max<size_t>(fb->size_, 1)));
    if (!fb->data_) throw OutOfMemoryError(path + ": cannot allocate " + std::to_string(size) + " bytes");
    size_t got = 0;
    while (got < fb->size_) {
      ssize_t r = ::pread(fd, fb->data_ + got, fb->size_ - got, static_cast<off_t>(got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw FileError(path, std::string("cannot read: ") + std::strerror(errno));
      if (r == 0) changed(path);  // shorter than fstat said
      got += static_cast<size_t>(r);
    }
    return fb;
  }
  installHandler();
  void* p = ::mmap(nullptr, fb->size_, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd, 0);
  if (p == MAP_FAILED) throw FileError(path, std::string("cannot map: ") + std::strerror(errno));
  fb->data_ = static_cast<unsigned char*>(p);
  fb->slot_ = claimSlot(path, fb->data_, fb->size_);
  fb->mappedNoGuard_ = fb->slot_ < 0;
  return fb;
}

void FileBytes::checkIntact() {
  struct stat st;
  if (::fstat(fd_, &st) != 0 || static_cast<size_t>(st.st_size) != size_ ||
      (slot_ >= 0 && g_slots[slot_].torn.load()))
    changed(path_);
  if (slot_ >= 0) g_slots[slot_].state.store(kLive, std::memory_order_release);
}

FileBytes::~FileBytes() {
  if (slot_ >= 0) g_slots[slot_].state.store(kFree, std::memory_order_release);
  if (slot_ >= 0 || mappedNoGuard_)
    ::munmap(data_, size_);
  else
    std::free(data_);
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace tessel::io_detail
