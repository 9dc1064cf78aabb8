// Tensor files: Matrix Market (.mtx) and FROSTT (.tns).
//
// Readers return CooData (0-based coordinates). Errors throw FileError naming
// "file:line". Writers write to a temporary name in the same directory and rename it
// when complete, so no partial file is ever left behind.
#pragma once

#include <optional>
#include <string>

#include "tessel/coo.h"
#include "tessel/format.h"

namespace tessel {

/// What a file's header says about its values.
enum class FileField { Real, Integer, Pattern };

struct FileContents {
  CooData data;
  FileField field = FileField::Real;
};

/// Matrix Market: coordinate or array; real, integer or pattern (value 1); general,
/// symmetric or skew-symmetric (expanded to both triangles). Complex is rejected, as are
/// "array pattern" and "pattern skew-symmetric".
/// Sizes are checked before anything is allocated: a size line whose entries would need
/// more memory than the limit (TESSEL_MAX_MEMORY bytes, K/M/G suffixes allowed; default
/// three quarters of physical memory, or of a lower cgroup or ulimit),
/// or more entries than the file's size could hold, is a FileError naming that line.
/// Long reads and writes show a progress line on stderr when it is a terminal (see
/// TESSEL_PROGRESS in the README).
/// Values "nan" and "inf"/"infinity" (any case, optional sign) are accepted and kept as
/// is. Duplicate coordinates are kept as separate entries (packing sums them). Array
/// files yield every stored value as an entry, zeros included.
FileContents readMtx(const std::string& path);
/// FROSTT .tns: "i j k ... value" per line, 1-based, '#' comments. Dims are the
/// largest index in each mode unless `dims` is given (then indices are checked).
/// The first entry fixes the order; field is Integer when every value is a whole number.
/// NaN/Inf values and duplicate coordinates are kept, as for readMtx.
FileContents readTns(const std::string& path,
                     const std::optional<std::vector<int64_t>>& dims = std::nullopt);
/// By extension (.mtx, .tns, or .tsb: see tessel/binary_format.h); throws FileError for
/// others. A .tsb yields its stored entries (field Real for float types, else Integer).
FileContents readTensorFile(const std::string& path);

/// .mtx coordinate real general (order must be 2). Values printed with %.17g.
void writeMtx(const std::string& path, const CooData& data);
/// .tns, 1-based, values with %.17g. Entries with value 0 are omitted when skipZeros.
void writeTns(const std::string& path, const CooData& data, bool skipZeros = true);
/// By extension; a .tsb is packed in defaultBinaryFormat() with fitting index widths.
void writeTensorFile(const std::string& path, const CooData& data);

/// Index widths that fit `dims` and `nnz`: 64-bit where 32-bit would overflow.
Format withFittingWidths(const Format& f, const std::vector<int64_t>& dims, int64_t nnz);

}  // namespace tessel
