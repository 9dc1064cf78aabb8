// Distributed triangle counting: tc.cpp's count on the ranks of a machine. Every rank
// learns every vertex's degree (all-gathered) and so the same degree ordering; it builds
// the rows of L (the strictly lower triangle, renamed) of its own vertices, asks the
// owners for the rows of L that its rows reference (all-to-all of row numbers, then of the
// rows: never the whole graph), and runs tc.cpp's plus_pair kernel over its rows,
// t = Lmine(i,j) * Lmine(i,k) * Lnear(j,k), Lnear holding its rows and the fetched ones.
// The counts are summed over ranks: each triangle is counted once, at its i.
#include <algorithm>

#include "graph/dist_graph_impl.h"
#include "tessel/kernel.h"
#include "tessel/tessel.h"

namespace tessel::graph {

namespace {

/// An n x n CSR holding the given (row, sorted columns) pairs, the other rows empty.
Csr fromRows(int64_t n, const std::vector<std::pair<int64_t, std::vector<int32_t>>>& rows) {
  Csr l;
  l.n = n;
  l.ptr.assign(n + 1, 0);
  for (const auto& [r, cols] : rows) l.ptr[r + 1] = static_cast<int32_t>(cols.size());
  for (int64_t r = 0; r < n; r++) l.ptr[r + 1] += l.ptr[r];
  l.col.resize(static_cast<size_t>(l.ptr[n]));
  for (const auto& [r, cols] : rows) std::copy(cols.begin(), cols.end(), l.col.begin() + l.ptr[r]);
  return l;
}

}  // namespace

int64_t triangleCount(const DistGraph& dg, const Options& options) {
  checkThreads(options);
  const DistGraph::Impl& g = dg.impl();
  const Csr& s = g.sym();
  const int64_t n = g.n;
  std::vector<int64_t> myDegrees;
  for (int64_t v = g.lo; v < g.hi; v++) myDegrees.push_back(s.degree(v));
  const DegreeOrder d = byDecreasingDegree(allGatherOverRanks(myDegrees));
  const std::vector<int64_t>&order = d.order, &rank = d.rank;

  // This rank's rows of L: row rank[v] holds the renamed neighbours of v renamed before it.
  std::vector<std::pair<int64_t, std::vector<int32_t>>> mine;
  std::vector<int64_t> wanted;  // rows of L referenced
  for (int64_t v = g.lo; v < g.hi; v++) {
    std::vector<int32_t> cols;
    for (int32_t p = s.ptr[v]; p < s.ptr[v + 1]; p++)
      if (rank[s.col[p]] < rank[v]) cols.push_back(static_cast<int32_t>(rank[s.col[p]]));
    std::sort(cols.begin(), cols.end());
    wanted.insert(wanted.end(), cols.begin(), cols.end());
    mine.emplace_back(rank[v], std::move(cols));
  }
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  // Row c of L belongs to the owner of vertex order[c]; ask for the rows not here.
  std::vector<std::vector<int64_t>> asks(static_cast<size_t>(g.ranks));
  for (int64_t c : wanted)
    if (!g.owns(order[c])) asks[static_cast<size_t>(g.owner(order[c]))].push_back(c);
  const std::vector<std::vector<int64_t>> asked = exchangeOverRanks(asks);
  std::vector<std::vector<int64_t>> replies(static_cast<size_t>(g.ranks));  // c, length, columns...
  for (size_t q = 0; q < asked.size(); q++)
    for (int64_t c : asked[q]) {
      const auto& cols = mine[static_cast<size_t>(order[c] - g.lo)].second;
      replies[q].push_back(c);
      replies[q].push_back(static_cast<int64_t>(cols.size()));
      replies[q].insert(replies[q].end(), cols.begin(), cols.end());
    }
  std::vector<std::pair<int64_t, std::vector<int32_t>>> near = mine;
  for (const std::vector<int64_t>& reply : exchangeOverRanks(replies))
    for (size_t k = 0; k < reply.size();) {
      const int64_t c = reply[k], len = reply[k + 1];
      near.emplace_back(c, std::vector<int32_t>(reply.begin() + static_cast<std::ptrdiff_t>(k + 2),
                                                reply.begin() + static_cast<std::ptrdiff_t>(k + 2 + len)));
      k += static_cast<size_t>(2 + len);
    }

  int64_t count = 0;
  agreeOverRanks([&] {
    const Csr lMine = fromRows(n, mine);
    TensorBase L = csrTensor("L", lMine, Datatype::Bool, false);
    TensorBase N = csrTensor("N", fromRows(n, near), Datatype::Bool, false);
    Tensor<int64_t> t("t", {});
    IndexVar i("i"), j("j"), k("k");
    t() = L(i, j) * L(i, k) * N(j, k);
    Assignment a = t.assignment();
    std::shared_ptr<Kernel> kernel =
        compileKernel("tc.count.rows", a, Semiring::byName("plus_pair"), options.threads,
                      options.threads > 1 ? "split(i,i0,i1,16),parallelize(i0,cpu_thread,temporary)" : "");
    kernel->run(a, threadsFor(2 * lMine.nnz(), options));
    count = static_cast<const int64_t*>(t.raw().vals)[0];
  });
  return sumOverRanks(count);
}

}  // namespace tessel::graph
