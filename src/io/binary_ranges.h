// Parts of a .tsb file read by ranges (a rank's rows of a distributed tensor, SuperTaco
// §4.5): the validated header, then elements of single arrays by pread, so a reader
// touches only what it asks for. Not installed.
//
// What is checked: the whole header (as readBinary does: magic, version, header
// checksum, format, that every array lies inside the file with the counts the format
// implies); the elements read are checked by the caller (pos monotone, crd in range). The
// payload checksum covers whole arrays and is not verified by a ranged read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessel/format.h"
#include "tessel/notation.h"

namespace tessel::io_detail {

/// One array of a .tsb payload: absolute byte offset, element count and size.
struct BinaryArrayRange {
  int64_t offset = 0, count = 0, elemBytes = 0;
};

/// A .tsb file's header: datatype, format, dims, and per level its pos and crd arrays
/// (count 0 where the level has none), then vals.
struct BinaryLayout {
  Datatype type = Datatype::Float64;
  Format format;
  std::vector<int64_t> dims;
  std::vector<BinaryArrayRange> pos, crd;
  BinaryArrayRange vals;
};

/// Opens `path` (regular files only), reads and validates its header; `fd` stays open
/// for the caller (who closes it). FileError "path:byte N" on any problem.
BinaryLayout openBinaryLayout(const std::string& path, int& fd);

/// An open .tsb file read by ranges.
class BinaryRanges {
 public:
  explicit BinaryRanges(const std::string& path);
  ~BinaryRanges();
  BinaryRanges(const BinaryRanges&) = delete;
  BinaryRanges& operator=(const BinaryRanges&) = delete;

  const BinaryLayout& layout() const { return layout_; }
  const std::string& path() const { return path_; }
  /// Elements [first, first + n) of an index array, widened to int64. FileError when
  /// the range lies outside the array or the read fails.
  std::vector<int64_t> indices(const BinaryArrayRange& a, int64_t first, int64_t n) const;
  /// Values [first, first + n) converted to double.
  std::vector<double> values(int64_t first, int64_t n) const;
  /// "path:byte N" of element i of `a`, for the caller's validation messages.
  std::string where(const BinaryArrayRange& a, int64_t i) const;

 private:
  void readBytes(int64_t offset, int64_t bytes, void* out) const;
  std::string path_;
  int fd_ = -1;
  BinaryLayout layout_;
};

}  // namespace tessel::io_detail
