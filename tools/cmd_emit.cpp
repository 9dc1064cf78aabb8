// `tessel emit "<expr>" [-f NAME:LEVELS[:ORDER]]... [-s SCHEDULE] [--threads N] [--passes]`: print the
// generated C code, or with --passes the program after every pass of the compiler.
// `--kernel-only` leaves out the helper code (the kernel functions alone).
//
// `tessel explain "<expr>" [same options]`: the loop order, transposes, the schedule and
// why it was chosen, the output plan and the kernel, from the compiler's passes.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <sstream>
#include <utility>
#include <vector>

#include "tessel/tuning.h"
#include "expression_args.h"

namespace tessel::cli {

namespace {
struct EmitOptions {
  std::string expr;
  std::vector<std::string> formats;
  std::vector<std::string> types;
  std::string schedule;
  int threads = 1;
  bool passes = false;
  bool kernelOnly = false;
  std::string semiring;  // empty: not given
  bool mask = false, maskValues = false, complement = false, replace = false;  // --mask ...
  std::string maskFormat, maskForm;
};

/// The C code for the options (the mask, if any, without data).
std::string codeFor(const EmitOptions& opt, const PassObserver& observe) {
  ExpressionArgs args = parseExpressionArgs(opt.expr, opt.formats, opt.types);
  MaskSpec spec = maskSpecOf(opt.mask, opt.maskFormat, opt.maskValues, opt.complement, opt.replace, opt.maskForm, args);
  return generatedCode(opt.expr, args, opt.schedule, opt.threads, observe, semiringOption(opt.semiring), spec,
                       !opt.semiring.empty());
}

/// The kernel functions of generated C (from the first `int tessel_...(` at the start of
/// a line), without the runtime helpers before them.
std::string kernelOnly(const std::string& code) {
  size_t at = code.find("\nint tessel_");
  if (at == std::string::npos) return code;
  // Keep a comment block right above the first kernel function.
  size_t start = at + 1;
  while (start > 1) {
    size_t prev = code.rfind('\n', start - 2);
    size_t lineStart = prev == std::string::npos ? 0 : prev + 1;
    if (code.compare(lineStart, 2, "//") != 0) break;
    start = lineStart;
  }
  return code.substr(start);
}

/// Lines of `text` starting with `prefix` (the prefix removed).
std::vector<std::string> linesWith(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) out.push_back(line.substr(prefix.size()));
  return out;
}

int explain(const EmitOptions& opt) {
  std::vector<std::pair<std::string, std::string>> passes;
  PassObserver keep = [&](const std::string& pass, const std::string& text) { passes.emplace_back(pass, text); };
  std::string code = codeFor(opt, keep);
  auto pass = [&](const std::string& name) -> std::string {
    for (const auto& [n, t] : passes)
      if (n.rfind("after " + name, 0) == 0) return t;
    return "";
  };
  auto trimmed = [](std::string t) {
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
    return t;
  };
  std::string out;
  const std::string analyze = pass("analyze");
  out += "expression: " + opt.expr + "\n";
  out += "tensors:\n";
  std::vector<std::string> seen;
  for (const auto& t : linesWith(analyze, "  tensors[")) {
    std::string line = t.substr(t.find("] = ") + 4), name = line.substr(0, line.find(' '));
    bool again = std::find(seen.begin(), seen.end(), name) != seen.end();
    seen.push_back(name);
    out += "  " + line + (again ? " (a transposed copy)" : "") + "\n";
  }
  auto order = linesWith(analyze, "loop order: ");
  out += "loop order: " + (order.empty() ? std::string("(none: no loops)") : order[0]) + "\n";
  auto notes = linesWith(analyze, "note: ");
  std::string transposes;
  for (const auto& n : notes)
    if (n.find("transposes") != std::string::npos) transposes += "  " + n + "\n";
  out += "transposes:" + (transposes.empty() ? std::string(" none (every input's format fits the loop order)\n")
                                              : "\n" + transposes);
  auto chosen = linesWith(pass("splitStages"), "  schedule: ");
  std::string why = !opt.schedule.empty() ? "given with -s"
                    : opt.threads > 1   ? "the default parallel schedule for " + std::to_string(opt.threads) +
                                            " threads (blocks of output rows, or an even split of non-zeros for "
                                            "skewed rows)"
                                        : "none given and 1 thread";
  if (chosen.empty())
    out += "schedule: none (" +
           std::string(opt.threads > 1 && opt.schedule.empty()
                           ? "no default parallel schedule fits this expression: the loops run serially"
                           : "the loops run serially in the loop order") +
           ")\n";
  else
    out += "schedule: " + chosen[0] + " (" + why + ")\n";
  out += "loops: " + trimmed(pass("schedule")) + "\n";
  out += "output plan: " + trimmed(pass("planOutput")) + "\n";
  std::string parallel = trimmed(pass("planParallel"));
  out += "parallel: " + (parallel.empty() ? std::string("none") : parallel) + "\n";
  out += "tuning: " + hostTuning().str() + "\n";
  for (const auto& n : notes)
    if (n.find("transposes") == std::string::npos) out += "note: " + n + "\n";
  out += "kernel:\n" + kernelOnly(code);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

void addCompileOptions(CLI::App* cmd, EmitOptions& opt) {
  cmd->add_option("expr", opt.expr, "The expression")->required();
  cmd->add_option("-f,--format", opt.formats, "Format of a tensor (as for run)")
      ->type_name("NAME:LEVELS[:ORDER]")
      ->allow_extra_args(false);
  cmd->add_option("-t,--type", opt.types, kTypeHelp)->type_name("NAME:TYPE")->allow_extra_args(false);
  cmd->add_option("-s,--schedule", opt.schedule, "Schedule commands (as for run)")->type_name("COMMANDS");
  cmd->add_option("--threads", opt.threads, "Thread count whose default parallel schedule to use (as for run)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--semiring", opt.semiring, kSemiringHelp)->type_name("NAME");
  cmd->add_flag("--mask", opt.mask, "Compile with an output mask M of the output's shape (C<M> = e; no data read)");
  cmd->add_option("--mask-format", opt.maskFormat, "Format of the mask (default: d then s)")->type_name("LEVELS[:ORDER]");
  cmd->add_flag("--mask-values", opt.maskValues, "A valued mask (true where M stores a nonzero)");
  cmd->add_flag("--complement", opt.complement, "Complement the mask (C<!M>)");
  cmd->add_flag("--replace", opt.replace, "With +=: clear the output where the mask is false");
  cmd->add_option("--mask-form", opt.maskForm, "A masked product's form: pull, push or auto")->type_name("auto|pull|push");
}
}  // namespace

void registerExplain(CLI::App& app, Action& action) {
  auto opt = std::make_shared<EmitOptions>();
  CLI::App* cmd = app.add_subcommand(
      "explain",
      "Explain how tessel compiles an expression: loop order, transposes, the schedule and why, the output "
      "plan, and the kernel without the helper code, e.g.\n"
      "  tessel explain \"A(i,j) = B(i,k) * C(k,j)\" -f B:ds -f C:ds -f A:ds --threads 4");
  addCompileOptions(cmd, *opt);
  cmd->callback([&action, opt] { action = [opt] { return explain(*opt); }; });
}

void registerEmit(CLI::App& app, Action& action) {
  auto opt = std::make_shared<EmitOptions>();
  CLI::App* emit = app.add_subcommand(
      "emit",
      "Print the C code tessel generates for an expression and formats, e.g.\n"
      "  tessel emit \"A(i,j) = B(i,k) * C(k,j)\" -f B:ds -f C:ds -f A:ds");
  addCompileOptions(emit, *opt);
  emit->add_flag("--kernel-only", opt->kernelOnly, "Print the kernel functions alone, without the helper code");
  emit->add_flag("--passes", opt->passes,
                 "Print the program after every pass of the compiler, each under a header naming the pass "
                 "(=== after analyze (loop order) ===, ..., === C (backend) ===)");
  emit->callback([&action, opt] {
    action = [opt] {
      PassObserver print;
      if (opt->passes)  // each pass's program as it comes (a failing pass shows what came before)
        print = [](const std::string& pass, const std::string& text) {
          std::string out = "=== " + pass + " ===\n" + text;
          if (!out.empty() && out.back() != '\n') out += '\n';
          std::fwrite(out.data(), 1, out.size(), stdout);
        };
      std::string code = codeFor(*opt, print);
      if (opt->passes) return 0;  // the C was the last pass
      if (opt->kernelOnly) code = kernelOnly(code);
      std::fwrite(code.data(), 1, code.size(), stdout);
      return 0;
    };
  });
}

}  // namespace tessel::cli
