// Distributed connected components: cc.cpp's FastSV on the ranks of a machine, every rank
// keeping the whole parent vector f and grandparent vector gp. Each iteration runs
// cc.cpp's compiled SpMV mngp(i) = min_j S(i,j) second gp(j) over min_second on each
// rank's rows of the undirected graph; each rank proposes, for its vertices v, the hooks
// f[f[v]] = min(f[f[v]], mngp[v]) and f[v] = min(f[v], mngp[v], gp[v]) (with the f of the
// iteration's start, as LAGraph's FastSV), the proposals meet in an element-wise minimum
// over ranks, and every rank recomputes gp = f[f] alike. Parents only fall to smaller
// vertices of the same component, so the labels are one node's: the smallest vertex of
// each component.
#include <algorithm>

#include "graph/dist_graph_impl.h"
#include "tessel/kernel.h"
#include "tessel/tessel.h"

namespace tessel::graph {

ComponentsResult connectedComponents(const DistGraph& dg, const Options& options) {
  checkThreads(options);
  const DistGraph::Impl& g = dg.impl();
  const Csr& s = g.sym();
  const int64_t n = g.n;
  const int64_t edges = sumOverRanks(s.nnz());
  const int spmvThreads = threadsFor(n + s.nnz(), options);
  ComponentsResult r;
  TensorBase S, gp, mngp;
  Assignment hook;
  std::shared_ptr<Kernel> kernel;
  agreeOverRanks([&] {
    S = csrTensor("S", s, Datatype::Bool, false);
    gp = denseVector("gp", Datatype::Int64, n);
    mngp = denseVector("mngp", Datatype::Int64, n);
    IndexVar i("i"), j("j");
    mngp(i) = S(i, j) * gp(j);
    hook = mngp.assignment();
    kernel = compileKernel("cc.hook", hook, Semiring::byName("min_second"), options.threads);
  });

  std::vector<int64_t> f(n);
  int64_t* gpv = static_cast<int64_t*>(gp.raw().vals);
  for (int64_t v = 0; v < n; v++) f[v] = gpv[v] = v;
  bool changed = n > 0;
  while (changed) {
    r.iterations++;
    r.edgesTraversed += edges;
    runOnEveryRank(*kernel, hook, spmvThreads);
    const int64_t* m = static_cast<const int64_t*>(mngp.raw().vals);
    std::vector<int64_t> next = f;
    for (int64_t v = g.lo; v < g.hi; v++) {
      next[f[v]] = std::min(next[f[v]], m[v]);
      next[v] = std::min(next[v], std::min(m[v], gpv[v]));
    }
    minOverRanks(next);
    f.swap(next);
    changed = false;
    for (int64_t v = 0; v < n; v++) {
      const int64_t grand = f[f[v]];
      if (grand != gpv[v]) changed = true;
      gpv[v] = grand;
    }
  }
  for (int64_t v = 0; v < n; v++)
    while (f[f[v]] != f[v]) f[v] = f[f[v]];
  r.label = std::move(f);
  return r;
}

}  // namespace tessel::graph
