// `tessel convert IN OUT [-f LEVELS[:ORDER]]`: convert between tensor file formats
// (.mtx, .tns, .tsb; .mtx.gz/.tns.gz in and out). A .tsb output stores the tensor in the
// format -f gives (default: the input's own format when it is a .tsb, else CSR for
// matrices, a compressed vector for order 1, d then s levels otherwise), with index
// widths that fit the data.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "cli_common.h"

namespace tessel::cli {

namespace {

struct ConvertOptions {
  std::string in, out, format;
};

bool isText(const std::string& p) {
  std::string s = p;
  if (s.size() > 3 && s.compare(s.size() - 3, 3, ".gz") == 0) s.resize(s.size() - 3);
  return hasExtension(s, ".mtx") || hasExtension(s, ".tns");
}

int convertCommand(const ConvertOptions& opt) {
  const bool outBinary = isBinaryTensorPath(opt.out);
  if (!outBinary && !isText(opt.out))
    throw UsageError("output file '" + opt.out + "' must end in .mtx, .tns, .mtx.gz, .tns.gz or .tsb");
  if (!opt.format.empty() && !outBinary)
    throw UsageError("-f only applies to .tsb output (" + opt.out + " is a text format)");
  if (!isBinaryTensorPath(opt.in) && !isText(opt.in))
    throw UsageError("input file '" + opt.in +
                     "' must end in .mtx, .tns, .tsb, .mtx.gz or .tns.gz");
  auto dir = std::filesystem::path(opt.out).parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir))
    throw FileError(opt.out, "cannot write: directory " + dir.string() + " does not exist");

  // Read: a .tsb keeps its datatype and format; text files become float64 coordinates.
  TensorBase t;
  CooData coo;
  if (isBinaryTensorPath(opt.in)) {
    t = mapBinary(opt.in, "T");
  } else {
    coo = readTensorFile(opt.in).data;
  }
  const int order = t.defined() ? t.order() : coo.order();

  if (!outBinary) {
    if (t.defined()) coo = t.toCoo();
    if (textExtension(opt.out) == ".mtx" && order != 2)
      throw UsageError("output file '" + opt.out + "': .mtx holds matrices, but " + opt.in +
                       " holds a tensor of order " + std::to_string(order) + "; use .tns");
    writeTensorFile(opt.out, coo);
    return 0;
  }

  std::optional<Format> chosen;
  if (!opt.format.empty()) {
    Format f = Format::parse(opt.format);
    if (f.order() != order)
      throw FormatError("format '" + opt.format + "' has " + std::to_string(f.order()) +
                        " levels but " + opt.in + " holds a tensor of order " +
                        std::to_string(order));
    chosen = f;
  }
  if (t.defined()) {
    if (chosen) {
      int64_t n = t.storedCount();
      t = t.convert(withFittingWidths(*chosen, t.dims(), n), "T");
    }
  } else {
    Format f = withFittingWidths(chosen ? *chosen : defaultBinaryFormat(order), coo.dims, coo.nnz());
    t = TensorBase("T", Datatype::Float64, coo.dims, f);
    t.setFromCoo(coo);
  }
  writeBinary(opt.out, t);
  return 0;
}

}  // namespace

void registerConvert(CLI::App& app, Action& action) {
  auto opt = std::make_shared<ConvertOptions>();
  CLI::App* cmd = app.add_subcommand(
      "convert",
      "Convert a tensor file between .mtx, .tns and .tsb (binary, stored in a chosen format);\n"
      "gzip-compressed .mtx.gz / .tns.gz files are read and written too. Examples:\n"
      "  tessel convert B.mtx B.tsb -f ds:1,0     # store B as CSC in a binary file\n"
      "  tessel convert B.tsb B.tns               # back to FROSTT text");
  cmd->add_option("IN", opt->in, "Input file (.mtx, .tns, .tsb, .mtx.gz, .tns.gz)")->required();
  cmd->add_option("OUT", opt->out, "Output file (.mtx, .tns, .mtx.gz, .tns.gz or .tsb), written atomically")
      ->required();
  cmd->add_option("-f,--format", opt->format,
                  "Stored format of a .tsb output: level letters (d dense, s compressed, u "
                  "compressed non-unique, q singleton, b bitmap), optional mode order: ds is CSR, ds:1,0 "
                  "CSC. Default: the input's format for a .tsb input, else CSR for matrices, s "
                  "for vectors, d then s levels otherwise. Only for .tsb output")
      ->type_name("LEVELS[:ORDER]");
  cmd->callback([&action, opt] { action = [opt] { return convertCommand(*opt); }; });
}

}  // namespace tessel::cli
