// The distributed graph's private parts: the vertex blocks of the ranks, this rank's rows
// as CSR over global vertex ids (the rows of other ranks empty, so the single-node
// kernels run on them unchanged), and the helpers the distributed algorithms share.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "graph/graph_impl.h"
#include "tessel/distributed.h"
#include "tessel/graph.h"

namespace tessel::graph {

struct DistGraph::Impl {
  int64_t n = 0;
  int ranks = 1;
  int rank = 0;
  int64_t block = 0;  ///< vertices per rank, ceil(n / ranks)
  int64_t lo = 0, hi = 0;  ///< this rank's vertices [lo, hi)
  int64_t edges = 0;  ///< over all ranks
  Csr adj;            ///< out-edges of this rank's vertices
  // Built on first use, collectively (every rank calls the same algorithm).
  mutable std::optional<Csr> transposed;  ///< in-edges of this rank's vertices
  mutable std::optional<Csr> undirected;  ///< both directions, no self-loops, weights 1
  const Csr& in() const;
  const Csr& sym() const;

  /// The rank owning vertex v.
  int owner(int64_t v) const { return static_cast<int>(v / block); }
  bool owns(int64_t v) const { return v >= lo && v < hi; }
};

/// Edges on their way to other ranks: one list per destination rank.
struct EdgeLists {
  std::vector<std::vector<int64_t>> coords;  ///< row, column pairs
  std::vector<std::vector<double>> weights;
  explicit EdgeLists(int ranks) : coords(static_cast<size_t>(ranks)), weights(static_cast<size_t>(ranks)) {}
  void add(int to, int64_t row, int64_t col, double w) {
    coords[static_cast<size_t>(to)].push_back(row);
    coords[static_cast<size_t>(to)].push_back(col);
    weights[static_cast<size_t>(to)].push_back(w);
  }
};

/// Collective: sends every rank its list of `out` and returns the CSR (n x n, over global
/// vertex ids) of the edges that arrive here, duplicates keeping their smallest weight
/// (buildCsr). A failure of one rank (memory, 32-bit indices) throws on every rank.
Csr exchangeEdges(int64_t n, EdgeLists out);

/// Collective: runs `kernel` on `a` on every rank and agrees on failure (one rank's
/// memory limit), so that every error of the algorithms is thrown on every rank alike.
void runOnEveryRank(Kernel& kernel, Assignment& a, int threads);

}  // namespace tessel::graph
