// Agreement on failure and moving entries between ranks: see dist_files.h.
#include <algorithm>
#include <climits>
#include <cstring>
#include <new>
#include <numeric>

#include "format/sparse_placement.h"
#include "io/io_util.h"
#include "runtime/spmd/comm.h"
#include "runtime/spmd/dist_files.h"
#include "tessel/error.h"

namespace tessel::spmd {

namespace {
// The error kinds an agreement carries (the type is rebuilt on every rank).
enum Kind { kNone, kFile, kMemory, kOverflow, kDimension, kDistribution, kFormat, kUser, kEnvironment, kOutOfMemory,
            kInternal };
}  // namespace

void agreeOnFailure(const std::function<void()>& step) {
  int kind = kNone;
  std::string message, where;
  try {
    step();
  } catch (const FileError& e) {
    kind = kFile, message = e.what(), where = e.where();
  } catch (const MemoryLimitError& e) {
    kind = kMemory, message = e.what();
  } catch (const OverflowError& e) {
    kind = kOverflow, message = e.what();
  } catch (const DimensionError& e) {
    kind = kDimension, message = e.what();
  } catch (const DistributionError& e) {
    kind = kDistribution, message = e.what();
  } catch (const FormatError& e) {
    kind = kFormat, message = e.what();
  } catch (const UserError& e) {
    kind = kUser, message = e.what();
  } catch (const EnvironmentError& e) {
    kind = kEnvironment, message = e.what();
  } catch (const std::bad_alloc&) {
    kind = kOutOfMemory, message = "out of memory";
  } catch (const std::exception& e) {
    kind = kInternal, message = e.what();
  }
  const int me = comm::rank();
  const int speaker = comm::minOver(kind != kNone ? me : INT_MAX);
  if (speaker == INT_MAX) return;
  // One text: kind, the length of `where`, where, message.
  std::string packed = std::to_string(kind) + " " + std::to_string(where.size()) + " " + where + message;
  packed = comm::broadcast(speaker, packed);
  size_t a = packed.find(' '), b = packed.find(' ', a + 1);
  kind = std::stoi(packed.substr(0, a));
  const size_t wlen = std::stoul(packed.substr(a + 1, b - a - 1));
  where = packed.substr(b + 1, wlen);
  message = packed.substr(b + 1 + wlen);
  switch (kind) {
    case kFile: {
      // FileError's text is "where: message" (escaped): keep it as it is.
      std::string rest = message.size() > where.size() + 2 ? message.substr(where.size() + 2) : message;
      throw FileError(where, rest);
    }
    case kMemory: throw MemoryLimitError(message);
    case kOverflow: throw OverflowError(message);
    case kDimension: throw DimensionError(message);
    case kDistribution: throw DistributionError(message);
    case kFormat: throw FormatError(message);
    case kUser: throw UserError(message);
    case kEnvironment: throw EnvironmentError(message);
    case kOutOfMemory: throw OutOfMemoryError(message);
    default: throw InternalError(message);
  }
}

CooData exchangeEntries(const CooData& local, const std::function<void(int64_t, std::vector<int>&)>& targets) {
  const int p = comm::size();
  const int order = local.order();
  const size_t entryBytes = static_cast<size_t>(order) * 8 + 8;
  std::vector<std::vector<char>> out(static_cast<size_t>(p));
  std::vector<int> to;
  agreeOnFailure([&] {
    // Count first: each buffer is allocated once, at its size.
    std::vector<int64_t> count(static_cast<size_t>(p), 0);
    for (int64_t e = 0; e < local.nnz(); e++) {
      to.clear();
      targets(e, to);
      for (int q : to) count[static_cast<size_t>(q)]++;
    }
    long double bytes = 0;
    for (int64_t c : count) bytes += static_cast<long double>(c) * entryBytes;
    io_detail::requireMemory(bytes, "sending this rank's entries to their ranks");
    for (int q = 0; q < p; q++) out[static_cast<size_t>(q)].reserve(static_cast<size_t>(count[static_cast<size_t>(q)]) * entryBytes);
    for (int64_t e = 0; e < local.nnz(); e++) {
      to.clear();
      targets(e, to);
      for (int q : to) {
        auto& buf = out[static_cast<size_t>(q)];
        const char* c = reinterpret_cast<const char*>(local.coords.data() + e * order);
        buf.insert(buf.end(), c, c + order * 8);
        const char* v = reinterpret_cast<const char*>(&local.values[static_cast<size_t>(e)]);
        buf.insert(buf.end(), v, v + 8);
      }
    }
  });
  std::vector<std::vector<char>> in = comm::allToAll(out);
  out.clear();
  out.shrink_to_fit();
  CooData got;
  got.dims = local.dims;
  agreeOnFailure([&] {
    size_t total = 0;
    for (const auto& b : in) total += b.size() / entryBytes;
    io_detail::requireMemory(static_cast<long double>(total) * entryBytes, "the entries this rank receives");
    got.coords.resize(total * static_cast<size_t>(order));
    got.values.resize(total);
    size_t k = 0;
    for (auto& b : in) {
      for (size_t at = 0; at + entryBytes <= b.size(); at += entryBytes, k++) {
        std::memcpy(got.coords.data() + k * static_cast<size_t>(order), b.data() + at, static_cast<size_t>(order) * 8);
        std::memcpy(&got.values[k], b.data() + at + static_cast<size_t>(order) * 8, 8);
      }
      std::vector<char>().swap(b);
    }
  });
  return got;
}

CooData toRowBlocks(const CooData& local) {
  const int p = comm::size();
  if (local.order() == 0 || p == 1) return local;
  std::string letters = std::string("abcdefghijklmnop").substr(0, static_cast<size_t>(local.order()));
  const Distribution rows = Distribution::parse(letters + "->~a");
  const Grid grid(p);
  PlacementSummary sum;
  agreeOnFailure([&] {
    io_detail::requireMemory(static_cast<long double>(local.dims[0]) * 8, "a histogram of the leading dimension");
    sum = emptySummary(local.dims, rows, grid);
    for (int64_t e = 0; e < local.nnz(); e++) addToSummary(sum, rows, grid, local.coords.data() + e * local.order(), e);
  });
  comm::sumOver(sum.counts[0]);
  sum.nnz = comm::sumOver(local.nnz());
  const EntryPlacement place = placementFromSummary(local.dims, rows, grid, sum);
  return exchangeEntries(local, [&](int64_t e, std::vector<int>& to) {
    to.push_back(entryPart(place, local.dims, rows, grid, 0, local.coords.data() + e * local.order(), e, sum.nnz));
  });
}

CooData sortedLexicographically(const CooData& entries) {
  const int order = entries.order();
  const int64_t n = entries.nnz();
  // A format stored in mode order (CSR, CSF) hands its entries out sorted already.
  bool sorted = true;
  for (int64_t e = 1; e < n && sorted; e++) {
    const int64_t* a = entries.coords.data() + (e - 1) * order;
    const int64_t* b = a + order;
    sorted = !std::lexicographical_compare(b, b + order, a, a + order);
  }
  if (sorted) return entries;
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  auto c = [&](int64_t e, int m) { return entries.coords[static_cast<size_t>(e * order + m)]; };
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
    for (int m = 0; m < order; m++)
      if (c(x, m) != c(y, m)) return c(x, m) < c(y, m);
    return false;
  });
  CooData out;
  out.dims = entries.dims;
  out.coords.resize(entries.coords.size());
  out.values.resize(entries.values.size());
  for (int64_t k = 0; k < n; k++) {
    const int64_t e = perm[static_cast<size_t>(k)];
    std::copy_n(entries.coords.begin() + e * order, order, out.coords.begin() + k * order);
    out.values[static_cast<size_t>(k)] = entries.values[static_cast<size_t>(e)];
  }
  return out;
}

}  // namespace tessel::spmd
