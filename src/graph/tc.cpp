// Triangle counting: t = sum_{i,j,k} L(i,j) * L(i,k) * L(j,k) over plus_pair, one
// compiled kernel whose loops i, j, k merge row i and row j of L (the strictly lower
// triangle). Vertices are first relabelled by decreasing degree, so the lower triangle
// of a vertex holds only neighbours of higher degree: each row of L then has at most
// about sqrt(2m) entries and hubs cost no long merges (Cohen; the GAP benchmark's tc).
// Nearly all the work is then in the first rows (on R-MAT 17, 60% in the first 5%), so
// threads take blocks of 16 rows from their shares and then from each other's
// (split + parallelize: tessel_next_block), not OpenMP's guided chunks, whose first and
// largest block would hold almost everything.
#include <algorithm>

#include "graph/graph_impl.h"
#include "tessel/kernel.h"
#include "tessel/tessel.h"

namespace tessel::graph {

namespace {

/// The strictly lower triangle of `s` with vertex v renamed rank[v] (order[c] is the
/// vertex renamed c), pattern only. Its rows come out sorted without a sort: walking the
/// vertices in their new order c = 0, 1, ..., each appends c to the rows of its
/// neighbours renamed after it.
Csr lowerTriangle(const Csr& s, const std::vector<int64_t>& order, const std::vector<int64_t>& rank) {
  const int64_t n = s.n;
  Csr l;
  l.n = n;
  l.ptr.assign(n + 1, 0);
  for (int64_t v = 0; v < n; v++)
    for (int32_t p = s.ptr[v]; p < s.ptr[v + 1]; p++)
      if (rank[s.col[p]] < rank[v]) l.ptr[rank[v] + 1]++;
  for (int64_t r = 0; r < n; r++) l.ptr[r + 1] += l.ptr[r];
  l.col.resize(l.ptr[n]);
  std::vector<int32_t> next(l.ptr.begin(), l.ptr.end() - 1);
  for (int64_t c = 0; c < n; c++) {
    const int64_t v = order[c];
    for (int32_t p = s.ptr[v]; p < s.ptr[v + 1]; p++)
      if (rank[s.col[p]] > c) l.col[next[rank[s.col[p]]]++] = static_cast<int32_t>(c);
  }
  return l;  // no weights: the tensor is bool
}

}  // namespace

int64_t triangleCount(const Graph& g, const Options& options) {
  checkThreads(options);
  const Csr& s = g.impl().sym();
  const int64_t n = s.n;
  std::vector<int64_t> degree(n);
  for (int64_t v = 0; v < n; v++) degree[v] = s.degree(v);
  const DegreeOrder d = byDecreasingDegree(degree);

  TensorBase L = csrTensor("L", lowerTriangle(s, d.order, d.rank), Datatype::Bool, false);
  Tensor<int64_t> t("t", {});
  IndexVar i("i"), j("j"), k("k");
  t() = L(i, j) * L(i, k) * L(j, k);
  Assignment a = t.assignment();
  // Blocks of 16 rows shared out and stolen; one partial count per thread.
  std::shared_ptr<Kernel> kernel =
      compileKernel("tc.count", a, Semiring::byName("plus_pair"), options.threads,
                    options.threads > 1 ? "split(i,i0,i1,16),parallelize(i0,cpu_thread,temporary)" : "");
  kernel->run(a, threadsFor(s.nnz(), options));
  return static_cast<const int64_t*>(t.raw().vals)[0];
}

}  // namespace tessel::graph
