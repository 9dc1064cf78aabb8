// Graph algorithms as sparse tensor algebra over semirings (issue 30 item 3; COMET,
// GraphBLAS/LAGraph). A layer above the compiler: each algorithm compiles its
// per-iteration kernels once per call with the public Kernel API and runs them every
// iteration on new frontiers; C++ orchestrates (frontiers, convergence, direction).
//
//   auto g = tessel::graph::Graph::read("karate.mtx");
//   auto levels = tessel::graph::bfs(g, 0).level;       // 0-based vertices
//   int64_t triangles = tessel::graph::triangleCount(g, {.threads = 2});
//
// Graphs are read as given: directed unless the Matrix Market file is symmetric.
// bfs, sssp and pagerank follow edges row -> column; cc and tc use the undirected graph
// (both directions, self-loops ignored). Vertices are 0-based here (the tool prints them
// 1-based). Duplicate edges of a file count once; sssp takes the smallest of their weights.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "tessel/coo.h"
#include "tessel/error.h"

namespace tessel {
struct Machine;
}

namespace tessel::graph {

/// sssp found a cycle of negative total weight reachable from the source.
class NegativeCycleError : public UserError {
 public:
  explicit NegativeCycleError(const std::string& msg) : UserError(msg) {}
};

/// How an algorithm runs.
struct Options {
  int threads = 1;  ///< OpenMP threads of the kernels and the C++ loops (>= 1)
  /// Work (vertices or edges) per thread below which a step runs on fewer threads, as
  /// GraphBLAS's chunk: a parallel region over little work costs more than it saves.
  /// 0: every step on all `threads` (tests use it to exercise the parallel paths).
  int64_t grain = 65536;
};

/// A graph: its adjacency matrix (row -> column edges, weights as values) and the
/// derived matrices the algorithms need (transpose, undirected, lower triangle), built
/// on first use. A handle: copies share the matrices. Not safe to use from several
/// threads at once (its derived matrices are built lazily).
class Graph {
 public:
  /// From coordinates (0-based) of a square matrix; values are edge weights.
  /// Throws DimensionError when the matrix is not square.
  static Graph fromCoo(const CooData& adjacency);
  /// Read a Matrix Market file (tessel/io.h: symmetric files are expanded to both
  /// directions, pattern files have weight 1). Throws FileError, DimensionError.
  static Graph read(const std::string& path);

  int64_t vertices() const;
  /// Directed edges stored (duplicates merged, self-loops included).
  int64_t edges() const;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  std::shared_ptr<Impl> impl_;
};

/// Breadth-first search levels and parents.
struct BfsResult {
  std::vector<int64_t> level;   ///< hops from the source, -1 where unreachable
  std::vector<int64_t> parent;  ///< a vertex one level closer with an edge to this one
                                ///< (the source is its own parent), -1 where unreachable
  int64_t edgesTraversed = 0;   ///< out-edges of the reached vertices (Graph500's TEPS count)
  int pushSteps = 0;            ///< levels expanded top-down (SpMSpV)
  int pullSteps = 0;            ///< levels expanded bottom-up (dot products, early exit)
};

/// Direction-optimizing BFS from `source` (Beamer's heuristic chooses push or pull per
/// level). Throws UserError when the source is out of range.
BfsResult bfs(const Graph& g, int64_t source, const Options& options = {});

/// Shortest path distances.
struct SsspResult {
  std::vector<double> distance;  ///< +inf where unreachable
  int64_t edgesTraversed = 0;    ///< edge relaxations
  int rounds = 0;                ///< Bellman-Ford rounds run
};

/// Single-source shortest paths by Bellman-Ford over min_plus, relaxing only out of the
/// vertices whose distance changed in the previous round. Negative weights are fine;
/// throws NegativeCycleError when a negative cycle is reachable from the source.
SsspResult sssp(const Graph& g, int64_t source, const Options& options = {});

struct PageRankResult {
  std::vector<double> rank;     ///< sums to 1
  int iterations = 0;
  int64_t edgesTraversed = 0;   ///< edges * iterations
};

/// PageRank as in the GAP benchmark: damping 0.85, r' = (1-d)/n + d * (A^T (r / outdeg)
/// + (sum of the ranks of dangling vertices) / n): a vertex without out-edges spreads its
/// rank evenly over all vertices. Iterates until the L1 change is below `tolerance`
/// (or `maxIterations`).
PageRankResult pagerank(const Graph& g, const Options& options = {}, double damping = 0.85,
                        double tolerance = 1e-9, int maxIterations = 1000);

struct ComponentsResult {
  std::vector<int64_t> label;  ///< the smallest vertex of each vertex's component
  int iterations = 0;
  int64_t edgesTraversed = 0;
};

/// Connected components of the undirected graph (FastSV: min_second SpMV hooking and
/// shortcutting until the grandparents stop changing).
ComponentsResult connectedComponents(const Graph& g, const Options& options = {});

/// Triangles of the undirected graph (self-loops ignored): with L the strictly lower
/// triangle, the sum over (i,j) in L of |L(i,:) ∩ L(j,:)|, one compiled kernel
/// t = L(i,j) * L(i,k) * L(j,k) over plus_pair after ordering vertices by degree.
int64_t triangleCount(const Graph& g, const Options& options = {});

struct BcResult {
  std::vector<double> centrality;  ///< sum over the sources s of s's dependency on each vertex (0 at s)
  int levels = 0;                  ///< the most BFS levels below a source
  int64_t edgesTraversed = 0;      ///< out-edges of the forward sweeps plus in-edges of the backward ones
};

/// Betweenness centrality from a batch of sources (Brandes; LAGraph's batch BC):
/// centrality(v) = sum over s in `sources`, s != v, of sum over t != v of
/// sigma_st(v) / sigma_st, with sigma counting shortest paths by hops (weights ignored)
/// along edges row -> column. Unnormalized and not halved on undirected graphs (NetworkX's
/// betweenness_centrality_subset(G, sources, G, normalized=False) on the DiGraph). A
/// source given twice counts twice. Sources split over options.threads in groups of 8,
/// each sweep on one thread; the groups' sums add in source order, so the result is the
/// same bit for bit at every thread count. Throws UserError when a source is out of range.
BcResult betweenness(const Graph& g, const std::vector<int64_t>& sources, const Options& options = {});

// ---------------------------------------------------------------------------------------
// Distributed algorithms (issue 30 item 4): the same five algorithms on the ranks of an
// MPI machine (tessel/distributed.h; under mpirun -np P, or one rank without a launcher).
//
//   tessel::Machine m = tessel::Machine::world();
//   auto g = tessel::graph::DistGraph::read("karate.mtx", m);   // collective
//   auto levels = tessel::graph::bfs(g, 0).level;                // collective; whole on every rank
//
// Vertices are split into P contiguous blocks of ceil(n/P) (1-D row blocks; a rank past
// the last vertex owns none). Each rank reads its byte range of the file and sends each
// edge to the rank owning its row (out-edges) and, for the algorithms that need them, the
// rank owning its column (in-edges: pull levels of bfs, pagerank) and both (the undirected
// graph of cc and tc). A rank keeps its rows as a CSR over global vertex ids (the rows of
// other ranks empty), so each iteration runs the compiled semiring kernels of the
// single-node algorithms on its rows; the vectors are then exchanged (frontiers and their
// candidates sparse, by all-to-all and all-gather; pagerank's and cc's vectors dense).
// Results are the single-node ones: bfs levels and parents, sssp distances, cc labels and
// tc counts exactly; pagerank to rounding (its sums are added in another order). Every
// rank returns the whole result.
//
// Every call on a DistGraph is collective: every rank calls it with the same arguments.
// Its tessel::Errors are thrown on every rank alike (a bad file, a non-square matrix, a
// bad source vertex, a negative cycle; and a failure of one rank alone, such as its
// memory limit in a kernel, after the ranks agree on it), so ranks can exit together;
// only std::bad_alloc and MPI's own failures may come from one rank alone.

/// A graph whose vertices are distributed over the ranks in row blocks: each rank holds
/// the edges of its rows (and, built on first use, of its columns and of the undirected
/// graph). A handle: copies share the matrices. Not safe to use from several threads.
class DistGraph {
 public:
  /// Collective: read a Matrix Market file in parallel (readTensorFilePart, as
  /// Graph::read reads it: symmetric files in both directions, pattern weights 1) on the
  /// ranks of `machine` (its grid's size; DistributionError unless that many run).
  /// Throws FileError, DimensionError on every rank.
  static DistGraph read(const std::string& path, const Machine& machine);
  /// Collective: from each rank's share of the edges (0-based coordinates of a square
  /// matrix of the same dims on every rank; any rank may hold any edge).
  static DistGraph fromParts(const CooData& share, const Machine& machine);

  int64_t vertices() const;
  /// Directed edges stored over all ranks (duplicates merged, self-loops included).
  int64_t edges() const;
  /// This rank's vertices: [firstVertex(), endVertex()).
  int64_t firstVertex() const;
  int64_t endVertex() const;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  std::shared_ptr<Impl> impl_;
};

/// Collective: bfs of a distributed graph. Levels and parents equal the single-node
/// bfs's (the same direction-optimizing choices: push levels by the min_first SpMSpV on
/// each rank's rows, candidates sent to their owners; pull levels on each rank's in-edges).
BfsResult bfs(const DistGraph& g, int64_t source, const Options& options = {});
/// Collective: Bellman-Ford over min_plus on each rank's rows, improved distances sent to
/// their owners; NegativeCycleError on every rank as on one node.
SsspResult sssp(const DistGraph& g, int64_t source, const Options& options = {});
/// Collective: pagerank with pagerank()'s definition and convergence test; each rank
/// runs the plus_second SpMV on the in-edges of its vertices, then the ranks all-gather x.
PageRankResult pagerank(const DistGraph& g, const Options& options = {}, double damping = 0.85,
                        double tolerance = 1e-9, int maxIterations = 1000);
/// Collective: FastSV as connectedComponents(): the min_second SpMV on each rank's rows
/// of the undirected graph, the hooking proposals combined by an element-wise minimum
/// over ranks (every rank keeps the whole parent vector). Labels: smallest vertex ids.
ComponentsResult connectedComponents(const DistGraph& g, const Options& options = {});
/// Collective: triangleCount()'s plus_pair kernel on each rank's rows of L (after the same
/// degree ordering), with the rows of L its rows reference fetched from their owners (not
/// the whole graph); the counts are summed over ranks.
int64_t triangleCount(const DistGraph& g, const Options& options = {});

}  // namespace tessel::graph
