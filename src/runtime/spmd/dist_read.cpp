// Reading a .mtx or .tns file in parallel (SuperTaco §4.4): each rank parses the lines
// whose first byte lies in its byte range [size*r/P, size*(r+1)/P) of the file, with the
// same per-line parsers as the serial readers (io/text_entries.h), so entries, their
// order (rank by rank) and every "path:line" error are the serial reader's. Line numbers
// come from an exclusive scan of the ranks' line counts. Compressed (.gz), binary (.tsb)
// and .mtx array files are read whole by every rank, which keeps an equal share.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "io/io_util.h"
#include "io/text_entries.h"
#include "runtime/spmd/comm.h"
#include "runtime/spmd/dist_files.h"
#include "tessel/distributed.h"
#include "tessel/error.h"
#include "tessel/io.h"

namespace tessel {

using namespace io_detail;

namespace {

bool endsWithIgnoreCase(const std::string& s, std::string_view suffix) {
  return s.size() > suffix.size() && equalsIgnoreCase(std::string_view(s).substr(s.size() - suffix.size()), suffix);
}

/// An open file, closed on every path out.
struct Fd {
  int fd = -1;
  int64_t size = 0;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

void preadAll(const Fd& f, char* dst, int64_t at, int64_t n, const std::string& path) {
  while (n > 0) {
    ssize_t r = ::pread(f.fd, dst, static_cast<size_t>(std::min<int64_t>(n, int64_t(1) << 30)), at);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw FileError(path, std::string("cannot read: ") + (r < 0 ? std::strerror(errno) : "file shrank"));
    dst += r, at += r, n -= r;
  }
}

/// The position of the first '\n' at or after `from`, or the file's size.
int64_t nextNewline(const Fd& f, int64_t from, const std::string& path) {
  char buf[1 << 16];
  while (from < f.size) {
    const int64_t n = std::min<int64_t>(sizeof buf, f.size - from);
    preadAll(f, buf, from, n, path);
    if (const void* nl = std::memchr(buf, '\n', static_cast<size_t>(n))) return from + (static_cast<const char*>(nl) - buf);
    from += n;
  }
  return f.size;
}

/// The text of the lines whose first byte is in [lo, hi) (lines start at `start` and
/// after each newline), whole (the last may run past hi).
std::string linesStartingIn(const Fd& f, int64_t start, int64_t lo, int64_t hi, const std::string& path) {
  if (lo >= hi) return {};
  const int64_t first = lo == start ? lo : nextNewline(f, lo - 1, path) + 1;
  if (first >= hi) return {};
  const int64_t end = std::min(f.size, nextNewline(f, hi - 1, path) + 1);
  requireMemory(static_cast<long double>(end - first), "this rank's part of " + path);
  std::string text(static_cast<size_t>(end - first), '\0');
  preadAll(f, text.data(), first, end - first, path);
  return text;
}

/// Calls fn(line) for each line of `text` (without the newline or a trailing '\r', as
/// LineReader hands them out).
template <typename Fn>
void forEachLine(const std::string& text, Fn fn) {
  const char* p = text.data();
  const char* e = p + text.size();
  while (p < e) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(e - p)));
    const char* end = nl ? nl : e;
    std::string_view line(p, static_cast<size_t>(end - p));
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    fn(line);
    p = nl ? nl + 1 : e;
  }
}

/// Every rank reads the whole file and keeps an equal share of its entries, in order.
TensorFilePart wholeFileShare(const std::string& path) {
  TensorFilePart part;
  spmd::agreeOnFailure([&] {
    CooData all = readTensorFile(path).data;
    const int p = comm::size(), me = comm::rank();
    const int64_t n = all.nnz(), order = all.order();
    const int64_t lo = n * me / p, hi = n * (me + 1) / p;
    part.totalEntries = n;
    part.entries.dims = all.dims;
    part.entries.coords.assign(all.coords.begin() + lo * order, all.coords.begin() + hi * order);
    part.entries.values.assign(all.values.begin() + lo, all.values.begin() + hi);
  });
  return part;
}

/// Line numbering: the number of lines before this rank's first (an exclusive scan).
int64_t linesBefore(int64_t mine) {
  const std::vector<int64_t> all = comm::allGather(mine);
  int64_t before = 0;
  for (int q = 0; q < comm::rank(); q++) before += all[static_cast<size_t>(q)];
  return before;
}

TensorFilePart readMtxPart(const std::string& path) {
  const int p = comm::size(), me = comm::rank();
  MtxHeader h;
  Fd f;
  std::string text;
  bool whole = false;
  spmd::agreeOnFailure([&] {
    LineReader in(path);
    h = readMtxHeader(in, path);
    checkMtxFileSize(h, in, path);
    whole = !h.coordinate;  // array files number their values from the start
    if (whole) return;
    f.fd = openRegularFile(path, f.size);
    const int64_t lo = std::max(h.dataOffset, f.size * me / p), hi = std::max(h.dataOffset, f.size * (me + 1) / p);
    text = linesStartingIn(f, h.dataOffset, lo, hi, path);
  });
  if (whole) return wholeFileShare(path);
  int64_t lines = 0, entries = 0;
  forEachLine(text, [&](std::string_view line) {
    lines++;
    if (isMtxEntryLine(line)) entries++;
  });
  const int64_t lineBase = h.sizeLine + linesBefore(lines);
  const int64_t entryBase = linesBefore(entries);
  const int64_t totalEntries = comm::sumOver(entries);
  const int64_t totalLines = comm::sumOver(lines);
  TensorFilePart part;
  part.entries.dims = {h.rows, h.cols};
  spmd::agreeOnFailure([&] {
    const int64_t keep = std::max<int64_t>(0, std::min(entries, h.expected - entryBase));
    requireMemory(static_cast<long double>(keep) * (h.sym == MtxSymmetry::General ? 1 : 2) * 24,
                  "the entries of this rank's part of " + path);
    part.entries.coords.reserve(static_cast<size_t>(keep) * (h.sym == MtxSymmetry::General ? 2 : 4));
    part.entries.values.reserve(static_cast<size_t>(keep) * (h.sym == MtxSymmetry::General ? 1 : 2));
    MtxLineParser parser(h, path);
    int64_t ln = lineBase, count = entryBase;
    forEachLine(text, [&](std::string_view line) {
      ++ln;
      if (!isMtxEntryLine(line)) return;
      if (count == h.expected)
        throw FileError(where(path, ln), "more entries than the " + std::to_string(h.expected) + " declared on line " +
                                             std::to_string(h.sizeLine));
      ++count;
      parser.parse(line, ln, part.entries);
    });
  });
  if (totalEntries < h.expected)  // every rank knows it alike
    throw FileError(where(path, std::max<int64_t>(h.sizeLine + totalLines, h.sizeLine)),
                    "file ends after " + std::to_string(totalEntries) + " of the " + std::to_string(h.expected) +
                        " entries declared on line " + std::to_string(h.sizeLine) + " (truncated?)");
  part.totalEntries = comm::sumOver(part.entries.nnz());
  return part;
}

TensorFilePart readTnsPart(const std::string& path) {
  const int p = comm::size(), me = comm::rank();
  Fd f;
  std::string text;
  spmd::agreeOnFailure([&] {
    f.fd = openRegularFile(path, f.size);
    text = linesStartingIn(f, 0, f.size * me / p, f.size * (me + 1) / p, path);
  });
  // The first entry of the file fixes the order: the lowest rank that has one tells.
  int64_t lines = 0, firstAt = -1;
  int firstTokens = -1;
  forEachLine(text, [&](std::string_view line) {
    lines++;
    if (firstTokens < 0 && (firstTokens = TnsLineParser::entryTokens(line)) >= 0) firstAt = lines;
  });
  const int64_t lineBase = linesBefore(lines);
  const int64_t totalLines = comm::sumOver(lines);
  const std::vector<int64_t> tokens = comm::allGather(firstTokens);
  const std::vector<int64_t> at = comm::allGather(firstAt >= 0 ? lineBase + firstAt : -1);
  int ntok = -1;
  int64_t firstLine = 0;
  for (int q = 0; q < p && ntok < 0; q++)
    if (tokens[static_cast<size_t>(q)] >= 0) ntok = static_cast<int>(tokens[static_cast<size_t>(q)]), firstLine = at[static_cast<size_t>(q)];
  TensorFilePart part;
  TnsLineParser parser(path, std::nullopt);
  spmd::agreeOnFailure([&] {
    parser.fixOrder(ntok, firstLine);
    // At most one entry per 2 * ntok bytes of text.
    const long double cap = ntok > 0 ? static_cast<long double>(text.size()) / (2 * ntok) + 1 : 0;
    requireMemory(cap * 8 * ntok, "the entries of this rank's part of " + path);
    parser.reserveBytes = static_cast<int64_t>(text.size());
    if (ntok > 0) {
      part.entries.values.reserve(static_cast<size_t>(cap));
      part.entries.coords.reserve(static_cast<size_t>(cap) * static_cast<size_t>(ntok - 1));
    }
    int64_t ln = lineBase;
    forEachLine(text, [&](std::string_view line) { parser.parse(line, ++ln, part.entries); });
  });
  std::string().swap(text);
  if (ntok < 0) {  // no entries: the dims comment (the last one in the file) tells the dims
    const int64_t lastWithDims = comm::maxOver(static_cast<int64_t>(parser.emptyDims() ? me : -1));
    if (lastWithDims < 0)
      throw FileError(where(path, std::max<int64_t>(totalLines, 1)), "no entries; cannot infer the order");
    std::string dims;
    if (parser.emptyDims())
      for (int64_t d : *parser.emptyDims()) dims += std::to_string(d) + " ";
    dims = comm::broadcast(static_cast<int>(lastWithDims), dims);
    size_t at = 0;
    while (at < dims.size()) {
      size_t sp = dims.find(' ', at);
      part.entries.dims.push_back(std::stoll(dims.substr(at, sp - at)));
      at = sp + 1;
    }
  } else {
    std::vector<int64_t> dims = parser.maxIndex();
    dims.resize(static_cast<size_t>(ntok - 1), 0);
    comm::maxOver(dims);
    part.entries.dims = dims;
  }
  part.totalEntries = comm::sumOver(part.entries.nnz());
  return part;
}

}  // namespace

TensorFilePart readTensorFilePart(const std::string& path) {
  if (endsWithIgnoreCase(path, ".mtx")) return readMtxPart(path);
  if (endsWithIgnoreCase(path, ".tns")) return readTnsPart(path);
  return wholeFileShare(path);  // .gz, .tsb, or an unknown kind (readTensorFile names it)
}

}  // namespace tessel
