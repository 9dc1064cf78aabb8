// Progress line for long reads and writes (see progress.h).
#include "io/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tessel::io_detail {

int Progress::mode() {
  const char* env = std::getenv("TESSEL_PROGRESS");
  if (env && std::strcmp(env, "0") == 0) return 0;
  if (env && std::strcmp(env, "1") == 0) return 1;
  return ::isatty(2) ? 2 : 0;
}

Progress::Progress(const char* verb, const std::string& path, int64_t totalBytes)
    : total_(totalBytes) {
  int m = mode();
  if (m == 0) return;
  forced_ = m == 1;
  size_t slash = path.rfind('/');
  label_ = std::string(verb) + " " + (slash == std::string::npos ? path : path.substr(slash + 1));
  start_ = lastDraw_ = std::chrono::steady_clock::now();
  next_ = forced_ ? 0 : kStep;
}

void Progress::slowUpdate(int64_t bytes, int64_t item, int64_t items) {
  next_ = bytes + kStep;
  auto now = std::chrono::steady_clock::now();
  double elapsed = std::chrono::duration<double>(now - start_).count();
  if (!shown_) {
    if (!forced_ && total_ < kLargeFile && elapsed < 0.5) return;
    shown_ = true;
  } else if (std::chrono::duration<double>(now - lastDraw_).count() < 0.1) {
    return;
  }
  lastDraw_ = now;
  double fraction = -1;
  if (total_ > 0)
    fraction = static_cast<double>(bytes) / static_cast<double>(total_);
  else if (items > 0)
    fraction = static_cast<double>(item) / static_cast<double>(items);
  if (fraction > 1) fraction = 1;
  char line[512];
  int n;
  double mb = static_cast<double>(bytes) / 1e6;
  double rate = elapsed > 0 ? mb / elapsed : 0;
  if (fraction >= 0)
    n = std::snprintf(line, sizeof line, "\r%.200s %3d%% %.0f MB/s\033[K", label_.c_str(),
                      static_cast<int>(fraction * 100), rate);
  else
    n = std::snprintf(line, sizeof line, "\r%.200s %.0f MB %.0f MB/s\033[K", label_.c_str(), mb,
                      rate);
  if (n > 0) {
    size_t len = std::min(static_cast<size_t>(n), sizeof line - 1);
    ssize_t w = ::write(2, line, len);
    (void)w;
  }
}

void Progress::finish() {
  next_ = std::numeric_limits<int64_t>::max();
  if (shown_) {
    shown_ = false;
    static const char clear[] = "\r\033[K";
    ssize_t w = ::write(2, clear, sizeof clear - 1);
    (void)w;
  }
}

}  // namespace tessel::io_detail
