// The graph layer's private parts: CSR adjacency arrays, the derived matrices built on
// first use, and tensors that adopt such arrays without packing (the algorithms hand
// them to compiled kernels as CSR operands and frontier vectors).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessel/graph.h"
#include "tessel/tensor.h"

namespace tessel::graph {

/// A square CSR matrix with 32-bit positions and coordinates (what the kernels are
/// compiled for), sorted unique columns per row.
struct Csr {
  int64_t n = 0;
  std::vector<int32_t> ptr;  // n + 1
  std::vector<int32_t> col;
  std::vector<double> w;     // one weight per entry (empty for a pattern handed to a bool tensor)
  int64_t nnz() const { return static_cast<int64_t>(col.size()); }
  int64_t degree(int64_t v) const { return ptr[v + 1] - ptr[v]; }
};

/// Rows from (row, col, weight) triples: sorted by a counting sort on rows and a sort
/// of each row; duplicates keep their smallest weight.
Csr buildCsr(int64_t n, const std::vector<int64_t>& rows, const std::vector<int64_t>& cols,
             const std::vector<double>& weights);
/// The transpose (CSC of the same matrix read as CSR), by a counting sort.
Csr transpose(const Csr& a);

struct Graph::Impl {
  Csr adj;
  // Built on first use (Graph is documented as not thread-safe).
  mutable std::optional<Csr> transposed;  // in-edges, for pull steps and pagerank
  mutable std::optional<Csr> undirected;  // both directions, no self-loops, weights 1
  const Csr& in() const;
  const Csr& sym() const;
};

/// A CSR tensor over `a`'s arrays (copied into malloc'd storage the tensor owns):
/// bool values 1 when `weighted` is false, else the weights as double.
TensorBase csrTensor(const std::string& name, const Csr& a, Datatype type, bool weighted);
/// A dense vector of n zeros.
TensorBase denseVector(const std::string& name, Datatype type, int64_t n);
/// A compressed vector with room for n entries and none stored; fill its arrays with
/// setSparseCount after writing the coordinates (crd[0]) and values.
TensorBase sparseVector(const std::string& name, Datatype type, int64_t n);
void setSparseCount(TensorBase& v, int64_t count);

/// Vertices renamed by decreasing degree, ties in vertex order: order[c] is the vertex
/// renamed c and rank[v] is v's new name (tc's ordering, on one node and distributed).
struct DegreeOrder {
  std::vector<int64_t> order, rank;
};
DegreeOrder byDecreasingDegree(const std::vector<int64_t>& degree);

/// Throws UserError naming `what` unless 0 <= v < n.
void checkVertex(int64_t n, int64_t v, const char* what);
inline void checkVertex(const Graph& g, int64_t v, const char* what) { checkVertex(g.vertices(), v, what); }
/// Threads worth using for `work` units (vertices or edges): one per o.grain units, at
/// least 1, at most o.threads.
inline int threadsFor(int64_t work, const Options& o) {
  if (o.grain <= 0) return o.threads;
  int64_t t = work / o.grain;
  return static_cast<int>(t < 1 ? 1 : (t > o.threads ? o.threads : t));
}
/// Throws UserError unless threads >= 1.
void checkThreads(const Options& o);

}  // namespace tessel::graph

namespace tessel {
class Kernel;
struct Assignment;
struct Semiring;
}  // namespace tessel

namespace tessel::graph {

/// Sets `a`'s semiring and returns its kernel: with `schedule` when given, else the
/// default parallel schedule for `threads` > 1. Compiled once per process for each
/// (`key`, semiring, threads, schedule) -- a key names one expression over fixed formats
/// and types, which a kernel runs on any tensors of (Kernel::run) -- so repeated calls on
/// small graphs do not pay the compiler's lowering and the JIT cache's load each time.
std::shared_ptr<Kernel> compileKernel(const std::string& key, Assignment& a, const Semiring& semiring,
                                      int threads, const std::string& schedule = "");

}  // namespace tessel::graph
