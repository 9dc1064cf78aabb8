// Sparsity pictures: binning, ownership colouring, PNG (zlib) and SVG output.
#include "tessel/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>

#include "format/sparse_placement.h"
#include "io/io_util.h"
#include "tessel/error.h"

#ifdef TESSEL_HAVE_ZLIB
#include <zlib.h>
#endif

namespace tessel {

namespace {

/// Row and column of entry e (order 1: row 0).
struct MatrixView {
  const CooData& d;
  int order;
  int64_t rows, cols;
  explicit MatrixView(const CooData& data) : d(data), order(data.order()) {
    if (order < 1 || order > 3)
      throw UserError("plot: can draw tensors of order 1, 2 or 3, not order " + std::to_string(order));
    rows = order == 1 ? 1 : d.dims[0];
    cols = order == 1 ? d.dims[0] : d.dims[1];
  }
  int64_t row(int64_t e) const { return order == 1 ? 0 : d.coords[static_cast<size_t>(e * order)]; }
  int64_t col(int64_t e) const {
    return order == 1 ? d.coords[static_cast<size_t>(e)] : d.coords[static_cast<size_t>(e * order + 1)];
  }
};

/// floor(i * p / n) without overflow, clamped to [0, p-1].
int64_t binOf(int64_t i, int64_t p, int64_t n) {
  if (n <= 0) return 0;
  auto b = static_cast<int64_t>((static_cast<__int128>(i) * p) / n);
  return std::clamp<int64_t>(b, 0, p - 1);
}

struct Cells {
  int gw = 1, gh = 1;
  std::vector<int64_t> count;  // per cell
  std::vector<int> owner;      // majority-vote candidate per cell (-1: none)
  std::vector<int64_t> vote;
  int64_t maxCount = 0;
  int64_t nonEmpty = 0;
};

Cells binCells(const MatrixView& v, const std::vector<int>& owners, int gw, int gh) {
  Cells c;
  c.gw = gw;
  c.gh = gh;
  size_t n = static_cast<size_t>(gw) * static_cast<size_t>(gh);
  c.count.assign(n, 0);
  if (!owners.empty()) {
    c.owner.assign(n, -1);
    c.vote.assign(n, 0);
  }
  for (int64_t e = 0; e < v.d.nnz(); e++) {
    size_t cell = static_cast<size_t>(binOf(v.row(e), gh, v.rows)) * static_cast<size_t>(gw) +
                  static_cast<size_t>(binOf(v.col(e), gw, v.cols));
    if (c.count[cell]++ == 0) c.nonEmpty++;
    c.maxCount = std::max(c.maxCount, c.count[cell]);
    if (!owners.empty()) {  // Boyer-Moore majority vote: the cell's majority owner if any
      int o = owners[static_cast<size_t>(e)];
      if (c.vote[cell] == 0) {
        c.owner[cell] = o;
        c.vote[cell] = 1;
      } else {
        c.vote[cell] += c.owner[cell] == o ? 1 : -1;
      }
    }
  }
  return c;
}

std::array<uint8_t, 3> cellColour(const Cells& c, size_t cell) {
  int64_t k = c.count[cell];
  if (k == 0) return {255, 255, 255};
  double t = c.maxCount > 1 ? std::log1p(static_cast<double>(k)) / std::log1p(static_cast<double>(c.maxCount)) : 1.0;
  double shade = 0.3 + 0.7 * t;  // even a single non-zero stays clearly visible
  std::array<uint8_t, 3> base = {0, 0, 0};
  if (!c.owner.empty() && c.owner[cell] >= 0) base = plotRankColour(c.owner[cell]);
  std::array<uint8_t, 3> out;
  for (int k2 = 0; k2 < 3; k2++)
    out[k2] = static_cast<uint8_t>(std::lround(255.0 - shade * (255.0 - base[k2])));
  return out;
}

void pictureSize(const MatrixView& v, int size, int& w, int& h) {
  if (size < 1 || size > 16384) throw UserError("plot: size must be in [1, 16384], got " + std::to_string(size));
  int64_t rows = std::max<int64_t>(v.rows, 1), cols = std::max<int64_t>(v.cols, 1);
  int64_t longSide = std::max(rows, cols);
  auto side = [&](int64_t extent) {  // extent * size / longSide, rounded, at least 1
    return static_cast<int>(std::max<__int128>(
        1, (static_cast<__int128>(extent) * size + longSide / 2) / longSide));
  };
  w = side(cols);
  h = side(rows);
}

void appendBE32(std::string& s, uint32_t v) {
  for (int k = 3; k >= 0; k--) s.push_back(static_cast<char>((v >> (8 * k)) & 0xff));
}

#ifndef TESSEL_HAVE_ZLIB
uint32_t crc32Of(const unsigned char* p, size_t n, uint32_t crc = 0) {
  crc = ~crc;
  for (size_t i = 0; i < n; i++) {
    crc ^= p[i];
    for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}
/// zlib stream of stored (uncompressed) deflate blocks.
std::string zlibStored(const std::string& raw) {
  std::string z = "\x78\x01";
  size_t pos = 0;
  do {
    size_t n = std::min<size_t>(65535, raw.size() - pos);
    bool last = pos + n == raw.size();
    z.push_back(last ? 1 : 0);
    z.push_back(static_cast<char>(n & 0xff));
    z.push_back(static_cast<char>(n >> 8));
    z.push_back(static_cast<char>(~n & 0xff));
    z.push_back(static_cast<char>((~n >> 8) & 0xff));
    z.append(raw, pos, n);
    pos += n;
  } while (pos < raw.size());
  uint32_t a = 1, b = 0;
  for (unsigned char ch : raw) {
    a = (a + ch) % 65521;
    b = (b + a) % 65521;
  }
  appendBE32(z, (b << 16) | a);
  return z;
}
#endif

void appendChunk(std::string& png, const char* type, const std::string& data) {
  appendBE32(png, static_cast<uint32_t>(data.size()));
  std::string body = std::string(type, 4) + data;
  png += body;
#ifdef TESSEL_HAVE_ZLIB
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size()));
  appendBE32(png, static_cast<uint32_t>(crc));
#else
  appendBE32(png, crc32Of(reinterpret_cast<const unsigned char*>(body.data()), body.size()));
#endif
}

std::string hexColour(const std::array<uint8_t, 3>& c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c[0], c[1], c[2]);
  return buf;
}

std::string xmlEscape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::vector<int64_t> rankCounts(const std::vector<int>& owners, int ranks) {
  std::vector<int64_t> n(owners.empty() ? 0 : static_cast<size_t>(ranks), 0);
  for (int o : owners) n[static_cast<size_t>(o)]++;
  return n;
}

}  // namespace

std::array<uint8_t, 3> plotRankColour(int rank) {
  static const std::array<uint8_t, 3> kPalette[12] = {
      {31, 119, 180}, {255, 127, 14}, {44, 160, 44},  {214, 39, 40},  {148, 103, 189}, {140, 86, 75},
      {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}, {0, 0, 128},    {128, 128, 0}};
  return kPalette[static_cast<size_t>(rank) % 12];
}

std::vector<int> plotOwners(const CooData& data, const PlotDistribution& dist) {
  if (dist.kind == PlotPartition::None) return {};
  if (dist.gridX < 1 || dist.gridY < 1) throw UserError("plot: the machine grid needs at least one rank");
  // The runtime's own placement (format/sparse_placement), on the entries as a matrix in
  // row-major (storage) order: the picture is exactly how the ranks would hold them.
  MatrixView v(data);
  const int64_t nnz = data.nnz();
  std::vector<int64_t> perm(static_cast<size_t>(nnz));
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
    return v.row(x) != v.row(y) ? v.row(x) < v.row(y) : v.col(x) < v.col(y);
  });
  std::vector<int64_t> coords(static_cast<size_t>(2 * nnz));
  for (int64_t k = 0; k < nnz; k++) {
    coords[static_cast<size_t>(2 * k)] = v.row(perm[static_cast<size_t>(k)]);
    coords[static_cast<size_t>(2 * k + 1)] = v.col(perm[static_cast<size_t>(k)]);
  }
  const char* text = dist.kind == PlotPartition::Rows             ? "xy->x"
                     : dist.kind == PlotPartition::Columns        ? "xy->y"
                     : dist.kind == PlotPartition::RowsByNonzeros ? "xy->~x"
                     : dist.kind == PlotPartition::FusedNonzeros  ? "(xy)->~f"
                                                                  : "xy->xy";
  Grid grid = dist.kind == PlotPartition::Blocks2D ? Grid(dist.gridX, dist.gridY) : Grid(dist.ranks());
  EntryPlacement place = placeEntries({v.rows, v.cols}, coords, Distribution::parse(text), grid);
  std::vector<int> owners(static_cast<size_t>(nnz), 0);
  std::vector<int> at(static_cast<size_t>(grid.order()));
  for (int64_t k = 0; k < nnz; k++) {
    for (int d = 0; d < grid.order(); d++) at[static_cast<size_t>(d)] = place.where(k, d);
    owners[static_cast<size_t>(perm[static_cast<size_t>(k)])] = grid.rankOf(at);
  }
  return owners;
}

PlotImage renderPlot(const CooData& data, const PlotOptions& opt) {
  MatrixView v(data);
  PlotImage img;
  pictureSize(v, opt.size, img.width, img.height);
  std::vector<int> owners = plotOwners(data, opt.dist);
  img.rankNonzeros = rankCounts(owners, opt.dist.ranks());
  int gw = static_cast<int>(std::min<int64_t>(std::max<int64_t>(v.cols, 1), img.width));
  int gh = static_cast<int>(std::min<int64_t>(std::max<int64_t>(v.rows, 1), img.height));
  Cells c = binCells(v, owners, gw, gh);
  img.gridWidth = gw;
  img.gridHeight = gh;
  img.rgb.resize(static_cast<size_t>(img.width) * static_cast<size_t>(img.height) * 3);
  std::vector<size_t> colCell(static_cast<size_t>(img.width));
  for (int x = 0; x < img.width; x++) colCell[static_cast<size_t>(x)] = static_cast<size_t>(binOf(x, gw, img.width));
  for (int y = 0; y < img.height; y++) {
    size_t rowCell = static_cast<size_t>(binOf(y, gh, img.height));
    for (int x = 0; x < img.width; x++) {
      auto col = cellColour(c, rowCell * static_cast<size_t>(gw) + colCell[static_cast<size_t>(x)]);
      size_t o = (static_cast<size_t>(y) * static_cast<size_t>(img.width) + static_cast<size_t>(x)) * 3;
      img.rgb[o] = col[0];
      img.rgb[o + 1] = col[1];
      img.rgb[o + 2] = col[2];
    }
  }
  return img;
}

std::string encodePng(const PlotImage& image) {
  size_t stride = static_cast<size_t>(image.width) * 3;
  std::string raw;
  raw.reserve((stride + 1) * static_cast<size_t>(image.height));
  for (int y = 0; y < image.height; y++) {
    raw.push_back('\0');  // filter: none
    raw.append(reinterpret_cast<const char*>(image.rgb.data()) + static_cast<size_t>(y) * stride, stride);
  }
  std::string z;
#ifdef TESSEL_HAVE_ZLIB
  uLongf zlen = compressBound(static_cast<uLong>(raw.size()));
  z.resize(zlen);
  int rc = compress2(reinterpret_cast<Bytef*>(z.data()), &zlen, reinterpret_cast<const Bytef*>(raw.data()),
                     static_cast<uLong>(raw.size()), 6);
  if (rc != Z_OK) throw Error("plot: zlib compress2 failed (" + std::to_string(rc) + ")");
  z.resize(zlen);
#else
  z = zlibStored(raw);
#endif
  std::string png = "\x89PNG\r\n\x1a\n";
  std::string ihdr;
  appendBE32(ihdr, static_cast<uint32_t>(image.width));
  appendBE32(ihdr, static_cast<uint32_t>(image.height));
  ihdr += std::string("\x08\x02\x00\x00\x00", 5);  // 8-bit, RGB, deflate, no filter, no interlace
  appendChunk(png, "IHDR", ihdr);
  appendChunk(png, "IDAT", z);
  appendChunk(png, "IEND", "");
  return png;
}

std::string renderSvg(const CooData& data, const PlotOptions& opt) {
  constexpr int64_t kMaxRects = 65536;
  MatrixView v(data);
  int w = 0, h = 0;
  pictureSize(v, opt.size, w, h);
  std::vector<int> owners = plotOwners(data, opt.dist);
  int gw = static_cast<int>(std::min<int64_t>(std::max<int64_t>(v.cols, 1), w));
  int gh = static_cast<int>(std::min<int64_t>(std::max<int64_t>(v.rows, 1), h));
  Cells c = binCells(v, owners, gw, gh);
  while (c.nonEmpty > kMaxRects) {
    gw = std::max(1, (gw + 1) / 2);
    gh = std::max(1, (gh + 1) / 2);
    c = binCells(v, owners, gw, gh);
  }
  // Legend: a title line, then up to 4 ranks per line (at most 32 ranks listed).
  std::vector<std::string> lines;
  std::string title = opt.name + ": " + std::to_string(v.rows) + " x " + std::to_string(v.cols);
  if (data.order() == 3) title += " (projection of modes 0 and 1 of a " + std::to_string(data.dims[2]) + "-deep 3-tensor)";
  title += ", " + std::to_string(data.nnz()) + " non-zeros";
  int ranks = owners.empty() ? 0 : opt.dist.ranks();
  auto counts = rankCounts(owners, opt.dist.ranks());
  int listed = std::min(ranks, 32);
  int legendLines = 1 + (ranks > 0 ? 1 + (listed + 3) / 4 : 0);
  int lineH = 16, legendH = legendLines * lineH + 8;
  int totalW = std::max(w, ranks > 0 ? 560 : 360);
  std::string s;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n",
                totalW, h + legendH, totalW, h + legendH);
  s += buf;
  std::snprintf(buf, sizeof buf, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", totalW,
                h + legendH);
  s += buf;
  std::snprintf(buf, sizeof buf,
                "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#cccccc\" stroke-width=\"0.5\"/>\n",
                w, h);
  s += buf;
  s += "<g shape-rendering=\"crispEdges\">\n";
  double cw = static_cast<double>(w) / gw, ch = static_cast<double>(h) / gh;
  for (int cy = 0; cy < gh; cy++)
    for (int cx = 0; cx < gw; cx++) {
      size_t cell = static_cast<size_t>(cy) * static_cast<size_t>(gw) + static_cast<size_t>(cx);
      if (c.count[cell] == 0) continue;
      std::snprintf(buf, sizeof buf, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n",
                    cx * cw, cy * ch, cw, ch, hexColour(cellColour(c, cell)).c_str());
      s += buf;
    }
  s += "</g>\n";
  int y = h + lineH;
  std::snprintf(buf, sizeof buf, "<text x=\"4\" y=\"%d\" font-family=\"sans-serif\" font-size=\"12\">", y);
  s += buf + xmlEscape(title) + "</text>\n";
  if (ranks > 0) {
    y += lineH;
    std::snprintf(buf, sizeof buf, "<text x=\"4\" y=\"%d\" font-family=\"sans-serif\" font-size=\"12\">", y);
    s += buf + xmlEscape(opt.dist.label + (ranks > listed ? " (first 32 ranks listed)" : "")) + "</text>\n";
    for (int r = 0; r < listed; r++) {
      if (r % 4 == 0) y += lineH;
      int x = 4 + (r % 4) * 138;
      std::snprintf(buf, sizeof buf,
                    "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                    "<text x=\"%d\" y=\"%d\" font-family=\"sans-serif\" font-size=\"12\">rank %d: %lld nnz</text>\n",
                    x, y - 10, hexColour(plotRankColour(r)).c_str(), x + 14, y, r,
                    static_cast<long long>(counts[static_cast<size_t>(r)]));
      s += buf;
    }
  }
  s += "</svg>\n";
  return s;
}

void writePlot(const std::string& path, const CooData& data, const PlotOptions& opt) {
  auto ext = std::filesystem::path(path).extension().string();
  std::string bytes;
  if (ext == ".png")
    bytes = encodePng(renderPlot(data, opt));
  else if (ext == ".svg")
    bytes = renderSvg(data, opt);
  else
    throw UserError("plot: output file '" + path + "' must end in .png or .svg");
  io_detail::AtomicFileWriter out(path);
  out.write(bytes);
  out.commit();
}

}  // namespace tessel
