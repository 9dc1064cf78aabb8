// Graph algorithms: tessel's graph library (tessel/graph.h) beside SuiteSparse:GraphBLAS
// written the LAGraph way (bench/peers/graphblas_graph.cpp), same inputs, same sources,
// 1 and 2 threads, medians of --reps interleaved runs after one warm-up (which compiles
// tessel's kernels; GraphBLAS's AT and S are built before timing, as LAGraph caches them).
// Results are compared (levels, distances, ranks within 1e-6, labels, counts).
//
//   bench_graph [--threads 1,2] [--reps 5] [--rmat 16,17,18] [--graphs ca-GrQc,...]
//               [--algos bfs,sssp,pagerank,cc,tc]
//
// Edges traversed (the edges/s columns, the same count for both systems): bfs, the
// out-edges of the reached vertices (Graph500); sssp, cc and tc, the graph's edges;
// pagerank, edges times tessel's iterations. ratio = GraphBLAS time / tessel time.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "peers/graphblas_graph.h"
#include "tessel/generate.h"
#include "tessel/graph.h"
#include "tessel/io.h"

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');)
    if (!x.empty()) out.push_back(x);
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

/// Median seconds of `reps` runs of f and of g, interleaved (f, g, f, g, ...) after one
/// untimed warm-up of each, so that both see the same load on a shared machine.
std::pair<double, double> timePair(int reps, const std::function<void()>& f, const std::function<void()>& g) {
  f();
  g();
  std::vector<double> tf, tg;
  for (int r = 0; r < reps; r++) {
    auto t0 = Clock::now();
    f();
    auto t1 = Clock::now();
    g();
    auto t2 = Clock::now();
    tf.push_back(std::chrono::duration<double>(t1 - t0).count());
    tg.push_back(std::chrono::duration<double>(t2 - t1).count());
  }
  return {median(tf), median(tg)};
}

/// GAP's weights for generated graphs: integers 1..255 from a hash of the edge.
void weighRmat(tessel::CooData& c) {
  for (int64_t e = 0; e < c.nnz(); e++) {
    uint64_t x = static_cast<uint64_t>(c.coords[2 * e]) * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(c.coords[2 * e + 1]);
    x ^= x >> 31, x *= 0xBF58476D1CE4E5B9ull, x ^= x >> 29;
    c.values[e] = static_cast<double>(1 + x % 255);
  }
}

struct Input {
  std::string name;
  tessel::CooData coo;
};

struct Row {
  std::string graph, algo;
  int threads;
  double tessel, graphblas;
  int64_t traversed;
  bool agree;
};

}  // namespace

int main(int argc, char** argv) {
  // Idle OpenMP workers spin, as in bench_kernels: on this kind of VM waking a sleeping
  // worker takes a timer tick (about 8 ms), which would dominate 2-thread steps of both
  // systems. libgomp reads the variable when it loads: set it and re-execute once.
  if (!std::getenv("OMP_WAIT_POLICY")) {
    setenv("OMP_WAIT_POLICY", "active", 1);
    execv("/proc/self/exe", argv);
    std::perror("bench_graph: re-exec with OMP_WAIT_POLICY=active failed; continuing");
  }
  std::vector<int> threads = {1, 2};
  int reps = 5;
  std::vector<int> scales = {16, 17, 18};
  std::vector<std::string> graphs = {"ca-GrQc", "hep-th", "wiki-Vote", "ca-AstroPh", "luxembourg_osm"};
  std::set<std::string> algos = {"bfs", "sssp", "pagerank", "cc", "tc"};
  for (int k = 1; k < argc; k++) {
    std::string a = argv[k];
    std::string v = k + 1 < argc ? argv[k + 1] : "";
    if (a == "--threads") {
      threads.clear();
      for (auto& x : splitList(v)) threads.push_back(std::stoi(x));
      k++;
    } else if (a == "--reps") {
      reps = std::stoi(v), k++;
    } else if (a == "--rmat") {
      scales.clear();
      for (auto& x : splitList(v)) scales.push_back(std::stoi(x));
      k++;
    } else if (a == "--graphs") {
      graphs = splitList(v), k++;
    } else if (a == "--algos") {
      auto l = splitList(v);
      algos = std::set<std::string>(l.begin(), l.end());
      k++;
    } else {
      std::fprintf(stderr,
                   "usage: bench_graph [--threads 1,2] [--reps N] [--rmat 16,17,18] [--graphs a,b] "
                   "[--algos bfs,sssp,pagerank,cc,tc]\n");
      return 2;
    }
  }
  std::printf("OMP_WAIT_POLICY=%s\n", std::getenv("OMP_WAIT_POLICY"));
  std::printf("GraphBLAS: %s\n", bench::gb::installed() ? bench::gb::version().c_str() : "not installed");

  std::vector<Input> inputs;
  const std::string dir = std::string(TESSEL_DATA_DIR) + "/matrices/";
  for (const auto& g : graphs) {
    if (g.empty() || g == "none") continue;
    if (!std::filesystem::exists(dir + g + ".mtx")) {
      std::printf("%s: not found in %s, skipped\n", g.c_str(), dir.c_str());
      continue;
    }
    inputs.push_back({g, tessel::readMtx(dir + g + ".mtx").data});
  }
  for (int s : scales) {
    tessel::CooData c = tessel::generateRmat(s, 16);
    weighRmat(c);
    inputs.push_back({"rmat" + std::to_string(s), std::move(c)});
  }

  std::vector<Row> rows;
  std::printf("%-15s %-8s %3s %11s %11s %10s %10s %7s %s\n", "graph", "algo", "thr", "tessel_ms", "graphblas_ms",
              "tessel_e/s", "grb_e/s", "ratio", "agree");
  for (const Input& in : inputs) {
    tessel::graph::Graph g = tessel::graph::Graph::fromCoo(in.coo);
    auto gb = bench::gb::load(in.coo);
    // The source: the vertex of largest out-degree (reaches the bulk of skewed graphs).
    std::vector<int64_t> deg(g.vertices(), 0);
    for (int64_t e = 0; e < in.coo.nnz(); e++) deg[in.coo.coords[2 * e]]++;
    const int64_t source = std::max_element(deg.begin(), deg.end()) - deg.begin();
    const bool hasNegative = std::any_of(in.coo.values.begin(), in.coo.values.end(), [](double w) { return w < 0; });
    for (int t : threads) {
      tessel::graph::Options o;
      o.threads = t;
      bench::gb::setThreads(t);
      auto add = [&](const char* algo, double ts, double gs, int64_t traversed, bool agree) {
        rows.push_back({in.name, algo, t, ts, gs, traversed, agree});
        const Row& r = rows.back();
        std::printf("%-15s %-8s %3d %11.3f %11.3f %10.3g %10.3g %7.2f %s\n", r.graph.c_str(), r.algo.c_str(), t,
                    ts * 1e3, gs * 1e3, traversed / ts, traversed / gs, gs / ts, agree ? "yes" : "NO");
        std::fflush(stdout);
      };
      if (algos.count("bfs")) {
        tessel::graph::BfsResult r;
        std::vector<int64_t> level, parent;
        auto [ts, gs] = timePair(
            reps, [&] { r = tessel::graph::bfs(g, source, o); }, [&] { parent = bench::gb::bfsParents(*gb, source, level); });
        add("bfs", ts, gs, r.edgesTraversed, level == r.level);
      }
      if (algos.count("sssp") && !hasNegative) {
        tessel::graph::SsspResult r;
        std::vector<double> d;
        auto [ts, gs] = timePair(
            reps, [&] { r = tessel::graph::sssp(g, source, o); }, [&] { d = bench::gb::sssp(*gb, source); });
        bool agree = d.size() == r.distance.size();
        for (size_t v = 0; agree && v < d.size(); v++)
          agree = d[v] == r.distance[v] || std::fabs(d[v] - r.distance[v]) <= 1e-9 * std::fabs(d[v]);
        add("sssp", ts, gs, g.edges(), agree);
      }
      if (algos.count("pagerank")) {
        tessel::graph::PageRankResult r;
        std::vector<double> pr;
        int iterations = 0;
        auto [ts, gs] = timePair(
            reps, [&] { r = tessel::graph::pagerank(g, o); }, [&] { pr = bench::gb::pagerank(*gb, iterations); });
        bool agree = pr.size() == r.rank.size();
        for (size_t v = 0; agree && v < pr.size(); v++) agree = std::fabs(pr[v] - r.rank[v]) < 1e-6;
        add("pagerank", ts, gs, r.edgesTraversed, agree);
      }
      if (algos.count("cc")) {
        tessel::graph::ComponentsResult r;
        std::vector<int64_t> labels;
        auto [ts, gs] = timePair(
            reps, [&] { r = tessel::graph::connectedComponents(g, o); }, [&] { labels = bench::gb::components(*gb); });
        add("cc", ts, gs, g.edges(), labels == r.label);
      }
      if (algos.count("tc")) {
        int64_t mine = 0, theirs = 0;
        auto [ts, gs] = timePair(
            reps, [&] { mine = tessel::graph::triangleCount(g, o); }, [&] { theirs = bench::gb::triangles(*gb); });
        add("tc", ts, gs, g.edges(), mine == theirs);
      }
    }
  }
  // Geometric mean of the ratio per algorithm and thread count.
  std::printf("\ngeomean ratio (GraphBLAS time / tessel time):\n");
  std::map<std::pair<std::string, int>, std::pair<double, int>> geo;
  for (const Row& r : rows) {
    auto& [sum, count] = geo[{r.algo, r.threads}];
    sum += std::log(r.graphblas / r.tessel);
    count++;
  }
  for (const auto& [key, v] : geo)
    std::printf("  %-8s %d thread(s): %.2fx over %d graphs\n", key.first.c_str(), key.second, std::exp(v.first / v.second),
                v.second);
  bool allAgree = std::all_of(rows.begin(), rows.end(), [](const Row& r) { return r.agree; });
  std::printf("results agree: %s\n", allAgree ? "yes" : "NO");
  return allAgree ? 0 : 1;
}
