// FROSTT (.tns) reader and writer.
//
// Each non-blank line that does not start with '#' is one entry "i1 ... in value" with
// 1-based indices; the first entry fixes the order (a line with only a value is an
// order-0 entry). Values as in Matrix Market ("nan"/"inf" accepted); duplicates are kept.
// writeTns starts the file with a comment "# tessel dims: D1 D2 ..." (a '#' line, which
// FROSTT readers skip): the reader takes each dim as at least that, so trailing empty
// rows and columns survive a round trip. Files without it read as before (the largest
// index in each mode).
// The field is Integer when every value is a finite whole number ("4" or "4.000000"),
// else Real.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "io/io_util.h"
#include "io/text_entries.h"
#include "io/progress.h"
#include "tessel/error.h"
#include "tessel/io.h"

namespace tessel::io_detail {

namespace {
/// The comment writeTns starts a file with (for an empty tensor, the only thing that
/// tells its order and dims).
constexpr std::string_view kEmptyDims = "# tessel dims:";
}  // namespace

namespace {

std::string quoted(std::string_view s) {
  constexpr size_t kMax = 40;
  std::string out = "'";
  out.append(escapeBytes(std::string(s.substr(0, kMax))));  // file bytes: never raw to a terminal
  if (s.size() > kMax) out += "...";
  return out + "'";
}

}  // namespace


int TnsLineParser::entryTokens(std::string_view line) {
  std::string_view tok[1];
  const char* p = line.data();
  const char* e = p + line.size();
  skipSpaces(p, e);
  if (p == e || *p == '#') return -1;
  return splitTokens(line, tok, 0);
}

void TnsLineParser::fixOrder(int tokens, int64_t firstLine) {
  if (ntok_ >= 0 || tokens < 0) return;
  ntok_ = tokens;
  order_ = tokens - 1;
  firstLine_ = firstLine;
  if (dims_ && static_cast<int>(dims_->size()) != order_)
    throw FileError(where(path_, firstLine), "entries have order " + std::to_string(order_) + " but " +
                                                 std::to_string(dims_->size()) + " dimensions were given");
  maxIdx_.assign(static_cast<size_t>(order_), 0);
  if (emptyDims_) foldDimsComment(*emptyDims_, firstLine);
}

void TnsLineParser::foldDimsComment(const std::vector<int64_t>& ds, int64_t ln) {
  if (dims_) return;  // dims given by the caller win
  if (static_cast<int>(ds.size()) != order_)
    throw FileError(where(path_, ln), "the dims comment gives " + std::to_string(ds.size()) +
                                          " dimensions, but the entries have order " + std::to_string(order_));
  for (int m = 0; m < order_; ++m) maxIdx_[m] = std::max(maxIdx_[m], ds[m]);
}

void TnsLineParser::parse(std::string_view line, int64_t ln, CooData& d) {
  const std::string& path = path_;
  const auto& dims = dims_;
  const char* p = line.data();
  const char* e = p + line.size();
  skipSpaces(p, e);
  if (p != e && *p == '#') {  // a comment; an empty tensor written by tessel gives its dims in one
    std::string_view c(p, static_cast<size_t>(e - p));
    if (c.substr(0, kEmptyDims.size()) == kEmptyDims) {
      std::vector<int64_t> ds;
      const char* q = p + kEmptyDims.size();
      for (skipSpaces(q, e); q != e; skipSpaces(q, e)) {
        int64_t v = 0;
        auto r = std::from_chars(q, e, v);
        if (r.ec != std::errc() || v < 0) throw FileError(where(path, ln), "malformed dims comment");
        ds.push_back(v);
        q = r.ptr;
      }
      emptyDims_ = ds;
      if (ntok_ >= 0) foldDimsComment(ds, ln);
    }
    return;
  }
  if (p == e) return;  // blank line
  // Records one entry whose indices are already in d.coords.
  auto storeValue = [&](double value) {
    if (allInteger_ && !(std::isfinite(value) && value == std::trunc(value))) allInteger_ = false;
    d.values.push_back(value);
  };

  // Fast path once the order is known: "i1 ... in value" with valid indices.
  if (ntok_ > 0) {
    const size_t mark = d.coords.size();
    const char* q = p;
    int m = 0;
    for (; m < order_; ++m) {
      int64_t v;
      if (!fastIndex(q, e, v) || v < 1 || (dims && v > (*dims)[m])) break;
      if (v > maxIdx_[m]) maxIdx_[m] = v;
      d.coords.push_back(v - 1);
      skipSpaces(q, e);
    }
    if (m == order_ && q < e) {
      double value;
      auto r = std::from_chars(q, e, value, std::chars_format::general);
      if (r.ec == std::errc()) {
        const char* t = r.ptr;
        skipSpaces(t, e);
        if (t == e) return storeValue(value);
      }
    }
    d.coords.resize(mark);  // fall through to the general path (which reports errors)
  }

  std::vector<std::string_view>& tok = tok_;
  splitTokens(line, tok);
  const int n = static_cast<int>(tok.size());
  if (ntok_ < 0) {
    fixOrder(n, ln);
    if (reserveBytes > 0) {  // at most one entry per 2 * ntok bytes
      const auto cap = static_cast<size_t>(reserveBytes / (2 * ntok_) + 1);
      d.values.reserve(cap);
      d.coords.reserve(cap * static_cast<size_t>(order_));
    }
  } else if (n != ntok_) {
    throw FileError(where(path, ln), "expected " + std::to_string(ntok_) + " tokens (" + std::to_string(order_) +
                                         " indices and a value, as on line " + std::to_string(firstLine_) +
                                         "), found " + std::to_string(n));
  }
  for (int m = 0; m < order_; ++m) {
    int64_t v = 0;
    NumStatus st = parseInt64(tok[m], v);
    if (st == NumStatus::Invalid)
      throw FileError(where(path, ln), "non-numeric index " + quoted(tok[m]) + " in mode " + std::to_string(m));
    if (st == NumStatus::OutOfRange) {
      if (dims)
        throw FileError(where(path, ln), "index " + std::string(tok[m]) + " in mode " + std::to_string(m) +
                                             " is out of range 1.." + std::to_string((*dims)[m]));
      throw OverflowError(where(path, ln) + ": index " + std::string(tok[m]) + " in mode " + std::to_string(m) +
                          " does not fit in a 64-bit integer");
    }
    if (v < 1 || (dims && v > (*dims)[m]))
      throw FileError(where(path, ln),
                      "index " + std::to_string(v) + " in mode " + std::to_string(m) +
                          (dims ? " is out of range 1.." + std::to_string((*dims)[m]) : std::string(" is out of range")) +
                          (v < 1 ? " (indices are 1-based)" : ""));
    maxIdx_[m] = std::max(maxIdx_[m], v);
    d.coords.push_back(v - 1);
  }
  double value = 0;
  std::string_view vt = tok[order_];
  if (parseDouble(vt, value) != NumStatus::Ok) throw FileError(where(path, ln), "non-numeric value " + quoted(vt));
  storeValue(value);
}

std::string tnsDimsComment(const std::vector<int64_t>& dims) {
  std::string c(kEmptyDims);
  for (int64_t dim : dims) c += " " + std::to_string(dim);
  return c + '\n';
}

}  // namespace tessel::io_detail

namespace tessel {

using namespace io_detail;

FileContents readTns(const std::string& path, const std::optional<std::vector<int64_t>>& dims) {
  if (dims)
    for (int64_t d : *dims)
      if (d < 0) throw DimensionError("readTns: " + path + ": negative dimension " + std::to_string(d));

  LineReader in(path);
  FileContents out;
  CooData& d = out.data;
  TnsLineParser parser(path, dims);
  parser.reserveBytes = in.fileSize() > 0 ? in.fileSize() : int64_t(1) << 20;
  std::string_view line;
  Progress progress("reading", path, in.compressed() ? 0 : in.fileSize());
  while (in.next(line)) {
    progress.update(in.bytesRead());
    parser.parse(line, in.lineNumber(), d);
  }
  if (!parser.sawEntry()) {
    if (!dims && !parser.emptyDims())
      throw FileError(where(path, std::max<int64_t>(in.lineNumber(), 1)), "no entries; cannot infer the order");
    d.dims = dims ? *dims : *parser.emptyDims();
  } else {
    d.dims = dims ? *dims : parser.maxIndex();
  }
  out.field = parser.allInteger() ? FileField::Integer : FileField::Real;
  return out;
}

void writeTns(const std::string& path, const CooData& data, bool skipZeros) {
  const int order = data.order();
  if (data.coords.size() != data.values.size() * static_cast<size_t>(order))
    throw UserError("writeTns: " + path + ": malformed CooData (coords and values disagree)");
  AtomicFileWriter w(path);
  if (order == 0) {
    // A scalar: one line with its value (duplicates summed), written even when zero so
    // that the file can be read back.
    double v = 0;
    for (double x : data.values) v += x;
    w.writeDouble(v);
    w.put('\n');
  } else {
    // The dims first: trailing empty rows or columns (or an empty tensor) read back.
    w.write(tnsDimsComment(data.dims));
    const int64_t n = data.nnz();
    Progress progress("writing", path, 0);
    std::string line;
    for (int64_t e = 0; e < n; ++e) {
      progress.update(w.bytesWritten(), e, n);
      double v = data.values[e];
      if (skipZeros && v == 0) continue;
      line.clear();
      appendEntryLine(line, data.coords.data() + e * order, order, v);
      w.write(line);
    }
  }
  w.commit();
}

}  // namespace tessel
