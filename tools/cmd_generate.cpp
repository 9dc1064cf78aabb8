// `tessel generate`: write a deterministic synthetic tensor to a file.
//
//   tessel generate KIND ARGS -o FILE [--seed N]      e.g. generate uniform 1000,1000,8 -o B.mtx
//   tessel generate KIND:ARGS -o FILE [--seed N]      e.g. generate rmat:16,16 -o G.mtx
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cli_common.h"
#include "tessel/generate.h"

namespace tessel::cli {

namespace {

struct Options {
  std::string kind;
  std::string args;
  std::string output;
  uint64_t seed = 1;
};

int generateCommand(const Options& opt) {
  std::string spec = opt.kind;
  if (!opt.args.empty()) {
    if (spec.find(':') != std::string::npos)
      throw UsageError("give the generator as KIND ARGS or KIND:ARGS, not both ('" + opt.kind + "' and '" +
                       opt.args + "')");
    spec += ":" + opt.args;
  }
  const std::string& path = opt.output;
  if (!hasExtension(path, ".mtx") && !hasExtension(path, ".tns") && !hasExtension(path, ".tsb"))
    throw UsageError("-o file '" + path + "' must end in .mtx, .tns or .tsb");
  auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir))
    throw tessel::FileError(path, "cannot write: directory " + dir.string() + " does not exist");
  CooData data = tessel::generateFromSpec(spec, opt.seed);
  if (hasExtension(path, ".mtx") && data.order() != 2)
    throw UsageError("-o file '" + path + "': .mtx holds matrices, but '" + spec + "' has order " +
                     std::to_string(data.order()) + "; use .tns");
  tessel::writeTensorFile(path, data);
  std::string dims;
  for (auto d : data.dims) dims += (dims.empty() ? "" : " x ") + std::to_string(d);
  std::printf("%s: %s, %lld non-zeros (%s, seed %llu)\n", path.c_str(), dims.c_str(),
              static_cast<long long>(data.nnz()), spec.c_str(), static_cast<unsigned long long>(opt.seed));
  return 0;
}

}  // namespace

void registerGenerate(CLI::App& app, Action& action) {
  auto opt = std::make_shared<Options>();
  CLI::App* gen = app.add_subcommand(
      "generate",
      "Write a deterministic synthetic tensor (same seed, same file everywhere), e.g.\n"
      "  tessel generate uniform 1000,1000,8 -o B.mtx\n"
      "  tessel generate rmat:16,16 -o G.mtx --seed 7\n"
      "Kinds and arguments:\n" + tessel::generateSpecHelp());
  gen->add_option("kind", opt->kind, "Generator kind (uniform, density, banded, rmat, skewed, dense), or KIND:ARGS")
      ->required();
  gen->add_option("args", opt->args, "Comma-separated arguments of the kind");
  gen->add_option("-o,--output", opt->output, "Output file (.mtx for matrices, .tns, or .tsb binary)")->required();
  gen->add_option("--seed", opt->seed, "Random seed (default 1)");
  gen->callback([&action, opt] { action = [opt] { return generateCommand(*opt); }; });
}

}  // namespace tessel::cli
