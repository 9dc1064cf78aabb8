// Betweenness centrality from a batch of sources (Brandes; LAGraph's LAGr_Betweenness),
// as sparse tensor algebra over plus_times.
//
// Per source s, a forward sweep counts shortest paths level by level: with f the level's
// vertices holding their path counts sigma, one compiled SpMSpV y(j) = f(i) * A(i,j)
// gives every out-neighbour the paths through the level; the unvisited ones form the next
// level with sigma = y. A backward sweep then accumulates dependencies from the deepest
// level up: t(v) = (1 + delta(v)) / sigma(v) on level d, one SpMSpV over the in-edges,
// w(u) = t(v) * AT(v,u), and delta(u) += sigma(u) * w(u) for u on level d - 1. Edges are
// unweighted here (a pattern of ones): betweenness counts hops, as LAGraph's does.
// centrality(v) sums delta over the sources, v != s: no halving on undirected graphs
// (each undirected edge is two directed ones; NetworkX's unnormalized subset
// betweenness on the DiGraph gives the same numbers).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "graph/graph_impl.h"
#include "tessel/kernel.h"
#include "tessel/tessel.h"

namespace tessel::graph {

namespace {

/// `a`'s pattern with every weight 1.
Csr ones(const Csr& a) {
  Csr o = a;
  std::fill(o.w.begin(), o.w.end(), 1.0);
  if (o.w.size() != o.col.size()) o.w.assign(o.col.size(), 1.0);
  return o;
}

/// Writes `vertices` (sorted) and value(v) of each into the sparse vector `t`.
template <typename Value>
void fill(TensorBase& t, const std::vector<int32_t>& vertices, Value value) {
  int32_t* crd = static_cast<int32_t*>(t.raw().crd[0]);
  double* vals = static_cast<double*>(t.raw().vals);
  for (size_t k = 0; k < vertices.size(); k++) {
    crd[k] = vertices[k];
    vals[k] = value(vertices[k]);
  }
  setSparseCount(t, static_cast<int64_t>(vertices.size()));
}

}  // namespace

BcResult betweenness(const Graph& g, const std::vector<int64_t>& sources, const Options& options) {
  checkThreads(options);
  for (int64_t s : sources) checkVertex(g, s, "source");
  const Csr& a = g.impl().adj;
  const int64_t n = a.n;
  BcResult r;
  r.centrality.assign(n, 0.0);
  if (sources.empty()) return r;

  TensorBase A = csrTensor("A", ones(a), Datatype::Float64, true);
  TensorBase AT = csrTensor("AT", ones(g.impl().in()), Datatype::Float64, true);
  TensorBase f = sparseVector("f", Datatype::Float64, n), y = sparseVector("y", Datatype::Float64, n);
  TensorBase t = sparseVector("t", Datatype::Float64, n), w = sparseVector("w", Datatype::Float64, n);
  IndexVar i("i"), j("j");
  y(j) = f(i) * A(i, j);
  w(j) = t(i) * AT(i, j);
  Assignment forward = y.assignment(), backward = w.assignment();
  const Semiring& plusTimes = Semiring::byName("plus_times");
  std::shared_ptr<Kernel> push = compileKernel("bc.forward", forward, plusTimes, 1);
  std::shared_ptr<Kernel> pull = compileKernel("bc.backward", backward, plusTimes, 1);

  std::vector<int64_t> level(n);
  std::vector<double> sigma(n), delta(n);
  for (int64_t s : sources) {
    std::fill(level.begin(), level.end(), -1);
    std::fill(sigma.begin(), sigma.end(), 0.0);
    std::fill(delta.begin(), delta.end(), 0.0);
    level[s] = 0;
    sigma[s] = 1;
    std::vector<std::vector<int32_t>> levels{{static_cast<int32_t>(s)}};
    while (!levels.back().empty()) {
      const std::vector<int32_t>& cur = levels.back();
      const int64_t depth = static_cast<int64_t>(levels.size());
      fill(f, cur, [&](int32_t v) { return sigma[v]; });
      for (int32_t v : cur) r.edgesTraversed += a.degree(v);
      push->run(forward, 1);
      const int32_t* yc = static_cast<const int32_t*>(y.raw().crd[0]);
      const double* yv = static_cast<const double*>(y.raw().vals);
      const int64_t found = static_cast<const int32_t*>(y.raw().pos[0])[1];
      std::vector<int32_t> next;
      for (int64_t k = 0; k < found; k++)
        if (level[yc[k]] < 0) {
          level[yc[k]] = depth;
          sigma[yc[k]] = yv[k];
          next.push_back(yc[k]);
        }
      levels.push_back(std::move(next));
    }
    r.levels = std::max(r.levels, static_cast<int>(levels.size()) - 2);
    // levels.back() is empty; level 1's dependencies only reach the source, which keeps none.
    for (int64_t d = static_cast<int64_t>(levels.size()) - 2; d >= 2; d--) {
      fill(t, levels[d], [&](int32_t v) { return (1 + delta[v]) / sigma[v]; });
      for (int32_t v : levels[d]) r.edgesTraversed += g.impl().in().degree(v);
      pull->run(backward, 1);
      const int32_t* wc = static_cast<const int32_t*>(w.raw().crd[0]);
      const double* wv = static_cast<const double*>(w.raw().vals);
      const int64_t found = static_cast<const int32_t*>(w.raw().pos[0])[1];
      for (int64_t k = 0; k < found; k++)
        if (level[wc[k]] == d - 1) delta[wc[k]] += sigma[wc[k]] * wv[k];
    }
    for (int64_t v = 0; v < n; v++)
      if (v != s) r.centrality[v] += delta[v];
  }
  return r;
}

}  // namespace tessel::graph
