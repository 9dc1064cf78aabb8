// The graph library (tessel/graph.h) on small hand-checked graphs, at 1 and 2 threads:
// a path, a star, negative edges and cycles, components, self-loops, the empty graph,
// one vertex, and an R-MAT graph whose BFS takes both directions (checked against a
// plain queue BFS). tests/oracle/graph_oracle.py checks the tool against NetworkX.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <limits>

#include "tessel/generate.h"
#include "tessel/graph.h"

using namespace tessel;
using namespace tessel::graph;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Edge {
  int64_t from, to;
  double weight = 1;
};

Graph makeGraph(int64_t n, const std::vector<Edge>& edges, bool undirected = false) {
  CooData c;
  c.dims = {n, n};
  for (const Edge& e : edges) {
    c.add({e.from, e.to}, e.weight);
    if (undirected && e.from != e.to) c.add({e.to, e.from}, e.weight);
  }
  return Graph::fromCoo(c);
}

class GraphTest : public ::testing::TestWithParam<int> {
 protected:
  Options opt() const {
    Options o;
    o.threads = GetParam();
    o.grain = 0;  // small graphs too run their steps on every thread
    return o;
  }
};

TEST_P(GraphTest, DirectedPath) {
  Graph g = makeGraph(4, {{0, 1}, {1, 2}, {2, 3}});
  BfsResult r = bfs(g, 0, opt());
  EXPECT_EQ(r.level, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(r.parent, (std::vector<int64_t>{0, 0, 1, 2}));
  r = bfs(g, 2, opt());  // edges go one way: 0 and 1 are unreachable
  EXPECT_EQ(r.level, (std::vector<int64_t>{-1, -1, 0, 1}));
  EXPECT_EQ(r.parent, (std::vector<int64_t>{-1, -1, 2, 2}));
  EXPECT_EQ(sssp(g, 1, opt()).distance, (std::vector<double>{kInf, 0, 1, 2}));
  EXPECT_EQ(connectedComponents(g, opt()).label, (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(triangleCount(g, opt()), 0);
}

TEST_P(GraphTest, Star) {
  const int64_t k = 5, n = k + 1;  // centre 0, leaves 1..5, undirected
  std::vector<Edge> edges;
  for (int64_t v = 1; v <= k; v++) edges.push_back({0, v});
  Graph g = makeGraph(n, edges, true);
  BfsResult r = bfs(g, 3, opt());
  EXPECT_EQ(r.level, (std::vector<int64_t>{1, 2, 2, 0, 2, 2}));
  EXPECT_EQ(r.parent, (std::vector<int64_t>{3, 0, 0, 3, 0, 0}));
  EXPECT_EQ(connectedComponents(g, opt()).label, std::vector<int64_t>(n, 0));
  EXPECT_EQ(triangleCount(g, opt()), 0);
  // PageRank by hand: c = (1-d)/n + d k l and l = (1-d)/n + d c / k (no dangling vertex).
  const double d = 0.85, b = (1 - d) / n;
  const double leaf = (b + d * b / k) / (1 - d * d), centre = b + d * k * leaf;
  PageRankResult p = pagerank(g, opt());
  EXPECT_NEAR(p.rank[0], centre, 1e-9);
  for (int64_t v = 1; v <= k; v++) EXPECT_NEAR(p.rank[v], leaf, 1e-9);
  EXPECT_GT(p.iterations, 1);
}

TEST_P(GraphTest, DanglingVerticesSpreadTheirRank) {
  // 0 -> 1, and 1 has no out-edges: its rank goes to every vertex evenly (GAP).
  Graph g = makeGraph(2, {{0, 1}});
  PageRankResult p = pagerank(g, opt());
  // r0 = (1-d)/2 + d r1 / 2 and r1 = (1-d)/2 + d r0 + d r1 / 2.
  // The ranks sum to 1, so r0 = a + d (1 - r0) / 2 with a = (1-d)/2.
  const double d = 0.85, a = (1 - d) / 2;
  const double x0 = (a + d / 2) / (1 + d / 2);
  EXPECT_NEAR(p.rank[0], x0, 1e-9);
  EXPECT_NEAR(p.rank[1], 1 - x0, 1e-9);
}

TEST_P(GraphTest, NegativeEdge) {
  Graph g = makeGraph(5, {{0, 1, 4}, {0, 2, 1}, {2, 1, -2}, {1, 3, 1}, {4, 0, 1}});
  SsspResult r = sssp(g, 0, opt());
  EXPECT_EQ(r.distance, (std::vector<double>{0, -1, 1, 0, kInf}));
  // Duplicate edges: the smallest weight counts.
  Graph dup = makeGraph(2, {{0, 1, 5}, {0, 1, 2}, {0, 1, 7}});
  EXPECT_EQ(sssp(dup, 0, opt()).distance, (std::vector<double>{0, 2}));
}

TEST_P(GraphTest, NegativeCycle) {
  Graph g = makeGraph(4, {{0, 1, 1}, {1, 2, -3}, {2, 1, 1}, {2, 3, 1}});
  EXPECT_THROW(sssp(g, 0, opt()), NegativeCycleError);
  // Not reachable from vertex 3: no error.
  EXPECT_EQ(sssp(g, 3, opt()).distance, (std::vector<double>{kInf, kInf, kInf, 0}));
  // A negative self-loop is a negative cycle; a positive one changes nothing.
  EXPECT_THROW(sssp(makeGraph(1, {{0, 0, -1}}), 0, opt()), NegativeCycleError);
  EXPECT_EQ(sssp(makeGraph(2, {{0, 0, 3}, {0, 1, 2}}), 0, opt()).distance, (std::vector<double>{0, 2}));
}

TEST_P(GraphTest, DisconnectedComponents) {
  // {0,1,2} a path, {3,4} an edge, {5} alone, {6,7,8} a triangle: given with large
  // vertices first, so labels must come out as the smallest vertex, not the first seen.
  Graph g = makeGraph(9, {{2, 1}, {1, 0}, {4, 3}, {8, 7}, {7, 6}, {6, 8}}, true);
  EXPECT_EQ(connectedComponents(g, opt()).label, (std::vector<int64_t>{0, 0, 0, 3, 3, 5, 6, 6, 6}));
  EXPECT_EQ(triangleCount(g, opt()), 1);
  BfsResult r = bfs(g, 8, opt());
  EXPECT_EQ(r.level, (std::vector<int64_t>{-1, -1, -1, -1, -1, -1, 1, 1, 0}));
}

TEST_P(GraphTest, SelfLoopsAreIgnoredByCcAndTc) {
  // Triangle 0-1-2 with self-loops, and 3 with only a self-loop; directed edges one way.
  Graph g = makeGraph(4, {{0, 0}, {0, 1}, {1, 2}, {2, 0}, {1, 1}, {3, 3}});
  EXPECT_EQ(triangleCount(g, opt()), 1);
  EXPECT_EQ(connectedComponents(g, opt()).label, (std::vector<int64_t>{0, 0, 0, 3}));
  EXPECT_EQ(bfs(g, 1, opt()).level, (std::vector<int64_t>{2, 0, 1, -1}));
  // K4 plus self-loops everywhere: 4 triangles.
  std::vector<Edge> k4;
  for (int64_t u = 0; u < 4; u++)
    for (int64_t v = 0; v < 4; v++) k4.push_back({u, v});
  EXPECT_EQ(triangleCount(makeGraph(4, k4), opt()), 4);
}

TEST_P(GraphTest, EmptyAndOneVertex) {
  Graph empty = makeGraph(0, {});
  EXPECT_THROW(bfs(empty, 0, opt()), UserError);
  EXPECT_THROW(sssp(empty, 0, opt()), UserError);
  EXPECT_TRUE(pagerank(empty, opt()).rank.empty());
  EXPECT_TRUE(connectedComponents(empty, opt()).label.empty());
  EXPECT_EQ(triangleCount(empty, opt()), 0);

  Graph one = makeGraph(1, {});
  EXPECT_EQ(bfs(one, 0, opt()).level, (std::vector<int64_t>{0}));
  EXPECT_EQ(sssp(one, 0, opt()).distance, (std::vector<double>{0}));
  EXPECT_NEAR(pagerank(one, opt()).rank[0], 1.0, 1e-12);
  EXPECT_EQ(connectedComponents(one, opt()).label, (std::vector<int64_t>{0}));
  EXPECT_EQ(triangleCount(one, opt()), 0);
  EXPECT_THROW(bfs(one, 1, opt()), UserError);
  EXPECT_THROW(bfs(one, -1, opt()), UserError);
  // Vertices without edges: each its own component, rank spread evenly.
  Graph three = makeGraph(3, {});
  EXPECT_EQ(connectedComponents(three, opt()).label, (std::vector<int64_t>{0, 1, 2}));
  for (double x : pagerank(three, opt()).rank) EXPECT_NEAR(x, 1.0 / 3, 1e-12);
}

TEST_P(GraphTest, BfsTakesBothDirectionsOnRmat) {
  CooData c = generateRmat(10, 16);
  Graph g = Graph::fromCoo(c);
  const int64_t n = g.vertices();
  std::vector<std::vector<int64_t>> out(n);
  for (int64_t e = 0; e < c.nnz(); e++) out[c.coords[2 * e]].push_back(c.coords[2 * e + 1]);
  std::vector<int64_t> expect(n, -1);
  std::deque<int64_t> queue{0};
  expect[0] = 0;
  while (!queue.empty()) {
    int64_t u = queue.front();
    queue.pop_front();
    for (int64_t v : out[u])
      if (expect[v] < 0) expect[v] = expect[u] + 1, queue.push_back(v);
  }
  BfsResult r = bfs(g, 0, opt());
  EXPECT_EQ(r.level, expect);
  EXPECT_GT(r.pushSteps, 0);
  EXPECT_GT(r.pullSteps, 0);
  for (int64_t v = 0; v < n; v++) {
    if (v == 0 || r.level[v] < 0) continue;
    int64_t p = r.parent[v];
    ASSERT_GE(p, 0);
    EXPECT_EQ(r.level[p], r.level[v] - 1) << "vertex " << v;
    bool edge = false;
    for (int64_t w : out[p]) edge = edge || w == v;
    EXPECT_TRUE(edge) << "parent " << p << " of " << v << " has no edge to it";
  }
}

TEST(Graph, BadInput) {
  CooData rect;
  rect.dims = {3, 4};
  EXPECT_THROW(Graph::fromCoo(rect), DimensionError);
  Graph g = makeGraph(2, {{0, 1}});
  Options zero;
  zero.threads = 0;
  EXPECT_THROW(bfs(g, 0, zero), UserError);
  EXPECT_THROW(pagerank(g, {}, 1.5), UserError);
}

INSTANTIATE_TEST_SUITE_P(Threads, GraphTest, ::testing::Values(1, 2));

}  // namespace
