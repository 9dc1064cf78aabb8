// `tessel emit "<expr>" [-f NAME:LEVELS[:ORDER]]... [-s SCHEDULE] [--threads N] [--passes]`: print the
// generated C code, or with --passes the program after every pass of the compiler.
#include <cstdio>
#include <memory>

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
  std::string semiring = "plus_times";
};
}  // namespace

void registerEmit(CLI::App& app, Action& action) {
  auto opt = std::make_shared<EmitOptions>();
  CLI::App* emit = app.add_subcommand(
      "emit",
      "Print the C code tessel generates for an expression and formats, e.g.\n"
      "  tessel emit \"A(i,j) = B(i,k) * C(k,j)\" -f B:ds -f C:ds -f A:ds");
  emit->add_option("expr", opt->expr, "The expression")->required();
  emit->add_option("-f,--format", opt->formats, "Format of a tensor (as for run)")
      ->type_name("NAME:LEVELS[:ORDER]")
      ->allow_extra_args(false);
  emit->add_option("-t,--type", opt->types, kTypeHelp)->type_name("NAME:TYPE")->allow_extra_args(false);
  emit->add_option("-s,--schedule", opt->schedule, "Schedule commands (as for run)")->type_name("COMMANDS");
  emit->add_option("--threads", opt->threads, "Thread count whose default parallel schedule to use (as for run)")
      ->check(CLI::Range(1, 4096));
  emit->add_option("--semiring", opt->semiring, kSemiringHelp)->type_name("NAME");
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
      std::string code = generatedCode(opt->expr, parseExpressionArgs(opt->expr, opt->formats, opt->types), opt->schedule,
                                       opt->threads, print, semiringOption(opt->semiring));
      if (opt->passes) return 0;  // the C was the last pass
      std::fwrite(code.data(), 1, code.size(), stdout);
      return 0;
    };
  });
}

}  // namespace tessel::cli
