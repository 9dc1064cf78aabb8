// Fetching sparse rows: four rounds of point-to-point messages (request counts, the
// requested rows, reply counts, the replies' entries), every rank posting to every other
// so no round can deadlock. Entries travel as doubles (coordinates exact below 2^53).
#include "runtime/spmd/sparse_fetch.h"

#include <algorithm>
#include <numeric>

#include "io/io_util.h"
#include "runtime/spmd/comm.h"
#include "runtime/spmd/executor.h"
#include "tessel/error.h"

namespace tessel::spmd {

namespace {

constexpr int kTagAskCount = 7001, kTagAsk = 7002, kTagReplyCount = 7003, kTagReply = 7004;

/// Rank q's piece is asked (it holds one, and it is the first replica: coordinate 0 along
/// every machine dimension that broadcasts the tensor).
bool asked(const TensorUse& u, const std::vector<std::optional<Box>>& boxes, int q) {
  if (!boxes[static_cast<size_t>(q)] || volume(*boxes[static_cast<size_t>(q)]) == 0) return false;
  if (!u.distribution.defined()) return q == 0;
  const std::vector<int> coord = u.grid.coordOf(q);
  const DistributionStatement& st = u.distribution.levels()[0];
  for (size_t d = 0; d < st.machine.size(); d++)
    if (st.machine[d].kind == MachineDim::Kind::Broadcast && coord[d] != 0) return false;
  return true;
}

/// A count per rank, exchanged with every other rank: what each sends this one.
std::vector<double> exchangeCounts(const std::vector<double>& mine, int tag) {
  const int me = comm::rank(), P = comm::size();
  std::vector<double> theirs(static_cast<size_t>(P), 0.0);
  comm::Exchange ex;
  for (int q = 0; q < P; q++) {
    if (q == me) continue;
    ex.send(q, tag, &mine[static_cast<size_t>(q)], 1);
    ex.recv(q, tag, &theirs[static_cast<size_t>(q)], 1);
  }
  ex.wait();
  theirs[static_cast<size_t>(me)] = mine[static_cast<size_t>(me)];
  return theirs;
}

/// Each rank's buffer to every other, received into buffers of the announced sizes.
std::vector<std::vector<double>> exchangeBuffers(const std::vector<std::vector<double>>& out,
                                                 const std::vector<double>& counts, int tag, SparseFetchStats& stats) {
  const int me = comm::rank(), P = comm::size();
  std::vector<std::vector<double>> in(static_cast<size_t>(P));
  comm::Exchange ex;
  for (int q = 0; q < P; q++) {
    if (q == me) continue;
    const auto& o = out[static_cast<size_t>(q)];
    if (!o.empty()) {
      ex.send(q, tag, o.data(), static_cast<int64_t>(o.size()));
      stats.bytesSent += static_cast<int64_t>(o.size()) * 8;
      stats.messages++;
    }
    auto& i = in[static_cast<size_t>(q)];
    i.resize(static_cast<size_t>(counts[static_cast<size_t>(q)]));
    if (!i.empty()) {
      ex.recv(q, tag, i.data(), static_cast<int64_t>(i.size()));
      stats.bytesReceived += static_cast<int64_t>(i.size()) * 8;
    }
  }
  ex.wait();
  in[static_cast<size_t>(me)] = out[static_cast<size_t>(me)];
  return in;
}

/// This rank's entries grouped by their first coordinate, to answer row requests.
struct RowIndex {
  CooData coo;
  std::vector<int64_t> order;  // entries sorted by first coordinate (stable: storage order within)
  int64_t lo = 0;              // the piece's first coordinate offset
  RowIndex(const TensorBase* piece, const std::optional<Box>& box) {
    if (!piece || !piece->defined() || !box) return;
    coo = piece->toCoo();
    lo = (*box)[0].lo;
    const size_t n = static_cast<size_t>(coo.nnz()), k = static_cast<size_t>(coo.order());
    order.resize(n);
    std::iota(order.begin(), order.end(), int64_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return coo.coords[static_cast<size_t>(a) * k] < coo.coords[static_cast<size_t>(b) * k]; });
  }
  /// Entries of global row r: [first, last) of `order`.
  std::pair<size_t, size_t> row(int64_t r) const {
    const size_t k = static_cast<size_t>(coo.order());
    auto key = [&](int64_t e) { return coo.coords[static_cast<size_t>(e) * k]; };
    auto a = std::lower_bound(order.begin(), order.end(), r - lo, [&](int64_t e, int64_t v) { return key(e) < v; });
    auto b = std::upper_bound(a, order.end(), r - lo, [&](int64_t v, int64_t e) { return v < key(e); });
    return {static_cast<size_t>(a - order.begin()), static_cast<size_t>(b - order.begin())};
  }
};

}  // namespace

std::vector<int64_t> coordinatesOf(const TensorBase& piece, int dim, int64_t lo) {
  std::vector<int64_t> out;
  if (!piece.defined()) return out;
  CooData c = piece.toCoo();
  out.reserve(static_cast<size_t>(c.nnz()));
  for (int64_t e = 0; e < c.nnz(); e++) out.push_back(c.coords[static_cast<size_t>(e * c.order() + dim)] + lo);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

TensorBase fetchSparseRows(const TensorUse& u, const TensorBase* piece, const std::optional<Box>& pieceBox,
                           bool wanted, const Box& want, const std::vector<int64_t>& rows, SparseFetchStats& stats) {
  const int me = comm::rank(), P = comm::size();
  const int order = static_cast<int>(u.dims.size());
  const std::vector<std::optional<Box>> boxes = piecesOf(u);
  // 1. Which rows to ask each holder for (a row split over several pieces: every one).
  std::vector<std::vector<double>> ask(static_cast<size_t>(P));
  if (wanted)
    for (int q = 0; q < P; q++) {
      if (!asked(u, boxes, q)) continue;
      const Extent& e = (*boxes[static_cast<size_t>(q)])[0];
      for (auto r = std::lower_bound(rows.begin(), rows.end(), e.lo); r != rows.end() && *r < e.hi; ++r)
        ask[static_cast<size_t>(q)].push_back(static_cast<double>(*r));
    }
  std::vector<double> askCount(static_cast<size_t>(P));
  for (int q = 0; q < P; q++) askCount[static_cast<size_t>(q)] = static_cast<double>(ask[static_cast<size_t>(q)].size());
  const std::vector<double> askedOfMe = exchangeCounts(askCount, kTagAskCount);
  const std::vector<std::vector<double>> requests = exchangeBuffers(ask, askedOfMe, kTagAsk, stats);
  // 2. The entries of the requested rows of this rank's piece, global coordinates.
  const RowIndex index(piece, pieceBox);
  std::vector<std::vector<double>> reply(static_cast<size_t>(P));
  std::vector<double> replyCount(static_cast<size_t>(P), 0.0);
  for (int q = 0; q < P; q++) {
    auto& out = reply[static_cast<size_t>(q)];
    for (double rd : requests[static_cast<size_t>(q)]) {
      auto [a, b] = index.row(static_cast<int64_t>(rd));
      for (size_t x = a; x < b; x++) {
        const int64_t e = index.order[x];
        for (int d = 0; d < order; d++)
          out.push_back(static_cast<double>(index.coo.coords[static_cast<size_t>(e * order + d)] +
                                            (*pieceBox)[static_cast<size_t>(d)].lo));
        out.push_back(index.coo.values[static_cast<size_t>(e)]);
      }
    }
    replyCount[static_cast<size_t>(q)] = static_cast<double>(out.size());
  }
  const std::vector<double> sizes = exchangeCounts(replyCount, kTagReplyCount);
  long double incoming = 0;
  for (double n : sizes) incoming += n;
  io_detail::requireMemory(incoming * 8 * 3, "tensor " + u.name + ": the rows rank " + std::to_string(me) +
                                                 " fetches (sparse, with their packed copy)");
  const std::vector<std::vector<double>> got = exchangeBuffers(reply, sizes, kTagReply, stats);
  // 3. This rank's rows as a tensor over `want`.
  CooData coo;
  for (const Extent& e : want) coo.dims.push_back(e.size());
  if (!wanted) coo.dims.assign(static_cast<size_t>(order), 0);
  std::vector<int64_t> at(static_cast<size_t>(order));
  for (const auto& buf : got)
    for (size_t x = 0; x + static_cast<size_t>(order) + 1 <= buf.size(); x += static_cast<size_t>(order) + 1) {
      bool in = wanted;
      for (int d = 0; d < order && in; d++) {
        at[static_cast<size_t>(d)] = static_cast<int64_t>(buf[x + static_cast<size_t>(d)]);
        in = at[static_cast<size_t>(d)] >= want[static_cast<size_t>(d)].lo && at[static_cast<size_t>(d)] < want[static_cast<size_t>(d)].hi;
        at[static_cast<size_t>(d)] -= want[static_cast<size_t>(d)].lo;
      }
      if (in) coo.add(at, buf[x + static_cast<size_t>(order)]);
    }
  TensorBase out(u.name, Datatype::Float64, coo.dims, *u.sparseFormat);
  out.setFromCoo(coo);
  return out;
}

}  // namespace tessel::spmd
