// The ranks of a distributed run: MPI when a launcher (mpirun, srun) started the process,
// else one rank and no MPI at all (no daemon, no MPI_Init). Every call below is collective
// only where it says so.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessel::comm {

/// Whether the executor may use collectives on sub-communicators (TESSEL_COLLECTIVES=0
/// turns them off: point-to-point only, e.g. to compare).
bool collectivesEnabled();

/// A launcher's environment is present (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK,
/// SLURM_NTASKS). Does not start MPI.
bool launched();
/// Starts MPI on first use when launched(); 0 and 1 otherwise.
int rank();
int size();
/// This build has MPI.
bool available();

/// Collective over all ranks.
void barrier();
double maxOver(double v);
double sumOver(double v);
int64_t sumOver(int64_t v);
int64_t maxOver(int64_t v);
/// The smallest `code` over ranks (0 = every rank fine): ranks agree on failure.
int minOver(int code);
/// Collective over the ranks of one node: rank 0 of each node runs first (e.g. compiles
/// a kernel into the shared cache), the others after it.
void nodeLeaderFirst(const std::string& what, void (*fn)(void*), void* arg);

/// Collective: every rank's `v`, in rank order.
std::vector<int64_t> allGather(int64_t v);
/// Collective: the element-wise sum (or max, min) over ranks of equally long vectors, in place.
void sumOver(std::vector<int64_t>& v);
void maxOver(std::vector<int64_t>& v);
void minOver(std::vector<int64_t>& v);
/// Collective: every rank's bytes concatenated in rank order, on every rank (any size:
/// past MPI's int counts it goes through allToAll).
std::vector<char> allGatherBytes(const std::vector<char>& mine);
/// Collective: the sum over ranks of `v`, added in rank order (the same bits on every rank).
double sumInRankOrder(double v);
/// Collective: `root`'s text on every rank.
std::string broadcast(int root, const std::string& text);
/// Collective: rank q's `out[r]` lands in rank r's `in[q]` (bytes; any size: sent in
/// pieces, not bound by MPI's int counts).
std::vector<std::vector<char>> allToAll(const std::vector<std::vector<char>>& out);

/// Ends every rank with `code` after printing `message` (one line) from this rank.
[[noreturn]] void abortAll(int code, const std::string& message);
/// MPI_Finalize when MPI was started (at exit of the tool).
void finalize();

/// Non-blocking point-to-point transfers of doubles, completed together: every rank posts
/// the same plan of messages, so a step cannot deadlock.
class Exchange {
 public:
  Exchange();
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;
  ~Exchange();
  void send(int to, int tag, const double* data, int64_t count);
  void recv(int from, int tag, double* data, int64_t count);
  /// Collectives over a sub-communicator of `members` (sorted world ranks, this rank one
  /// of them), created on first use by all members and kept. Members post them in the
  /// same order (every rank derives the same plan), so they match without tags.
  /// `root`'s `data` reaches every member.
  void bcast(const std::vector<int>& members, int root, double* data, int64_t count);
  /// The sum over members of `send` lands in `recv` at `root` (recv unused elsewhere).
  void reduce(const std::vector<int>& members, int root, const double* send, double* recv, int64_t count);
  /// Every member's `data` becomes the sum over members.
  void allreduce(const std::vector<int>& members, double* data, int64_t count);
  /// Waits for every posted transfer. Empty after.
  void wait();
  bool empty() const;

 private:
  struct Requests;  // MPI_Request handles (no <mpi.h> in headers)
  std::unique_ptr<Requests> requests_;
};

}  // namespace tessel::comm
