// Matrix Market (.mtx) reader and writer.
//
// Reader notes (see also io.h):
//  - Banner words are case-insensitive. Supported: matrix, coordinate|array,
//    real|integer|pattern, general|symmetric|skew-symmetric. complex/hermitian are rejected, as
//    are the invalid combinations array pattern and pattern skew-symmetric.
//  - '%' comment lines and blank lines are skipped anywhere after the banner.
//  - Symmetric and skew-symmetric entries are expanded to both triangles (an entry may be
//    stored in either triangle); a skew-symmetric diagonal entry must be zero.
//  - Values "nan", "inf", "infinity" (any case, optional sign) are accepted and preserved.
//  - Duplicate coordinates are kept as separate entries (packing sums them).
//  - Integer fields require integer tokens; pattern entries get value 1.
//  - Array files list values column by column (only the lower triangle, diagonal included,
//    for symmetric; strictly lower for skew-symmetric); every value becomes an entry,
//    zeros included.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "io/io_util.h"
#include "io/text_entries.h"
#include "io/progress.h"
#include "tessel/error.h"
#include "tessel/io.h"

namespace tessel::io_detail {

namespace {

using Symmetry = MtxSymmetry;

std::string quoted(std::string_view s) {
  constexpr size_t kMax = 40;
  std::string out = "'";
  out.append(escapeBytes(std::string(s.substr(0, kMax))));  // file bytes: never raw to a terminal
  if (s.size() > kMax) out += "...";
  return out + "'";
}

/// A non-negative size from the size line.
int64_t parseSize(std::string_view tok, const char* what, const std::string& path, int64_t line) {
  int64_t v = 0;
  switch (parseInt64(tok, v)) {
    case NumStatus::Ok:
      break;
    case NumStatus::OutOfRange:
      throw OverflowError(where(path, line) + ": " + what + " " + quoted(tok) +
                          " does not fit in a 64-bit integer");
    case NumStatus::Invalid:
      throw FileError(where(path, line),
                      std::string("size line: ") + what + " " + quoted(tok) + " is not an integer");
  }
  if (v < 0)
    throw FileError(where(path, line), std::string("size line: negative ") + what + " " +
                                           std::to_string(v));
  return v;
}

/// 1-based index in [1, limit] -> 0-based.
inline int64_t parseIndex(std::string_view tok, int64_t limit, const char* what,
                          const std::string& path, int64_t line) {
  int64_t v = 0;
  NumStatus st = parseInt64(tok, v);
  if (st == NumStatus::Ok && v >= 1 && v <= limit) return v - 1;
  if (st == NumStatus::Invalid)
    throw FileError(where(path, line),
                    std::string("non-numeric ") + what + " index " + quoted(tok));
  throw FileError(where(path, line), std::string(what) + " index " + std::string(tok) +
                                         " is out of range 1.." + std::to_string(limit) +
                                         (st == NumStatus::Ok && v == 0
                                              ? " (indices are 1-based)"
                                              : ""));
}

inline double parseValue(std::string_view tok, FileField field, const std::string& path,
                         int64_t line) {
  if (field == FileField::Integer) {
    int64_t iv = 0;
    NumStatus st = parseInt64(tok, iv);
    if (st == NumStatus::Ok) return static_cast<double>(iv);
    if (st == NumStatus::OutOfRange)
      throw FileError(where(path, line),
                      "integer value " + quoted(tok) + " does not fit in a 64-bit integer");
    throw FileError(where(path, line), "non-integer value " + quoted(tok) + " in an integer matrix");
  }
  double v = 0;
  if (parseDouble(tok, v) != NumStatus::Ok)
    throw FileError(where(path, line), "non-numeric value " + quoted(tok));
  return v;
}

}  // namespace

MtxHeader readMtxHeader(LineReader& in, const std::string& path) {
  std::string_view line;
  MtxHeader h;
  // Banner.
  if (!in.next(line))
    throw FileError(where(path, 1), "empty file; expected a '%%MatrixMarket' banner");
  std::string_view tok[8];
  int nt = splitTokens(line, tok, 8);
  if (nt == 0 || !equalsIgnoreCase(tok[0], "%%MatrixMarket"))
    throw FileError(where(path, 1), "missing '%%MatrixMarket matrix ...' banner");
  if (nt != 5)
    throw FileError(where(path, 1),
                    "bad banner: expected '%%MatrixMarket matrix <coordinate|array> "
                    "<real|integer|pattern> <general|symmetric|skew-symmetric>'");
  if (!equalsIgnoreCase(tok[1], "matrix"))
    throw FileError(where(path, 1), "unsupported object " + quoted(tok[1]) + "; expected 'matrix'");
  if (equalsIgnoreCase(tok[2], "coordinate"))
    h.coordinate = true;
  else if (equalsIgnoreCase(tok[2], "array"))
    h.coordinate = false;
  else
    throw FileError(where(path, 1),
                    "unknown format " + quoted(tok[2]) + "; expected 'coordinate' or 'array'");
  if (equalsIgnoreCase(tok[3], "real"))
    h.field = FileField::Real;
  else if (equalsIgnoreCase(tok[3], "integer"))
    h.field = FileField::Integer;
  else if (equalsIgnoreCase(tok[3], "pattern"))
    h.field = FileField::Pattern;
  else if (equalsIgnoreCase(tok[3], "complex"))
    throw FileError(where(path, 1), "complex matrices are not supported");
  else
    throw FileError(where(path, 1), "unknown field " + quoted(tok[3]) +
                                        "; expected 'real', 'integer' or 'pattern'");
  if (equalsIgnoreCase(tok[4], "general"))
    h.sym = Symmetry::General;
  else if (equalsIgnoreCase(tok[4], "symmetric"))
    h.sym = Symmetry::Symmetric;
  else if (equalsIgnoreCase(tok[4], "skew-symmetric"))
    h.sym = Symmetry::Skew;
  else if (equalsIgnoreCase(tok[4], "hermitian"))
    throw FileError(where(path, 1), "complex matrices are not supported (hermitian)");
  else
    throw FileError(where(path, 1),
                    "unknown symmetry " + quoted(tok[4]) +
                        "; expected 'general', 'symmetric' or 'skew-symmetric'");
  if (!h.coordinate && h.field == FileField::Pattern)
    throw FileError(where(path, 1), "'array pattern' is not a valid Matrix Market type");
  // A pattern has no values to negate: the mirrored entry of a skew-symmetric pattern
  // would be -1 although the field promises 1 (the Matrix Market spec excludes it too).
  if (h.field == FileField::Pattern && h.sym == Symmetry::Skew)
    throw FileError(where(path, 1), "'pattern skew-symmetric' is not a valid Matrix Market type");

  // Size line (after comments and blank lines).
  bool haveSize = false;
  while (in.next(line)) {
    if (!isMtxEntryLine(line)) continue;
    haveSize = true;
    break;
  }
  if (!haveSize)
    throw FileError(where(path, std::max<int64_t>(in.lineNumber(), 1)),
                    std::string("missing size line (") + (h.coordinate ? "M N NNZ" : "M N") +
                        ") before the end of the file");
  const int64_t sizeLine = h.sizeLine = in.lineNumber();
  h.dataOffset = in.offset();
  nt = splitTokens(line, tok, 8);
  const int wantSize = h.coordinate ? 3 : 2;
  if (nt != wantSize)
    throw FileError(where(path, sizeLine),
                    "size line: expected " + std::to_string(wantSize) + " integers (" +
                        (h.coordinate ? "rows columns entries" : "rows columns") + "), found " +
                        std::to_string(nt) + " tokens");
  const int64_t rows = h.rows = parseSize(tok[0], "row count", path, sizeLine);
  const int64_t cols = h.cols = parseSize(tok[1], "column count", path, sizeLine);
  if (h.sym != Symmetry::General && rows != cols)
    throw FileError(where(path, sizeLine), "a symmetric or skew-symmetric matrix must be square, not " +
                                               std::to_string(rows) + "x" + std::to_string(cols));
  if (h.coordinate) {
    h.expected = parseSize(tok[2], "entry count", path, sizeLine);
  } else {
    __int128 n = static_cast<__int128>(rows) * cols;
    if (h.sym == Symmetry::Symmetric)
      n = static_cast<__int128>(rows) * (rows + 1) / 2;
    else if (h.sym == Symmetry::Skew)
      n = rows == 0 ? 0 : static_cast<__int128>(rows) * (rows - 1) / 2;
    if (n > std::numeric_limits<int64_t>::max())
      throw OverflowError(where(path, sizeLine) + ": " + std::to_string(rows) + "x" +
                          std::to_string(cols) + " array does not fit in a 64-bit entry count");
    h.expected = static_cast<int64_t>(n);
  }
  return h;
}

void checkMtxFileSize(const MtxHeader& h, const LineReader& in, const std::string& path) {
  // A stored entry needs at least "i j\n" (4 bytes) in coordinate files, "v\n" (2 bytes)
  // in array files; the last line may lack its newline.
  if (!in.compressed() && in.fileSize() > 0 && h.expected > (in.fileSize() + 1) / h.minLineBytes())
    throw FileError(where(path, h.sizeLine),
                    "the size line declares " + std::to_string(h.expected) +
                        " entries, but the whole file is only " + std::to_string(in.fileSize()) +
                        " bytes (truncated?)");
}

bool isMtxEntryLine(std::string_view line) {
  const char* p = line.data();
  const char* e = p + line.size();
  skipSpaces(p, e);
  return p != e && *p != '%';
}

void MtxLineParser::store(int64_t i, int64_t j, double v, int64_t ln, CooData& d) {
  d.coords.push_back(i);
  d.coords.push_back(j);
  d.values.push_back(v);
  if (h_.sym != Symmetry::General) {
    if (i != j) {
      d.coords.push_back(j);
      d.coords.push_back(i);
      d.values.push_back(h_.sym == Symmetry::Skew ? -v : v);
    } else if (h_.sym == Symmetry::Skew && v != 0) {
      throw FileError(where(path_, ln), "skew-symmetric matrix has a nonzero diagonal entry at (" +
                                            std::to_string(i + 1) + "," + std::to_string(j + 1) + ")");
    }
  }
}

void MtxLineParser::parse(std::string_view line, int64_t ln, CooData& d) {
  const char* p = line.data();
  const char* e = p + line.size();
  skipSpaces(p, e);
  const FileField field = h_.field;
  const int64_t rows = h_.rows, cols = h_.cols;
  // Fast path: plain "i j [value]" with in-range indices. Anything else (including every
  // error) goes through the general path below, which reports precisely.
  if (h_.coordinate) {
    const char* q = p;
    int64_t i, j;
    if (fastIndex(q, e, i) && i >= 1 && i <= rows) {
      skipSpaces(q, e);
      if (fastIndex(q, e, j) && j >= 1 && j <= cols) {
        skipSpaces(q, e);
        if (field == FileField::Pattern) {
          if (q == e) return store(i - 1, j - 1, 1.0, ln, d);
        } else if (q < e) {
          // from_chars stops at the end of the number; only blanks may follow.
          double v = 0;
          const char* t;
          bool ok;
          if (field == FileField::Integer) {
            int64_t iv = 0;
            auto r = std::from_chars(q, e, iv);
            ok = r.ec == std::errc();
            t = r.ptr;
            v = static_cast<double>(iv);
          } else {
            auto r = std::from_chars(q, e, v, std::chars_format::general);
            ok = r.ec == std::errc();
            t = r.ptr;
          }
          if (ok) {
            skipSpaces(t, e);
            if (t == e) return store(i - 1, j - 1, v, ln, d);
          }
        }
      }
    }
  }

  const int wantTokens = h_.coordinate ? (field == FileField::Pattern ? 2 : 3) : 1;
  const char* entryShape = h_.coordinate ? (field == FileField::Pattern ? "row column" : "row column value")
                                         : "value";
  std::string_view tok[4];
  int nt = splitTokens(line, tok, 4);
  if (nt != wantTokens)
    throw FileError(where(path_, ln), "expected " + std::to_string(wantTokens) + " token" +
                                          (wantTokens > 1 ? "s" : "") + " (" + entryShape +
                                          "), found " + std::to_string(nt));
  int64_t i, j;
  double v;
  if (h_.coordinate) {
    i = parseIndex(tok[0], rows, "row", path_, ln);
    j = parseIndex(tok[1], cols, "column", path_, ln);
    v = field == FileField::Pattern ? 1.0 : parseValue(tok[2], field, path_, ln);
  } else {
    v = parseValue(tok[0], field, path_, ln);
    i = ai_;
    j = aj_;
    if (++ai_ == rows) {
      ++aj_;
      ai_ = h_.sym == Symmetry::General ? 0 : h_.sym == Symmetry::Symmetric ? aj_ : aj_ + 1;
    }
  }
  store(i, j, v, ln, d);
}

std::string mtxHeaderText(int64_t rows, int64_t cols, int64_t nnz) {
  std::string s = "%%MatrixMarket matrix coordinate real general\n";
  appendInt(s, rows);
  s += ' ';
  appendInt(s, cols);
  s += ' ';
  appendInt(s, nnz);
  s += '\n';
  return s;
}

}  // namespace tessel::io_detail

namespace tessel {

using namespace io_detail;

FileContents readMtx(const std::string& path) {
  LineReader in(path);
  const MtxHeader h = readMtxHeader(in, path);
  const int64_t expected = h.expected, sizeLine = h.sizeLine;
  // Refuse sizes the machine cannot hold before allocating. An entry in memory is two
  // 8-byte coordinates and an 8-byte value (two entries when a symmetric entry off the
  // diagonal is mirrored).
  {
    const int64_t perEntry = (h.sym == Symmetry::General ? 1 : 2) * 24;
    const std::string excess = memoryExcess(static_cast<long double>(expected) * perEntry);
    if (!excess.empty())
      throw FileError(where(path, sizeLine),
                      "the size line declares " + std::to_string(expected) + " entries (" + excess + ")");
  }
  checkMtxFileSize(h, in, path);
  FileContents out;
  out.field = h.field;
  CooData& d = out.data;
  d.dims = {h.rows, h.cols};
  {
    // Never trust the header beyond what the file can hold (checked for plain files).
    int64_t cap = !in.compressed() && in.fileSize() > 0 ? (in.fileSize() + 1) / h.minLineBytes() + 1
                                                        : int64_t(1) << 20;
    int64_t n = std::min(expected, cap);
    if (h.sym != Symmetry::General) n = n * 2;
    d.coords.reserve(static_cast<size_t>(n) * 2);
    d.values.reserve(static_cast<size_t>(n));
  }
  Progress progress("reading", path, in.compressed() ? 0 : in.fileSize());
  MtxLineParser parser(h, path);
  int64_t count = 0;
  std::string_view line;
  while (in.next(line)) {
    progress.update(in.bytesRead());
    if (!isMtxEntryLine(line)) continue;  // blank line or comment
    const int64_t ln = in.lineNumber();
    if (count == expected)
      throw FileError(where(path, ln), "more entries than the " + std::to_string(expected) +
                                           " declared on line " + std::to_string(sizeLine));
    ++count;
    parser.parse(line, ln, d);
  }
  if (count < expected)
    throw FileError(where(path, std::max<int64_t>(in.lineNumber(), sizeLine)),
                    "file ends after " + std::to_string(count) + " of the " +
                        std::to_string(expected) + " entries declared on line " +
                        std::to_string(sizeLine) + " (truncated?)");
  return out;
}

void writeMtx(const std::string& path, const CooData& data) {
  if (data.order() != 2)
    throw UserError("writeMtx: " + path + ": Matrix Market files hold matrices (order 2), not order " +
                    std::to_string(data.order()));
  if (data.coords.size() != data.values.size() * 2)
    throw UserError("writeMtx: " + path + ": malformed CooData (coords and values disagree)");
  AtomicFileWriter w(path);
  w.write(mtxHeaderText(data.dims[0], data.dims[1], data.nnz()));
  const int64_t n = data.nnz();
  Progress progress("writing", path, 0);
  std::string line;
  for (int64_t e = 0; e < n; ++e) {
    progress.update(w.bytesWritten(), e, n);
    line.clear();
    appendEntryLine(line, data.coords.data() + 2 * e, 2, data.values[e]);
    w.write(line);
  }
  w.commit();
  progress.finish();
}

}  // namespace tessel
