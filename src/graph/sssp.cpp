// Single-source shortest paths: Bellman-Ford over min_plus with a changed-vertex
// frontier. Each round is one compiled SpMSpV, y(j) = min_i f(i) + A(i,j), where f holds
// the distances that changed in the previous round; the vertices whose distance y
// improves form the next frontier. A round only lengthens paths by one edge, so a change
// in round n (n vertices) means a negative cycle is reachable from the source.
#include <cmath>
#include <limits>

#include "graph/graph_impl.h"
#include "tessel/kernel.h"
#include "tessel/tessel.h"

namespace tessel::graph {

SsspResult sssp(const Graph& g, int64_t source, const Options& options) {
  checkThreads(options);
  checkVertex(g, source, "source");
  const Csr& a = g.impl().adj;
  const int64_t n = a.n;
  SsspResult r;
  r.distance.assign(n, std::numeric_limits<double>::infinity());
  r.distance[source] = 0;

  TensorBase A = csrTensor("A", a, Datatype::Float64, true);
  TensorBase f = sparseVector("f", Datatype::Float64, n);
  TensorBase y = sparseVector("y", Datatype::Float64, n);
  IndexVar i("i"), j("j");
  y(j) = f(i) * A(i, j);
  Assignment relax = y.assignment();
  std::shared_ptr<Kernel> kernel = compileKernel("sssp.relax", relax, Semiring::byName("min_plus"), 1);

  std::vector<int32_t> changed{static_cast<int32_t>(source)};
  while (!changed.empty()) {
    r.rounds++;
    int32_t* fc = static_cast<int32_t*>(f.raw().crd[0]);
    double* fv = static_cast<double*>(f.raw().vals);
    for (size_t k = 0; k < changed.size(); k++) {
      fc[k] = changed[k];
      fv[k] = r.distance[changed[k]];
      r.edgesTraversed += a.degree(changed[k]);
    }
    setSparseCount(f, static_cast<int64_t>(changed.size()));
    kernel->run(relax, 1);
    const tessel_tensor_t& out = y.raw();
    const int32_t* yc = static_cast<const int32_t*>(out.crd[0]);
    const double* yv = static_cast<const double*>(out.vals);
    const int64_t found = static_cast<const int32_t*>(out.pos[0])[1];
    changed.clear();
    for (int64_t k = 0; k < found; k++)
      if (yv[k] < r.distance[yc[k]]) {
        r.distance[yc[k]] = yv[k];
        changed.push_back(yc[k]);
      }
    if (!changed.empty() && r.rounds >= n)
      throw NegativeCycleError("sssp: a negative-weight cycle is reachable from source vertex " +
                               std::to_string(source) + " (distances still fall after " + std::to_string(n) +
                               " rounds of Bellman-Ford)");
  }
  return r;
}

}  // namespace tessel::graph
