// Distributed Bellman-Ford: sssp.cpp's rounds on the ranks of a machine. Each round runs
// sssp.cpp's compiled SpMSpV y(j) = min_i f(i) + A(i,j) over min_plus on each rank's rows
// (f: the changed vertices the rank owns); the candidate distances that improve go to
// their owners by all-to-all, which keep the smallest; the improved vertices and their
// distances are then all-gathered, so every rank holds every distance. The distances are
// one node's exactly (the same sums, the same minima), and a change in round n is a
// negative cycle on every rank at once.
#include <algorithm>
#include <limits>

#include "graph/dist_graph_impl.h"
#include "tessel/kernel.h"
#include "tessel/tessel.h"

namespace tessel::graph {

SsspResult sssp(const DistGraph& dg, int64_t source, const Options& options) {
  checkThreads(options);
  const DistGraph::Impl& g = dg.impl();
  checkVertex(g.n, source, "source");
  const Csr& a = g.adj;
  const int64_t n = g.n;
  SsspResult r;
  r.distance.assign(n, std::numeric_limits<double>::infinity());
  r.distance[source] = 0;

  TensorBase A, f, y;
  Assignment relax;
  std::shared_ptr<Kernel> kernel;
  agreeOverRanks([&] {
    A = csrTensor("A", a, Datatype::Float64, true);
    f = sparseVector("f", Datatype::Float64, n);
    y = sparseVector("y", Datatype::Float64, n);
    IndexVar i("i"), j("j");
    y(j) = f(i) * A(i, j);
    relax = y.assignment();
    kernel = compileKernel("sssp.relax", relax, Semiring::byName("min_plus"), 1);
  });

  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> best(static_cast<size_t>(g.hi - g.lo), inf);  // smallest candidate per own vertex
  std::vector<int64_t> changed{source};
  int64_t relaxed = 0;  // this rank's edge relaxations
  while (!changed.empty()) {
    r.rounds++;
    int32_t* fc = static_cast<int32_t*>(f.raw().crd[0]);
    double* fv = static_cast<double*>(f.raw().vals);
    int64_t count = 0;
    for (int64_t v : changed)
      if (g.owns(v)) {
        fc[count] = static_cast<int32_t>(v);
        fv[count++] = r.distance[v];
        relaxed += a.degree(v);
      }
    setSparseCount(f, count);
    runOnEveryRank(*kernel, relax, 1);
    const tessel_tensor_t& out = y.raw();
    const int32_t* yc = static_cast<const int32_t*>(out.crd[0]);
    const double* yv = static_cast<const double*>(out.vals);
    const int64_t found = static_cast<const int32_t*>(out.pos[0])[1];
    std::vector<std::vector<int64_t>> to(static_cast<size_t>(g.ranks));
    std::vector<std::vector<double>> values(static_cast<size_t>(g.ranks));
    for (int64_t k = 0; k < found; k++)
      if (yv[k] < r.distance[yc[k]]) {
        to[static_cast<size_t>(g.owner(yc[k]))].push_back(yc[k]);
        values[static_cast<size_t>(g.owner(yc[k]))].push_back(yv[k]);
      }
    const std::vector<std::vector<int64_t>> inTo = exchangeOverRanks(to);
    const std::vector<std::vector<double>> inValues = exchangeOverRanks(values);
    std::vector<int64_t> touched;
    for (size_t q = 0; q < inTo.size(); q++)
      for (size_t k = 0; k < inTo[q].size(); k++) {
        double& b = best[static_cast<size_t>(inTo[q][k] - g.lo)];
        if (b == inf) touched.push_back(inTo[q][k]);
        b = std::min(b, inValues[q][k]);
      }
    std::sort(touched.begin(), touched.end());
    std::vector<int64_t> mine;
    std::vector<double> mineDistance;
    for (int64_t v : touched) {
      double& b = best[static_cast<size_t>(v - g.lo)];
      if (b < r.distance[v]) mine.push_back(v), mineDistance.push_back(b);
      b = inf;
    }
    changed = allGatherOverRanks(mine);  // rank order: sorted
    const std::vector<double> distances = allGatherOverRanks(mineDistance);
    for (size_t k = 0; k < changed.size(); k++) r.distance[changed[k]] = distances[k];
    if (!changed.empty() && r.rounds >= n)
      throw NegativeCycleError("sssp: a negative-weight cycle is reachable from source vertex " +
                               std::to_string(source) + " (distances still fall after " + std::to_string(n) +
                               " rounds of Bellman-Ford)");
  }
  r.edgesTraversed = sumOverRanks(relaxed);
  return r;
}

}  // namespace tessel::graph
