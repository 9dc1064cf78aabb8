// A one-line progress report on stderr for long reads and writes:
//   "reading B.mtx  45% 120 MB/s"
// updated in place and cleared when the operation ends. Shown only when stderr is a
// terminal and the file is large (>= 64 MB) or the operation has taken more than half a
// second. The environment variable TESSEL_PROGRESS=0 turns it off, TESSEL_PROGRESS=1 turns
// it on unconditionally (even when stderr is not a terminal, and for small files).
// Not installed.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

namespace tessel::io_detail {

class Progress {
 public:
  /// `verb` ("reading", "writing") and the file name head the line; `totalBytes` is the
  /// expected size (0 if unknown: then the percentage comes from update()'s item counts,
  /// or is left out).
  Progress(const char* verb, const std::string& path, int64_t totalBytes);
  ~Progress() { finish(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Cheap enough to call once per entry: does real work only every few MB.
  /// `bytes` processed so far; optionally `item` of `items` done (for the percentage when
  /// the total size is unknown).
  void update(int64_t bytes, int64_t item = 0, int64_t items = 0) {
    if (bytes >= next_) slowUpdate(bytes, item, items);
  }
  /// Clears the line (if shown) and stops reporting.
  void finish();

  /// The decision made from TESSEL_PROGRESS and isatty(2): 0 off, 1 forced, 2 automatic.
  static int mode();

 private:
  void slowUpdate(int64_t bytes, int64_t item, int64_t items);
  static constexpr int64_t kStep = int64_t(4) << 20;         // look at the clock this often
  static constexpr int64_t kLargeFile = int64_t(64) << 20;   // shown from the start
  int64_t next_ = std::numeric_limits<int64_t>::max();     // disabled unless enabled
  int64_t total_ = 0;
  bool forced_ = false, shown_ = false;
  std::string label_;
  std::chrono::steady_clock::time_point start_, lastDraw_;
};

}  // namespace tessel::io_detail
