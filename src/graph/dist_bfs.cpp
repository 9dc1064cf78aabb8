// Distributed direction-optimizing BFS: bfs.cpp's algorithm on the ranks of a machine,
// every rank keeping the whole level and parent vectors and the frontier.
//
// A push level runs bfs.cpp's compiled SpMSpV y(j) = f(i) * A(i,j) over min_first on each
// rank's rows, with f the frontier vertices the rank owns; the unvisited candidates
// (j, smallest frontier parent) go to j's owner by all-to-all, which keeps the smallest
// parent over ranks -- the parent one node's min_first finds. A pull level scans the
// in-edges of each rank's unvisited vertices against the frontier (the hand loop of
// bfs.cpp, stopping at the first frontier vertex, the one node's parent too). Each level
// ends by all-gathering the vertices reached with their parents; the push/pull choice uses
// the same counts summed over ranks, so levels, parents and the choices equal one node's.
#include <algorithm>

#include "graph/dist_graph_impl.h"
#include "tessel/kernel.h"
#include "tessel/tessel.h"

namespace tessel::graph {

namespace {

constexpr int64_t kAlpha = 15;  // bfs.cpp's constants (GAP's)
constexpr int64_t kBeta = 18;

/// The BFS state every rank keeps whole.
struct State {
  BfsResult& r;
  std::vector<uint8_t> visited;
  std::vector<int64_t> list;  // the frontier, sorted
};

/// Every rank's newly reached vertices (v, parent pairs, sorted by v within each rank)
/// become the frontier on every rank; returns their number.
int64_t reach(State& s, const std::vector<int64_t>& mine, int64_t depth) {
  const std::vector<int64_t> all = allGatherOverRanks(mine);  // rank order: sorted by v
  s.list.clear();
  for (size_t k = 0; k < all.size(); k += 2) {
    const int64_t v = all[k];
    s.visited[v] = 1;
    s.r.parent[v] = all[k + 1];
    s.r.level[v] = depth;
    s.list.push_back(v);
  }
  return static_cast<int64_t>(s.list.size());
}

}  // namespace

BfsResult bfs(const DistGraph& dg, int64_t source, const Options& options) {
  checkThreads(options);
  const DistGraph::Impl& g = dg.impl();
  checkVertex(g.n, source, "source");
  const Csr& a = g.adj;
  const int64_t n = g.n;
  BfsResult r;
  r.level.assign(n, -1);
  r.parent.assign(n, -1);
  r.level[source] = 0;
  r.parent[source] = source;
  State s{r, std::vector<uint8_t>(n, 0), {source}};
  s.visited[source] = 1;

  TensorBase A, f, y;
  Assignment push;
  std::shared_ptr<Kernel> kernel;
  agreeOverRanks([&] {
    A = csrTensor("A", a, Datatype::Bool, false);
    f = sparseVector("f", Datatype::Int32, n);
    y = sparseVector("y", Datatype::Int32, n);
    IndexVar i("i"), j("j");
    y(j) = f(i) * A(i, j);
    push = y.assignment();
    kernel = compileKernel("bfs.push", push, Semiring::byName("min_first"), 1);
  });

  const Csr* in = nullptr;
  std::vector<uint8_t> bitmap;      // the frontier during pull levels
  std::vector<int64_t> best(static_cast<size_t>(g.hi - g.lo), -1);  // push: smallest parent offered per own vertex
  bool pulling = false;
  int64_t frontierSize = 1;
  int64_t scout = sumOverRanks(g.owns(source) ? a.degree(source) : int64_t{0});
  int64_t unexplored = g.edges - scout;
  r.edgesTraversed = scout;
  for (int64_t depth = 1; frontierSize > 0; depth++) {
    if (!pulling && scout > unexplored / kAlpha && frontierSize >= n / kBeta) {
      if (!in) in = &g.in();  // collective: every rank decides alike
      pulling = true;
    }
    std::vector<int64_t> mine;  // (v, parent) reached here
    int64_t myScout = 0;
    if (pulling) {
      bitmap.assign(n, 0);
      for (int64_t v : s.list) bitmap[v] = 1;
      for (int64_t v = g.lo; v < g.hi; v++) {
        if (s.visited[v]) continue;
        for (int32_t p = in->ptr[v]; p < in->ptr[v + 1]; p++)
          if (bitmap[in->col[p]]) {
            mine.push_back(v);
            mine.push_back(in->col[p]);
            myScout += a.degree(v);
            break;
          }
      }
      const int64_t previous = frontierSize;
      frontierSize = reach(s, mine, depth);
      scout = sumOverRanks(myScout);
      r.pullSteps++;
      if (frontierSize < previous && frontierSize < n / kBeta) pulling = false;
    } else {
      int32_t* fc = static_cast<int32_t*>(f.raw().crd[0]);
      int32_t* fv = static_cast<int32_t*>(f.raw().vals);
      int64_t count = 0;
      for (int64_t v : s.list)
        if (g.owns(v)) fc[count] = fv[count] = static_cast<int32_t>(v), count++;
      setSparseCount(f, count);
      runOnEveryRank(*kernel, push, 1);
      const tessel_tensor_t& out = y.raw();
      const int32_t* yc = static_cast<const int32_t*>(out.crd[0]);
      const int32_t* yv = static_cast<const int32_t*>(out.vals);
      const int64_t found = static_cast<const int32_t*>(out.pos[0])[1];
      std::vector<std::vector<int64_t>> offers(static_cast<size_t>(g.ranks));
      for (int64_t k = 0; k < found; k++)
        if (!s.visited[yc[k]]) {
          auto& o = offers[static_cast<size_t>(g.owner(yc[k]))];
          o.push_back(yc[k]);
          o.push_back(yv[k]);
        }
      std::vector<int64_t> touched;
      for (const std::vector<int64_t>& o : exchangeOverRanks(offers))
        for (size_t k = 0; k < o.size(); k += 2) {
          int64_t& b = best[static_cast<size_t>(o[k] - g.lo)];
          if (b < 0) touched.push_back(o[k]);
          if (b < 0 || o[k + 1] < b) b = o[k + 1];
        }
      std::sort(touched.begin(), touched.end());
      for (int64_t v : touched) {
        mine.push_back(v);
        mine.push_back(best[static_cast<size_t>(v - g.lo)]);
        best[static_cast<size_t>(v - g.lo)] = -1;
        myScout += a.degree(v);
      }
      frontierSize = reach(s, mine, depth);
      scout = sumOverRanks(myScout);
      r.pushSteps++;
    }
    unexplored -= scout;
    r.edgesTraversed += scout;
  }
  return r;
}

}  // namespace tessel::graph
