// MPI behind comm.h. Built without MPI, a launched process with several ranks is refused.
#include "runtime/spmd/comm.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <cstdlib>
#include <unistd.h>

#include "tessel/error.h"

#ifdef TESSEL_HAVE_MPI
// The C API only (Open MPI would otherwise pull in its C++ bindings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace tessel::comm {

bool launched() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "SLURM_NTASKS"})
    if (std::getenv(v)) return true;
  return false;
}

bool collectivesEnabled() {
  static const bool on = [] {
    const char* v = std::getenv("TESSEL_COLLECTIVES");
    return !(v && std::string(v) == "0");
  }();
  return on;
}

bool available() {
#ifdef TESSEL_HAVE_MPI
  return true;
#else
  return false;
#endif
}

#ifdef TESSEL_HAVE_MPI
namespace {

bool started() {
  static const bool on = [] {
    if (!launched()) return false;
    int init = 0;
    MPI_Initialized(&init);
    if (!init) {
      int provided = 0;
      // Kernels run OpenMP threads inside a rank, but only the main thread calls MPI.
      if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        throw EnvironmentError("MPI_Init failed: cannot start the distributed runtime");
    }
    // Errors come back as codes (checked below), not as MPI's own abort.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    return true;
  }();
  return on;
}

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw EnvironmentError(std::string(what) + " failed: " + std::string(text, static_cast<size_t>(len)));
}

// MPI counts are int: larger transfers go in pieces (same tag or communicator, in order).
constexpr int64_t kMaxPiece = int64_t{1} << 30;

}  // namespace

int rank() {
  if (!started()) return 0;
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int size() {
  if (!started()) return 1;
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

void barrier() {
  if (started()) check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

namespace {
template <typename T>
T reduce(T v, MPI_Datatype type, MPI_Op op) {
  if (!started()) return v;
  T out{};
  check(MPI_Allreduce(&v, &out, 1, type, op, MPI_COMM_WORLD), "MPI_Allreduce");
  return out;
}
}  // namespace

double maxOver(double v) { return reduce(v, MPI_DOUBLE, MPI_MAX); }
double sumOver(double v) { return reduce(v, MPI_DOUBLE, MPI_SUM); }
int64_t sumOver(int64_t v) { return reduce<long long>(v, MPI_LONG_LONG, MPI_SUM); }
int64_t maxOver(int64_t v) { return reduce<long long>(v, MPI_LONG_LONG, MPI_MAX); }
int minOver(int code) { return reduce(code, MPI_INT, MPI_MIN); }

void nodeLeaderFirst(const std::string&, void (*fn)(void*), void* arg) {
  if (!started()) return fn(arg);
  MPI_Comm node;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int nodeRank = 0;
  MPI_Comm_rank(node, &nodeRank);
  // The leader's failure must not leave the others waiting: all learn it at the barrier.
  int failed = 0;
  std::exception_ptr error;
  if (nodeRank == 0) {
    try {
      fn(arg);
    } catch (...) {
      error = std::current_exception();
      failed = 1;
    }
  }
  int anyFailed = 0;
  MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, node);
  MPI_Comm_free(&node);
  if (error) std::rethrow_exception(error);
  if (nodeRank != 0) fn(arg);  // a cache hit now (or the same error as the leader)
}

std::vector<int64_t> allGather(int64_t v) {
  if (!started()) return {v};
  std::vector<long long> all(static_cast<size_t>(size()));
  long long mine = v;
  check(MPI_Allgather(&mine, 1, MPI_LONG_LONG, all.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD), "MPI_Allgather");
  return std::vector<int64_t>(all.begin(), all.end());
}

namespace {
void reduceVector(std::vector<int64_t>& v, MPI_Op op) {
  if (!started() || v.empty()) return;
  static_assert(sizeof(long long) == sizeof(int64_t));
  for (size_t at = 0; at < v.size(); at += static_cast<size_t>(kMaxPiece)) {
    int n = static_cast<int>(std::min<size_t>(static_cast<size_t>(kMaxPiece), v.size() - at));
    check(MPI_Allreduce(MPI_IN_PLACE, v.data() + at, n, MPI_LONG_LONG, op, MPI_COMM_WORLD), "MPI_Allreduce");
  }
}
}  // namespace

void sumOver(std::vector<int64_t>& v) { reduceVector(v, MPI_SUM); }
void maxOver(std::vector<int64_t>& v) { reduceVector(v, MPI_MAX); }
void minOver(std::vector<int64_t>& v) { reduceVector(v, MPI_MIN); }

std::vector<char> allGatherBytes(const std::vector<char>& mine) {
  if (!started()) return mine;
  const int p = size();
  const std::vector<int64_t> counts = allGather(static_cast<int64_t>(mine.size()));
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  if (total >= kMaxPiece) {  // displacements are int: send every rank a copy instead
    std::vector<std::vector<char>> in = allToAll(std::vector<std::vector<char>>(static_cast<size_t>(p), mine));
    std::vector<char> all;
    all.reserve(static_cast<size_t>(total));
    for (const auto& part : in) all.insert(all.end(), part.begin(), part.end());
    return all;
  }
  std::vector<int> recvCounts(static_cast<size_t>(p)), displs(static_cast<size_t>(p));
  for (int q = 0, at = 0; q < p; q++) {
    recvCounts[static_cast<size_t>(q)] = static_cast<int>(counts[static_cast<size_t>(q)]);
    displs[static_cast<size_t>(q)] = at;
    at += recvCounts[static_cast<size_t>(q)];
  }
  std::vector<char> all(static_cast<size_t>(total));
  check(MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, all.data(), recvCounts.data(),
                       displs.data(), MPI_BYTE, MPI_COMM_WORLD),
        "MPI_Allgatherv");
  return all;
}

double sumInRankOrder(double v) {
  if (!started()) return v;
  std::vector<double> all(static_cast<size_t>(size()));
  check(MPI_Allgather(&v, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD), "MPI_Allgather");
  double sum = 0;
  for (double x : all) sum += x;
  return sum;
}

std::string broadcast(int root, const std::string& text) {
  if (!started()) return text;
  long long n = static_cast<long long>(text.size());
  check(MPI_Bcast(&n, 1, MPI_LONG_LONG, root, MPI_COMM_WORLD), "MPI_Bcast");
  std::string out = rank() == root ? text : std::string(static_cast<size_t>(n), '\0');
  if (n > 0) check(MPI_Bcast(out.data(), static_cast<int>(n), MPI_CHAR, root, MPI_COMM_WORLD), "MPI_Bcast");
  return out;
}

std::vector<std::vector<char>> allToAll(const std::vector<std::vector<char>>& out) {
  if (!started()) return out;
  const int p = size();
  std::vector<long long> sendCounts(static_cast<size_t>(p)), recvCounts(static_cast<size_t>(p));
  for (int q = 0; q < p; q++) sendCounts[static_cast<size_t>(q)] = static_cast<long long>(out[static_cast<size_t>(q)].size());
  check(MPI_Alltoall(sendCounts.data(), 1, MPI_LONG_LONG, recvCounts.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD),
        "MPI_Alltoall");
  std::vector<std::vector<char>> in(static_cast<size_t>(p));
  std::vector<MPI_Request> reqs;
  // Pieces of at most kMaxPiece bytes, in order under one tag: MPI keeps their order.
  auto post = [&](bool send, int q, char* data, int64_t count) {
    int64_t at = 0;
    do {
      int n = static_cast<int>(std::min(kMaxPiece, count - at));
      MPI_Request r;
      check(send ? MPI_Isend(data + at, n, MPI_BYTE, q, 7200, MPI_COMM_WORLD, &r)
                 : MPI_Irecv(data + at, n, MPI_BYTE, q, 7200, MPI_COMM_WORLD, &r),
            send ? "MPI_Isend" : "MPI_Irecv");
      reqs.push_back(r);
      at += n;
    } while (at < count);
  };
  for (int q = 0; q < p; q++) {
    in[static_cast<size_t>(q)].resize(static_cast<size_t>(recvCounts[static_cast<size_t>(q)]));
    post(false, q, in[static_cast<size_t>(q)].data(), recvCounts[static_cast<size_t>(q)]);
  }
  for (int q = 0; q < p; q++)
    post(true, q, const_cast<char*>(out[static_cast<size_t>(q)].data()), sendCounts[static_cast<size_t>(q)]);
  int rc = MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
  check(rc, "MPI_Waitall");
  return in;
}

void abortAll(int code, const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  if (started() && size() > 1) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

void finalize() {
  int init = 0;
  MPI_Initialized(&init);
  if (!init) return;  // never started: nothing to end (and no MPI_Init just for this)
  int done = 0;
  MPI_Finalized(&done);
  if (!done) MPI_Finalize();
}

struct Exchange::Requests {
  std::vector<MPI_Request> handles;
};

Exchange::Exchange() : requests_(std::make_unique<Requests>()) {}
Exchange::~Exchange() {
  // Unwinding with transfers in flight: their buffers are about to go, so finish them.
  if (!requests_->handles.empty())
    MPI_Waitall(static_cast<int>(requests_->handles.size()), requests_->handles.data(), MPI_STATUSES_IGNORE);
}
bool Exchange::empty() const { return requests_->handles.empty(); }

namespace {
/// MPI counts are int: `post(offset, n)` once per piece of at most kMaxPiece, and at
/// least once (a zero-length message still matches its partner's).
template <typename Post>
void inPieces(int64_t count, Post post) {
  int64_t at = 0;
  do {
    int n = static_cast<int>(std::min(kMaxPiece, count - at));
    post(at, n);
    at += n;
  } while (at < count);
}
}  // namespace

void Exchange::send(int to, int tag, const double* data, int64_t count) {
  inPieces(count, [&](int64_t at, int n) {
    MPI_Request r;
    check(MPI_Isend(data + at, n, MPI_DOUBLE, to, tag, MPI_COMM_WORLD, &r), "MPI_Isend");
    requests_->handles.push_back(r);
  });
}

void Exchange::recv(int from, int tag, double* data, int64_t count) {
  inPieces(count, [&](int64_t at, int n) {
    MPI_Request r;
    check(MPI_Irecv(data + at, n, MPI_DOUBLE, from, tag, MPI_COMM_WORLD, &r), "MPI_Irecv");
    requests_->handles.push_back(r);
  });
}

namespace {
// Sub-communicators by member list. Every member creates one at the same point of the
// common plan (MPI_Comm_create_group is collective over the members only), so ranks
// outside a group never wait for it.
MPI_Comm groupComm(const std::vector<int>& members) {
  static std::map<std::vector<int>, MPI_Comm> made;
  if (auto at = made.find(members); at != made.end()) return at->second;
  MPI_Group world, sub;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, static_cast<int>(members.size()), members.data(), &sub);
  MPI_Comm c;
  int rc = MPI_Comm_create_group(MPI_COMM_WORLD, sub, 7100, &c);
  MPI_Group_free(&sub);
  MPI_Group_free(&world);
  check(rc, "MPI_Comm_create_group");
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  made.emplace(members, c);
  return c;
}
int indexIn(const std::vector<int>& members, int r) {
  return static_cast<int>(std::find(members.begin(), members.end(), r) - members.begin());
}
}  // namespace

void Exchange::bcast(const std::vector<int>& members, int root, double* data, int64_t count) {
  MPI_Comm c = groupComm(members);
  inPieces(count, [&](int64_t at, int n) {
    MPI_Request r;
    check(MPI_Ibcast(data + at, n, MPI_DOUBLE, indexIn(members, root), c, &r), "MPI_Ibcast");
    requests_->handles.push_back(r);
  });
}

void Exchange::reduce(const std::vector<int>& members, int root, const double* send, double* recv, int64_t count) {
  MPI_Comm c = groupComm(members);
  inPieces(count, [&](int64_t at, int n) {
    MPI_Request r;
    check(MPI_Ireduce(send + at, recv ? recv + at : nullptr, n, MPI_DOUBLE, MPI_SUM, indexIn(members, root), c, &r),
          "MPI_Ireduce");
    requests_->handles.push_back(r);
  });
}

void Exchange::allreduce(const std::vector<int>& members, double* data, int64_t count) {
  MPI_Comm c = groupComm(members);
  inPieces(count, [&](int64_t at, int n) {
    MPI_Request r;
    check(MPI_Iallreduce(MPI_IN_PLACE, data + at, n, MPI_DOUBLE, MPI_SUM, c, &r), "MPI_Iallreduce");
    requests_->handles.push_back(r);
  });
}

void Exchange::wait() {
  auto& h = requests_->handles;
  if (h.empty()) return;
  int rc = MPI_Waitall(static_cast<int>(h.size()), h.data(), MPI_STATUSES_IGNORE);
  h.clear();
  check(rc, "MPI_Waitall");
}

#else  // no MPI: one rank

namespace {
void refuseLaunched() {
  static const bool checked = [] {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"})
      if (const char* s = std::getenv(v); s && std::atoi(s) > 1)
        throw EnvironmentError("started by a launcher with several ranks, but this tessel was built without MPI");
    return true;
  }();
  (void)checked;
}
}  // namespace

int rank() { return refuseLaunched(), 0; }
int size() { return refuseLaunched(), 1; }
void barrier() {}
double maxOver(double v) { return v; }
double sumOver(double v) { return v; }
int64_t sumOver(int64_t v) { return v; }
int64_t maxOver(int64_t v) { return v; }
int minOver(int code) { return code; }
std::vector<int64_t> allGather(int64_t v) { return {v}; }
void sumOver(std::vector<int64_t>&) {}
void maxOver(std::vector<int64_t>&) {}
void minOver(std::vector<int64_t>&) {}
std::string broadcast(int, const std::string& text) { return text; }
std::vector<char> allGatherBytes(const std::vector<char>& mine) { return mine; }
double sumInRankOrder(double v) { return v; }
std::vector<std::vector<char>> allToAll(const std::vector<std::vector<char>>& out) { return out; }
void nodeLeaderFirst(const std::string&, void (*fn)(void*), void* arg) { fn(arg); }
void abortAll(int code, const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::_Exit(code);
}
void finalize() {}
struct Exchange::Requests {
  std::vector<int> handles;
};
Exchange::Exchange() : requests_(std::make_unique<Requests>()) {}
Exchange::~Exchange() = default;
bool Exchange::empty() const { return true; }
void Exchange::send(int, int, const double*, int64_t) { throw InternalError("send without MPI"); }
void Exchange::recv(int, int, double*, int64_t) { throw InternalError("recv without MPI"); }
void Exchange::bcast(const std::vector<int>&, int, double*, int64_t) { throw InternalError("bcast without MPI"); }
void Exchange::reduce(const std::vector<int>&, int, const double*, double*, int64_t) {
  throw InternalError("reduce without MPI");
}
void Exchange::allreduce(const std::vector<int>&, double*, int64_t) { throw InternalError("allreduce without MPI"); }
void Exchange::wait() {}

#endif

}  // namespace tessel::comm
