// PageRank by power iteration: one compiled SpMV over the in-edges per iteration,
// y(i) = AT(i,j) * x(j) with x(j) = rank(j) / outdegree(j), over plus_second (GraphBLAS's
// PLUS_SECOND: the matrix's values are never read); the teleport term, the dangling
// vertices' share and the L1 change are element-wise here.
#include <omp.h>

#include <cmath>

#include "graph/graph_impl.h"
#include "tessel/kernel.h"
#include "tessel/tessel.h"

namespace tessel::graph {

PageRankResult pagerank(const Graph& g, const Options& options, double damping, double tolerance,
                        int maxIterations) {
  checkThreads(options);
  if (!(damping >= 0 && damping <= 1)) throw UserError("pagerank: damping must be in [0, 1]");
  const Csr& a = g.impl().adj;
  const int64_t n = a.n;
  PageRankResult r;
  if (n == 0) return r;

  TensorBase AT = csrTensor("AT", g.impl().in(), Datatype::Bool, false);
  TensorBase x = denseVector("x", Datatype::Float64, n);
  TensorBase y = denseVector("y", Datatype::Float64, n);
  IndexVar i("i"), j("j");
  y(i) = AT(i, j) * x(j);
  Assignment spmv = y.assignment();
  std::shared_ptr<Kernel> kernel = 
      compileKernel("pagerank.spmv", spmv, Semiring::of(BinaryOp::plus(), BinaryOp::second()), options.threads);

  std::vector<double> invDegree(n);
  for (int64_t v = 0; v < n; v++) invDegree[v] = a.degree(v) ? 1.0 / static_cast<double>(a.degree(v)) : 0.0;
  r.rank.assign(n, 1.0 / static_cast<double>(n));
  const double base = (1 - damping) / static_cast<double>(n);
  double* xv = static_cast<double*>(x.raw().vals);
  double dangling = 0;  // rank of the vertices without out-edges
  for (int64_t v = 0; v < n; v++) {
    xv[v] = r.rank[v] * invDegree[v];
    if (invDegree[v] == 0) dangling += r.rank[v];
  }
  const int spmvThreads = threadsFor(n + g.impl().in().nnz(), options);
  const int loopThreads = threadsFor(n, options);
  for (r.iterations = 1; r.iterations <= maxIterations; r.iterations++) {
    kernel->run(spmv, spmvThreads);
    const double* yv = static_cast<const double*>(y.raw().vals);
    const double shared = base + damping * dangling / static_cast<double>(n);
    double change = 0, nextDangling = 0;
    // One pass: the new rank, its change, and the next iteration's x and dangling sum.
#pragma omp parallel for reduction(+ : change, nextDangling) num_threads(loopThreads)
    for (int64_t v = 0; v < n; v++) {
      double next = shared + damping * yv[v];
      change += std::fabs(next - r.rank[v]);
      r.rank[v] = next;
      xv[v] = next * invDegree[v];
      if (invDegree[v] == 0) nextDangling += next;
    }
    dangling = nextDangling;
    r.edgesTraversed += a.nnz();
    if (change < tolerance) break;
  }
  r.iterations = std::min(r.iterations, maxIterations);
  return r;
}

}  // namespace tessel::graph
