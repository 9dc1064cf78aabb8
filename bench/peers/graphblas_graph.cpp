// bench_graph's GraphBLAS side: the algorithms as LAGraph writes them (LAGr_BreadthFirstSearch
// push/pull, LAGraph_BF_basic, LAGr_PageRank, LAGraph_FastSV5, LAGr_TriangleCount's
// Sandia_LL with its degree presort), on SuiteSparse:GraphBLAS 7.4.
#include "graphblas_graph.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <type_traits>

#ifdef TESSEL_HAVE_GRAPHBLAS
extern "C" {
#include <GraphBLAS.h>
}

namespace bench::gb {

namespace {

void ok(GrB_Info info, const char* what) {
  if (info != GrB_SUCCESS && info != GrB_NO_VALUE)
    throw std::runtime_error(std::string("GraphBLAS: ") + what + " failed (" + std::to_string(int(info)) + ")");
}
#define OK(call) ok(call, #call)

void init() {
  static bool done = false;
  if (done) return;
  OK(GrB_init(GrB_NONBLOCKING));
  OK(GxB_Global_Option_set(GxB_FORMAT, GxB_BY_ROW));
  done = true;
}

/// Frees its objects at scope exit.
struct Vecs {
  std::vector<GrB_Vector*> v;
  ~Vecs() {
    for (auto* p : v)
      if (*p) GrB_Vector_free(p);
  }
};

GrB_Index nvals(GrB_Vector v) {
  GrB_Index k = 0;
  OK(GrB_Vector_nvals(&k, v));
  return k;
}

/// Values of a vector by index, `missing` where absent (T: int64_t or double, the
/// vector's INT64 or FP64 tuples).
template <typename T>
std::vector<T> toDense(GrB_Vector v, GrB_Index n, T missing) {
  GrB_Index k = nvals(v);
  std::vector<GrB_Index> I(k);
  std::vector<T> X(k);
  if constexpr (std::is_same_v<T, int64_t>) OK(GrB_Vector_extractTuples_INT64(I.data(), X.data(), &k, v));
  else OK(GrB_Vector_extractTuples_FP64(I.data(), X.data(), &k, v));
  std::vector<T> out(n, missing);
  for (GrB_Index e = 0; e < k; e++) out[I[e]] = X[e];
  return out;
}
std::vector<int64_t> toDenseInt(GrB_Vector v, GrB_Index n, int64_t missing) { return toDense<int64_t>(v, n, missing); }
std::vector<double> toDenseReal(GrB_Vector v, GrB_Index n, double missing) { return toDense<double>(v, n, missing); }

/// LAGraph_Vector_IsEqual for FP64 vectors.
bool equal(GrB_Vector a, GrB_Vector b, GrB_Index n) {
  if (nvals(a) != nvals(b)) return false;
  GrB_Vector c = nullptr;
  OK(GrB_Vector_new(&c, GrB_BOOL, n));
  OK(GrB_Vector_eWiseMult_BinaryOp(c, nullptr, nullptr, GrB_EQ_FP64, a, b, nullptr));
  bool same = nvals(c) == nvals(a);
  if (same) {
    bool all = true;
    OK(GrB_Vector_reduce_BOOL(&all, nullptr, GrB_LAND_MONOID_BOOL, c, nullptr));
    same = all;
  }
  GrB_Vector_free(&c);
  return same;
}

}  // namespace

struct Graph {
  GrB_Matrix A = nullptr, AT = nullptr, S = nullptr;
  GrB_Index n = 0;
  ~Graph() {
    if (A) GrB_Matrix_free(&A);
    if (AT) GrB_Matrix_free(&AT);
    if (S) GrB_Matrix_free(&S);
  }
};

bool installed() { return true; }

std::string version() {
  return std::to_string(GxB_IMPLEMENTATION_MAJOR) + "." + std::to_string(GxB_IMPLEMENTATION_MINOR) + "." +
         std::to_string(GxB_IMPLEMENTATION_SUB);
}

void setThreads(int threads) {
  init();
  OK(GxB_Global_Option_set(GxB_GLOBAL_NTHREADS, threads));
}

std::shared_ptr<Graph> load(const tessel::CooData& m) {
  init();
  auto g = std::make_shared<Graph>();
  g->n = static_cast<GrB_Index>(m.dims[0]);
  const GrB_Index n = g->n, k = static_cast<GrB_Index>(m.nnz());
  std::vector<GrB_Index> I(k), J(k);
  for (GrB_Index e = 0; e < k; e++) I[e] = m.coords[2 * e], J[e] = m.coords[2 * e + 1];
  OK(GrB_Matrix_new(&g->A, GrB_FP64, n, n));
  OK(GrB_Matrix_build_FP64(g->A, I.data(), J.data(), m.values.data(), k, GrB_MIN_FP64));  // duplicates: min
  OK(GrB_Matrix_new(&g->AT, GrB_FP64, n, n));
  OK(GrB_transpose(g->AT, nullptr, nullptr, g->A, nullptr));
  OK(GrB_Matrix_new(&g->S, GrB_BOOL, n, n));
  OK(GrB_Matrix_eWiseAdd_BinaryOp(g->S, nullptr, nullptr, GrB_ONEB_BOOL, g->A, g->AT, nullptr));
  OK(GrB_Matrix_select_INT64(g->S, nullptr, nullptr, GrB_OFFDIAG, g->S, 0, nullptr));
  for (GrB_Matrix M : {g->A, g->AT, g->S}) OK(GrB_Matrix_wait(M, GrB_MATERIALIZE));
  return g;
}

int64_t edges(const Graph& g) {
  GrB_Index k = 0;
  OK(GrB_Matrix_nvals(&k, g.A));
  return static_cast<int64_t>(k);
}

std::vector<int64_t> bfsParents(const Graph& g, int64_t source, std::vector<int64_t>& level) {
  const GrB_Index n = g.n;
  GrB_Vector q = nullptr, pi = nullptr, v = nullptr;
  Vecs keep{{&q, &pi, &v}};
  OK(GrB_Vector_new(&q, GrB_INT64, n));
  OK(GrB_Vector_new(&pi, GrB_INT64, n));
  OK(GrB_Vector_new(&v, GrB_INT64, n));
  OK(GxB_Vector_Option_set(pi, GxB_SPARSITY_CONTROL, GxB_BITMAP));  // as LAGraph: fast mask tests
  OK(GxB_Vector_Option_set(v, GxB_SPARSITY_CONTROL, GxB_BITMAP));
  OK(GrB_Vector_setElement_INT64(q, source, source));
  OK(GrB_Vector_setElement_INT64(pi, source, source));
  OK(GrB_Vector_setElement_INT64(v, 0, source));
  GrB_Index nnz = 0;
  OK(GrB_Matrix_nvals(&nnz, g.A));
  // LAGraph's heuristic: edges of the frontier estimated from the mean degree.
  const double meanDegree = n ? static_cast<double>(nnz) / static_cast<double>(n) : 0;
  double unexplored = static_cast<double>(nnz);
  bool push = true;
  GrB_Index nq = 1, last = 0;
  for (int64_t depth = 1; nq > 0; depth++) {
    double scout = static_cast<double>(nq) * meanDegree;
    unexplored -= scout;
    if (push && scout > unexplored / 15) push = false;
    else if (!push && nq < last && nq < n / 18) push = true;
    last = nq;
    if (push) {
      OK(GxB_Vector_Option_set(q, GxB_SPARSITY_CONTROL, GxB_SPARSE));
      OK(GrB_vxm(q, pi, nullptr, GxB_ANY_SECONDI_INT64, q, g.A, GrB_DESC_RSC));
    } else {
      OK(GxB_Vector_Option_set(q, GxB_SPARSITY_CONTROL, GxB_BITMAP));
      OK(GrB_mxv(q, pi, nullptr, GxB_ANY_SECONDI_INT64, g.AT, q, GrB_DESC_RSC));
    }
    nq = nvals(q);
    if (nq == 0) break;
    OK(GrB_Vector_assign(pi, q, nullptr, q, GrB_ALL, n, GrB_DESC_S));
    OK(GrB_Vector_assign_INT64(v, q, nullptr, depth, GrB_ALL, n, GrB_DESC_S));
  }
  level = toDenseInt(v, n, -1);
  return toDenseInt(pi, n, -1);
}

std::vector<double> sssp(const Graph& g, int64_t source) {
  const GrB_Index n = g.n;
  GrB_Vector d = nullptr, t = nullptr;
  Vecs keep{{&d, &t}};
  OK(GrB_Vector_new(&d, GrB_FP64, n));
  OK(GrB_Vector_setElement_FP64(d, 0.0, source));
  for (GrB_Index round = 1;; round++) {
    if (t) GrB_Vector_free(&t);
    OK(GrB_Vector_dup(&t, d));
    OK(GrB_vxm(t, nullptr, GrB_MIN_FP64, GrB_MIN_PLUS_SEMIRING_FP64, d, g.A, nullptr));
    if (equal(t, d, n)) break;
    if (round >= n) throw std::runtime_error("GraphBLAS sssp: negative cycle");
    std::swap(t, d);
  }
  return toDenseReal(d, n, 1.0 / 0.0);
}

std::vector<double> pagerank(const Graph& g, int& iterations) {
  const GrB_Index n = g.n;
  const double damping = 0.85, tol = 1e-9, teleport = (1 - damping) / static_cast<double>(n);
  GrB_Vector ones = nullptr, dout = nullptr, r = nullptr, rn = nullptr, w = nullptr, t = nullptr;
  Vecs keep{{&ones, &dout, &r, &rn, &w, &t}};
  for (GrB_Vector* p : {&ones, &dout, &r, &rn, &w, &t}) OK(GrB_Vector_new(p, GrB_FP64, n));
  OK(GrB_Vector_assign_FP64(ones, nullptr, nullptr, 1.0, GrB_ALL, n, nullptr));
  OK(GrB_mxv(dout, nullptr, nullptr, GxB_PLUS_PAIR_FP64, g.A, ones, nullptr));  // out-degrees, absent if 0
  OK(GrB_Vector_assign_FP64(r, nullptr, nullptr, 1.0 / static_cast<double>(n), GrB_ALL, n, nullptr));
  for (iterations = 1; iterations <= 1000; iterations++) {
    OK(GrB_Vector_eWiseMult_BinaryOp(w, nullptr, nullptr, GrB_DIV_FP64, r, dout, nullptr));
    OK(GrB_Vector_apply_BinaryOp1st_FP64(w, nullptr, nullptr, GrB_TIMES_FP64, damping, w, nullptr));
    OK(GrB_Vector_apply(t, dout, nullptr, GrB_IDENTITY_FP64, r, GrB_DESC_RSC));  // dangling ranks
    double dangling = 0;
    OK(GrB_Vector_reduce_FP64(&dangling, nullptr, GrB_PLUS_MONOID_FP64, t, nullptr));
    OK(GrB_Vector_assign_FP64(rn, nullptr, nullptr, teleport + damping * dangling / static_cast<double>(n), GrB_ALL,
                              n, nullptr));
    OK(GrB_mxv(rn, nullptr, GrB_PLUS_FP64, GxB_PLUS_SECOND_FP64, g.AT, w, nullptr));
    OK(GrB_Vector_eWiseAdd_BinaryOp(t, nullptr, nullptr, GrB_MINUS_FP64, rn, r, nullptr));
    OK(GrB_Vector_apply(t, nullptr, nullptr, GrB_ABS_FP64, t, nullptr));
    double change = 0;
    OK(GrB_Vector_reduce_FP64(&change, nullptr, GrB_PLUS_MONOID_FP64, t, nullptr));
    std::swap(r, rn);
    if (change < tol) break;
  }
  return toDenseReal(r, n, 0);
}

std::vector<int64_t> components(const Graph& g) {
  const GrB_Index n = g.n;
  GrB_Vector f = nullptr, gp = nullptr, mngp = nullptr, gpn = nullptr, neq = nullptr;
  Vecs keep{{&f, &gp, &mngp, &gpn, &neq}};
  std::vector<GrB_Index> I(n), V(n);
  std::vector<int64_t> X(n);
  std::iota(I.begin(), I.end(), GrB_Index{0});
  std::iota(X.begin(), X.end(), int64_t{0});
  for (GrB_Vector* p : {&f, &gp, &mngp, &gpn}) {
    OK(GrB_Vector_new(p, GrB_INT64, n));
    OK(GrB_Vector_build_INT64(*p, I.data(), X.data(), n, GrB_PLUS_INT64));
  }
  OK(GrB_Vector_new(&neq, GrB_BOOL, n));
  bool changed = n > 0;
  while (changed) {
    OK(GrB_mxv(mngp, nullptr, GrB_MIN_INT64, GxB_MIN_SECOND_INT64, g.S, gp, nullptr));
    // Stochastic hooking f[f[u]] = min(f[f[u]], mngp[u]): LAGraph's Reduce_assign, a
    // loop over the unpacked arrays (GrB_assign leaves duplicate indices undefined).
    void *fx = nullptr, *mx = nullptr;
    GrB_Index fs = 0, ms = 0;
    bool fiso = false, miso = false;
    OK(GxB_Vector_unpack_Full(f, &fx, &fs, &fiso, nullptr));
    OK(GxB_Vector_unpack_Full(mngp, &mx, &ms, &miso, nullptr));
    int64_t* fv = static_cast<int64_t*>(fx);
    const int64_t* mv = static_cast<const int64_t*>(mx);
    if (fiso) {  // one value for all: expand it before writing entries
      int64_t* full = static_cast<int64_t*>(std::malloc(n * sizeof(int64_t)));
      std::fill(full, full + n, fv[0]);
      std::free(fv);
      fv = full, fx = full, fs = n * sizeof(int64_t), fiso = false;
    }
    for (GrB_Index u = 0; u < n; u++) {
      int64_t m = mv[miso ? 0 : u];
      int64_t& target = fv[fv[u]];
      if (m < target) target = m;
    }
    OK(GxB_Vector_pack_Full(f, &fx, fs, fiso, nullptr));
    OK(GxB_Vector_pack_Full(mngp, &mx, ms, miso, nullptr));
    // Aggressive hooking and shortcutting: f = min(f, mngp, gp).
    OK(GrB_Vector_eWiseAdd_BinaryOp(f, nullptr, GrB_MIN_INT64, GrB_MIN_INT64, mngp, gp, nullptr));
    // Grandparents gp = f[f].
    GrB_Index k = n;
    OK(GrB_Vector_extractTuples_INT64(I.data(), X.data(), &k, f));
    for (GrB_Index u = 0; u < n; u++) V[u] = static_cast<GrB_Index>(X[u]);
    OK(GrB_Vector_extract(gpn, nullptr, nullptr, f, V.data(), n, nullptr));
    OK(GrB_Vector_eWiseMult_BinaryOp(neq, nullptr, nullptr, GrB_NE_INT64, gpn, gp, nullptr));
    OK(GrB_Vector_reduce_BOOL(&changed, nullptr, GrB_LOR_MONOID_BOOL, neq, nullptr));
    std::swap(gp, gpn);
  }
  return toDenseInt(f, n, -1);
}

int64_t triangles(const Graph& g) {
  const GrB_Index n = g.n;
  GrB_Vector deg = nullptr;
  GrB_Matrix P = nullptr, L = nullptr, C = nullptr;
  OK(GrB_Vector_new(&deg, GrB_INT64, n));
  OK(GrB_Matrix_reduce_Monoid(deg, nullptr, nullptr, GrB_PLUS_MONOID_INT64, g.S, nullptr));
  std::vector<int64_t> d = toDenseInt(deg, n, 0);
  GrB_Vector_free(&deg);
  std::vector<GrB_Index> order(n);
  std::iota(order.begin(), order.end(), GrB_Index{0});
  std::stable_sort(order.begin(), order.end(), [&](GrB_Index u, GrB_Index v) { return d[u] > d[v]; });
  OK(GrB_Matrix_new(&P, GrB_BOOL, n, n));
  OK(GrB_Matrix_extract(P, nullptr, nullptr, g.S, order.data(), n, order.data(), n, nullptr));
  OK(GrB_Matrix_new(&L, GrB_BOOL, n, n));
  OK(GrB_Matrix_select_INT64(L, nullptr, nullptr, GrB_TRIL, P, -1, nullptr));
  OK(GrB_Matrix_new(&C, GrB_INT64, n, n));
  OK(GrB_mxm(C, L, nullptr, GxB_PLUS_PAIR_INT64, L, L, GrB_DESC_ST1));  // C<L> = L*L'
  int64_t count = 0;
  OK(GrB_Matrix_reduce_INT64(&count, nullptr, GrB_PLUS_MONOID_INT64, C, nullptr));
  GrB_Matrix_free(&P);
  GrB_Matrix_free(&L);
  GrB_Matrix_free(&C);
  return count;
}

}  // namespace bench::gb

#else  // no GraphBLAS: bench_graph reports it and measures tessel alone

namespace bench::gb {
struct Graph {};
bool installed() { return false; }
std::string version() { return "not installed"; }
void setThreads(int) {}
std::shared_ptr<Graph> load(const tessel::CooData&) { return nullptr; }
int64_t edges(const Graph&) { return 0; }
std::vector<int64_t> bfsParents(const Graph&, int64_t, std::vector<int64_t>&) { return {}; }
std::vector<double> sssp(const Graph&, int64_t) { return {}; }
std::vector<double> pagerank(const Graph&, int&) { return {}; }
std::vector<int64_t> components(const Graph&) { return {}; }
int64_t triangles(const Graph&) { return 0; }
}  // namespace bench::gb

#endif
