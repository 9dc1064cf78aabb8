// `tessel info FILE [--json]`: what a tensor file holds -- order, dimensions, stored
// entries, density, value field, row/column (matrices) or fiber/slice (order >= 3)
// statistics, and the bytes the tensor would take in common formats (computed from
// counts of distinct coordinate prefixes, without building any format).
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_common.h"

namespace tessel::cli {

namespace {

struct InfoOptions {
  std::string file;
  bool json = false;
};

struct Stats {
  int64_t count = 0;  // rows/columns/fibers considered (empty ones included when known)
  int64_t min = 0, max = 0, empty = 0;
  double mean = 0, stddev = 0;
};

/// Statistics over `total` groups of which the non-empty ones have `lengths`.
Stats lengthStats(const std::vector<int64_t>& lengths, int64_t total) {
  Stats s;
  s.count = total;
  s.empty = total - static_cast<int64_t>(lengths.size());
  if (total <= 0) return s;
  long double sum = 0, sumsq = 0;
  s.min = lengths.empty() ? 0 : std::numeric_limits<int64_t>::max();
  for (int64_t l : lengths) {
    sum += l;
    sumsq += static_cast<long double>(l) * l;
    s.min = std::min(s.min, l);
    s.max = std::max(s.max, l);
  }
  if (s.empty > 0) s.min = 0;
  long double mean = sum / total;
  long double var = sumsq / total - mean * mean;
  s.mean = static_cast<double>(mean);
  s.stddev = static_cast<double>(var > 0 ? std::sqrt(var) : 0.0L);
  return s;
}

/// Run lengths of equal values in a sorted vector.
std::vector<int64_t> runs(const std::vector<int64_t>& sorted) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) j++;
    out.push_back(static_cast<int64_t>(j - i));
    i = j;
  }
  return out;
}

std::vector<int64_t> modeCoords(const CooData& c, int m) {
  std::vector<int64_t> v(static_cast<size_t>(c.nnz()));
  for (int64_t e = 0; e < c.nnz(); e++) v[e] = c.coords[e * c.order() + m];
  return v;
}

const char* fieldName(FileField f) {
  switch (f) {
    case FileField::Real: return "real";
    case FileField::Integer: return "integer";
    case FileField::Pattern: return "pattern";
  }
  return "?";
}

/// Saturating byte arithmetic (the dense size of a large tensor overflows int64).
struct Bytes {
  unsigned __int128 v = 0;
  Bytes& add(unsigned __int128 count, unsigned __int128 elem) {
    v += count * elem;
    return *this;
  }
  bool overflows() const { return v > static_cast<unsigned __int128>(INT64_MAX); }
};

nlohmann::json statsJson(const Stats& s) {
  return {{"count", s.count}, {"min", s.min},       {"max", s.max},
          {"mean", s.mean},   {"stddev", s.stddev}, {"empty", s.empty}};
}

std::string fmtStats(const Stats& s) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "min %" PRId64 ", max %" PRId64 ", mean %.4g, std-dev %.4g, empty %" PRId64
                " of %" PRId64,
                s.min, s.max, s.mean, s.stddev, s.empty, s.count);
  return buf;
}

int infoCommand(const InfoOptions& opt) {
  // Read; a .tsb keeps its datatype and stored format.
  CooData raw;
  std::string field, datatype = "float64", storedFormat;
  if (isBinaryTensorPath(opt.file)) {
    TensorBase t = mapBinary(opt.file, "T");
    raw = t.toCoo();
    datatype = datatypeName(t.datatype());
    field = t.datatype() == Datatype::Float32 || t.datatype() == Datatype::Float64 ? "real" : "integer";
    storedFormat = t.format().str();
  } else {
    FileContents fc = readTensorFile(opt.file);
    raw = std::move(fc.data);
    field = fieldName(fc.field);
  }
  const int order = raw.order();
  const int64_t fileEntries = raw.nnz();
  // Sorted, distinct coordinates (duplicates summed) through an all-compressed tensor.
  CooData c;
  if (order == 0) {
    c = raw;
  } else {
    Format f = withFittingWidths(CSF(order),
                                 raw.dims, raw.nnz());
    TensorBase t("T", Datatype::Float64, raw.dims, f);
    t.setFromCoo(raw);
    raw = CooData();
    c = t.toCoo();
  }
  const int64_t nnz = c.nnz();

  // Distinct prefixes: D[k] = number of distinct (i_0..i_{k-1}); D[0] = 1, D[order] = nnz.
  std::vector<int64_t> D(order + 1, 0);
  D[0] = 1;
  if (nnz > 0)
    for (int k = 1; k <= order; k++) D[k] = 1;
  for (int64_t e = 1; e < nnz; e++) {
    int m = 0;
    while (m < order && c.coords[e * order + m] == c.coords[(e - 1) * order + m]) m++;
    for (int k = m + 1; k <= order; k++) D[k]++;
  }
  if (order == 0) D[0] = nnz;  // a scalar: one value when stored

  long double cells = 1;
  for (int64_t d : c.dims) cells *= d;
  const double density = cells > 0 ? static_cast<double>(nnz / cells) : 0.0;

  // Index widths as withFittingWidths would choose them.
  bool widePos = nnz > INT32_MAX, wideCrd = false;
  for (int64_t d : c.dims) {
    if (d - 1 > INT32_MAX) wideCrd = true;
    if (d > INT32_MAX) widePos = true;
  }
  const unsigned posB = widePos ? 8 : 4, crdB = wideCrd ? 8 : 4;
  unsigned valB = 8;
  if (datatype == "float32" || datatype == "int32") valB = 4;
  if (datatype == "bool") valB = 1;

  // Bytes per format.
  std::vector<std::pair<std::string, Bytes>> sizes;
  {
    Bytes coo;
    if (order > 0) coo.add(2, posB).add(static_cast<unsigned __int128>(nnz) * order, crdB);
    coo.add(static_cast<unsigned __int128>(order == 0 ? 1 : nnz), valB);
    sizes.push_back({order == 0 ? "COO (scalar)" : "COO", coo});
  }
  if (order >= 1) {
    // Dense first, compressed below (CSR for matrices; a dense vector for order 1).
    Bytes dfirst;
    unsigned __int128 positions = static_cast<unsigned __int128>(c.dims[0]);
    for (int k = 1; k < order; k++) {
      dfirst.add(positions + 1, posB).add(static_cast<unsigned __int128>(D[k + 1]), crdB);
      positions = static_cast<unsigned __int128>(D[k + 1]);
    }
    dfirst.add(positions, valB);
    // All compressed (DCSR for matrices, CSF otherwise, a sparse vector for order 1).
    Bytes csf;
    for (int k = 0; k < order; k++)
      csf.add(static_cast<unsigned __int128>(D[k]) + 1, posB).add(static_cast<unsigned __int128>(D[k + 1]), crdB);
    csf.add(static_cast<unsigned __int128>(nnz), valB);
    if (order == 1) {
      sizes.push_back({"sparse vector (s)", csf});
    } else if (order == 2) {
      sizes.push_back({"CSR", dfirst});
      Bytes csc;
      csc.add(static_cast<unsigned __int128>(c.dims[1]) + 1, posB)
          .add(static_cast<unsigned __int128>(nnz), crdB)
          .add(static_cast<unsigned __int128>(nnz), valB);
      sizes.push_back({"CSC", csc});
      sizes.push_back({"DCSR", csf});
    } else {
      sizes.push_back({"CSF (" + std::string(order, 's') + ")", csf});
      sizes.push_back({"dense-first (d" + std::string(order - 1, 's') + ")", dfirst});
    }
  }
  {
    Bytes dense;
    unsigned __int128 cellsI = 1;
    bool over = false;
    for (int64_t d : c.dims) {
      cellsI *= static_cast<unsigned __int128>(d);
      if (cellsI > static_cast<unsigned __int128>(INT64_MAX)) over = true, cellsI = static_cast<unsigned __int128>(INT64_MAX) + 1;
    }
    dense.add(cellsI, valB);
    if (over) dense.v = static_cast<unsigned __int128>(INT64_MAX) + 1;
    sizes.push_back({"dense", dense});
    // Bitmap levels throughout: a value slot and a one-byte presence flag per cell.
    Bytes bitmap;
    bitmap.add(cellsI, valB + 1);
    if (over) bitmap.v = static_cast<unsigned __int128>(INT64_MAX) + 1;
    if (order > 0) sizes.push_back({"bitmap (" + std::string(order, 'b') + ")", bitmap});
  }

  // Row/column (matrices) or fiber/slice (order >= 3) statistics.
  std::vector<std::pair<std::string, Stats>> stats;
  if (order == 2) {
    stats.push_back({"rows", lengthStats(runs(modeCoords(c, 0)), c.dims[0])});
    std::vector<int64_t> cols = modeCoords(c, 1);
    std::sort(cols.begin(), cols.end());
    stats.push_back({"columns", lengthStats(runs(cols), c.dims[1])});
  } else if (order >= 3) {
    // Fibers of the last mode: runs of equal (i_0..i_{n-2}) in sorted order.
    std::vector<int64_t> lengths;
    for (int64_t e = 0; e < nnz;) {
      int64_t j = e + 1;
      while (j < nnz && std::equal(c.coords.begin() + e * order, c.coords.begin() + e * order + order - 1,
                                   c.coords.begin() + j * order))
        j++;
      lengths.push_back(j - e);
      e = j;
    }
    stats.push_back({"fibers (last mode, non-empty)", lengthStats(lengths, static_cast<int64_t>(lengths.size()))});
  }
  std::vector<int64_t> slices;  // non-empty slices per mode
  for (int m = 0; m < order; m++) {
    std::vector<int64_t> v = modeCoords(c, m);
    std::sort(v.begin(), v.end());
    slices.push_back(static_cast<int64_t>(std::unique(v.begin(), v.end()) - v.begin()));
  }

  if (opt.json) {
    nlohmann::json j;
    j["file"] = opt.file;
    j["order"] = order;
    j["dims"] = c.dims;
    j["nnz"] = nnz;
    if (fileEntries != nnz) j["file_entries"] = fileEntries;
    j["density"] = density;
    j["field"] = field;
    j["datatype"] = datatype;
    if (!storedFormat.empty()) j["stored_format"] = storedFormat;
    for (const auto& [name, s] : stats) j[name == "rows" ? "rows" : name == "columns" ? "columns" : "fibers"] = statsJson(s);
    if (order >= 3) j["nonempty_slices"] = slices;
    j["index_bytes"] = {{"pos", posB}, {"crd", crdB}};
    nlohmann::json b = nlohmann::json::object();
    for (const auto& [name, s] : sizes) {
      if (s.overflows())
        b[name] = nullptr;
      else
        b[name] = static_cast<int64_t>(s.v);
    }
    j["bytes"] = b;
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }

  auto line = [](const std::string& k, const std::string& v) {
    std::printf("%-32s %s\n", (k + ":").c_str(), v.c_str());
  };
  std::string dims;
  for (int m = 0; m < order; m++) dims += (m ? " x " : "") + std::to_string(c.dims[m]);
  line("file", opt.file);
  line("order", std::to_string(order));
  line("dims", order ? dims : "(scalar)");
  line("nnz", std::to_string(nnz) + (fileEntries != nnz ? " (" + std::to_string(fileEntries) +
                                                              " entries in the file, duplicates summed)"
                                                        : ""));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", density);
  line("density", buf);
  line("field", field);
  line("datatype", datatype);
  if (!storedFormat.empty()) line("stored format", storedFormat);
  for (const auto& [name, s] : stats) line(name, fmtStats(s));
  if (order >= 3) {
    std::string sl;
    for (int m = 0; m < order; m++) sl += (m ? ", " : "") + std::string("mode ") + std::to_string(m) + ": " + std::to_string(slices[m]);
    line("non-empty slices", sl);
  }
  std::printf("bytes (%u-bit pos, %u-bit crd, %u-byte values):\n", posB * 8, crdB * 8, valB);
  for (const auto& [name, s] : sizes)
    std::printf("  %-30s %s\n", (name + ":").c_str(),
                s.overflows() ? "overflows int64" : std::to_string(static_cast<int64_t>(s.v)).c_str());
  return 0;
}

}  // namespace

void registerInfo(CLI::App& app, Action& action) {
  auto opt = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand(
      "info",
      "Describe a tensor file (.mtx, .tns, .tsb, .mtx.gz, .tns.gz): order, dims, non-zeros,\n"
      "density, row/column or fiber statistics, and its size in common formats. Example:\n"
      "  tessel info B.mtx --json");
  cmd->add_option("FILE", opt->file, "The tensor file")->required();
  cmd->add_flag("--json", opt->json, "Print the same information as JSON");
  cmd->callback([&action, opt] { action = [opt] { return infoCommand(*opt); }; });
}

}  // namespace tessel::cli
