// Tensor files: dispatch by extension, the shared line reader, number parsing, the safe
// (temporary + rename) writer, and index widths that fit a tensor.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "io/io_util.h"
#include "io/text_entries.h"
#include "tessel/binary_format.h"
#include "tessel/error.h"
#include "tessel/io.h"

#ifdef TESSEL_HAVE_ZLIB
#include <zlib.h>
#endif

namespace tessel {
namespace io_detail {

std::string where(const std::string& path, int64_t line) {
  return path + ":" + std::to_string(line);
}

namespace {
constexpr size_t kBlock = size_t(512) << 10;     // read size
constexpr size_t kMaxLine = size_t(64) << 20;    // longest line accepted

bool endsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         equalsIgnoreCase(std::string_view(s).substr(s.size() - suffix.size()), suffix);
}
}  // namespace

int openRegularFile(const std::string& path, int64_t& size) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw FileError(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    throw FileError(path, std::string("cannot stat: ") + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    const char* what = S_ISDIR(st.st_mode)    ? "it is a directory"
                       : S_ISFIFO(st.st_mode) ? "it is a FIFO (named pipe)"
                       : S_ISCHR(st.st_mode)  ? "it is a character device"
                       : S_ISBLK(st.st_mode)  ? "it is a block device"
                       : S_ISSOCK(st.st_mode) ? "it is a socket"
                                              : "it is not a regular file";
    throw FileError(path, std::string("cannot read: ") + what + " (tessel reads regular files only)");
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  size = static_cast<int64_t>(st.st_size);
  return fd;
}

LineReader::LineReader(const std::string& path) : path_(path) {
  fd_ = openRegularFile(path, fileSize_);
  if (endsWith(path, ".gz")) {
#ifdef TESSEL_HAVE_ZLIB
    int dupFd = ::dup(fd_);
    gzFile gz = dupFd >= 0 ? ::gzdopen(dupFd, "rb") : nullptr;
    if (!gz) {
      if (dupFd >= 0) ::close(dupFd);
      ::close(fd_);
      throw FileError(path, "cannot open gzip stream");
    }
    ::gzbuffer(gz, 1 << 17);
    gz_ = gz;
#else
    ::close(fd_);
    throw FileError(path, "gzip-compressed files need zlib, which this build of tessel lacks");
#endif
  } else {
#ifdef POSIX_FADV_SEQUENTIAL
    ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  }
  buf_.reset(new char[kBlock]);
  cap_ = kBlock;
}

LineReader::~LineReader() {
#ifdef TESSEL_HAVE_ZLIB
  if (gz_) ::gzclose(static_cast<gzFile>(gz_));
#endif
  if (fd_ >= 0) ::close(fd_);
}

size_t LineReader::fill(char* dst, size_t n) {
#ifdef TESSEL_HAVE_ZLIB
  if (gz_) {
    unsigned chunk = static_cast<unsigned>(std::min<size_t>(n, 1u << 30));
    int r = ::gzread(static_cast<gzFile>(gz_), dst, chunk);
    if (r > 0) return static_cast<size_t>(r);
    // At the end, or failed. zlib hands out what it decompressed of a truncated stream
    // and reports the missing rest only as Z_BUF_ERROR ("unexpected end of file"); a
    // missing or wrong trailer is the same, or Z_DATA_ERROR. Anything but Z_OK is an
    // incomplete input.
    int errnum = Z_OK;
    const char* msg = ::gzerror(static_cast<gzFile>(gz_), &errnum);
    if (r == 0 && errnum == Z_OK) return 0;
    if (errnum == Z_BUF_ERROR)
      throw FileError(path_, "truncated gzip stream (ends before its end-of-stream trailer) after " +
                                 std::to_string(read_) + " decompressed bytes");
    throw FileError(where(path_, line_ + 1), std::string("cannot decompress: ") +
                                                 (msg && *msg ? msg : "zlib error") + " (corrupt gzip stream)");
  }
#endif
  for (;;) {
    ssize_t r = ::read(fd_, dst, n);
    if (r >= 0) return static_cast<size_t>(r);
    if (errno == EINTR) continue;
    throw FileError(where(path_, line_ + 1), std::string("cannot read: ") + std::strerror(errno));
  }
}

bool LineReader::next(std::string_view& line) {
  size_t scanFrom = begin_;
  for (;;) {
    const char* base = buf_.get();
    const void* nl = scanFrom < end_ ? std::memchr(base + scanFrom, '\n', end_ - scanFrom) : nullptr;
    if (nl) {
      const char* p = static_cast<const char*>(nl);
      size_t len = static_cast<size_t>(p - (base + begin_));
      line = std::string_view(base + begin_, len);
      begin_ += len + 1;
      ++line_;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      return true;
    }
    if (eof_) {
      if (begin_ < end_) {  // last line without a newline
        line = std::string_view(base + begin_, end_ - begin_);
        begin_ = end_;
        ++line_;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        return true;
      }
      return false;
    }
    // Keep the partial line, then read more behind it.
    size_t keep = end_ - begin_;
    if (begin_ > 0) {
      std::memmove(buf_.get(), buf_.get() + begin_, keep);
      begin_ = 0;
      end_ = keep;
    }
    scanFrom = keep;
    if (end_ == cap_) {
      if (cap_ >= kMaxLine)
        throw FileError(where(path_, line_ + 1), "line longer than " +
                                                     std::to_string(kMaxLine >> 20) + " MiB");
      std::unique_ptr<char[]> bigger(new char[cap_ * 2]);
      std::memcpy(bigger.get(), buf_.get(), end_);
      buf_ = std::move(bigger);
      cap_ *= 2;
    }
    size_t got = fill(buf_.get() + end_, cap_ - end_);
    if (got == 0)
      eof_ = true;
    else {
      end_ += got;
      read_ += static_cast<int64_t>(got);
    }
  }
}

namespace {
/// Skip one leading '+' (from_chars does not accept it); false if nothing numeric is
/// left or another sign follows.
bool skipPlusSign(const char*& b, const char* e) {
  if (b < e && *b == '+') {
    ++b;
    if (b < e && (*b == '-' || *b == '+')) return false;
  }
  return b != e;
}
}  // namespace

NumStatus parseInt64(std::string_view tok, int64_t& out) {
  const char* b = tok.data();
  const char* e = b + tok.size();
  if (!skipPlusSign(b, e)) return NumStatus::Invalid;
  auto [p, ec] = std::from_chars(b, e, out);
  if (ec == std::errc::result_out_of_range) {
    // from_chars stops at the end of the digits; the token must still be all digits.
    while (p < e && *p >= '0' && *p <= '9') ++p;
    return p == e ? NumStatus::OutOfRange : NumStatus::Invalid;
  }
  if (ec != std::errc() || p != e) return NumStatus::Invalid;
  return NumStatus::Ok;
}

NumStatus parseDouble(std::string_view tok, double& out) {
  const char* b = tok.data();
  const char* e = b + tok.size();
  if (!skipPlusSign(b, e)) return NumStatus::Invalid;
  auto [p, ec] = std::from_chars(b, e, out, std::chars_format::general);
  if (ec == std::errc::result_out_of_range && p == e) {
    // Overflow or underflow: take strtod's answer (+-HUGE_VAL = inf, or a denormal/zero).
    std::string copy(b, e);
    out = std::strtod(copy.c_str(), nullptr);
    return NumStatus::Ok;
  }
  if (ec != std::errc() || p != e) return NumStatus::Invalid;
  return NumStatus::Ok;
}

bool looksLikeInteger(std::string_view tok) {
  size_t i = 0;
  if (i < tok.size() && (tok[i] == '+' || tok[i] == '-')) ++i;
  if (i == tok.size()) return false;
  for (; i < tok.size(); ++i)
    if (tok[i] < '0' || tok[i] > '9') return false;
  return true;
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------
// AtomicFileWriter

int createTemporary(const std::string& path, std::string& tmp, int& slot) {
  size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty()) throw FileError(path, "not a file name");
  sweepStaleTemporaries(dir);
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 rng(std::random_device{}() ^
                                   static_cast<uint64_t>(
                                       std::chrono::steady_clock::now().time_since_epoch().count()));
  // Like mkstemp, but created with mode 0666 & ~umask, the mode a plain open() would give.
  for (int attempt = 0; attempt < 100; ++attempt) {
    char suffix[64];
    std::snprintf(suffix, sizeof suffix, "%ld.%llu.%08llx", static_cast<long>(::getpid()),
                  static_cast<unsigned long long>(counter.fetch_add(1)),
                  static_cast<unsigned long long>(rng() & 0xffffffffu));
    tmp = dir + "." + base + kTempMarker + suffix;
    // Registered before it exists: a signal between creating and registering would leave
    // it behind (the name holds our pid, so no other live process owns a file by it).
    slot = registerTemporary(tmp);
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    int err = errno;
    unregisterTemporary(slot);
    slot = -1;
    if (err != EEXIST) {
      tmp.clear();
      throw FileError(path, std::string("cannot create file: ") + std::strerror(err));
    }
  }
  tmp.clear();
  throw FileError(path, "cannot create a unique temporary file");
}

AtomicFileWriter::AtomicFileWriter(const std::string& path) : path_(path) {
  size_t slash = path.rfind('/');
  dir_ = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
  fd_ = createTemporary(path, tmp_, slot_);
  buf_.reserve(kFlushAt + 4096);
  if (endsWith(path, ".gz")) {
#ifdef TESSEL_HAVE_ZLIB
    auto* z = new z_stream{};
    // windowBits 15 + 16: a gzip header and trailer, what gzip(1) and gzopen read.
    if (::deflateInit2(z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      delete z;
      ::close(fd_);
      fd_ = -1;
      removeTemporary();
      throw FileError(path, "cannot start a gzip stream");
    }
    z_ = z;
#else
    ::close(fd_);
    fd_ = -1;
    removeTemporary();
    throw FileError(path, "gzip-compressed files need zlib, which this build of tessel lacks");
#endif
  }
}

void AtomicFileWriter::endDeflate() {
#ifdef TESSEL_HAVE_ZLIB
  if (z_) {
    ::deflateEnd(static_cast<z_stream*>(z_));
    delete static_cast<z_stream*>(z_);
    z_ = nullptr;
  }
#endif
}

void AtomicFileWriter::deflateBuffered(bool finish) {
#ifdef TESSEL_HAVE_ZLIB
  auto* z = static_cast<z_stream*>(z_);
  z->next_in = reinterpret_cast<Bytef*>(buf_.data());
  z->avail_in = static_cast<uInt>(buf_.size());
  char out[1 << 16];
  for (;;) {
    z->next_out = reinterpret_cast<Bytef*>(out);
    z->avail_out = sizeof out;
    int r = ::deflate(z, finish ? Z_FINISH : Z_NO_FLUSH);
    if (r == Z_STREAM_ERROR) fail("cannot compress", EIO);
    writeRaw(out, sizeof out - z->avail_out);
    if (finish ? r == Z_STREAM_END : (z->avail_in == 0 && z->avail_out != 0)) break;
  }
#else
  (void)finish;
#endif
  buf_.clear();
}

void AtomicFileWriter::removeTemporary() {
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  unregisterTemporary(slot_);
  slot_ = -1;
  tmp_.clear();
}

AtomicFileWriter::~AtomicFileWriter() {
  endDeflate();
  if (fd_ >= 0) ::close(fd_);
  removeTemporary();
}

void AtomicFileWriter::fail(const std::string& what, int err) {
  endDeflate();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  removeTemporary();
  throw FileError(path_, what + ": " + std::strerror(err));
}

void AtomicFileWriter::flush() {
  if (z_) return deflateBuffered(false);
  writeRaw(buf_.data(), buf_.size());
  buf_.clear();
}

void AtomicFileWriter::writeRaw(const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail("cannot write", errno);
    }
    if (w == 0) fail("cannot write", EIO);
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void appendInt(std::string& out, int64_t v) {
  char tmp[24];
  auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
  out.append(tmp, static_cast<size_t>(r.ptr - tmp));
}

void appendDouble(std::string& out, double v) {
  // to_chars with a precision is specified to match printf's %.17g.
  char tmp[64];
  auto r = std::to_chars(tmp, tmp + sizeof tmp, v, std::chars_format::general, 17);
  out.append(tmp, static_cast<size_t>(r.ptr - tmp));
}

void appendEntryLine(std::string& out, const int64_t* coords, int order, double value) {
  for (int m = 0; m < order; ++m) {
    appendInt(out, coords[m] + 1);
    out += ' ';
  }
  appendDouble(out, value);
  out += '\n';
}

void AtomicFileWriter::writeInt(int64_t v) {
  char tmp[24];
  auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
  write(std::string_view(tmp, static_cast<size_t>(r.ptr - tmp)));
}

void AtomicFileWriter::writeDouble(double v) {
  std::string s;
  appendDouble(s, v);
  write(s);
}

void AtomicFileWriter::commit() {
  if (z_) {
    deflateBuffered(true);
    endDeflate();
  } else {
    flush();
  }
  // On disk before the rename: otherwise a crash can leave the new name on empty data.
  // EINVAL: a file system without fsync (nothing to wait for).
  if (::fsync(fd_) != 0 && errno != EINVAL) fail("cannot write", errno);
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    int err = errno;
    removeTemporary();
    throw FileError(path_, std::string("cannot write: ") + std::strerror(err));
  }
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    int err = errno;
    removeTemporary();
    throw FileError(path_, std::string("cannot replace file: ") + std::strerror(err));
  }
  unregisterTemporary(slot_);
  slot_ = -1;
  tmp_.clear();
  // The rename itself is durable only once the directory is synced.
  int dfd = ::open(dir_.empty() ? "." : dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    if (::fsync(dfd) != 0 && errno != EINVAL && errno != EROFS && errno != EBADF) {
      int err = errno;
      ::close(dfd);
      throw FileError(path_, std::string("cannot sync its directory: ") + std::strerror(err));
    }
    ::close(dfd);
  }
}

}  // namespace io_detail

// ---------------------------------------------------------------------------------------
// Dispatch

namespace {

enum class Kind { Mtx, Tns, Tsb, Unknown };

Kind kindOf(const std::string& path) {
  std::string p = path;
  if (p.size() > 3 && io_detail::equalsIgnoreCase(std::string_view(p).substr(p.size() - 3), ".gz"))
    p.resize(p.size() - 3);
  auto ext = [&](std::string_view e) {
    return p.size() > e.size() &&
           io_detail::equalsIgnoreCase(std::string_view(p).substr(p.size() - e.size()), e);
  };
  if (ext(".mtx")) return Kind::Mtx;
  if (ext(".tns")) return Kind::Tns;
  if (ext(".tsb")) return Kind::Tsb;
  return Kind::Unknown;
}

}  // namespace

FileContents readTensorFile(const std::string& path) {
  switch (kindOf(path)) {
    case Kind::Mtx:
      return readMtx(path);
    case Kind::Tns:
      return readTns(path);
    case Kind::Tsb: {
      if (!isBinaryTensorPath(path))
        throw FileError(path, "compressed (.gz) .tsb files are not supported");
      TensorBase t = mapBinary(path);  // validated; toCoo() copies out of the mapping
      FileContents fc;
      fc.data = t.toCoo();
      fc.field = t.datatype() == Datatype::Float32 || t.datatype() == Datatype::Float64
                     ? FileField::Real
                     : FileField::Integer;
      return fc;
    }
    case Kind::Unknown:
      break;
  }
  throw FileError(path, "unknown tensor file type; expected a .mtx or .tns extension (text) or .tsb (binary)");
}

void writeTensorFile(const std::string& path, const CooData& data) {
  std::string p = path;
  const bool gz = p.size() > 3 && io_detail::equalsIgnoreCase(std::string_view(p).substr(p.size() - 3), ".gz");
  if (gz && kindOf(path) == Kind::Tsb)
    throw FileError(path, "compressed (.gz) .tsb files are not supported (.tsb files are mapped, not read)");
  switch (kindOf(path)) {
    case Kind::Mtx:
      return writeMtx(path, data);
    case Kind::Tns:
      return writeTns(path, data);
    case Kind::Tsb: {
      Format f = withFittingWidths(defaultBinaryFormat(data.order()), data.dims, data.nnz());
      TensorBase t("T", Datatype::Float64, data.dims, f);
      t.setFromCoo(data);
      return writeBinary(path, t);
    }
    case Kind::Unknown:
      break;
  }
  throw FileError(path, "unknown tensor file type; expected a .mtx or .tns extension (text) or .tsb (binary)");
}

Format withFittingWidths(const Format& f, const std::vector<int64_t>& dims, int64_t nnz) {
  bool wideCrd = false, widePos = nnz > INT32_MAX;
  for (int64_t d : dims) {
    if (d - 1 > INT32_MAX) wideCrd = true;
    if (d > INT32_MAX) widePos = true;
  }
  if (!wideCrd && !widePos) return f;
  return f.withWidths(widePos ? IndexWidth::W64 : f.posWidth(),
                      wideCrd ? IndexWidth::W64 : f.crdWidth());
}

}  // namespace tessel
