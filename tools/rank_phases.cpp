// How the ranks of a distributed subcommand agree on failures (tools/rank_phases.h).
#include "rank_phases.h"

#include <climits>
#include <cstdio>
#include <string>

#include "cli_common.h"
#include "tessel/distributed.h"

namespace tessel::cli {

namespace {

int64_t maxOverRanks(int v) { return reduceOverRanks(v, true); }
int minOverRanks(int v) { return static_cast<int>(reduceOverRanks(v, false)); }

}  // namespace

void agreePhase(const std::function<void()>& phase) {
  std::string message;
  int rc = 0;
  try {
    phase();
  } catch (const UsageError& e) {
    rc = 2, message = oneLine(e.what());
  } catch (const UserError& e) {
    rc = 2, message = userMessage(e);
  } catch (const EnvironmentError& e) {
    rc = 3, message = "environment error: " + oneLine(e.what());
  } catch (const std::bad_alloc&) {
    rc = 3, message = "out of memory";
  } catch (const std::exception& e) {
    rc = 1, message = "internal error: " + oneLine(e.what());
  }
  // Codes as "failed" flags: the smallest failing rank speaks.
  const int me = worldRank();
  int64_t worst = -1;
  try {
    worst = maxOverRanks(rc);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessel: environment error: %s\n", oneLine(e.what()).c_str());
    throw ExitCode{3};
  }
  if (worst == 0) return;
  int speaker = minOverRanks(rc ? me : INT_MAX);
  if (me == speaker) {
    std::string who = worldSize() > 1 && me != 0 ? "rank " + std::to_string(me) + ": " : "";
    std::fprintf(stderr, "tessel: %s%s%s\n", rc == 2 ? "error: " : "", who.c_str(), message.c_str());
  }
  throw ExitCode{static_cast<int>(worst)};
}

void collectivePhase(const std::function<void()>& phase) {
  auto end = [](int code, const std::string& msg) {
    std::string who = worldSize() > 1 ? "rank " + std::to_string(worldRank()) + ": " : "";
    abortAllRanks(code, "tessel: " + std::string(code == 2 ? "error: " : "") + who + msg);
  };
  try {
    phase();
  } catch (const UserError& e) {
    end(2, userMessage(e));
  } catch (const EnvironmentError& e) {
    end(3, "environment error: " + oneLine(e.what()));
  } catch (const std::bad_alloc&) {
    end(3, "out of memory");
  } catch (const std::exception& e) {
    end(1, "internal error: " + oneLine(e.what()));
  }
}

}  // namespace tessel::cli
