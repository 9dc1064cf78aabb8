// The JIT cache's directory: who could replace what tessel loads from it, and how large it
// may grow. Objects are loaded into the process and run, so a directory another user can
// rename entries in (a writable parent without the sticky bit) is refused; the size limit
// evicts the least recently used objects (a hit touches its object's mtime: atime is
// often not kept).
#include "runtime/jit_cache.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "tessel/error.h"

namespace tessel::detail {

namespace {

/// Prints `text` on stderr once per process.
void warnOnce(const std::string& text) {
  static std::mutex mu;
  static std::set<std::string> shown;
  std::lock_guard<std::mutex> lock(mu);
  if (shown.insert(text).second) std::fprintf(stderr, "tessel: warning: %s\n", text.c_str());
}

std::string octal(unsigned mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", mode & 07777);
  return buf;
}

bool isHex(const std::string& s) {
  return s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

/// "<64 hex>.<ext>" or "<64 hex>.tmp.XXXXXX<ext>": the key, and whether it is a temporary.
/// Anything else is not the cache's (left alone).
bool cacheFileKey(const std::string& name, std::string& key, bool& temporary) {
  if (name.size() < 66 || name[64] != '.' || !isHex(name.substr(0, 64))) return false;
  key = name.substr(0, 64);
  std::string rest = name.substr(65);
  temporary = rest.rfind("tmp.", 0) == 0;
  if (temporary) return true;
  return rest == "so" || rest == "sum" || rest == "c" || rest == "log";
}

}  // namespace

int64_t cacheMaxBytes() {
  const char* v = std::getenv("TESSEL_CACHE_MAX_MB");
  if (!v || !*v) return kDefaultCacheMaxMB << 20;
  char* end = nullptr;
  double mb = std::strtod(v, &end);
  if (*end != '\0' || !(mb >= 0) || mb > 1e9)
    throw CompileError(std::string("JIT cache: TESSEL_CACHE_MAX_MB must be a number of megabytes, not '") + v + "'");
  return static_cast<int64_t>(mb * 1048576.0);
}

void evictCache(const std::string& dir, int64_t maxBytes, const std::string& keepKey) {
  struct Group {
    int64_t bytes = 0;
    struct timespec used = {0, 0};  ///< the .so's mtime (else the newest file's)
    bool hasObject = false;
    std::vector<std::string> files;
  };
  std::map<std::string, Group> groups;
  int64_t total = 0;
  const time_t staleBefore = std::time(nullptr) - 3600;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name, key;
    bool temporary = false;
    if (!cacheFileKey(name, key, temporary)) continue;
    std::string path = dir + "/" + name;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (temporary) {  // a compile in progress, or one a killed process left behind
      if (st.st_mtime < staleBefore) ::unlink(path.c_str());
      else total += st.st_size;
      continue;
    }
    Group& g = groups[key];
    g.bytes += st.st_size;
    total += st.st_size;
    bool object = name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0;
    auto later = [](const struct timespec& a, const struct timespec& b) {
      return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec > b.tv_nsec;
    };
    if (object || (!g.hasObject && later(st.st_mtim, g.used))) g.used = st.st_mtim;
    g.hasObject |= object;
    // The object first: without it the key is a miss, whatever else is left.
    if (object) g.files.insert(g.files.begin(), path);
    else g.files.push_back(path);
  }
  ::closedir(d);
  if (total <= maxBytes) return;
  std::vector<std::pair<std::string, const Group*>> order;
  for (const auto& [key, g] : groups)
    if (key != keepKey) order.emplace_back(key, &g);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    const struct timespec &x = a.second->used, &y = b.second->used;
    return x.tv_sec != y.tv_sec ? x.tv_sec < y.tv_sec : x.tv_nsec < y.tv_nsec;
  });
  for (const auto& [key, g] : order) {
    if (total <= maxBytes) break;
    for (const std::string& f : g->files) ::unlink(f.c_str());
    total -= g->bytes;
  }
}

void checkCacheDirectorySafety(const std::string& dir, unsigned mode) {
  if ((mode & 0077) != 0)
    warnOnce("JIT cache directory '" + dir + "' has mode " + octal(mode) +
             "; other users can read the compiled kernels (chmod 700 it)");
  char* real = ::realpath(dir.c_str(), nullptr);
  if (!real) return;  // checked by the caller's own accesses
  std::string path = real;
  std::free(real);
  // Every proper ancestor of the resolved directory, innermost first.
  while (path.size() > 1) {
    size_t slash = path.rfind('/');
    path = slash == 0 ? "/" : path.substr(0, slash);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) continue;
    bool othersWrite = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
    if (othersWrite && !(st.st_mode & S_ISVTX))
      throw CompileError("JIT cache: refusing to use '" + dir + "': its parent '" + path + "' (mode " +
                         octal(st.st_mode) +
                         ") is group- or world-writable without the sticky bit, so another user could "
                         "replace the cache (set TESSEL_CACHE_DIR elsewhere)");
    if (st.st_uid != 0 && st.st_uid != ::geteuid())
      warnOnce("JIT cache directory '" + dir + "': its parent '" + path + "' is owned by another user (uid " +
               std::to_string(st.st_uid) + "), who could replace the cache");
  }
}

}  // namespace tessel::detail
