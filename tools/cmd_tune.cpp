// `tessel tune [--calibrate] [--json]`: the host CPU's tuning that kernels are compiled
// with (tessel/tuning.h) -- its settings, JIT flags, where it came from and what was
// measured; --calibrate measures again and replaces the cached tuning.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "tessel/tuning.h"

namespace tessel::cli {

namespace {

struct TuneOptions {
  bool calibrate = false;
  bool json = false;
};

int tuneCommand(const TuneOptions& opt) {
  if (opt.calibrate) ::setenv("TESSEL_TUNING", "calibrate", 1);
  const CpuTuning& t = hostTuning();
  std::string flags;
  for (const std::string& f : t.jitFlags()) flags += (flags.empty() ? "" : " ") + f;
  if (opt.json) {
    nlohmann::ordered_json j{{"cpu", t.cpu},          {"settings", t.settings()}, {"jit_flags", flags},
                             {"origin", t.origin},    {"evidence", t.evidence},
                             {"cache", t.cacheFile}, {"fusion_cache_model", fusionCacheModel(t).str()}};
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("cpu: %s\nsettings: %s\njit flags: %s\norigin: %s\n", t.cpu.c_str(), t.settings().c_str(),
              flags.c_str(), t.origin.c_str());
  if (!t.evidence.empty()) std::printf("evidence: %s\n", t.evidence.c_str());
  if (!t.cacheFile.empty()) std::printf("cache: %s\n", t.cacheFile.c_str());
  std::printf("fusion cost model: %s\n", fusionCacheModel(t).str().c_str());
  return 0;
}

}  // namespace

void registerTune(CLI::App& app, Action& action) {
  auto opt = std::make_shared<TuneOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tune",
      "Show the tuning for this CPU that kernels are compiled with: the instruction set and\n"
      "whether the AVX-512 gather dot products are used, measured once per CPU model and\n"
      "compiler (under a second) and cached beside the JIT cache. TESSEL_TUNING overrides it\n"
      "(e.g. TESSEL_TUNING=isa=generic,gathers=off; 'default': the built-in choices). Example:\n"
      "  tessel tune --calibrate");
  cmd->add_flag("--calibrate", opt->calibrate, "Measure again and replace the cached tuning");
  cmd->add_flag("--json", opt->json, "Print the same information as JSON");
  cmd->callback([&action, opt] { action = [opt] { return tuneCommand(*opt); }; });
}

}  // namespace tessel::cli
