// Graph construction: Matrix Market -> CSR arrays, the derived matrices, and tensors
// that adopt CSR arrays directly (pack() would sort entries the counting sort here has
// already ordered).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include "graph/graph_impl.h"
#include "tessel/io.h"

namespace tessel::graph {

namespace {

constexpr int64_t kMaxIndex = 2147483647;  // the kernels use 32-bit positions and coordinates

void checkFits(int64_t n, int64_t nnz) {
  if (n > kMaxIndex || nnz > kMaxIndex)
    throw OverflowError("graph with " + std::to_string(n) + " vertices and " + std::to_string(nnz) +
                        " edges does not fit the 32-bit indices of the graph kernels");
}

void* copyArray(const void* src, size_t bytes) {
  void* p = std::malloc(bytes ? bytes : 1);
  if (!p) throw OutOfMemoryError("cannot allocate " + std::to_string(bytes) + " bytes for a graph");
  if (bytes) std::memcpy(p, src, bytes);
  return p;
}

void* zeroArray(size_t bytes) {
  void* p = std::calloc(bytes ? bytes : 1, 1);
  if (!p) throw OutOfMemoryError("cannot allocate " + std::to_string(bytes) + " bytes for a graph");
  return p;
}

/// Replace t's storage with `raw` (whose arrays t now owns).
void adopt(TensorBase& t, const tessel_tensor_t& raw) {
  t.impl()->storage.release();
  t.impl()->storage.raw = raw;
  t.impl()->packed = true;
}

}  // namespace

Csr buildCsr(int64_t n, const std::vector<int64_t>& rows, const std::vector<int64_t>& cols,
             const std::vector<double>& weights) {
  checkFits(n, static_cast<int64_t>(rows.size()));
  Csr a;
  a.n = n;
  std::vector<int64_t> start(n + 1, 0);
  for (int64_t r : rows) start[r + 1]++;
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<std::pair<int32_t, double>> entries(rows.size());
  std::vector<int64_t> next(start.begin(), start.end() - 1);
  for (size_t e = 0; e < rows.size(); e++)
    entries[next[rows[e]]++] = {static_cast<int32_t>(cols[e]), weights[e]};
  a.ptr.assign(n + 1, 0);
  a.col.reserve(entries.size());
  a.w.reserve(entries.size());
  for (int64_t r = 0; r < n; r++) {
    auto b = entries.begin() + start[r], e = entries.begin() + start[r + 1];
    std::sort(b, e);  // by column, then weight: the first of equal columns is the smallest
    for (auto it = b; it != e; ++it)
      if (it == b || it->first != (it - 1)->first) {
        a.col.push_back(it->first);
        a.w.push_back(it->second);
      }
    a.ptr[r + 1] = static_cast<int32_t>(a.col.size());
  }
  return a;
}

Csr transpose(const Csr& a) {
  Csr t;
  t.n = a.n;
  t.ptr.assign(a.n + 1, 0);
  for (int32_t c : a.col) t.ptr[c + 1]++;
  std::partial_sum(t.ptr.begin(), t.ptr.end(), t.ptr.begin());
  t.col.resize(a.col.size());
  t.w.resize(a.w.size());
  std::vector<int32_t> next(t.ptr.begin(), t.ptr.end() - 1);
  for (int64_t r = 0; r < a.n; r++)  // rows in order: each transposed row comes out sorted
    for (int32_t p = a.ptr[r]; p < a.ptr[r + 1]; p++) {
      int32_t q = next[a.col[p]]++;
      t.col[q] = static_cast<int32_t>(r);
      t.w[q] = a.w[p];
    }
  return t;
}

const Csr& Graph::Impl::in() const {
  if (!transposed) transposed = transpose(adj);
  return *transposed;
}

const Csr& Graph::Impl::sym() const {
  if (!undirected) {
    std::vector<int64_t> r, c;
    r.reserve(2 * adj.col.size());
    c.reserve(2 * adj.col.size());
    for (int64_t i = 0; i < adj.n; i++)
      for (int32_t p = adj.ptr[i]; p < adj.ptr[i + 1]; p++)
        if (adj.col[p] != i) {
          r.push_back(i), c.push_back(adj.col[p]);
          r.push_back(adj.col[p]), c.push_back(i);
        }
    undirected = buildCsr(adj.n, r, c, std::vector<double>(r.size(), 1.0));
  }
  return *undirected;
}

Graph Graph::fromCoo(const CooData& m) {
  if (m.order() != 2 || m.dims[0] != m.dims[1])
    throw DimensionError("a graph's adjacency matrix must be square, got " +
                         (m.order() == 2 ? std::to_string(m.dims[0]) + " x " + std::to_string(m.dims[1])
                                         : "order " + std::to_string(m.order())));
  std::vector<int64_t> rows(m.nnz()), cols(m.nnz());
  for (int64_t e = 0; e < m.nnz(); e++) {
    rows[e] = m.coords[2 * e];
    cols[e] = m.coords[2 * e + 1];
    if (rows[e] < 0 || rows[e] >= m.dims[0] || cols[e] < 0 || cols[e] >= m.dims[1])
      throw DimensionError("edge (" + std::to_string(rows[e]) + ", " + std::to_string(cols[e]) +
                           ") is outside the " + std::to_string(m.dims[0]) + " vertices");
  }
  Graph g;
  g.impl_ = std::make_shared<Impl>();
  g.impl_->adj = buildCsr(m.dims[0], rows, cols, m.values);
  return g;
}

Graph Graph::read(const std::string& path) {
  FileContents f = readMtx(path);
  try {
    return fromCoo(f.data);
  } catch (const DimensionError& e) {
    throw DimensionError(path + ": " + e.what());
  }
}

int64_t Graph::vertices() const { return impl_->adj.n; }
int64_t Graph::edges() const { return impl_->adj.nnz(); }

TensorBase csrTensor(const std::string& name, const Csr& a, Datatype type, bool weighted) {
  TensorBase t(name, type, {a.n, a.n}, CSR());
  tessel_tensor_t raw{};
  raw.order = 2;
  raw.dims[0] = raw.dims[1] = a.n;
  raw.pos[1] = copyArray(a.ptr.data(), a.ptr.size() * sizeof(int32_t));
  raw.pos_size[1] = static_cast<int64_t>(a.ptr.size());
  raw.crd[1] = copyArray(a.col.data(), a.col.size() * sizeof(int32_t));
  raw.crd_size[1] = a.nnz();
  raw.vals_size = a.nnz();
  if (type == Datatype::Bool) {
    raw.vals = std::malloc(a.col.size() ? a.col.size() : 1);
    if (!raw.vals) throw OutOfMemoryError("cannot allocate a graph's values");
    std::memset(raw.vals, 1, a.col.size());
  } else {
    TESSEL_CHECK(type == Datatype::Float64 && weighted, "csrTensor: weights are double");
    raw.vals = copyArray(a.w.data(), a.w.size() * sizeof(double));
  }
  adopt(t, raw);
  return t;
}

TensorBase denseVector(const std::string& name, Datatype type, int64_t n) {
  TensorBase t(name, type, {n}, DenseFormat(1));
  tessel_tensor_t raw{};
  raw.order = 1;
  raw.dims[0] = n;
  raw.vals = zeroArray(static_cast<size_t>(n) * datatypeSize(type));
  raw.vals_size = n;
  adopt(t, raw);
  return t;
}

TensorBase sparseVector(const std::string& name, Datatype type, int64_t n) {
  TensorBase t(name, type, {n}, Format({LevelKind::Compressed}));
  tessel_tensor_t raw{};
  raw.order = 1;
  raw.dims[0] = n;
  raw.pos[0] = zeroArray(2 * sizeof(int32_t));
  raw.pos_size[0] = 2;
  raw.crd[0] = zeroArray(static_cast<size_t>(n) * sizeof(int32_t));
  raw.vals = zeroArray(static_cast<size_t>(n) * datatypeSize(type));
  adopt(t, raw);
  return t;
}

void setSparseCount(TensorBase& v, int64_t count) {
  tessel_tensor_t& raw = v.raw();
  static_cast<int32_t*>(raw.pos[0])[0] = 0;
  static_cast<int32_t*>(raw.pos[0])[1] = static_cast<int32_t>(count);
  raw.crd_size[0] = count;
  raw.vals_size = count;
}

DegreeOrder byDecreasingDegree(const std::vector<int64_t>& degree) {
  const int64_t n = static_cast<int64_t>(degree.size());
  DegreeOrder d{std::vector<int64_t>(n), std::vector<int64_t>(n)};
  std::iota(d.order.begin(), d.order.end(), 0);
  std::stable_sort(d.order.begin(), d.order.end(), [&](int64_t u, int64_t v) { return degree[u] > degree[v]; });
  for (int64_t k = 0; k < n; k++) d.rank[d.order[k]] = k;
  return d;
}

void checkVertex(int64_t n, int64_t v, const char* what) {
  if (v < 0 || v >= n)
    throw UserError(std::string(what) + " vertex " + std::to_string(v) + " is out of range: the graph has " +
                    std::to_string(n) + " vertices (0 to " + std::to_string(n - 1) + ")");
}

void checkThreads(const Options& o) {
  if (o.threads < 1) throw UserError("thread count must be at least 1, got " + std::to_string(o.threads));
}

}  // namespace tessel::graph

#include <map>
#include <mutex>

#include "tessel/kernel.h"

namespace tessel::graph {

std::shared_ptr<Kernel> compileKernel(const std::string& key, Assignment& a, const Semiring& semiring,
                                      int threads, const std::string& schedule) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<Kernel>> kernels;
  a.semiring = semiring;
  const std::string id = key + "|" + semiring.name + "|" + std::to_string(threads) + "|" + schedule;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = kernels.find(id);
  if (it != kernels.end()) return it->second;
  Schedule s = !schedule.empty() ? parseSchedule(schedule, a)
                                 : (threads > 1 ? defaultParallelSchedule(a, threads) : Schedule{});
  return kernels[id] = Kernel::compile(a, s);
}

}  // namespace tessel::graph
