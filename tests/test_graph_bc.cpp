// Betweenness centrality (tessel::graph::betweenness) on hand-computed graphs and against
// the definition itself on R-MAT graphs: sum over sources s and targets t of
// sigma_st(v) / sigma_st, with sigma_st(v) = sigma_sv * sigma_vt where v lies on a
// shortest s-t path, from one plain BFS per vertex (no dependency accumulation, unlike
// the library's Brandes sweeps). tests/oracle/graph_oracle.py checks the tool against
// NetworkX.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>

#include "tessel/error.h"
#include "tessel/generate.h"
#include "tessel/graph.h"

using namespace tessel;
using namespace tessel::graph;

namespace {

Graph makeGraph(int64_t n, const std::vector<std::pair<int64_t, int64_t>>& edges, bool undirected = false) {
  CooData c;
  c.dims = {n, n};
  for (auto [u, v] : edges) {
    c.add({u, v}, 1.0);
    if (undirected && u != v) c.add({v, u}, 1.0);
  }
  return Graph::fromCoo(c);
}

void expectNear(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t v = 0; v < want.size(); v++) EXPECT_NEAR(got[v], want[v], 1e-12 * (1 + std::abs(want[v]))) << "vertex " << v;
}

/// Hop distances and shortest-path counts from s over `adj`.
void bfsCounts(const std::vector<std::vector<int64_t>>& adj, int64_t s, std::vector<int64_t>& dist,
               std::vector<double>& sigma) {
  dist.assign(adj.size(), -1);
  sigma.assign(adj.size(), 0);
  dist[s] = 0;
  sigma[s] = 1;
  std::deque<int64_t> q{s};
  while (!q.empty()) {
    int64_t u = q.front();
    q.pop_front();
    for (int64_t v : adj[u]) {
      if (dist[v] < 0) {
        dist[v] = dist[u] + 1;
        q.push_back(v);
      }
      if (dist[v] == dist[u] + 1) sigma[v] += sigma[u];
    }
  }
}

/// Betweenness by its definition (pair dependencies summed over every target).
std::vector<double> definitionBc(const CooData& c, const std::vector<int64_t>& sources) {
  const int64_t n = c.dims[0];
  std::vector<std::vector<int64_t>> adj(n);
  for (int64_t e = 0; e < c.nnz(); e++) {
    int64_t u = c.coords[2 * e], v = c.coords[2 * e + 1];
    if (std::find(adj[u].begin(), adj[u].end(), v) == adj[u].end()) adj[u].push_back(v);
  }
  std::vector<std::vector<int64_t>> dist(n);
  std::vector<std::vector<double>> sigma(n);
  for (int64_t v = 0; v < n; v++) bfsCounts(adj, v, dist[v], sigma[v]);
  std::vector<double> bc(n, 0.0);
  for (int64_t s : sources)
    for (int64_t v = 0; v < n; v++) {
      if (v == s || dist[s][v] < 0) continue;
      for (int64_t t = 0; t < n; t++)
        if (t != v && t != s && dist[v][t] >= 0 && dist[s][t] == dist[s][v] + dist[v][t])
          bc[v] += sigma[s][v] * sigma[v][t] / sigma[s][t];
    }
  return bc;
}

TEST(Betweenness, DirectedPath) {
  // 0 -> 1 -> 2 -> 3: from 0, vertex 1 lies on the paths to 2 and 3, vertex 2 on the one to 3.
  Graph g = makeGraph(4, {{0, 1}, {1, 2}, {2, 3}});
  BcResult r = betweenness(g, {0});
  expectNear(r.centrality, {0, 2, 1, 0});
  EXPECT_EQ(r.levels, 3);
  expectNear(betweenness(g, {0, 1, 2, 3}).centrality, {0, 2, 2, 0});
  expectNear(betweenness(g, {3}).centrality, {0, 0, 0, 0});  // nothing is reachable from 3
}

TEST(Betweenness, DiamondSplitsPaths) {
  // 0 -> {1, 2} -> 3 -> 4: two shortest paths to 3 and to 4, each through 1 or 2.
  Graph g = makeGraph(5, {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 4}});
  expectNear(betweenness(g, {0}).centrality, {0, 1, 1, 1, 0});
}

TEST(Betweenness, UndirectedStarIsNotHalved) {
  // Centre 0, leaves 1..4: from every leaf, the centre is on the paths to the 3 others.
  Graph g = makeGraph(5, {{0, 1}, {0, 2}, {0, 3}, {0, 4}}, true);
  expectNear(betweenness(g, {1, 2, 3, 4}).centrality, {12, 0, 0, 0, 0});
  expectNear(betweenness(g, {0}).centrality, {0, 0, 0, 0, 0});
}

TEST(Betweenness, DegenerateGraphs) {
  expectNear(betweenness(makeGraph(1, {}), {0}).centrality, {0});
  expectNear(betweenness(makeGraph(3, {{1, 1}}), {1}).centrality, {0, 0, 0});  // a self-loop only
  expectNear(betweenness(makeGraph(3, {{0, 1}}), {}).centrality, {0, 0, 0});   // no sources
  // A source given twice counts twice.
  expectNear(betweenness(makeGraph(3, {{0, 1}, {1, 2}}), {0, 0}).centrality, {0, 2, 0});
}

TEST(Betweenness, SourceOutOfRange) {
  Graph g = makeGraph(3, {{0, 1}});
  EXPECT_THROW(betweenness(g, {3}), UserError);
  EXPECT_THROW(betweenness(g, {0, -1}), UserError);
}

TEST(Betweenness, ThreadsGiveTheSameBits) {
  CooData c = generateRmat(9, 8, 0.57, 0.19, 0.19, 5);
  Graph g = Graph::fromCoo(c);
  std::vector<int64_t> sources;
  for (int64_t s = 0; s < 37; s++) sources.push_back((s * 131) % 512);
  std::vector<double> one = betweenness(g, sources).centrality;
  for (int threads : {2, 3, 8}) {
    Options o;
    o.threads = threads;
    EXPECT_EQ(betweenness(g, sources, o).centrality, one) << threads << " threads";
  }
  EXPECT_THROW(betweenness(g, sources, Options{.threads = 0}), UserError);
}

TEST(Betweenness, RmatAgainstDefinition) {
  for (uint64_t seed : {3u, 4u}) {
    CooData c = generateRmat(8, 6, 0.57, 0.19, 0.19, seed);
    for (double& w : c.values) w = 3.5;  // weights are ignored: hops count
    Graph g = Graph::fromCoo(c);
    std::vector<int64_t> sources = {0, 1, 7, 100, 255};
    std::vector<double> want = definitionBc(c, sources);
    ASSERT_GT(*std::max_element(want.begin(), want.end()), 10.0);  // paths do cross vertices
    expectNear(betweenness(g, sources).centrality, want);
  }
}

}  // namespace
