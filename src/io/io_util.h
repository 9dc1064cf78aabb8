// Internal helpers shared by the tensor-file readers and writers: a block-buffered line
// reader, whitespace tokenizing, strict number parsing, and a write-to-temporary-then-
// rename output file. Not installed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tessel::io_detail {

/// "path:line" for error messages.
std::string where(const std::string& path, int64_t line);

/// Opens `path` for reading and returns the descriptor, with the file's size in `size`.
/// Anything but a regular file (a FIFO, device, socket, directory) is refused with a
/// FileError before it can block: the open is non-blocking, and fstat decides.
int openRegularFile(const std::string& path, int64_t& size);

/// Reads a file in large blocks and hands out one line at a time (without the newline or
/// a trailing '\r'). Files ending in ".gz" are decompressed when built with zlib, and
/// must be complete: a truncated stream or one without its trailer (CRC and length) is a
/// FileError. Throws FileError (with strerror) if the file cannot be opened or read.
class LineReader {
 public:
  explicit LineReader(const std::string& path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  /// Next line; false at end of file. The view is valid until the next call.
  bool next(std::string_view& line);
  /// 1-based number of the line last returned (0 before the first).
  int64_t lineNumber() const { return line_; }
  /// Size of the file on disk (compressed size for .gz); 0 if unknown.
  int64_t fileSize() const { return fileSize_; }
  /// True when the file is decompressed on the fly (.gz): fileSize() then bounds nothing.
  bool compressed() const { return gz_ != nullptr; }
  /// Bytes read so far (decompressed bytes for .gz), for progress reports.
  int64_t bytesRead() const { return read_; }
  /// Byte offset of the next line (bytes before it; decompressed bytes for .gz).
  int64_t offset() const { return read_ - static_cast<int64_t>(end_ - begin_); }
  const std::string& path() const { return path_; }

 private:
  size_t fill(char* dst, size_t n);
  std::string path_;
  int fd_ = -1;
  void* gz_ = nullptr;
  std::unique_ptr<char[]> buf_;  // uninitialized: no cost for pages never touched
  size_t cap_ = 0;
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  int64_t line_ = 0;
  int64_t fileSize_ = 0;
  int64_t read_ = 0;
};

inline bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/// True if the line is empty or whitespace only.
inline bool isBlank(std::string_view s) {
  for (char c : s)
    if (!isSpace(c)) return false;
  return true;
}

/// Split on blanks. Stores at most `max` tokens in `out`; returns the total count.
inline int splitTokens(std::string_view s, std::string_view* out, int max) {
  int n = 0;
  const char* p = s.data();
  const char* e = p + s.size();
  for (;;) {
    while (p < e && isSpace(*p)) ++p;
    if (p == e) return n;
    const char* b = p;
    while (p < e && !isSpace(*p)) ++p;
    if (n < max) out[n] = std::string_view(b, static_cast<size_t>(p - b));
    ++n;
  }
}

/// Split on blanks into a reusable vector.
inline void splitTokens(std::string_view s, std::vector<std::string_view>& out) {
  out.clear();
  const char* p = s.data();
  const char* e = p + s.size();
  for (;;) {
    while (p < e && isSpace(*p)) ++p;
    if (p == e) return;
    const char* b = p;
    while (p < e && !isSpace(*p)) ++p;
    out.emplace_back(b, static_cast<size_t>(p - b));
  }
}

enum class NumStatus { Ok, Invalid, OutOfRange };

/// Fast path for the common case: up to 18 decimal digits at p (no sign), followed by
/// the end or a blank. Advances p past the digits. False means "use the slow path".
inline bool fastIndex(const char*& p, const char* e, int64_t& out) {
  const char* b = p;
  uint64_t x = 0;
  while (p < e && static_cast<unsigned>(*p - '0') <= 9u) x = x * 10 + static_cast<unsigned>(*p++ - '0');
  if (p == b || p - b > 18 || (p < e && !isSpace(*p))) return false;
  out = static_cast<int64_t>(x);
  return true;
}
inline void skipSpaces(const char*& p, const char* e) {
  while (p < e && isSpace(*p)) ++p;
}

/// Whole-token decimal integer with optional sign.
NumStatus parseInt64(std::string_view tok, int64_t& out);
/// Whole-token real number (decimal or exponent form, "inf", "infinity", "nan", any case,
/// optional sign). Values beyond the double range become +-inf or (denormal) zero.
NumStatus parseDouble(std::string_view tok, double& out);
/// Optional sign followed by digits only.
bool looksLikeInteger(std::string_view tok);

/// Case-insensitive ASCII equality.
bool equalsIgnoreCase(std::string_view a, std::string_view b);

/// Temporaries are named ".BASE" kTempMarker "PID.N.HEX" in the target's directory.
inline constexpr const char* kTempMarker = ".tessel-tmp.";
/// A temporary older than this whose process is gone is stale (sweepStaleTemporaries).
inline constexpr long kStaleTempSeconds = 10 * 60;
/// Registers a temporary to be unlinked when SIGINT, SIGTERM, SIGHUP or SIGXFSZ ends the
/// process (handlers are installed, once, only for signals at their default action).
/// Returns a slot for unregisterTemporary, or -1 when the fixed registry is full.
int registerTemporary(const std::string& path);
void unregisterTemporary(int slot);
/// Adds an async-signal-safe hook that the same handlers run first (the JIT kills its
/// running compilers there); installs the handlers. At most a few hooks; repeats of one
/// hook are kept once.
void addFatalSignalHook(void (*hook)() noexcept);
/// Removes stale temporaries (kTempMarker names, writer dead, older than
/// kStaleTempSeconds) in `dir` ("" or ending in '/'); once per directory per process.
void sweepStaleTemporaries(const std::string& dir);

/// Creates a uniquely named temporary next to `path` (".BASE" kTempMarker "PID.N.HEX",
/// mode 0666 & ~umask, registered for removal by the fatal-signal handlers: `slot`) and
/// returns its descriptor, open for writing. FileError when it cannot.
int createTemporary(const std::string& path, std::string& tmp, int& slot);

/// Output file that appears under its final name only when complete: data goes to a
/// uniquely named temporary in the same directory, which commit() flushes to disk
/// (fsync) and renames over the target, then syncs the directory. Destroying an
/// uncommitted writer, or a terminating signal, removes the temporary. Every write and
/// the close are checked; failures throw FileError.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(const std::string& path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(std::string_view s) {
    buf_.append(s.data(), s.size());
    if (buf_.size() >= kFlushAt) flushFull();
  }
  void put(char c) {
    buf_.push_back(c);
    if (buf_.size() >= kFlushAt) flushFull();
  }
  /// Bytes written so far (flushed or buffered), for progress reports.
  int64_t bytesWritten() const { return flushed_ + static_cast<int64_t>(buf_.size()); }
  void writeInt(int64_t v);
  /// Same text as printf("%.17g").
  void writeDouble(double v);
  /// Flush, close and rename into place.
  void commit();

 private:
  static constexpr size_t kFlushAt = 1 << 20;
  void flushFull() {
    flushed_ += static_cast<int64_t>(buf_.size());
    flush();
  }
  void flush();
  void writeRaw(const char* p, size_t n);
  /// Compresses what is buffered (`finish`: and ends the gzip stream) and writes it.
  void deflateBuffered(bool finish);
  void endDeflate();
  [[noreturn]] void fail(const std::string& what, int err);
  void removeTemporary();
  std::string path_, dir_, tmp_;
  int fd_ = -1;
  void* z_ = nullptr;  // a zlib z_stream when the path ends in .gz (gzip output)
  int slot_ = -1;  // registerTemporary
  std::string buf_;
  int64_t flushed_ = 0;
};

/// The most memory one allocation (or a reader's plan for a file's declared contents)
/// whose size comes from input may take: the environment variable TESSEL_MAX_MEMORY
/// (bytes, with an optional K/M/G/T suffix) if set and valid, else three quarters of the
/// least of physical memory, the cgroup limit and the RLIMIT_AS/RLIMIT_DATA ulimits.
int64_t memoryLimit();
/// Empty when `bytes` fits memoryLimit(), else "N GB, more than the M GB memory limit
/// (TESSEL_MAX_MEMORY overrides it)" for a message.
std::string memoryExcess(long double bytes);
/// The one check before allocating from an input's sizes: throws MemoryLimitError
/// "<what> needs <memoryExcess>" when `bytes` is over the limit.
void requireMemory(long double bytes, const std::string& what);
/// "1.5 GB" style size for messages.
std::string humanBytes(double bytes);

}  // namespace tessel::io_detail
