// Memory limit for allocations whose size comes from input (see io_util.h).
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <limits>

#include "io/io_util.h"
#include "tessel/error.h"

namespace tessel::io_detail {

namespace {

constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();

/// The container's memory limit (cgroup v2, then v1), or kNoLimit: inside a container the
/// OOM killer acts at that limit, not at physical memory.
int64_t cgroupLimit() {
  for (const char* file : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    if (std::FILE* f = std::fopen(file, "re")) {
      long long v = 0;
      int n = std::fscanf(f, "%lld", &v);
      std::fclose(f);
      if (n == 1 && v > 0) return v;
    }
  }
  return kNoLimit;
}

/// Three quarters of what this process may use: physical memory, the cgroup limit and
/// the address-space and data ulimits, whichever is least. Computed once.
int64_t systemLimit() {
  static const int64_t limit = [] {
    int64_t m = kNoLimit;
    long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && pageSize > 0) m = static_cast<int64_t>(pages) * pageSize;
    m = std::min(m, cgroupLimit());
    for (int res : {RLIMIT_AS, RLIMIT_DATA}) {
      struct rlimit rl;
      if (::getrlimit(res, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
          rl.rlim_cur < static_cast<rlim_t>(kNoLimit))
        m = std::min(m, static_cast<int64_t>(rl.rlim_cur));
    }
    return m == kNoLimit ? m : m / 4 * 3;
  }();
  return limit;
}

}  // namespace

int64_t memoryLimit() {
  if (const char* env = std::getenv("TESSEL_MAX_MEMORY")) {
    char* end = nullptr;
    double v = std::strtod(env, &end);
    if (end != env && v >= 0) {
      switch (*end) {
        case 'k': case 'K': v *= 1024.0; ++end; break;
        case 'm': case 'M': v *= 1024.0 * 1024; ++end; break;
        case 'g': case 'G': v *= 1024.0 * 1024 * 1024; ++end; break;
        case 't': case 'T': v *= 1024.0 * 1024 * 1024 * 1024; ++end; break;
        default: break;
      }
      if (*end == 'B' || *end == 'b') ++end;
      if (*end == '\0') return v >= 9.2e18 ? kNoLimit : static_cast<int64_t>(v);
    }
  }
  return systemLimit();
}

std::string memoryExcess(long double bytes) {
  const int64_t limit = memoryLimit();
  if (bytes <= static_cast<long double>(limit)) return {};
  return humanBytes(static_cast<double>(bytes)) + ", more than the " +
         humanBytes(static_cast<double>(limit)) + " memory limit (TESSEL_MAX_MEMORY overrides it)";
}

void requireMemory(long double bytes, const std::string& what) {
  std::string excess = memoryExcess(bytes);
  if (!excess.empty()) throw MemoryLimitError(what + " needs " + excess);
}

std::string humanBytes(double bytes) {
  static const char* units[] = {"bytes", "KB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (bytes >= 1000 && u < 6) {
    bytes /= 1000;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

}  // namespace tessel::io_detail
