// One line of a Matrix Market or FROSTT file at a time: the parsers the serial readers
// (readMtx, readTns) and the distributed readers (runtime/spmd/dist_files) share, so a
// line means the same, and fails with the same "path:line" message, in both; and the text
// of one entry line, shared by the serial and the distributed writers. Not installed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/io_util.h"
#include "tessel/coo.h"
#include "tessel/io.h"

namespace tessel::io_detail {

enum class MtxSymmetry { General, Symmetric, Skew };

/// The banner and size line of a .mtx file.
struct MtxHeader {
  bool coordinate = true;
  FileField field = FileField::Real;
  MtxSymmetry sym = MtxSymmetry::General;
  int64_t rows = 0, cols = 0;
  int64_t expected = 0;    ///< stored entries the file must contain
  int64_t sizeLine = 0;    ///< line number of the size line
  int64_t dataOffset = 0;  ///< byte offset of the line after the size line (plain files)
  int minLineBytes() const { return coordinate ? 4 : 2; }
};

/// Reads the banner and the size line from `in` (at the start of the file). FileError
/// naming the line.
MtxHeader readMtxHeader(LineReader& in, const std::string& path);
/// FileError naming the size line when the file is too small for the declared entries.
void checkMtxFileSize(const MtxHeader& h, const LineReader& in, const std::string& path);

/// Whether a .mtx body line holds an entry (not blank, not a '%' comment).
bool isMtxEntryLine(std::string_view line);

/// The entry lines of a .mtx body. parse() appends the entry of one entry line (and its
/// mirror, symmetric files) to `d`; array files go column by column from the start.
class MtxLineParser {
 public:
  MtxLineParser(const MtxHeader& h, const std::string& path)
      : h_(h), path_(path), ai_(h.sym == MtxSymmetry::Skew ? 1 : 0) {}
  void parse(std::string_view line, int64_t ln, CooData& d);

 private:
  void store(int64_t i, int64_t j, double v, int64_t ln, CooData& d);
  const MtxHeader& h_;
  const std::string& path_;
  int64_t ai_, aj_ = 0;  // array position (column-major over the stored triangle)
};

/// The lines of a .tns file. parse() skips blank lines, reads comments (writeTns's dims
/// comment) and appends entries to `d` (coordinates 0-based).
class TnsLineParser {
 public:
  TnsLineParser(const std::string& path, const std::optional<std::vector<int64_t>>& dims) : path_(path), dims_(dims) {}
  void parse(std::string_view line, int64_t ln, CooData& d);
  /// The order as the first entry of the file fixes it (line `firstLine`, `tokens`
  /// tokens), when that entry is elsewhere (another rank's part of the file).
  void fixOrder(int tokens, int64_t firstLine);
  /// Tokens of the first entry line among `line` (-1: not an entry line).
  static int entryTokens(std::string_view line);
  /// Bytes of text to come: room for the entries they can hold is reserved when the
  /// first entry fixes the order (0: none).
  int64_t reserveBytes = 0;

  int order() const { return order_; }
  bool sawEntry() const { return ntok_ >= 0; }
  const std::vector<int64_t>& maxIndex() const { return maxIdx_; }  ///< 1-based, per mode
  const std::optional<std::vector<int64_t>>& emptyDims() const { return emptyDims_; }
  bool allInteger() const { return allInteger_; }

 private:
  const std::string& path_;
  std::optional<std::vector<int64_t>> dims_;
  int ntok_ = -1, order_ = 0;
  int64_t firstLine_ = 0;
  std::vector<int64_t> maxIdx_;
  std::optional<std::vector<int64_t>> emptyDims_;
  bool allInteger_ = true;
  std::vector<std::string_view> tok_;
  /// Each dim is at least the dims comment's (once the order is known).
  void foldDimsComment(const std::vector<int64_t>& ds, int64_t ln);
};

/// writeTns's first line, "# tessel dims: D1 D2 ...": the reader takes each dim as at
/// least that (and an empty tensor's order and dims from it).
std::string tnsDimsComment(const std::vector<int64_t>& dims);
/// writeMtx's banner and size line.
std::string mtxHeaderText(int64_t rows, int64_t cols, int64_t nnz);
/// The text of one entry: 1-based coordinates and the value (%.17g), blank-separated,
/// with a newline: the line writeMtx and writeTns write.
void appendEntryLine(std::string& out, const int64_t* coords, int order, double value);
void appendInt(std::string& out, int64_t v);
void appendDouble(std::string& out, double v);

}  // namespace tessel::io_detail
