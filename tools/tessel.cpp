// The `tessel` command-line tool: one subcommand per file (cmd_*.cpp).
//
// Exit codes: 0 success; 2 bad usage or bad input (any tessel::UserError), with a
// one-line "tessel: error: ..." on stderr; 3 the environment failed (EnvironmentError:
// out of memory, no C compiler, unusable cache, threads refused); 1 a bug.
#include <cstdio>

#include "cli_common.h"

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
