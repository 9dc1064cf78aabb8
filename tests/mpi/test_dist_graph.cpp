// The distributed graph algorithms (tessel/graph.h's DistGraph) under mpirun (ctest
// MPI.graph.npN, 1-4 and 6 ranks): bfs levels and parents, sssp distances, cc labels and
// tc counts equal the single-node algorithms' exactly, pagerank to 1e-12 relative, on
// hand-checked graphs (known answers), an R-MAT graph whose bfs takes both directions,
// random weighted graphs with negative edges, degenerate graphs (no vertices, one vertex,
// isolated vertices, more ranks than vertices), the shared karate and ca-GrQc files read
// in parallel (skipped when ../shared/data is absent); a negative cycle and a bad source
// throw on every rank. Each rank is handed an arbitrary share of the edges (every P-th
// edge), so the exchange to the row owners is exercised. Every rank runs every test (the
// same collectives in the same order); only EXPECTs (no early return between
// collectives); a test fails when it fails on any rank.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "tessel/distributed.h"
#include "tessel/generate.h"
#include "tessel/graph.h"
#include "tessel/io.h"

using namespace tessel;
using namespace tessel::graph;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Edge {
  int64_t from, to;
  double weight = 1;
};

CooData coo(int64_t n, const std::vector<Edge>& edges, bool undirected = false) {
  CooData c;
  c.dims = {n, n};
  for (const Edge& e : edges) {
    c.add({e.from, e.to}, e.weight);
    if (undirected && e.from != e.to) c.add({e.to, e.from}, e.weight);
  }
  return c;
}

/// This rank's share of `all`: every P-th edge, starting at its rank.
DistGraph distribute(const CooData& all) {
  CooData share;
  share.dims = all.dims;
  const int p = worldSize(), me = worldRank();
  for (int64_t e = me; e < all.nnz(); e += p) share.add({all.coords[2 * e], all.coords[2 * e + 1]}, all.values[e]);
  return DistGraph::fromParts(share, Machine::world());
}

Options options(int threads = 1) {
  Options o;
  o.threads = threads;
  o.grain = 0;
  return o;
}

/// Every algorithm on `d` equals the single-node one on `g` (bfs and sssp from `sources`).
void expectSame(const Graph& g, const DistGraph& d, const std::vector<int64_t>& sources, const Options& o = options()) {
  EXPECT_EQ(d.vertices(), g.vertices());
  EXPECT_EQ(d.edges(), g.edges());
  for (int64_t s : sources) {
    BfsResult one = bfs(g, s, o), many = bfs(d, s, o);
    EXPECT_EQ(many.level, one.level) << "bfs from " << s;
    EXPECT_EQ(many.parent, one.parent) << "bfs from " << s;
    EXPECT_EQ(many.edgesTraversed, one.edgesTraversed);
    EXPECT_EQ(many.pushSteps, one.pushSteps);
    EXPECT_EQ(many.pullSteps, one.pullSteps);
    SsspResult a = sssp(g, s, o), b = sssp(d, s, o);
    EXPECT_EQ(b.distance, a.distance) << "sssp from " << s;
    EXPECT_EQ(b.rounds, a.rounds);
  }
  PageRankResult a = pagerank(g, o), b = pagerank(d, o);
  EXPECT_EQ(a.rank.size(), b.rank.size());
  for (size_t v = 0; v < a.rank.size() && v < b.rank.size(); v++)
    EXPECT_NEAR(b.rank[v], a.rank[v], 1e-12 * std::fabs(a.rank[v])) << "pagerank of " << v;
  EXPECT_EQ(connectedComponents(d, o).label, connectedComponents(g, o).label);
  EXPECT_EQ(triangleCount(d, o), triangleCount(g, o));
}

TEST(DistGraph, HandCheckedBfsAndSssp) {
  // 0 -> 1 (4), 0 -> 2 (1), 2 -> 1 (-2), 1 -> 3 (1), 4 -> 0 (1): 4 is unreachable from 0.
  DistGraph d = distribute(coo(5, {{0, 1, 4}, {0, 2, 1}, {2, 1, -2}, {1, 3, 1}, {4, 0, 1}}));
  BfsResult r = bfs(d, 0, options());
  EXPECT_EQ(r.level, (std::vector<int64_t>{0, 1, 1, 2, -1}));
  EXPECT_EQ(r.parent, (std::vector<int64_t>{0, 0, 0, 1, -1}));
  EXPECT_EQ(sssp(d, 0, options()).distance, (std::vector<double>{0, -1, 1, 0, kInf}));
  EXPECT_EQ(sssp(d, 4, options()).distance, (std::vector<double>{1, 0, 2, 1, 0}));
  // Duplicate edges (on different ranks): the smallest weight counts.
  DistGraph dup = distribute(coo(2, {{0, 1, 5}, {0, 1, 2}, {0, 1, 7}}));
  EXPECT_EQ(sssp(dup, 0, options()).distance, (std::vector<double>{0, 2}));
  EXPECT_EQ(dup.edges(), 1);
}

TEST(DistGraph, HandCheckedPagerank) {
  // A star, undirected: c = (1-d)/n + d k l and l = (1-d)/n + d c / k.
  const int64_t k = 5, n = k + 1;
  std::vector<Edge> edges;
  for (int64_t v = 1; v <= k; v++) edges.push_back({0, v});
  DistGraph d = distribute(coo(n, edges, true));
  const double damping = 0.85, b = (1 - damping) / n;
  const double leaf = (b + damping * b / k) / (1 - damping * damping), centre = b + damping * k * leaf;
  PageRankResult p = pagerank(d, options());
  EXPECT_NEAR(p.rank[0], centre, 1e-9);
  for (int64_t v = 1; v <= k; v++) EXPECT_NEAR(p.rank[v], leaf, 1e-9);
  // 0 -> 1 and 1 dangling: its rank spreads over both.
  PageRankResult q = pagerank(distribute(coo(2, {{0, 1}})), options());
  const double a = (1 - damping) / 2, x0 = (a + damping / 2) / (1 + damping / 2);
  EXPECT_NEAR(q.rank[0], x0, 1e-9);
  EXPECT_NEAR(q.rank[1], 1 - x0, 1e-9);
}

TEST(DistGraph, HandCheckedComponentsAndTriangles) {
  // {0,1,2} a path, {3,4} an edge, {5} alone, {6,7,8} a triangle, large vertices first.
  DistGraph d = distribute(coo(9, {{2, 1}, {1, 0}, {4, 3}, {8, 7}, {7, 6}, {6, 8}}, true));
  EXPECT_EQ(connectedComponents(d, options()).label, (std::vector<int64_t>{0, 0, 0, 3, 3, 5, 6, 6, 6}));
  EXPECT_EQ(triangleCount(d, options()), 1);
  // K5 with self-loops, edges one way: C(5,3) = 10 triangles.
  std::vector<Edge> k5;
  for (int64_t u = 0; u < 5; u++)
    for (int64_t v = u; v < 5; v++) k5.push_back({u, v});
  EXPECT_EQ(triangleCount(distribute(coo(5, k5)), options()), 10);
  // A long path (labels travel far): one component labelled 0.
  std::vector<Edge> path;
  for (int64_t v = 39; v > 0; v--) path.push_back({v, v - 1});
  EXPECT_EQ(connectedComponents(distribute(coo(40, path)), options()).label, std::vector<int64_t>(40, 0));
}

TEST(DistGraph, RmatTakesBothDirections) {
  CooData c = generateRmat(10, 16);
  Graph g = Graph::fromCoo(c);
  DistGraph d = distribute(c);
  BfsResult r = bfs(d, 0, options());
  EXPECT_GT(r.pushSteps, 0);
  EXPECT_GT(r.pullSteps, 0);
  expectSame(g, d, {0, 5, 1023});
  expectSame(g, d, {0}, options(2));  // kernels and loops on two threads
}

TEST(DistGraph, RandomWeightsWithNegativeEdges) {
  // A DAG (edges low -> high) with weights in [-2, 5): no negative cycle, negative edges.
  std::mt19937_64 rng(7);
  const int64_t n = 300;
  std::vector<Edge> edges;
  for (int e = 0; e < 1500; e++) {
    int64_t u = static_cast<int64_t>(rng() % n), v = static_cast<int64_t>(rng() % n);
    if (u == v) continue;
    if (u > v) std::swap(u, v);
    edges.push_back({u, v, static_cast<double>(static_cast<int64_t>(rng() % 70) - 20) / 10});
  }
  CooData c = coo(n, edges);
  expectSame(Graph::fromCoo(c), distribute(c), {0, 17, 299});
}

TEST(DistGraph, NegativeCycleOnEveryRank) {
  DistGraph d = distribute(coo(4, {{0, 1, 1}, {1, 2, -3}, {2, 1, 1}, {2, 3, 1}}));
  EXPECT_THROW(sssp(d, 0, options()), NegativeCycleError);
  EXPECT_EQ(sssp(d, 3, options()).distance, (std::vector<double>{kInf, kInf, kInf, 0}));
  EXPECT_THROW(sssp(distribute(coo(1, {{0, 0, -1}})), 0, options()), NegativeCycleError);
}

TEST(DistGraph, Degenerate) {
  // No vertices: every rank owns none.
  DistGraph empty = distribute(coo(0, {}));
  EXPECT_THROW(bfs(empty, 0, options()), UserError);
  EXPECT_THROW(sssp(empty, 0, options()), UserError);
  EXPECT_TRUE(pagerank(empty, options()).rank.empty());
  EXPECT_TRUE(connectedComponents(empty, options()).label.empty());
  EXPECT_EQ(triangleCount(empty, options()), 0);
  // One vertex: more ranks than vertices (ranks past the last vertex own none).
  DistGraph one = distribute(coo(1, {}));
  EXPECT_EQ(bfs(one, 0, options()).level, (std::vector<int64_t>{0}));
  EXPECT_EQ(sssp(one, 0, options()).distance, (std::vector<double>{0}));
  EXPECT_NEAR(pagerank(one, options()).rank[0], 1.0, 1e-12);
  EXPECT_EQ(connectedComponents(one, options()).label, (std::vector<int64_t>{0}));
  EXPECT_THROW(bfs(one, 1, options()), UserError);
  EXPECT_THROW(bfs(one, -1, options()), UserError);
  // Isolated vertices among a few edges, three vertices (fewer than 4 and 6 ranks).
  CooData c = coo(3, {{2, 0}});
  expectSame(Graph::fromCoo(c), distribute(c), {0, 1, 2});
  CooData isolated = coo(50, {{10, 11}, {11, 12}, {12, 10}, {40, 41}, {49, 0}});
  expectSame(Graph::fromCoo(isolated), distribute(isolated), {0, 10, 49, 25});
  // A rectangular matrix is no graph; an edge outside the vertices is refused on every rank.
  CooData rect;
  rect.dims = {3, 4};
  EXPECT_THROW(DistGraph::fromParts(rect, Machine::world()), DimensionError);
  CooData outside;
  outside.dims = {3, 3};
  if (worldRank() == worldSize() - 1) outside.add({1, 7}, 1.0);  // one rank alone holds it
  EXPECT_THROW(DistGraph::fromParts(outside, Machine::world()), DimensionError);
  // A machine of another size.
  EXPECT_THROW(DistGraph::fromParts(c, Machine{Grid(worldSize() + 1)}), DistributionError);
}

TEST(DistGraph, SharedFilesReadInParallel) {
  int found = 0;
  for (const char* m : {"karate", "ca-GrQc"}) {
    const std::string path = std::string(TESSEL_DATA_DIR) + "/matrices/" + m + ".mtx";
    if (std::FILE* f = std::fopen(path.c_str(), "r")) {
      std::fclose(f);
    } else {
      continue;
    }
    found++;
    SCOPED_TRACE(m);
    expectSame(Graph::read(path), DistGraph::read(path, Machine::world()), {0, 7});
  }
  if (!found) GTEST_SKIP() << "no shared matrices under " << TESSEL_DATA_DIR << "/matrices";
}

TEST(DistGraph, BadFileFailsEveryRank) {
  EXPECT_THROW(DistGraph::read("/nonexistent/graph.mtx", Machine::world()), FileError);
}

}  // namespace
