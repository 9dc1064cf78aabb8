// The distributed graph: vertices in row blocks over the ranks, each rank's edges read in
// parallel and sent to the ranks owning their rows (and, on first use, their columns and
// the undirected graph's rows).
#include <algorithm>

#include "graph/dist_graph_impl.h"
#include "tessel/distributed.h"
#include "tessel/kernel.h"

namespace tessel::graph {

Csr exchangeEdges(int64_t n, EdgeLists out) {
  std::vector<std::vector<int64_t>> coords = exchangeOverRanks(out.coords);
  std::vector<std::vector<int64_t>>().swap(out.coords);
  std::vector<std::vector<double>> weights = exchangeOverRanks(out.weights);
  std::vector<std::vector<double>>().swap(out.weights);
  Csr a;
  agreeOverRanks([&] {
    std::vector<int64_t> rows, cols;
    std::vector<double> w;
    size_t total = 0;
    for (const auto& v : weights) total += v.size();
    rows.reserve(total), cols.reserve(total), w.reserve(total);
    for (size_t q = 0; q < coords.size(); q++) {
      for (size_t e = 0; e < weights[q].size(); e++) {
        rows.push_back(coords[q][2 * e]);
        cols.push_back(coords[q][2 * e + 1]);
        w.push_back(weights[q][e]);
      }
      std::vector<int64_t>().swap(coords[q]);
      std::vector<double>().swap(weights[q]);
    }
    a = buildCsr(n, rows, cols, w);
  });
  return a;
}

void runOnEveryRank(Kernel& kernel, Assignment& a, int threads) {
  agreeOverRanks([&] { kernel.run(a, threads); });
}

const Csr& DistGraph::Impl::in() const {
  if (!transposed) {
    EdgeLists out(ranks);
    for (int64_t r = lo; r < hi; r++)
      for (int32_t p = adj.ptr[r]; p < adj.ptr[r + 1]; p++) out.add(owner(adj.col[p]), adj.col[p], r, adj.w[p]);
    transposed = exchangeEdges(n, std::move(out));
  }
  return *transposed;
}

const Csr& DistGraph::Impl::sym() const {
  if (!undirected) {
    EdgeLists out(ranks);
    for (int64_t r = lo; r < hi; r++)
      for (int32_t p = adj.ptr[r]; p < adj.ptr[r + 1]; p++) {
        const int64_t c = adj.col[p];
        if (c == r) continue;
        out.add(rank, r, c, 1.0);
        out.add(owner(c), c, r, 1.0);
      }
    undirected = exchangeEdges(n, std::move(out));
  }
  return *undirected;
}

DistGraph DistGraph::fromParts(const CooData& share, const Machine& machine) {
  machine.checkRanks();
  if (share.order() != 2 || share.dims[0] != share.dims[1])
    throw DimensionError("a graph's adjacency matrix must be square, got " +
                         (share.order() == 2 ? std::to_string(share.dims[0]) + " x " + std::to_string(share.dims[1])
                                             : "order " + std::to_string(share.order())));
  auto impl = std::make_shared<Impl>();
  Impl& g = *impl;
  g.n = share.dims[0];
  g.ranks = worldSize();
  g.rank = worldRank();
  g.block = std::max<int64_t>(1, (g.n + g.ranks - 1) / g.ranks);
  g.lo = std::min(g.n, g.rank * g.block);
  g.hi = std::min(g.n, g.lo + g.block);
  EdgeLists out(g.ranks);
  agreeOverRanks([&] {
    for (int64_t e = 0; e < share.nnz(); e++) {
      const int64_t r = share.coords[2 * e], c = share.coords[2 * e + 1];
      if (r < 0 || r >= g.n || c < 0 || c >= g.n)
        throw DimensionError("edge (" + std::to_string(r) + ", " + std::to_string(c) + ") is outside the " +
                             std::to_string(g.n) + " vertices");
      out.add(g.owner(r), r, c, share.values[e]);
    }
  });
  g.adj = exchangeEdges(g.n, std::move(out));
  g.edges = sumOverRanks(g.adj.nnz());
  DistGraph d;
  d.impl_ = impl;
  return d;
}

DistGraph DistGraph::read(const std::string& path, const Machine& machine) {
  machine.checkRanks();
  TensorFilePart part = readTensorFilePart(path);  // throws on every rank alike
  try {
    return fromParts(part.entries, machine);
  } catch (const DimensionError& e) {
    throw DimensionError(path + ": " + e.what());
  }
}

int64_t DistGraph::vertices() const { return impl_->n; }
int64_t DistGraph::edges() const { return impl_->edges; }
int64_t DistGraph::firstVertex() const { return impl_->lo; }
int64_t DistGraph::endVertex() const { return impl_->hi; }

}  // namespace tessel::graph
