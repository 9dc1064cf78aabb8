// Shared harness for the tensor-file fuzz targets: the input bytes are written to a file
// in a private temporary directory and handed to a reader. A tessel::UserError is the
// expected outcome for malformed input; any other exception escapes (libFuzzer reports it
// as a crash), as do sanitizer reports and hangs. Successful reads are checked for
// internal consistency.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tessel/coo.h"
#include "tessel/error.h"
#include "tessel/io.h"

namespace fuzz {

inline const std::string& tempDir() {
  // Never destroyed: the atexit handler below runs after static destructors.
  static const std::string& dir = *new std::string([] {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/tessel-fuzz-XXXXXX";
    if (!::mkdtemp(tmpl.data())) std::abort();
    // Readers must not plan allocations beyond what the fuzzer's RSS limit allows.
    ::setenv("TESSEL_MAX_MEMORY", "256M", 1);
    ::setenv("TESSEL_PROGRESS", "0", 1);
    std::atexit([] {
      for (const char* n : {"in.mtx", "in.tns", "in.mtx.gz", "in.tns.gz"})
        ::unlink((tempDir() + "/" + n).c_str());
      ::rmdir(tempDir().c_str());
    });
    return tmpl;
  }());
  return dir;
}

/// Writes data to dir/name (replacing it) and returns the path.
inline std::string writeInput(const std::string& name, const uint8_t* data, size_t size) {
  std::string path = tempDir() + "/" + name;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) std::abort();
  size_t off = 0;
  while (off < size) {
    ssize_t w = ::write(fd, data + off, size - off);
    if (w <= 0) std::abort();
    off += static_cast<size_t>(w);
  }
  ::close(fd);
  return path;
}

#define FUZZ_CHECK(cond)                                                        \
  do {                                                                          \
    if (!(cond)) {                                                              \
      std::fprintf(stderr, "invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                             \
    }                                                                           \
  } while (0)

/// Coordinates in range, one value per entry, non-negative dims.
inline void checkCoo(const tessel::CooData& d) {
  const size_t order = d.dims.size();
  for (int64_t x : d.dims) FUZZ_CHECK(x >= 0);
  FUZZ_CHECK(d.coords.size() == d.values.size() * order);
  for (size_t e = 0; e < d.values.size(); ++e)
    for (size_t m = 0; m < order; ++m) {
      int64_t c = d.coords[e * order + m];
      FUZZ_CHECK(c >= 0 && c < d.dims[m]);
    }
}

}  // namespace fuzz
