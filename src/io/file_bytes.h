// The bytes of a whole input file, safe against the file changing underneath: small
// files are copied (a private snapshot), large ones mapped with a SIGBUS guard. Not
// installed.
//
// Why: a page of a mapped file that is truncated away raises SIGBUS on access, and
// MAP_PRIVATE does not help (untouched private pages still track the file). Copying is
// sound but costs a pass over the data, so only files up to kCopyBelow are copied. For a
// mapping, a SIGBUS handler recognises faults inside it: while the reader validates
// (FileBytes::checkIntact not yet passed) it maps a zero page over the missing one and
// records the fault, and checkIntact() then throws FileError; after that (a kernel reading
// the tensor) it prints one line naming the file and ends the process with exit status 2.
// Limits: a file rewritten in place (same size, other bytes) after validation is not
// detected; tessel's own writers replace files by rename, which never affects a mapping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace tessel::io_detail {

class FileBytes {
 public:
  /// Files up to this size are read into memory instead of mapped.
  static constexpr int64_t kCopyBelow = int64_t{16} << 20;

  /// The whole of `fd` (a regular file of `size` bytes, opened by openRegularFile; this
  /// object takes it over). `copy` forces a copy below kCopyBelow; `populate` prefaults a
  /// mapping. Throws FileError.
  static std::shared_ptr<FileBytes> load(const std::string& path, int fd, int64_t size, bool copy,
                                         bool populate);
  ~FileBytes();
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;

  const unsigned char* data() const { return data_; }
  size_t size() const { return size_; }
  bool mapped() const { return slot_ >= 0 || mappedNoGuard_; }
  /// After reading and validating: throws FileError if the file lost pages or changed
  /// size meanwhile; from then on a fault in the mapping ends the process (see above).
  void checkIntact();

 private:
  FileBytes() = default;
  std::string path_;
  int fd_ = -1;
  unsigned char* data_ = nullptr;
  size_t size_ = 0;
  int slot_ = -1;               // guard registry slot of a mapping
  bool mappedNoGuard_ = false;  // mapped, but the registry was full
};

}  // namespace tessel::io_detail
