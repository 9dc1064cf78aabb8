// Connected components by FastSV (Zhang, Azad, Hu 2020; LAGraph's FastSV): each
// iteration takes every vertex's minimum neighbouring grandparent with one compiled
// SpMV over min_second, mngp(i) = min_j S(i,j) second gp(j), then hooks, shortcuts and
// recomputes the grandparents element-wise until they stop changing. Parents only ever
// fall to smaller vertex ids of the same component, and the smallest vertex of a
// component stays its own parent, so the final labels are the components' smallest ids.
#include <omp.h>

#include <algorithm>

#include "graph/graph_impl.h"
#include "tessel/kernel.h"
#include "tessel/tessel.h"

namespace tessel::graph {

namespace {

/// *p = min(*p, v), atomically (several vertices may hook the same parent at once).
void atomicMin(int64_t* p, int64_t v) {
  int64_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (v < old && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

}  // namespace

ComponentsResult connectedComponents(const Graph& g, const Options& options) {
  checkThreads(options);
  const Csr& s = g.impl().sym();
  const int64_t n = s.n;
  const int threads = threadsFor(n, options);
  const int spmvThreads = threadsFor(n + s.nnz(), options);
  ComponentsResult r;
  // int64 vectors: min's identity (+inf) is INT64_MAX, what an isolated vertex's mngp holds.
  TensorBase S = csrTensor("S", s, Datatype::Bool, false);
  TensorBase gp = denseVector("gp", Datatype::Int64, n);
  TensorBase mngp = denseVector("mngp", Datatype::Int64, n);
  IndexVar i("i"), j("j");
  mngp(i) = S(i, j) * gp(j);
  Assignment hook = mngp.assignment();
  std::shared_ptr<Kernel> kernel = 
      compileKernel("cc.hook", hook, Semiring::byName("min_second"), options.threads);

  std::vector<int64_t> f(n);
  int64_t* gpv = static_cast<int64_t*>(gp.raw().vals);
  for (int64_t v = 0; v < n; v++) f[v] = gpv[v] = v;
  bool changed = n > 0;
  while (changed) {
    r.iterations++;
    r.edgesTraversed += s.nnz();
    kernel->run(hook, spmvThreads);
    const int64_t* m = static_cast<const int64_t*>(mngp.raw().vals);
    // Stochastic hooking f[f[v]] = min(f[f[v]], mngp[v]), aggressive hooking and
    // shortcutting f[v] = min(f[v], mngp[v], gp[v]), in one pass: every update is a min
    // towards a vertex of the same component, so their order does not matter.
#pragma omp parallel for num_threads(threads)
    for (int64_t v = 0; v < n; v++) {
      atomicMin(&f[__atomic_load_n(&f[v], __ATOMIC_RELAXED)], m[v]);
      atomicMin(&f[v], std::min(m[v], gpv[v]));
    }
    changed = false;
#pragma omp parallel for reduction(|| : changed) num_threads(threads)
    for (int64_t v = 0; v < n; v++) {
      int64_t next = f[f[v]];
      if (next != gpv[v]) changed = true;
      gpv[v] = next;
    }
  }
  // At a fixed point every tree is a star; follow parents anyway so that a label is a root.
  for (int64_t v = 0; v < n; v++)
    while (f[f[v]] != f[v]) f[v] = f[f[v]];
  r.label = std::move(f);
  return r;
}

}  // namespace tessel::graph
