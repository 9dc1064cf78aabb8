// Direction-optimizing BFS (Beamer, Asanovic, Patterson; LAGraph's push/pull BFS).
//
// Push levels are one compiled SpMSpV, y(j) = f(i) * A(i,j) over min_first: f holds the
// frontier with each vertex's own id as value, so y(j) is the smallest frontier vertex
// with an edge to j, a valid parent. Vertices already visited are filtered out of y
// here (the compiler's output masks will do it inside the kernel). Pull levels scan the
// in-edges of unvisited vertices and stop at the first one in the frontier.
#include <omp.h>

#include <cstdint>
#include <vector>

#include "graph/graph_impl.h"
#include "tessel/kernel.h"
#include "tessel/tessel.h"

namespace tessel::graph {

namespace {

// Beamer's constants as in the GAP benchmark: pull once the frontier's out-edges exceed
// 1/alpha of the edges left to check; push again once the frontier is below n/beta
// vertices and shrinking.
constexpr int64_t kAlpha = 15;
constexpr int64_t kBeta = 18;

/// One bottom-up level: every unvisited vertex looks for a parent among its in-edges.
/// A hand loop: its early exit (stop at the first parent found) and the restriction to
/// unvisited vertices have no compiled form yet (no masks, no short-circuit reductions),
/// and without them a pull level would read every edge of the graph.
/// Marks the vertices reached in `next`; returns their number and adds their out-edges
/// to `scout`.
int64_t pullLevel(const Csr& a, const Csr& in, const std::vector<uint8_t>& frontier, std::vector<uint8_t>& next,
                  std::vector<uint8_t>& visited, std::vector<int64_t>& parent, std::vector<int64_t>& level, int64_t depth, const Options& options,
                  int64_t& scout) {
  int64_t reached = 0, edges = 0;
  const int64_t n = in.n;
#pragma omp parallel for schedule(dynamic, 1024) reduction(+ : reached, edges) \
    num_threads(threadsFor(n + in.nnz(), options))
  for (int64_t v = 0; v < n; v++) {
    next[v] = 0;
    if (visited[v]) continue;
    for (int32_t p = in.ptr[v]; p < in.ptr[v + 1]; p++) {
      int32_t u = in.col[p];
      if (frontier[u]) {
        parent[v] = u;
        visited[v] = 1;
        level[v] = depth;
        next[v] = 1;
        reached++;
        edges += a.degree(v);
        break;
      }
    }
  }
  scout = edges;
  return reached;
}

}  // namespace

BfsResult bfs(const Graph& g, int64_t source, const Options& options) {
  checkThreads(options);
  checkVertex(g, source, "source");
  const Csr& a = g.impl().adj;
  const int64_t n = a.n;
  BfsResult r;
  r.level.assign(n, -1);
  r.parent.assign(n, -1);
  r.level[source] = 0;
  r.parent[source] = source;
  // Visited flags beside the parents: a byte per vertex stays in cache where the
  // filter of a push level reads it at random.
  std::vector<uint8_t> visited(n, 0);
  visited[source] = 1;

  // The push kernel, compiled once: frontier f (vertex ids as values) times A.
  TensorBase A = csrTensor("A", a, Datatype::Bool, false);
  TensorBase f = sparseVector("f", Datatype::Int32, n);
  TensorBase y = sparseVector("y", Datatype::Int32, n);
  IndexVar i("i"), j("j");
  y(j) = f(i) * A(i, j);
  Assignment push = y.assignment();
  std::shared_ptr<Kernel> kernel = compileKernel("bfs.push", push, Semiring::byName("min_first"), 1);

  const Csr* in = nullptr;  // in-edges, built at the first pull level
  std::vector<int32_t> list{static_cast<int32_t>(source)};
  std::vector<uint8_t> bitmap, nextBitmap;
  bool pulling = false;
  int64_t frontierSize = 1;
  int64_t scout = a.degree(source);   // out-edges of the frontier
  int64_t unexplored = a.nnz() - scout;  // edges not yet leaving a visited vertex
  r.edgesTraversed = scout;
  for (int64_t depth = 1; frontierSize > 0; depth++) {
    // Pull only for a frontier large enough not to switch back at once: a pull level
    // costs O(n) however few vertices are left (the tail of a high-diameter graph).
    if (!pulling && scout > unexplored / kAlpha && frontierSize >= n / kBeta) {
      if (!in) in = &g.impl().in();
      pulling = true;
      bitmap.assign(n, 0);
      nextBitmap.assign(n, 0);
      for (int32_t v : list) bitmap[v] = 1;
    }
    if (pulling) {
      int64_t previous = frontierSize;
      frontierSize = pullLevel(a, *in, bitmap, nextBitmap, visited, r.parent, r.level, depth, options, scout);
      bitmap.swap(nextBitmap);
      r.pullSteps++;
      unexplored -= scout;
      r.edgesTraversed += scout;
      if (frontierSize < previous && frontierSize < n / kBeta) {
        pulling = false;
        list.clear();
        for (int64_t v = 0; v < n; v++)
          if (bitmap[v]) list.push_back(static_cast<int32_t>(v));
      }
      continue;
    }
    // Push: the frontier into f, y = f A, keep the unvisited vertices of y.
    int32_t* fc = static_cast<int32_t*>(f.raw().crd[0]);
    int32_t* fv = static_cast<int32_t*>(f.raw().vals);
    for (size_t k = 0; k < list.size(); k++) fc[k] = fv[k] = list[k];
    setSparseCount(f, static_cast<int64_t>(list.size()));
    kernel->run(push, 1);
    const tessel_tensor_t& out = y.raw();
    const int32_t* yc = static_cast<const int32_t*>(out.crd[0]);
    const int32_t* yv = static_cast<const int32_t*>(out.vals);
    const int64_t found = static_cast<const int32_t*>(out.pos[0])[1];
    list.clear();
    scout = 0;
    for (int64_t k = 0; k < found; k++) {
      int32_t v = yc[k];
      if (visited[v]) continue;
      visited[v] = 1;
      r.parent[v] = yv[k];
      r.level[v] = depth;
      list.push_back(v);
      scout += a.degree(v);
    }
    r.pushSteps++;
    frontierSize = static_cast<int64_t>(list.size());
    unexplored -= scout;
    r.edgesTraversed += scout;
  }
  return r;
}

}  // namespace tessel::graph
