// Memory limit for planned allocations (see io_util.h).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <limits>

#include "io/io_util.h"

namespace tessel::io_detail {

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
      if (*end == '\0')
        return v >= 9.2e18 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(v);
    }
  }
  long pages = ::sysconf(_SC_PHYS_PAGES);
  long pageSize = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || pageSize <= 0) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(pages) * static_cast<int64_t>(pageSize);
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
