// `tessel run`: compile and run an expression on tensors read from files.
//
//   tessel run "<expr>" [-f NAME:LEVELS[:ORDER]]... [-i NAME:FILE]... [-o NAME:FILE]
//                       [--emit-c] [--time]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli_common.h"

namespace tessel::cli {

namespace {

struct Options {
  std::string expr;
  std::vector<std::string> formats;  // NAME:LEVELS[:ORDER]
  std::vector<std::string> inputs;   // NAME:FILE
  std::string output;                // NAME:FILE
  bool emitC = false;
  bool time = false;
};

int runCommand(const Options& opt) {
  // 1. What the expression mentions.
  std::vector<TensorUse> uses = tessel::scanTensors(opt.expr);
  std::map<std::string, TensorUse> byName;
  for (const auto& u : uses) byName[u.name] = u;
  const TensorUse& out = uses.at(0);
  auto requireKnown = [&](const std::string& name, const char* option) {
    if (!byName.count(name))
      throw UsageError(std::string(option) + " names tensor '" + name +
                       "', which is not in the expression");
  };

  // 2. Command-line bindings.
  std::map<std::string, Format> formats;
  for (const auto& arg : opt.formats) {
    auto [name, text] = splitNamed(arg, "-f", "LEVELS[:ORDER]");
    requireKnown(name, "-f");
    if (formats.count(name)) throw UsageError("-f given twice for tensor '" + name + "'");
    Format f = Format::parse(text);
    if (f.order() != byName[name].order)
      throw tessel::FormatError("format '" + text + "' has " + std::to_string(f.order()) +
                                " levels but tensor " + name + " has order " +
                                std::to_string(byName[name].order));
    formats.emplace(name, f);
  }
  std::map<std::string, std::string> files;
  for (const auto& arg : opt.inputs) {
    auto [name, path] = splitNamed(arg, "-i", "FILE");
    requireKnown(name, "-i");
    if (byName[name].isOutput)
      throw UsageError("-i names the output tensor '" + name + "'; give inputs only");
    if (files.count(name)) throw UsageError("-i given twice for tensor '" + name + "'");
    files.emplace(name, path);
  }
  std::optional<std::string> outPath;
  if (!opt.output.empty()) {
    auto [name, path] = splitNamed(opt.output, "-o", "FILE");
    requireKnown(name, "-o");
    if (!byName[name].isOutput)
      throw UsageError("-o names tensor '" + name + "', but the output is '" + out.name + "'");
    if (!hasExtension(path, ".tns") && !hasExtension(path, ".mtx"))
      throw UsageError("-o file '" + path + "' must end in .tns or .mtx");
    if (hasExtension(path, ".mtx") && out.order != 2)
      throw UsageError("-o file '" + path + "': .mtx holds matrices, but " + out.name +
                       " has order " + std::to_string(out.order) + "; use .tns");
    auto dir = std::filesystem::path(path).parent_path();
    if (!dir.empty() && !std::filesystem::is_directory(dir))
      throw tessel::FileError(path, "cannot write: directory " + dir.string() + " does not exist");
    outPath = path;
  }
  auto formatOf = [&](const TensorUse& u) {
    auto it = formats.find(u.name);
    return it != formats.end() ? it->second : defaultFormat(u.order, u.isOutput);
  };

  // 3. --emit-c: no data needed; every dimension is 1.
  if (opt.emitC) {
    std::map<std::string, TensorBase> tensors;
    for (const auto& u : uses)
      tensors.emplace(u.name, TensorBase(u.name, Datatype::Float64,
                                         std::vector<int64_t>(u.order, 1), formatOf(u)));
    tessel::Assignment a = tessel::parseAssignment(opt.expr, tensors);
    tessel::checkAssignment(a);
    std::string code = tessel::Kernel::emitC(a);
    std::fwrite(code.data(), 1, code.size(), stdout);
    if (!code.empty() && code.back() != '\n') std::fputc('\n', stdout);
    return 0;
  }

  // 4. Inputs.
  std::map<std::string, TensorBase> tensors;
  for (const auto& u : uses) {
    if (u.isOutput) continue;
    auto it = files.find(u.name);
    if (it == files.end())
      throw UsageError("no input file for tensor '" + u.name + "' (use -i " + u.name + ":FILE)");
    CooData coo = tessel::readTensorFile(it->second).data;
    if (coo.order() != u.order)
      throw tessel::DimensionError(it->second + " holds a tensor of order " +
                                   std::to_string(coo.order()) + ", but " + u.name + " has " +
                                   std::to_string(u.order) + " indices in the expression");
    Format f = tessel::withFittingWidths(formatOf(u), coo.dims, coo.nnz());
    TensorBase t(u.name, Datatype::Float64, coo.dims, f);
    t.setFromCoo(coo);
    tensors.emplace(u.name, t);
  }

  // 5. Output dims from the index variables' extents in the inputs: parse once with a
  // placeholder output to learn which variable indexes which input mode.
  std::vector<int64_t> outDims(out.order, 1);
  {
    auto probe = tensors;
    probe.emplace(out.name, TensorBase(out.name, Datatype::Float64, outDims,
                                       defaultFormat(out.order, true)));
    tessel::Assignment a = tessel::parseAssignment(opt.expr, probe);
    const auto& lhsVars = a.lhsNode().vars;
    auto accesses = tessel::rhsAccesses(a);
    for (int m = 0; m < out.order; m++) {
      bool found = false;
      for (const auto* acc : accesses) {
        for (size_t k = 0; k < acc->vars.size() && !found; k++) {
          if (acc->vars[k] == lhsVars.at(m) && acc->tensor && acc->tensor->name != out.name) {
            outDims[m] = acc->tensor->dims.at(k);
            found = true;
          }
        }
        if (found) break;
      }
      if (!found)
        throw tessel::NotationError("cannot infer the extent of index variable " +
                                    lhsVars.at(m).name());
    }
  }
  Format outFormat = tessel::withFittingWidths(formatOf(out), outDims, dimsProduct(outDims));
  TensorBase output(out.name, Datatype::Float64, outDims, outFormat);
  tensors.emplace(out.name, output);

  // 6. Compile and run.
  tessel::Assignment a = tessel::parseAssignment(opt.expr, tensors);
  tessel::checkAssignment(a);
  auto t0 = std::chrono::steady_clock::now();
  auto kernel = tessel::Kernel::compile(a);
  auto t1 = std::chrono::steady_clock::now();
  tessel::RunTimes times = kernel->run(a);
  if (opt.time) {
    std::fprintf(stderr, "compile: %.3f ms (%s)\n", millis(t1 - t0),
                 kernel->cacheHit() ? "cache hit" : "compiled");
    std::fprintf(stderr, "assemble: %.3f ms\n", times.assembleSeconds * 1e3);
    std::fprintf(stderr, "compute: %.3f ms\n", times.computeSeconds * 1e3);
  }

  // 7. Results.
  CooData result = output.toCoo();
  if (outPath) tessel::writeTensorFile(*outPath, result);
  if (out.order == 0) {
    double v = 0;
    for (double x : result.values) v += x;
    std::printf("%.17g\n", v);
  }
  return 0;
}

}  // namespace

void registerRun(CLI::App& app, Action& action) {
  auto opt = std::make_shared<Options>();
  CLI::App* run = app.add_subcommand(
      "run",
      "Compile and run a tensor-index-notation expression, e.g.\n"
      "  tessel run \"a(i) = B(i,j) * c(j)\" -f B:ds -i B:B.mtx -i c:c.tns -o a:a.tns");
  run->add_option("expr", opt->expr, "The expression, e.g. \"A(i,j) = B(i,k) * C(k,j)\"")
      ->required();
  run->add_option("-f,--format", opt->formats,
                  "Format of a tensor: level letters (d dense, s compressed, u compressed "
                  "non-unique, q singleton), optional mode order: B:ds is CSR, B:ds:1,0 is CSC. "
                  "Default: inputs d then s for lower levels, output dense")
      ->type_name("NAME:LEVELS[:ORDER]")
      ->allow_extra_args(false);
  run->add_option("-i,--input", opt->inputs, "Input tensor file (.mtx or .tns), one per input")
      ->type_name("NAME:FILE")
      ->allow_extra_args(false);
  run->add_option("-o,--output", opt->output,
                  "Write the output tensor (.tns: 1-based, zeros omitted; or .mtx)")
      ->type_name("NAME:FILE");
  run->add_flag("--emit-c", opt->emitC, "Print the generated C code and exit (no inputs needed)");
  run->add_flag("--time", opt->time, "Print compile, assemble and compute times to stderr");

  run->callback([&action, opt] { action = [opt] { return runCommand(*opt); }; });
}

}  // namespace tessel::cli
