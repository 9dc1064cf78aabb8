// The `tessel` command-line tool: one subcommand per file (cmd_*.cpp).
//
// Exit codes: 0 success; 2 bad usage or bad input (any tessel::UserError), with a
// one-line "tessel: error: ..." on stderr; 3 the environment failed (EnvironmentError:
// out of memory, no C compiler, unusable cache, threads refused); 4 --check found a
// mismatch; 1 a bug.
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "cli_common.h"

#ifndef TESSEL_VERSION_STRING
#define TESSEL_VERSION_STRING "unknown"
#endif

namespace {

/// A hint for an argument written the way TACO's command line takes it (-f=B:ds,
/// -time, -nthreads=4), or none.
std::optional<std::string> tacoHint(const std::string& a) {
  for (const char* opt : {"-f", "-i", "-o", "-s", "-t", "-g"})
    if (a.rfind(std::string(opt) + "=", 0) == 0)
      return "'" + a + "' is TACO's spelling; tessel takes '" + opt + " " + a.substr(3) + "'";
  if (a == "-time" || a.rfind("-time=", 0) == 0)
    return "'" + a + "' is TACO's spelling; tessel takes '--time" + a.substr(5) + "'";
  if (a.rfind("-nthreads=", 0) == 0)
    return "'" + a + "' is TACO's spelling; tessel takes '--threads " + a.substr(10) + "'";
  if (a.rfind("-d=", 0) == 0)
    return "'" + a + "' is TACO's spelling; tessel takes '--dims NAME:D1,D2,...'";
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tessel::cli;
  CLI::App app{"tessel: a sparse/dense tensor-algebra compiler"};
  app.name("tessel");
  app.require_subcommand(1);
  Action action;
  registerRun(app, action);
  registerEmit(app, action);
  registerConvert(app, action);
  registerInfo(app, action);
  registerGenerate(app, action);
  registerPlot(app, action);
  registerExplain(app, action);
  registerGraph(app, action);
  registerTune(app, action);
  app.set_version_flag("--version", std::string("tessel ") + TESSEL_VERSION_STRING,
                       "Print the version and exit");
  // Name an unknown subcommand (CLI11 would only say that one is required).
  std::string names;
  bool known = false;
  for (const CLI::App* sub : app.get_subcommands({})) {
    names += (names.empty() ? "" : ", ") + sub->get_name();
    known = known || (argc > 1 && sub->get_name() == argv[1]);
  }
  if (argc > 1 && argv[1][0] != '-' && !known) {
    std::fprintf(stderr, "tessel: error: unknown subcommand '%s' (subcommands: %s; try --help)\n",
                 tessel::cli::oneLine(argv[1]).c_str(), names.c_str());
    return 2;
  }
  for (int k = 1; k < argc; k++)
    if (auto hint = tacoHint(argv[k])) {
      std::fprintf(stderr, "tessel: error: %s\n", tessel::cli::oneLine(*hint).c_str());
      return 2;
    }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::fprintf(stderr, "tessel: error: %s (try --help)\n", oneLine(e.what()).c_str());
    return 2;
  }
  int rc = runGuarded(action);
  rc = finishStdout(rc);
  tessel::finalizeDistributed();
  return rc;
}
