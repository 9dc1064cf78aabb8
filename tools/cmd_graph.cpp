// `tessel graph`: graph algorithms on a Matrix Market file (tessel/graph.h).
//
//   tessel graph ALGO FILE [--source N]... [-o OUT.tns] [--threads N] [--time] [-m RANKS]
//
// Vertices are 1-based as in Matrix Market. Results are one "vertex value" line per
// vertex (a .tns vector): bfs levels, bfs-parents parents, sssp distances (unreachable
// vertices omitted from all three), pagerank ranks, cc labels (the smallest vertex of
// each component), bc centralities (from the --source vertices, every vertex without
// one; one node only). tc prints the triangle count. Without -o the lines go to stdout.
// With -m (or under a launcher with several ranks) the distributed algorithms run
// (cmd_graph_distributed.cpp) and print or write the same results.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "graph_command.h"
#include "run_distributed.h"
#include "tessel/io.h"

namespace tessel::cli {

namespace {

const char* kAlgorithms = "bfs, bfs-parents, sssp, pagerank, cc, tc, bc";

void printTns(const CooData& c) {
  for (int64_t e = 0; e < c.nnz(); e++) std::printf("%lld %.17g\n", static_cast<long long>(c.coords[e] + 1), c.values[e]);
}

int graphCommand(const GraphOptions& opt) {
  if (wantsDistributed(opt.machine)) return graphDistributed(opt);
  checkGraphArgs(opt);
  graph::Options go;
  go.threads = opt.threads > 0 ? opt.threads : defaultThreads();

  auto t0 = std::chrono::steady_clock::now();
  graph::Graph g = graph::Graph::read(opt.file);
  auto t1 = std::chrono::steady_clock::now();
  checkSource(opt, g.vertices());
  GraphOutput out = runGraphAlgorithm(opt, g, go);
  auto t2 = std::chrono::steady_clock::now();
  emitGraphOutput(opt, out);
  if (opt.time) {
    double compute = std::chrono::duration<double>(t2 - t1).count();
    std::fprintf(stderr, "graph: %lld vertices, %lld edges; threads: %d\n", static_cast<long long>(g.vertices()),
                 static_cast<long long>(g.edges()), go.threads);
    std::fprintf(stderr, "read: %.3f ms\n", millis(t1 - t0));
    std::fprintf(stderr, "compute: %.3f ms (compiling included; cached kernels load from the JIT cache)\n",
                 compute * 1e3);
    std::fprintf(stderr, "edges traversed: %lld (%.3g edges/s)\n", static_cast<long long>(out.traversed),
                 compute > 0 ? static_cast<double>(out.traversed) / compute : 0.0);
  }
  return 0;
}

}  // namespace

bool checkGraphArgs(const GraphOptions& opt) {
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
  return needsSource;
}

void checkSource(const GraphOptions& opt, int64_t n) {
  const std::string& a = opt.algorithm;
  const bool needsSource = a == "bfs" || a == "bfs-parents" || a == "sssp";
  std::vector<int64_t> checked = opt.sources;
  if (needsSource && checked.empty()) checked.push_back(opt.source);
  for (int64_t v : checked)
    if (v < 1 || v > n)
      throw UsageError("source vertex " + std::to_string(v) + " is out of range: " + opt.file + " has " +
                       std::to_string(n) + " vertices (1 to " + std::to_string(n) + ")");
}

void emitGraphOutput(const GraphOptions& opt, const GraphOutput& out) {
  if (out.triangles >= 0)
    std::printf("%lld\n", static_cast<long long>(out.triangles));
  else if (!opt.output.empty())
    writeTns(opt.output, out.values, false);  // atomic: written under a temporary name, then renamed
  else
    printTns(out.values);
}

void registerGraph(CLI::App& app, Action& action) {
  auto opt = std::make_shared<GraphOptions>();
  CLI::App* cmd = app.add_subcommand(
      "graph",
      "Run a graph algorithm on a Matrix Market file (vertices 1-based), e.g.\n"
      "  tessel graph bfs G.mtx --source 1 -o levels.tns\n"
      "  tessel graph tc G.mtx --threads 2\n"
      "  mpirun -np 4 tessel graph bfs G.mtx --source 1 -m 4 -o levels.tns\n"
      "Algorithms: bfs (levels), bfs-parents, sssp (min_plus Bellman-Ford; a negative cycle is an error),\n"
      "pagerank (damping 0.85, L1 change < 1e-9, dangling vertices' rank spread evenly as in GAP),\n"
      "cc (labels: smallest vertex of each component), tc (triangle count, printed),\n"
      "bc (betweenness centrality by hops from the --source vertices, repeat it for a batch; none: every vertex;\n"
      "unnormalized, not halved on symmetric files; one node).\n"
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
  cmd->add_option("-m,--machine", opt->machine,
                  "Ranks of a distributed run (start with mpirun -np N; must match the ranks running): "
                  "vertices in row blocks, the same results as one node");
  cmd->add_flag("--time", opt->time, "Print read and compute times and edges traversed per second to stderr");
  cmd->callback([&action, opt] { action = [opt] { return graphCommand(*opt); }; });
}

}  // namespace tessel::cli
