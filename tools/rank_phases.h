// Phases of a distributed subcommand (`tessel run -m`, `tessel graph -m`): how the ranks
// agree on a failure, or end together when they cannot wait to agree.
#pragma once

#include <functional>

namespace tessel::cli {

/// Thrown by agreePhase on every rank when some rank failed: main's exit code.
struct ExitCode {
  int code;
};

/// Runs a phase in which ranks do not talk to each other (or in which they all fail
/// alike), then agrees: if any rank failed, the lowest failing rank prints its message
/// and every rank throws ExitCode with the worst code (2 for bad input, 3 for the
/// environment, 1 for a bug).
void agreePhase(const std::function<void()>& phase);

/// A phase in which ranks communicate: a failure cannot wait for the others (they may be
/// blocked in a transfer with this rank), so it ends all ranks now (abortAllRanks).
void collectivePhase(const std::function<void()>& phase);

}  // namespace tessel::cli
