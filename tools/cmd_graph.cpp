// `tessel graph`: graph algorithms on a Matrix Market file (tessel/graph.h).
//
//   tessel graph ALGO FILE [--source N]... [-o OUT.tns] [--threads N] [--time]
//
// Vertices are 1-based as in Matrix Market. Results are one "vertex value" line per
// vertex (a .tns vector): bfs levels, bfs-parents parents, sssp distances (unreachable
// vertices omitted from all three), pagerank ranks, cc labels (the smallest vertex of
// each component), bc centralities (from the --source vertices, every vertex without
// one). tc prints the triangle count. Without -o the lines go to stdout.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli_common.h"
#include "tessel/graph.h"
#include "tessel/io.h"

namespace tessel::cli {

namespace {

struct Options {
  std::string algorithm;
  std::string file;
  int64_t source = 1;
  bool sourceGiven = false;
  std::vector<int64_t> sources;  // every --source (bc takes several)
  std::string output;
  int threads = 0;
  bool time = false;
};

const char* kAlgorithms = "bfs, bfs-parents, sssp, pagerank, cc, tc, bc";

/// Vertex values as a .tns vector, 1-based; entries where `keep` is false are left out.
template <typename T, typename Keep, typename Value>
CooData vertexValues(const std::vector<T>& v, Keep keep, Value value) {
  CooData c;
  c.dims = {static_cast<int64_t>(v.size())};
  for (size_t k = 0; k < v.size(); k++)
    if (keep(v[k])) c.add({static_cast<int64_t>(k)}, value(v[k]));
  return c;
}

void printTns(const CooData& c) {
  for (int64_t e = 0; e < c.nnz(); e++) std::printf("%lld %.17g\n", static_cast<long long>(c.coords[e] + 1), c.values[e]);
}

int graphCommand(const Options& opt) {
  const std::string& a = opt.algorithm;
  if (a != "bfs" && a != "bfs-parents" && a != "sssp" && a != "pagerank" && a != "cc" && a != "tc" && a != "bc")
    throw UsageError("unknown graph algorithm '" + a + "' (algorithms: " + kAlgorithms + ")");
  const bool needsSource = a == "bfs" || a == "bfs-parents" || a == "sssp";
  if (opt.sourceGiven && !needsSource && a != "bc")
    throw UsageError("--source is for bfs, bfs-parents, sssp and bc, not " + a);
  if (opt.sources.size() > 1 && a != "bc")
    throw UsageError("--source given " + std::to_string(opt.sources.size()) + " times: only bc takes several");
  if (!opt.output.empty() && a == "tc") throw UsageError("tc prints its count; it writes no -o file");
  if (!opt.output.empty() && !hasExtension(opt.output, ".tns"))
    throw UsageError("-o file '" + opt.output + "' must end in .tns");
  graph::Options go;
  go.threads = opt.threads > 0 ? opt.threads : defaultThreads();

  auto t0 = std::chrono::steady_clock::now();
  graph::Graph g = graph::Graph::read(opt.file);
  auto t1 = std::chrono::steady_clock::now();
  if (needsSource && (opt.source < 1 || opt.source > g.vertices()))
    throw UsageError("source vertex " + std::to_string(opt.source) + " is out of range: " + opt.file + " has " +
                     std::to_string(g.vertices()) + " vertices (1 to " + std::to_string(g.vertices()) + ")");
  const int64_t s = opt.source - 1;
  for (int64_t v : opt.sources)
    if (v < 1 || v > g.vertices())
      throw UsageError("source vertex " + std::to_string(v) + " is out of range: " + opt.file + " has " +
                       std::to_string(g.vertices()) + " vertices (1 to " + std::to_string(g.vertices()) + ")");

  CooData result;
  int64_t traversed = 0;
  int64_t triangles = -1;
  auto one = [](int64_t v) { return static_cast<double>(v + 1); };
  if (a == "bfs" || a == "bfs-parents") {
    graph::BfsResult r = graph::bfs(g, s, go);
    traversed = r.edgesTraversed;
    auto reached = [](int64_t v) { return v >= 0; };
    result = a == "bfs" ? vertexValues(r.level, reached, [](int64_t v) { return static_cast<double>(v); })
                        : vertexValues(r.parent, reached, one);
  } else if (a == "sssp") {
    graph::SsspResult r = graph::sssp(g, s, go);
    traversed = r.edgesTraversed;
    result = vertexValues(r.distance, [](double d) { return !std::isinf(d); }, [](double d) { return d; });
  } else if (a == "pagerank") {
    graph::PageRankResult r = graph::pagerank(g, go);
    traversed = r.edgesTraversed;
    result = vertexValues(r.rank, [](double) { return true; }, [](double v) { return v; });
  } else if (a == "cc") {
    graph::ComponentsResult r = graph::connectedComponents(g, go);
    traversed = r.edgesTraversed;
    result = vertexValues(r.label, [](int64_t) { return true; }, one);
  } else if (a == "bc") {
    std::vector<int64_t> from;
    for (int64_t v : opt.sources) from.push_back(v - 1);
    if (from.empty())  // exact betweenness: every vertex a source
      for (int64_t v = 0; v < g.vertices(); v++) from.push_back(v);
    graph::BcResult r = graph::betweenness(g, from, go);
    traversed = r.edgesTraversed;
    result = vertexValues(r.centrality, [](double) { return true; }, [](double v) { return v; });
  } else {
    triangles = graph::triangleCount(g, go);
    traversed = g.edges();
  }
  auto t2 = std::chrono::steady_clock::now();

  if (triangles >= 0)
    std::printf("%lld\n", static_cast<long long>(triangles));
  else if (!opt.output.empty())
    writeTns(opt.output, result, false);  // atomic: written under a temporary name, then renamed
  else
    printTns(result);
  if (opt.time) {
    double compute = std::chrono::duration<double>(t2 - t1).count();
    std::fprintf(stderr, "graph: %lld vertices, %lld edges; threads: %d\n", static_cast<long long>(g.vertices()),
                 static_cast<long long>(g.edges()), go.threads);
    std::fprintf(stderr, "read: %.3f ms\n", millis(t1 - t0));
    std::fprintf(stderr, "compute: %.3f ms (compiling included; cached kernels load from the JIT cache)\n",
                 compute * 1e3);
    std::fprintf(stderr, "edges traversed: %lld (%.3g edges/s)\n", static_cast<long long>(traversed),
                 compute > 0 ? static_cast<double>(traversed) / compute : 0.0);
  }
  return 0;
}

}  // namespace

void registerGraph(CLI::App& app, Action& action) {
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "graph",
      "Run a graph algorithm on a Matrix Market file (vertices 1-based), e.g.\n"
      "  tessel graph bfs G.mtx --source 1 -o levels.tns\n"
      "  tessel graph tc G.mtx --threads 2\n"
      "Algorithms: bfs (levels), bfs-parents, sssp (min_plus Bellman-Ford; a negative cycle is an error),\n"
      "pagerank (damping 0.85, L1 change < 1e-9, dangling vertices' rank spread evenly as in GAP),\n"
      "cc (labels: smallest vertex of each component), tc (triangle count, printed),\n"
      "bc (betweenness centrality by hops from the --source vertices, repeat it for a batch; none: every vertex;\n"
      "unnormalized, not halved on symmetric files).\n"
      "bfs, sssp and pagerank follow edges row -> column; cc and tc use the undirected graph.");
  cmd->add_option("algorithm", opt->algorithm, std::string("Algorithm: ") + kAlgorithms)->required();
  cmd->add_option("file", opt->file, "Graph: a square Matrix Market file (.mtx)")->required();
  cmd->add_option("--source", opt->source,
                  "Source vertex of bfs, bfs-parents and sssp (1-based; default 1); bc: one of its sources (repeat "
                  "for a batch; default: every vertex)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
      ->each([opt](const std::string& v) {
        opt->sourceGiven = true;
        try {
          opt->sources.push_back(std::stoll(v));
        } catch (const std::exception&) {
          throw CLI::ValidationError("'" + v + "' is not a vertex number");
        }
      });
  cmd->add_option("-o,--output", opt->output, "Write the vertex values to this .tns file (default: stdout)");
  cmd->add_option("--threads", opt->threads, "Threads (default OMP_NUM_THREADS, else 1)")
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--time", opt->time, "Print read and compute times and edges traversed per second to stderr");
  cmd->callback([&action, opt] { action = [opt] { return graphCommand(*opt); }; });
}

}  // namespace tessel::cli
