// The public collectives of tessel/distributed.h over plain vectors (what a library above
// the compiler, such as the distributed graph algorithms, exchanges between ranks): thin
// typed wrappers over comm's byte transfers.
#include <cstring>

#include "runtime/spmd/comm.h"
#include "runtime/spmd/dist_files.h"
#include "tessel/distributed.h"

namespace tessel {

namespace {

template <typename T>
std::vector<char> toBytes(const std::vector<T>& v) {
  std::vector<char> b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <typename T>
std::vector<T> fromBytes(const std::vector<char>& b) {
  std::vector<T> v(b.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

template <typename T>
std::vector<std::vector<T>> exchange(const std::vector<std::vector<T>>& out) {
  if (static_cast<int>(out.size()) != comm::size())
    throw UserError("exchangeOverRanks: " + std::to_string(out.size()) + " vectors for " +
                    std::to_string(comm::size()) + " ranks");
  std::vector<std::vector<char>> bytes(out.size());
  for (size_t q = 0; q < out.size(); q++) bytes[q] = toBytes(out[q]);
  bytes = comm::allToAll(bytes);
  std::vector<std::vector<T>> in(bytes.size());
  for (size_t q = 0; q < bytes.size(); q++) {
    in[q] = fromBytes<T>(bytes[q]);
    std::vector<char>().swap(bytes[q]);
  }
  return in;
}

}  // namespace

double sumOverRanks(double v) { return comm::sumInRankOrder(v); }
void minOverRanks(std::vector<int64_t>& v) { comm::minOver(v); }
std::vector<int64_t> allGatherOverRanks(const std::vector<int64_t>& mine) {
  return fromBytes<int64_t>(comm::allGatherBytes(toBytes(mine)));
}
std::vector<double> allGatherOverRanks(const std::vector<double>& mine) {
  return fromBytes<double>(comm::allGatherBytes(toBytes(mine)));
}
std::vector<std::vector<int64_t>> exchangeOverRanks(const std::vector<std::vector<int64_t>>& out) {
  return exchange(out);
}
std::vector<std::vector<double>> exchangeOverRanks(const std::vector<std::vector<double>>& out) {
  return exchange(out);
}
void agreeOverRanks(const std::function<void()>& step) { spmd::agreeOnFailure(step); }

}  // namespace tessel
