// Distributed PageRank: pagerank.cpp's power iteration on the ranks of a machine. Each
// rank runs pagerank.cpp's compiled SpMV y(i) = AT(i,j) * x(j) over plus_second on the
// in-edges of its vertices, with x whole on every rank; it updates its vertices' ranks,
// and the ranks all-gather them (x follows from the ranks and the out-degrees, which
// every rank knows). The L1 change and the dangling vertices' rank are summed over ranks.
// Each vertex's y is one node's exactly (the same in-edges in the same order); the sums
// are added in another order, so the ranks agree with one node's to rounding.
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "graph/dist_graph_impl.h"
#include "tessel/kernel.h"
#include "tessel/tessel.h"

namespace tessel::graph {

PageRankResult pagerank(const DistGraph& dg, const Options& options, double damping, double tolerance,
                        int maxIterations) {
  checkThreads(options);
  if (!(damping >= 0 && damping <= 1)) throw UserError("pagerank: damping must be in [0, 1]");
  const DistGraph::Impl& g = dg.impl();
  const int64_t n = g.n;
  PageRankResult r;
  if (n == 0) return r;
  const Csr& in = g.in();

  TensorBase AT, x, y;
  Assignment spmv;
  std::shared_ptr<Kernel> kernel;
  agreeOverRanks([&] {
    AT = csrTensor("AT", in, Datatype::Bool, false);
    x = denseVector("x", Datatype::Float64, n);
    y = denseVector("y", Datatype::Float64, n);
    IndexVar i("i"), j("j");
    y(i) = AT(i, j) * x(j);
    spmv = y.assignment();
    kernel = compileKernel("pagerank.spmv", spmv, Semiring::of(BinaryOp::plus(), BinaryOp::second()),
                           options.threads);
  });

  // Out-degrees: each rank knows its rows'; all-gathered in vertex order.
  std::vector<int64_t> myDegrees;
  for (int64_t v = g.lo; v < g.hi; v++) myDegrees.push_back(g.adj.degree(v));
  const std::vector<int64_t> degree = allGatherOverRanks(myDegrees);
  std::vector<double> invDegree(n);
  for (int64_t v = 0; v < n; v++) invDegree[v] = degree[v] ? 1.0 / static_cast<double>(degree[v]) : 0.0;
  r.rank.assign(n, 1.0 / static_cast<double>(n));
  const double base = (1 - damping) / static_cast<double>(n);
  double* xv = static_cast<double*>(x.raw().vals);
  double dangling = 0;
  for (int64_t v = 0; v < n; v++) {
    xv[v] = r.rank[v] * invDegree[v];
    if (invDegree[v] == 0) dangling += r.rank[v];
  }
  const int spmvThreads = threadsFor(n + in.nnz(), options);
  const int loopThreads = threadsFor(g.hi - g.lo, options);
  std::vector<double> mine(static_cast<size_t>(g.hi - g.lo));
  for (r.iterations = 1; r.iterations <= maxIterations; r.iterations++) {
    runOnEveryRank(*kernel, spmv, spmvThreads);
    const double* yv = static_cast<const double*>(y.raw().vals);
    const double shared = base + damping * dangling / static_cast<double>(n);
    double change = 0, nextDangling = 0;
#pragma omp parallel for reduction(+ : change, nextDangling) num_threads(loopThreads)
    for (int64_t v = g.lo; v < g.hi; v++) {
      const double next = shared + damping * yv[v];
      change += std::fabs(next - r.rank[v]);
      mine[static_cast<size_t>(v - g.lo)] = next;
      if (invDegree[v] == 0) nextDangling += next;
    }
    r.rank = allGatherOverRanks(mine);
    for (int64_t v = 0; v < n; v++) xv[v] = r.rank[v] * invDegree[v];
    change = sumOverRanks(change);
    dangling = sumOverRanks(nextDangling);
    r.edgesTraversed += g.edges;
    if (change < tolerance) break;
  }
  r.iterations = std::min(r.iterations, maxIterations);
  return r;
}

}  // namespace tessel::graph
