// Ranged reads of a .tsb file (see binary_ranges.h).
#include "io/binary_ranges.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tessel/error.h"

namespace tessel::io_detail {

BinaryRanges::BinaryRanges(const std::string& path) : path_(path) { layout_ = openBinaryLayout(path, fd_); }

BinaryRanges::~BinaryRanges() {
  if (fd_ >= 0) ::close(fd_);
}

std::string BinaryRanges::where(const BinaryArrayRange& a, int64_t i) const {
  return path_ + ":byte " + std::to_string(a.offset + i * a.elemBytes);
}

void BinaryRanges::readBytes(int64_t offset, int64_t bytes, void* out) const {
  auto* dst = static_cast<unsigned char*>(out);
  int64_t got = 0;
  while (got < bytes) {
    ssize_t r = ::pread(fd_, dst + got, static_cast<size_t>(bytes - got), offset + got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw FileError(path_ + ":byte " + std::to_string(offset + got), std::string("cannot read: ") + std::strerror(errno));
    if (r == 0)
      throw FileError(path_ + ":byte " + std::to_string(offset + got), "truncated while reading (the file shrank)");
    got += r;
  }
}

std::vector<int64_t> BinaryRanges::indices(const BinaryArrayRange& a, int64_t first, int64_t n) const {
  if (first < 0 || n < 0 || first + n > a.count)
    throw FileError(where(a, first), "range [" + std::to_string(first) + ", " + std::to_string(first + n) +
                                         ") outside an index array of " + std::to_string(a.count));
  std::vector<int64_t> out(static_cast<size_t>(n));
  if (a.elemBytes == 8) {
    readBytes(a.offset + first * 8, n * 8, out.data());
  } else {
    std::vector<uint32_t> narrow(static_cast<size_t>(n));
    readBytes(a.offset + first * 4, n * 4, narrow.data());
    for (size_t i = 0; i < narrow.size(); i++) out[i] = narrow[i];
  }
  return out;
}

std::vector<double> BinaryRanges::values(int64_t first, int64_t n) const {
  const BinaryArrayRange& a = layout_.vals;
  if (first < 0 || n < 0 || first + n > a.count)
    throw FileError(where(a, first), "range outside the vals array");
  std::vector<double> out(static_cast<size_t>(n));
  if (layout_.type == Datatype::Float64) {
    readBytes(a.offset + first * 8, n * 8, out.data());
    return out;
  }
  std::vector<unsigned char> raw(static_cast<size_t>(n * a.elemBytes));
  readBytes(a.offset + first * a.elemBytes, n * a.elemBytes, raw.data());
  for (int64_t i = 0; i < n; i++) {
    const unsigned char* p = raw.data() + i * a.elemBytes;
    switch (layout_.type) {
      case Datatype::Float32: { float v; std::memcpy(&v, p, 4); out[static_cast<size_t>(i)] = v; break; }
      case Datatype::Int32: { int32_t v; std::memcpy(&v, p, 4); out[static_cast<size_t>(i)] = v; break; }
      case Datatype::Int64: { int64_t v; std::memcpy(&v, p, 8); out[static_cast<size_t>(i)] = static_cast<double>(v); break; }
      case Datatype::Bool: out[static_cast<size_t>(i)] = *p ? 1.0 : 0.0; break;
      default: throw InternalError("BinaryRanges::values: datatype");
    }
  }
  return out;
}

}  // namespace tessel::io_detail
