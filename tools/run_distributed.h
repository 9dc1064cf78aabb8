// `tessel run` on a machine of ranks (-m, or started by mpirun): the distributed path.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessel::cli {

struct DistributedRunOptions {
  std::string expr;
  std::vector<std::string> formats, types, inputs, generated, distributions;
  std::string output, schedule, machine, semiring;
  int threads = 1;
  int timeReps = 0;
  bool check = false, commStats = false, emit = false;
  bool json = false;                                     ///< --json: the --time report as JSON on stdout
  std::map<std::string, std::vector<int64_t>> dims;      ///< --dims, parsed
  uint64_t seed = 1;
};

/// The distributed run. Set-up errors (every rank sees them alike, or one rank's bad
/// file) end every rank with exit 2 and one message; a failure while ranks communicate
/// ends all of them through MPI_Abort with the failing rank's message.
int runDistributed(const DistributedRunOptions& opt);

/// -m was given, or a launcher started more than one rank.
bool wantsDistributed(const std::string& machine);

}  // namespace tessel::cli
