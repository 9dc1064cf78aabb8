// FROSTT (.tns) reader and writer.
//
// Each non-blank line that does not start with '#' is one entry "i1 ... in value" with
// 1-based indices; the first entry fixes the order (a line with only a value is an
// order-0 entry). Values as in Matrix Market ("nan"/"inf" accepted); duplicates are kept.
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
#include "io/progress.h"
#include "tessel/error.h"
#include "tessel/io.h"

namespace tessel {

namespace {
/// The comment writeTns gives an empty tensor (no entry tells its order and dims).
constexpr std::string_view kEmptyDims = "# tessel dims:";
}  // namespace

using namespace io_detail;

namespace {

std::string quoted(std::string_view s) {
  constexpr size_t kMax = 40;
  std::string out = "'";
  out.append(escapeBytes(std::string(s.substr(0, kMax))));  // file bytes: never raw to a terminal
  if (s.size() > kMax) out += "...";
  return out + "'";
}

}  // namespace

FileContents readTns(const std::string& path, const std::optional<std::vector<int64_t>>& dims) {
  if (dims)
    for (int64_t d : *dims)
      if (d < 0) throw DimensionError("readTns: " + path + ": negative dimension " + std::to_string(d));

  LineReader in(path);
  FileContents out;
  CooData& d = out.data;
  std::string_view line;
  std::vector<std::string_view> tok;
  int ntok = -1, order = 0;
  int64_t firstLine = 0;
  std::vector<int64_t> maxIdx;
  std::optional<std::vector<int64_t>> emptyDims;  // from writeTns's comment for an empty tensor
  bool allInteger = true;

  // Records one entry whose indices are already in d.coords.
  auto storeValue = [&](double value) {
    if (allInteger && !(std::isfinite(value) && value == std::trunc(value))) allInteger = false;
    d.values.push_back(value);
  };

  Progress progress("reading", path, in.compressed() ? 0 : in.fileSize());
  while (in.next(line)) {
    progress.update(in.bytesRead());
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
          if (r.ec != std::errc() || v < 0) throw FileError(where(path, in.lineNumber()), "malformed dims comment");
          ds.push_back(v);
          q = r.ptr;
        }
        emptyDims = ds;
      }
      continue;
    }
    if (p == e) continue;  // blank line
    const int64_t ln = in.lineNumber();

    // Fast path once the order is known: "i1 ... in value" with valid indices.
    if (ntok > 0) {
      const size_t mark = d.coords.size();
      const char* q = p;
      int m = 0;
      for (; m < order; ++m) {
        int64_t v;
        if (!fastIndex(q, e, v) || v < 1 || (dims && v > (*dims)[m])) break;
        if (v > maxIdx[m]) maxIdx[m] = v;
        d.coords.push_back(v - 1);
        skipSpaces(q, e);
      }
      if (m == order && q < e) {
        double value;
        auto r = std::from_chars(q, e, value, std::chars_format::general);
        if (r.ec == std::errc()) {
          const char* t = r.ptr;
          skipSpaces(t, e);
          if (t == e) {
            storeValue(value);
            continue;
          }
        }
      }
      d.coords.resize(mark);  // fall through to the general path (which reports errors)
    }

    splitTokens(line, tok);
    const int n = static_cast<int>(tok.size());
    if (ntok < 0) {
      ntok = n;
      order = n - 1;
      firstLine = ln;
      if (dims && static_cast<int>(dims->size()) != order)
        throw FileError(where(path, ln), "entries have order " + std::to_string(order) + " but " +
                                             std::to_string(dims->size()) +
                                             " dimensions were given");
      maxIdx.assign(static_cast<size_t>(order), 0);
      int64_t cap = in.fileSize() > 0 ? in.fileSize() / (2 * ntok) + 1 : 1 << 16;
      d.values.reserve(static_cast<size_t>(cap));
      d.coords.reserve(static_cast<size_t>(cap) * static_cast<size_t>(order));
    } else if (n != ntok) {
      throw FileError(where(path, ln), "expected " + std::to_string(ntok) + " tokens (" +
                                           std::to_string(order) + " indices and a value, as on line " +
                                           std::to_string(firstLine) + "), found " + std::to_string(n));
    }
    for (int m = 0; m < order; ++m) {
      int64_t v = 0;
      NumStatus st = parseInt64(tok[m], v);
      if (st == NumStatus::Invalid)
        throw FileError(where(path, ln), "non-numeric index " + quoted(tok[m]) + " in mode " +
                                             std::to_string(m));
      if (st == NumStatus::OutOfRange) {
        if (dims)
          throw FileError(where(path, ln), "index " + std::string(tok[m]) + " in mode " +
                                               std::to_string(m) + " is out of range 1.." +
                                               std::to_string((*dims)[m]));
        throw OverflowError(where(path, ln) + ": index " + std::string(tok[m]) + " in mode " +
                            std::to_string(m) + " does not fit in a 64-bit integer");
      }
      if (v < 1 || (dims && v > (*dims)[m]))
        throw FileError(where(path, ln),
                        "index " + std::to_string(v) + " in mode " + std::to_string(m) +
                            (dims ? " is out of range 1.." + std::to_string((*dims)[m])
                                  : std::string(" is out of range")) +
                            (v < 1 ? " (indices are 1-based)" : ""));
      maxIdx[m] = std::max(maxIdx[m], v);
      d.coords.push_back(v - 1);
    }
    double value = 0;
    std::string_view vt = tok[order];
    if (parseDouble(vt, value) != NumStatus::Ok)
      throw FileError(where(path, ln), "non-numeric value " + quoted(vt));
    storeValue(value);
  }
  if (ntok < 0) {
    if (!dims && !emptyDims)
      throw FileError(where(path, std::max<int64_t>(in.lineNumber(), 1)),
                      "no entries; cannot infer the order");
    d.dims = dims ? *dims : *emptyDims;
  } else {
    d.dims = dims ? *dims : maxIdx;
  }
  out.field = allInteger ? FileField::Integer : FileField::Real;
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
    const int64_t n = data.nnz();
    Progress progress("writing", path, 0);
    int64_t written = 0;
    for (int64_t e = 0; e < n; ++e) {
      progress.update(w.bytesWritten(), e, n);
      double v = data.values[e];
      if (skipZeros && v == 0) continue;
      written++;
      const int64_t* c = data.coords.data() + e * order;
      for (int m = 0; m < order; ++m) {
        w.writeInt(c[m] + 1);
        w.put(' ');
      }
      w.writeDouble(v);
      w.put('\n');
    }
    if (written == 0) {  // no entry tells the order or dims: a comment does, so it reads back
      std::string c(kEmptyDims);
      for (int64_t dim : data.dims) c += " " + std::to_string(dim);
      c += '\n';
      for (char ch : c) w.put(ch);
    }
  }
  w.commit();
}

}  // namespace tessel
