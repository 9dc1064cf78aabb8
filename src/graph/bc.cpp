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
#include <exception>
#include <memory>
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

/// One thread's sweeps: its own frontier vectors and assignments over the shared
/// matrices, the kernels shared (Kernel::run may be called from several threads).
class Sweeper {
 public:
  Sweeper(const Graph& g, const TensorBase& A, const TensorBase& AT)
      : g_(g),
        n_(g.impl().adj.n),
        f_(sparseVector("f", Datatype::Float64, n_)),
        y_(sparseVector("y", Datatype::Float64, n_)),
        t_(sparseVector("t", Datatype::Float64, n_)),
        w_(sparseVector("w", Datatype::Float64, n_)),
        level_(n_),
        sigma_(n_),
        delta_(n_) {
    IndexVar i("i"), j("j");
    y_(j) = f_(i) * A(i, j);
    w_(j) = t_(i) * AT(i, j);
    forward_ = y_.assignment();
    backward_ = w_.assignment();
    const Semiring& plusTimes = Semiring::byName("plus_times");
    push_ = compileKernel("bc.forward", forward_, plusTimes, 1);
    pull_ = compileKernel("bc.backward", backward_, plusTimes, 1);
  }

  /// Adds source s's dependencies to `into` (s's own excluded); returns the levels below s.
  int sweep(int64_t s, std::vector<double>& into, int64_t& edges) {
    const Csr& a = g_.impl().adj;
    const Csr& in = g_.impl().in();
    std::fill(level_.begin(), level_.end(), -1);
    std::fill(sigma_.begin(), sigma_.end(), 0.0);
    std::fill(delta_.begin(), delta_.end(), 0.0);
    level_[s] = 0;
    sigma_[s] = 1;
    std::vector<std::vector<int32_t>> levels{{static_cast<int32_t>(s)}};
    while (!levels.back().empty()) {
      const std::vector<int32_t>& cur = levels.back();
      const int64_t depth = static_cast<int64_t>(levels.size());
      fill(f_, cur, [&](int32_t v) { return sigma_[v]; });
      for (int32_t v : cur) edges += a.degree(v);
      push_->run(forward_, 1);
      const int32_t* yc = static_cast<const int32_t*>(y_.raw().crd[0]);
      const double* yv = static_cast<const double*>(y_.raw().vals);
      const int64_t found = static_cast<const int32_t*>(y_.raw().pos[0])[1];
      std::vector<int32_t> next;
      for (int64_t k = 0; k < found; k++)
        if (level_[yc[k]] < 0) {
          level_[yc[k]] = depth;
          sigma_[yc[k]] = yv[k];
          next.push_back(yc[k]);
        }
      levels.push_back(std::move(next));
    }
    // levels.back() is empty; level 1's dependencies only reach the source, which keeps none.
    for (int64_t d = static_cast<int64_t>(levels.size()) - 2; d >= 2; d--) {
      fill(t_, levels[d], [&](int32_t v) { return (1 + delta_[v]) / sigma_[v]; });
      for (int32_t v : levels[d]) edges += in.degree(v);
      pull_->run(backward_, 1);
      const int32_t* wc = static_cast<const int32_t*>(w_.raw().crd[0]);
      const double* wv = static_cast<const double*>(w_.raw().vals);
      const int64_t found = static_cast<const int32_t*>(w_.raw().pos[0])[1];
      for (int64_t k = 0; k < found; k++)
        if (level_[wc[k]] == d - 1) delta_[wc[k]] += sigma_[wc[k]] * wv[k];
    }
    for (int64_t v = 0; v < n_; v++)
      if (v != s) into[v] += delta_[v];
    return static_cast<int>(levels.size()) - 2;
  }

 private:
  const Graph& g_;
  int64_t n_;
  TensorBase f_, y_, t_, w_;
  Assignment forward_, backward_;
  std::shared_ptr<Kernel> push_, pull_;
  std::vector<int64_t> level_;
  std::vector<double> sigma_, delta_;
};

/// Sources per group: a group's dependencies are summed in source order, the groups'
/// sums in group order, whatever the thread count (the same bits on 1 and N threads).
constexpr size_t kGroup = 8;

}  // namespace

BcResult betweenness(const Graph& g, const std::vector<int64_t>& sources, const Options& options) {
  checkThreads(options);
  for (int64_t s : sources) checkVertex(g, s, "source");
  const int64_t n = g.impl().adj.n;
  BcResult r;
  r.centrality.assign(n, 0.0);
  if (sources.empty()) return r;
  TensorBase A = csrTensor("A", ones(g.impl().adj), Datatype::Float64, true);
  TensorBase AT = csrTensor("AT", ones(g.impl().in()), Datatype::Float64, true);
  const size_t groups = (sources.size() + kGroup - 1) / kGroup;
  const int threads = static_cast<int>(std::min<size_t>(static_cast<size_t>(options.threads), groups));
  std::vector<std::unique_ptr<Sweeper>> sweepers(threads);
  std::vector<std::vector<double>> partial(threads, std::vector<double>(n));
  std::vector<int64_t> edges(threads, 0);
  std::vector<int> levels(threads, 0);
  std::vector<std::exception_ptr> errors(threads);
  // Waves of `threads` groups: thread k sweeps group wave + k into partial[k]; the wave's
  // groups are then added in order.
  for (size_t wave = 0; wave < groups; wave += threads) {
#pragma omp parallel for schedule(static, 1) num_threads(threads)
    for (int k = 0; k < threads; k++) {
      const size_t group = wave + k;
      if (group >= groups || errors[k]) continue;
      try {
        if (!sweepers[k]) sweepers[k] = std::make_unique<Sweeper>(g, A, AT);
        std::fill(partial[k].begin(), partial[k].end(), 0.0);
        for (size_t q = group * kGroup; q < std::min(sources.size(), (group + 1) * kGroup); q++)
          levels[k] = std::max(levels[k], sweepers[k]->sweep(sources[q], partial[k], edges[k]));
      } catch (...) {
        errors[k] = std::current_exception();  // rethrown below: none may leave the parallel loop
      }
    }
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
    for (int k = 0; k < threads && wave + k < groups; k++)
      for (int64_t v = 0; v < n; v++) r.centrality[v] += partial[k][v];
  }
  for (int k = 0; k < threads; k++) {
    r.edgesTraversed += edges[k];
    r.levels = std::max(r.levels, levels[k]);
  }
  return r;
}

}  // namespace tessel::graph
