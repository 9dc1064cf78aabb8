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
#include <numeric>

#include "graph/graph_impl.h"
#include "tessel/kernel.h"
#include "tessel/tessel.h"

namespace tessel::graph {

namespace {

/// The strictly lower triangle of `s` with vertex v renamed rank[v].
Csr lowerTriangle(const Csr& s, const std::vector<int64_t>& rank) {
  std::vector<int64_t> rows, cols;
  rows.reserve(s.col.size() / 2);
  cols.reserve(s.col.size() / 2);
  for (int64_t v = 0; v < s.n; v++)
    for (int32_t p = s.ptr[v]; p < s.ptr[v + 1]; p++)
      if (rank[s.col[p]] < rank[v]) {
        rows.push_back(rank[v]);
        cols.push_back(rank[s.col[p]]);
      }
  return buildCsr(s.n, rows, cols, std::vector<double>(rows.size(), 1.0));
}

}  // namespace

int64_t triangleCount(const Graph& g, const Options& options) {
  checkThreads(options);
  const Csr& s = g.impl().sym();
  const int64_t n = s.n;
  std::vector<int64_t> order(n), rank(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t u, int64_t v) { return s.degree(u) > s.degree(v); });
  for (int64_t k = 0; k < n; k++) rank[order[k]] = k;

  TensorBase L = csrTensor("L", lowerTriangle(s, rank), Datatype::Bool, false);
  Tensor<int64_t> t("t", {});
  IndexVar i("i"), j("j"), k("k");
  t() = L(i, j) * L(i, k) * L(j, k);
  Assignment a = t.assignment();
  // Rows differ widely in cost: dynamic blocks of rows, one partial count per thread.
  std::shared_ptr<Kernel> kernel =
      compileKernel("tc.count", a, Semiring::byName("plus_pair"), options.threads,
                    options.threads > 1 ? "parallelize(i,cpu_thread,temporary)" : "");
  kernel->run(a, threadsFor(s.nnz(), options));
  return static_cast<const int64_t*>(t.raw().vals)[0];
}

}  // namespace tessel::graph
