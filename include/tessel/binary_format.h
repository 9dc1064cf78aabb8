// The tessel binary tensor file (.tsb): a tensor stored exactly as its level arrays, so
// loading is a copy (or an mmap) with no parsing.
//
// Layout (version 1, every integer little-endian):
//
//   offset  size  field
//        0     8  magic "TESSELTB"
//        8     4  u32 format version (1)
//       12     4  u32 header size (768)
//       16     4  u32 datatype: 0 bool, 1 int32, 2 int64, 3 float32, 4 float64
//       20     4  u32 order (<= 16)
//       24     4  u32 pos width in bits (32 or 64)
//       28     4  u32 crd width in bits (32 or 64)
//       32    16  u8 level kind per level: 0 dense, 1 compressed, 2 compressed non-unique,
//                 3 singleton (unused slots 0)
//       48    16  u8 mode stored at each level (unused slots 0)
//       64   128  i64 dimension per mode (unused slots 0)
//      192   512  per level k: i64 pos offset, pos count, crd offset, crd count
//      704    16  i64 vals offset, vals count
//      720     8  u64 total file size
//      728     8  u64 payload checksum (of the arrays, see below)
//      736     8  u64 header checksum (of bytes 0..735)
//      744    24  zero
//      768        payload: the arrays, each starting at a multiple of 64 bytes, padded
//                 with zeros; the file size is a multiple of 64.
//
// Offsets are absolute byte offsets in the file; counts are elements (pos/crd of the
// format's widths, vals of the datatype). Levels without arrays (dense; pos of a
// singleton) have offset 0 and count 0. The payload checksum combines
// binaryChecksum() of each array's bytes (level 0 pos, level 0 crd, level 1 pos, ...,
// vals), so padding is not covered.
//
// Readers check everything before allocating: the magic, version, header checksum,
// datatype, order, format, that every array lies inside the file and that the counts are
// the ones the format implies (a compressed level has parent positions + 1 pos entries,
// its crd count is the last pos value; a singleton level one crd per parent position;
// vals one per position of the last level), computed without int64 overflow; then the
// payload checksum, and while copying that pos arrays start at 0, never decrease and end
// at the crd count, that crd values lie in [0, dimension) (strictly increasing within a
// compressed segment), and that bool values are 0 or 1 -- so a corrupted file can never
// make a kernel read out of bounds. Every problem is a FileError whose where() is
// "path:byte N" and whose message says what is wrong ("corrupted header ...", "checksum
// mismatch in payload ...", "truncated: needs N bytes, file has M", ...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tessel/tensor.h"

namespace tessel {

/// Current .tsb format version.
constexpr uint32_t kBinaryFormatVersion = 1;

/// Write a packed tensor to `path` (.tsb) in its own format, datatype and widths. Written
/// to a temporary name in the same directory and renamed when complete: on any error
/// nothing (not even a partial file) is left behind. Throws UserError if the tensor has
/// no storage, FileError for I/O failures.
void writeBinary(const std::string& path, const TensorBase& t);

/// Read a .tsb file into malloc'd arrays (an ordinary tensor). `name` defaults to the
/// file's stem. Validates everything (see above); throws FileError.
TensorBase readBinary(const std::string& path, const std::string& name = "");

/// Map a .tsb file read-only and point the tensor's arrays into the mapping: no copy.
/// The mapping lives as long as the tensor's storage (Storage::external owns it).
/// The structure is validated exactly as for readBinary (one read-only pass over the
/// index arrays); the payload checksum is checked only when `verify` is true.
///
/// A mapped tensor is READ-ONLY: use it as an input of kernels, convert(), toCoo(),
/// writeBinary()... Never make it the output of an assignment or write to its arrays
/// (the pages are mapped PROT_READ: a write faults). setFromCoo()/pack() replace the
/// mapping by fresh malloc'd arrays, which is fine.
TensorBase mapBinary(const std::string& path, const std::string& name = "", bool verify = true);

/// What a .tsb file's header says (validated as readBinary does; the payload is not read).
struct BinaryHeader {
  Datatype type = Datatype::Float64;
  Format format;
  std::vector<int64_t> dims;
  int64_t stored = 0;  ///< values stored (non-zeros of a sparse format, every entry of a dense one)
};
BinaryHeader readBinaryHeader(const std::string& path);

/// The default format of a .tsb written from coordinates: CSR for matrices, a compressed
/// vector for order 1, dense first then compressed levels (CSF-like) for higher orders;
/// 32-bit indices (use withFittingWidths for large tensors).
Format defaultBinaryFormat(int order);

/// The 64-bit checksum used by .tsb files (own code, xxhash-like: four independent lanes
/// over 8-byte words, then a final avalanche). Deterministic on every platform.
uint64_t binaryChecksum(const void* data, size_t bytes, uint64_t seed = 0);

/// True if `path` ends in ".tsb" (any case).
bool isBinaryTensorPath(const std::string& path);

}  // namespace tessel
