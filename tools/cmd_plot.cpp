// `tessel plot`: draw a tensor's sparsity pattern, optionally coloured by owner rank.
//
//   tessel plot FILE -o pic.png|pic.svg [-d NAME:DIST -m MACHINE] [--size PIXELS]
//
// DIST is one of a small subset of the distribution notation (parsed here; the general
// language comes later): xy->x (rows, equal blocks), xy->y (columns), xy->~x (rows with
// about equal non-zeros), (xy)->~f (non-zeros in row-major order split evenly), and
// xy->xy with a 2-D machine PxQ (2-D blocks). MACHINE is N (1-D) or PxQ (2-D).
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cli_common.h"
#include "tessel/plot.h"

namespace tessel::cli {

namespace {

struct Options {
  std::string input;
  std::string output;
  std::string dist;     // NAME:DIST
  std::string machine;  // N or PxQ
  int size = 512;
};

constexpr int kMaxRanks = 4096;

int parseRanks(const std::string& s, const std::string& machine) {
  int v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 1 || v > kMaxRanks)
    throw UsageError("malformed -m machine '" + machine + "': expected N or PxQ with positive rank counts (at most " +
                     std::to_string(kMaxRanks) + " ranks)");
  return v;
}

PlotDistribution parseDistribution(const std::string& distArg, const std::string& machine) {
  PlotDistribution d;
  if (distArg.empty() && machine.empty()) return d;
  if (distArg.empty()) throw UsageError("-m " + machine + " given without a distribution (-d NAME:DIST)");
  if (machine.empty()) throw UsageError("-d " + distArg + " needs a machine (-m N or -m PxQ)");
  auto [name, text] = splitNamed(distArg, "-d", "DIST");
  std::string t;
  for (char c : text)
    if (c != ' ') t += c;
  // Machine: N or PxQ.
  auto x = machine.find('x');
  int dims = x == std::string::npos ? 1 : 2;
  d.gridX = parseRanks(machine.substr(0, x), machine);
  if (dims == 2) d.gridY = parseRanks(machine.substr(x + 1), machine);
  if (static_cast<int64_t>(d.gridX) * d.gridY > kMaxRanks)
    throw UsageError("-m " + machine + ": at most " + std::to_string(kMaxRanks) + " ranks");
  int needDims = 1;
  if (t == "xy->x")
    d.kind = PlotPartition::Rows;
  else if (t == "xy->y")
    d.kind = PlotPartition::Columns;
  else if (t == "xy->~x")
    d.kind = PlotPartition::RowsByNonzeros;
  else if (t == "(xy)->~f")
    d.kind = PlotPartition::FusedNonzeros;
  else if (t == "xy->xy") {
    d.kind = PlotPartition::Blocks2D;
    needDims = 2;
  } else {
    throw UsageError("unsupported distribution '" + text + "' in -d " + distArg +
                     ": plot supports xy->x, xy->y, xy->~x, (xy)->~f and xy->xy");
  }
  if (dims != needDims)
    throw UsageError("distribution " + t + " maps onto a " + std::to_string(needDims) + "-D machine, but -m " +
                     machine + " is " + std::to_string(dims) + "-D" +
                     (needDims == 1 ? " (use -m N)" : " (use -m PxQ)"));
  d.label = name + ":" + t + " on " + machine + " (" + std::to_string(d.ranks()) + " rank" +
            (d.ranks() == 1 ? "" : "s") + ")";
  return d;
}

int plotCommand(const Options& opt) {
  if (!hasExtension(opt.output, ".png") && !hasExtension(opt.output, ".svg"))
    throw UsageError("-o file '" + opt.output + "' must end in .png or .svg");
  if (opt.size < 1 || opt.size > 16384)
    throw UsageError("--size " + std::to_string(opt.size) + " must be between 1 and 16384 pixels");
  auto dir = std::filesystem::path(opt.output).parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir))
    throw tessel::FileError(opt.output, "cannot write: directory " + dir.string() + " does not exist");
  PlotOptions po;
  po.size = opt.size;
  po.dist = parseDistribution(opt.dist, opt.machine);
  CooData data = tessel::readTensorFile(opt.input).data;
  if (data.order() < 1 || data.order() > 3)
    throw tessel::DimensionError(opt.input + " holds a tensor of order " + std::to_string(data.order()) +
                                 "; plot draws orders 1, 2 and 3");
  po.name = opt.dist.empty() ? std::filesystem::path(opt.input).filename().string()
                             : opt.dist.substr(0, opt.dist.find(':'));
  tessel::writePlot(opt.output, data, po);
  std::printf("%s: %s", opt.output.c_str(), opt.input.c_str());
  if (data.order() == 3) std::printf(" (modes 0 and 1 projected: 3-tensor)");
  std::printf(", %lld non-zeros\n", static_cast<long long>(data.nnz()));
  if (po.dist.kind != PlotPartition::None) {
    auto owners = tessel::plotOwners(data, po.dist);
    std::vector<long long> counts(static_cast<size_t>(po.dist.ranks()), 0);
    for (int o : owners) counts[static_cast<size_t>(o)]++;
    std::printf("%s\n", po.dist.label.c_str());
    for (int r = 0; r < po.dist.ranks(); r++) {
      auto c = tessel::plotRankColour(r);
      std::printf("rank %d (#%02x%02x%02x): %lld non-zeros\n", r, c[0], c[1], c[2], counts[static_cast<size_t>(r)]);
    }
  }
  return 0;
}

}  // namespace

void registerPlot(CLI::App& app, Action& action) {
  auto opt = std::make_shared<Options>();
  CLI::App* plot = app.add_subcommand(
      "plot",
      "Draw the sparsity pattern of a matrix (or the mode-0/1 projection of a 3-tensor) as PNG or SVG,\n"
      "downsampled (darker = more non-zeros, log scale), optionally coloured by owner rank, e.g.\n"
      "  tessel plot B.mtx -o B.png -d B:xy->~x -m 4\n"
      "Distributions: xy->x (rows), xy->y (columns), xy->~x (rows, equal non-zeros),\n"
      "(xy)->~f (non-zeros evenly), xy->xy with -m PxQ (2-D blocks)");
  plot->add_option("file", opt->input, "Tensor file (.mtx, .tns or .tsb)")->required();
  plot->add_option("-o,--output", opt->output, "Picture file (.png or .svg)")->required();
  plot->add_option("-d,--distribution", opt->dist, "Colour by owner under a distribution")->type_name("NAME:DIST");
  plot->add_option("-m,--machine", opt->machine, "Machine grid: N or PxQ ranks")->type_name("MACHINE");
  plot->add_option("--size", opt->size, "Pixels on the long side (default 512)");
  plot->callback([&action, opt] { action = [opt] { return plotCommand(*opt); }; });
}

}  // namespace tessel::cli
