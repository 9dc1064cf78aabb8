// `tessel emit "<expr>" [-f NAME:LEVELS[:ORDER]]...`: print the generated C code.
#include <cstdio>
#include <memory>

#include "expression_args.h"

namespace tessel::cli {

namespace {
struct EmitOptions {
  std::string expr;
  std::vector<std::string> formats;
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
  emit->callback([&action, opt] {
    action = [opt] {
      std::string code = generatedCode(opt->expr, parseExpressionArgs(opt->expr, opt->formats));
      std::fwrite(code.data(), 1, code.size(), stdout);
      return 0;
    };
  });
}

}  // namespace tessel::cli
