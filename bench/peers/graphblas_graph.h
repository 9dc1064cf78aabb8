// The graph algorithms of bench_graph written the LAGraph way on SuiteSparse:GraphBLAS
// (push/pull BFS with complemented structural masks, Bellman-Ford over min_plus,
// PageRank with dangling vertices, FastSV, masked dot-product triangle counting).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessel/coo.h"

namespace bench::gb {

bool installed();
std::string version();
void setThreads(int threads);

/// A graph held as GraphBLAS matrices: A (by row, weights), AT (A', by row, for pull
/// steps and PageRank), S (undirected pattern, no self-loops, for cc and tc).
struct Graph;
std::shared_ptr<Graph> load(const tessel::CooData& adjacency);
int64_t edges(const Graph& g);

std::vector<int64_t> bfsParents(const Graph& g, int64_t source, std::vector<int64_t>& level);
std::vector<double> sssp(const Graph& g, int64_t source);  // throws on a negative cycle
std::vector<double> pagerank(const Graph& g, int& iterations);
std::vector<int64_t> components(const Graph& g);
int64_t triangles(const Graph& g);

}  // namespace bench::gb
