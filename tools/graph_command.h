// `tessel graph`'s pieces shared by its one-node path (cmd_graph.cpp) and its
// distributed path (cmd_graph_distributed.cpp): the options, the algorithm dispatch (the
// same for a Graph and a DistGraph: tessel/graph.h overloads every algorithm) and how a
// result is printed or written.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "cli_common.h"
#include "tessel/graph.h"

namespace tessel::cli {

struct GraphOptions {
  std::string algorithm;
  std::string file;
  int64_t source = 1;                 ///< the last --source
  bool sourceGiven = false;
  std::vector<int64_t> sources;       ///< every --source, in order (bc takes several)
  std::string output;
  int threads = 0;
  bool time = false;
  std::string machine;  ///< -m: ranks (empty: one node unless a launcher started several)
};

/// Checks what needs no file (the algorithm, --source's use, -o); UsageError otherwise.
/// Returns whether the algorithm takes a source vertex.
bool checkGraphArgs(const GraphOptions& opt);
/// UsageError unless every --source (1-based) is a vertex of a graph of n vertices.
void checkSource(const GraphOptions& opt, int64_t n);

/// What an algorithm produced: vertex values (a 1-based .tns vector) or a triangle count.
struct GraphOutput {
  CooData values;
  int64_t traversed = 0;
  int64_t triangles = -1;  ///< tc only
};

/// Vertex values as a .tns vector, 1-based; entries where `keep` is false are left out.
template <typename T, typename Keep, typename Value>
CooData vertexValues(const std::vector<T>& v, Keep keep, Value value) {
  CooData c;
  c.dims = {static_cast<int64_t>(v.size())};
  for (size_t k = 0; k < v.size(); k++)
    if (keep(v[k])) c.add({static_cast<int64_t>(k)}, value(v[k]));
  return c;
}

/// Runs opt.algorithm on `g` (a graph::Graph, or a graph::DistGraph: collective).
template <typename G>
GraphOutput runGraphAlgorithm(const GraphOptions& opt, const G& g, const graph::Options& go) {
  const std::string& a = opt.algorithm;
  const int64_t s = opt.source - 1;
  GraphOutput out;
  auto one = [](int64_t v) { return static_cast<double>(v + 1); };
  if (a == "bfs" || a == "bfs-parents") {
    graph::BfsResult r = graph::bfs(g, s, go);
    out.traversed = r.edgesTraversed;
    auto reached = [](int64_t v) { return v >= 0; };
    out.values = a == "bfs" ? vertexValues(r.level, reached, [](int64_t v) { return static_cast<double>(v); })
                            : vertexValues(r.parent, reached, one);
  } else if (a == "sssp") {
    graph::SsspResult r = graph::sssp(g, s, go);
    out.traversed = r.edgesTraversed;
    out.values = vertexValues(r.distance, [](double d) { return !std::isinf(d); }, [](double d) { return d; });
  } else if (a == "pagerank") {
    graph::PageRankResult r = graph::pagerank(g, go);
    out.traversed = r.edgesTraversed;
    out.values = vertexValues(r.rank, [](double) { return true; }, [](double v) { return v; });
  } else if (a == "cc") {
    graph::ComponentsResult r = graph::connectedComponents(g, go);
    out.traversed = r.edgesTraversed;
    out.values = vertexValues(r.label, [](int64_t) { return true; }, one);
  } else if (a == "bc") {
    if constexpr (std::is_same_v<G, graph::Graph>) {  // one node only (checked before)
      std::vector<int64_t> from;
      for (int64_t v : opt.sources) from.push_back(v - 1);
      if (from.empty())  // exact betweenness: every vertex a source
        for (int64_t v = 0; v < g.vertices(); v++) from.push_back(v);
      graph::BcResult r = graph::betweenness(g, from, go);
      out.traversed = r.edgesTraversed;
      out.values = vertexValues(r.centrality, [](double) { return true; }, [](double v) { return v; });
    }
  } else {
    out.triangles = graph::triangleCount(g, go);
    out.traversed = g.edges();
  }
  return out;
}

/// Prints the triangle count, or writes the values to -o (atomically), or prints them.
void emitGraphOutput(const GraphOptions& opt, const GraphOutput& out);

/// The distributed path (cmd_graph_distributed.cpp): every rank runs it.
int graphDistributed(const GraphOptions& opt);

}  // namespace tessel::cli
