// The JIT cache's directory: its safety checks and its size limit (see jit_cache.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace tessel::detail {

/// Default of TESSEL_CACHE_MAX_MB.
inline constexpr int64_t kDefaultCacheMaxMB = 512;

/// The cache's size limit in bytes: $TESSEL_CACHE_MAX_MB megabytes (a decimal number),
/// else the default.
/// Throws CompileError on a malformed value.
int64_t cacheMaxBytes();

/// Removes the least recently used objects of `dir` (each key's .so, .sum, .c and .log
/// together, oldest .so mtime first) until the cache holds at most `maxBytes`; never
/// `keepKey`'s files, nor files that are not the cache's. Temporaries left by killed
/// processes (older than an hour) go too. Errors are ignored: eviction is best effort.
void evictCache(const std::string& dir, int64_t maxBytes, const std::string& keepKey);

/// Refuses (CompileError) a cache directory an other user could replace: one of its
/// parents is group- or world-writable without the sticky bit. Warns once per process
/// on stderr about a parent owned by another user (not root), and about a cache
/// directory others can read or enter (not mode 0700).
void checkCacheDirectorySafety(const std::string& dir, unsigned mode);

/// Writes `content` to `target` in the cache directory through a unique temporary renamed
/// over it, as the cache's own files are written (readers never see part of it). `suffix`
/// is target's extension (".txt"). Throws CompileError when it cannot be written.
void writeCacheFile(const std::string& target, const std::string& content, const std::string& suffix);

}  // namespace tessel::detail
