// The distributed `tessel graph` (-m N, or started by a launcher with several ranks):
// every rank parses the same arguments and reads its byte range of the file, the
// algorithm runs on every rank (tessel/graph.h's DistGraph overloads), and rank 0 prints
// the result or writes -o (atomically: a temporary renamed into place), so a failed run
// leaves no output file. The library throws its errors (a bad file, a bad source, a
// negative cycle, one rank's memory limit) on every rank alike: the ranks agree, the
// lowest failing rank prints one "tessel:" line and every rank exits with its code (2 for
// bad input). Any other failure may be one rank's alone while the others wait in a
// transfer: it ends every rank at once with that rank's message (abortAllRanks).
#include <chrono>
#include <cstdio>
#include <exception>

#include "graph_command.h"
#include "rank_phases.h"
#include "tessel/distributed.h"

namespace tessel::cli {

namespace {

/// A phase of collective graph work: tessel's errors (the distributed graph library
/// throws them on every rank alike) are agreed on; anything else (std::bad_alloc of one
/// rank) ends every rank now.
void graphPhase(const std::function<void()>& phase) {
  agreePhase([&] {
    try {
      phase();
    } catch (const Error&) {
      throw;
    } catch (const UsageError&) {
      throw;
    } catch (...) {
      const std::exception_ptr error = std::current_exception();
      collectivePhase([&] { std::rethrow_exception(error); });
    }
  });
}

}  // namespace

int graphDistributed(const GraphOptions& opt) {
  using Clock = std::chrono::steady_clock;
  Machine machine;
  graph::Options go;
  graph::DistGraph g;
  GraphOutput out;
  try {
    agreePhase([&] {
      checkGraphArgs(opt);
      if (opt.algorithm == "bc") throw UsageError("bc runs on one node: it takes no -m");
      go.threads = opt.threads > 0 ? opt.threads : defaultThreads();
      machine = opt.machine.empty() ? Machine::world(go.threads) : Machine::parse(opt.machine, go.threads);
      if (machine.grid.order() != 1)
        throw UsageError("-m " + opt.machine + ": graph algorithms split vertices in row blocks over the ranks; " +
                         "give a rank count (-m " + std::to_string(machine.grid.size()) + ")");
      machine.checkRanks();
    });
    const auto t0 = Clock::now();
    graphPhase([&] {
      g = graph::DistGraph::read(opt.file, machine);
      checkSource(opt, g.vertices());
    });
    const auto t1 = Clock::now();
    graphPhase([&] { out = runGraphAlgorithm(opt, g, go); });
    const auto t2 = Clock::now();
    agreePhase([&] {
      if (worldRank() != 0) return;
      emitGraphOutput(opt, out);
      if (opt.time) {
        const double compute = std::chrono::duration<double>(t2 - t1).count();
        std::fprintf(stderr, "graph: %lld vertices, %lld edges; ranks: %d x threads: %d\n",
                     static_cast<long long>(g.vertices()), static_cast<long long>(g.edges()), worldSize(),
                     go.threads);
        std::fprintf(stderr, "read: %.3f ms (rank 0)\n", millis(t1 - t0));
        std::fprintf(stderr, "compute: %.3f ms (rank 0; compiling included)\n", compute * 1e3);
        std::fprintf(stderr, "edges traversed: %lld (%.3g edges/s)\n", static_cast<long long>(out.traversed),
                     compute > 0 ? static_cast<double>(out.traversed) / compute : 0.0);
      }
    });
  } catch (const ExitCode& e) {
    return e.code;
  }
  return 0;
}

}  // namespace tessel::cli
