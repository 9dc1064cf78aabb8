// Masked SpGEMM (issue 30 item 2) beside SuiteSparse:GraphBLAS's GrB_mxm with a mask:
// triangle counting's kernel C<L>(i,j) = sum_k pair(L(i,k), L(k,j)) (plus_pair, a
// structural mask), L the strictly lower triangle of each real graph in ../shared/data,
// in tessel's pull, push and auto forms and in GraphBLAS (GrB_mxm, GrB_DESC_S) at 1 and
// 2 threads. Reports the median of 5 runs after a warm-up, the triangle count each
// computed (they must agree), and tessel's time over GraphBLAS's.
//
// usage: bench_masked_spgemm [GRAPH.mtx ...]   (default: the graphs of issue 30 present)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "tessel/tessel.h"

#ifdef TESSEL_HAVE_GRAPHBLAS
extern "C" {
#include <GraphBLAS.h>
}
#endif

using namespace tessel;
using Clock = std::chrono::steady_clock;

namespace {

/// The strictly lower triangle of the symmetrized graph, without self-loops (sorted).
CooData lowerTriangle(const std::string& path) {
  CooData g = readTensorFile(path).data;
  std::set<std::pair<int64_t, int64_t>> edges;
  for (int64_t e = 0; e < g.nnz(); e++) {
    int64_t u = g.coords[2 * e], v = g.coords[2 * e + 1];
    if (u != v) edges.insert({std::max(u, v), std::min(u, v)});
  }
  CooData l;
  l.dims = {g.dims[0], g.dims[0]};
  for (const auto& [u, v] : edges) l.add({u, v}, 1);
  return l;
}

template <typename F>
double medianMs(F&& f, int reps = 5) {
  f();  // warm-up
  std::vector<double> ms;
  for (int r = 0; r < reps; r++) {
    auto t0 = Clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

/// tessel's masked product in `form` on `threads` threads: its time and triangle count.
std::pair<double, int64_t> runTessel(const CooData& lower, MaskForm form, int threads) {
  int64_t n = lower.dims[0];
  TensorBase L("L", Datatype::Float64, {n, n}, Format::parse("ds"));
  L.setFromCoo(lower);
  TensorBase C("C", Datatype::Int64, {n, n}, Format::parse("ds"));
  IndexVar i("i"), j("j"), k("k");
  Assignment a;
  a.lhs = C(i, j);
  a.rhs = L(i, k) * L(k, j);
  a.semiring = Semiring::byName("plus_pair");
  a.mask = outputMask(L(i, j));
  a.mask.form = form;
  auto kernel = Kernel::compile(a, defaultParallelSchedule(a, threads));
  double ms = medianMs([&] { kernel->run(a, threads); });
  int64_t triangles = 0;
  for (double v : C.toCoo().values) triangles += static_cast<int64_t>(v);
  return {ms, triangles};
}

#ifdef TESSEL_HAVE_GRAPHBLAS
std::pair<double, int64_t> runGraphBLAS(const CooData& lower, int threads) {
  GrB_Index n = static_cast<GrB_Index>(lower.dims[0]), nnz = static_cast<GrB_Index>(lower.nnz());
  std::vector<GrB_Index> rows(nnz), cols(nnz);
  std::vector<int64_t> vals(nnz, 1);
  for (GrB_Index e = 0; e < nnz; e++) rows[e] = lower.coords[2 * e], cols[e] = lower.coords[2 * e + 1];
  GrB_Matrix L, C;
  GrB_Matrix_new(&L, GrB_INT64, n, n);
  GrB_Matrix_build_INT64(L, rows.data(), cols.data(), vals.data(), nnz, GrB_PLUS_INT64);
  GrB_Matrix_wait(L, GrB_MATERIALIZE);
  GxB_Global_Option_set(GxB_GLOBAL_NTHREADS, threads);
  GrB_Matrix_new(&C, GrB_INT64, n, n);
  double ms = medianMs([&] {
    GrB_Matrix_clear(C);
    GrB_mxm(C, L, nullptr, GxB_PLUS_PAIR_INT64, L, L, GrB_DESC_S);
    GrB_Matrix_wait(C, GrB_MATERIALIZE);
  });
  int64_t triangles = 0;
  GrB_Matrix_reduce_INT64(&triangles, nullptr, GrB_PLUS_MONOID_INT64, C, nullptr);
  GrB_Matrix_free(&C);
  GrB_Matrix_free(&L);
  return {ms, triangles};
}
#endif

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> graphs;
  for (int a = 1; a < argc; a++) graphs.push_back(argv[a]);
  if (graphs.empty())
    for (const char* g : {"karate", "ca-GrQc", "wiki-Vote", "ca-AstroPh", "hep-th", "luxembourg_osm"}) {
      std::string p = std::string(TESSEL_DATA_DIR) + "/matrices/" + g + ".mtx";
      if (std::filesystem::exists(p)) graphs.push_back(p);
    }
#ifdef TESSEL_HAVE_GRAPHBLAS
  GrB_init(GrB_NONBLOCKING);
#endif
  std::printf("%-20s %8s %3s %10s %10s %10s %10s %12s %s\n", "graph", "nnz(L)", "thr", "pull_ms", "push_ms", "auto_ms",
              "grb_ms", "triangles", "auto/grb");
  for (const std::string& path : graphs) {
    CooData lower = lowerTriangle(path);
    std::string name = std::filesystem::path(path).stem().string();
    for (int threads : {1, 2}) {
      auto [pull, t1] = runTessel(lower, MaskForm::Pull, threads);
      auto [push, t2] = runTessel(lower, MaskForm::Push, threads);
      auto [autoMs, t3] = runTessel(lower, MaskForm::Auto, threads);
      double grb = 0;
      int64_t t4 = t3;
#ifdef TESSEL_HAVE_GRAPHBLAS
      std::tie(grb, t4) = runGraphBLAS(lower, threads);
#endif
      bool agree = t1 == t2 && t2 == t3 && t3 == t4;
      std::printf("%-20s %8lld %3d %10.3f %10.3f %10.3f %10.3f %12lld %s%s\n", name.c_str(),
                  static_cast<long long>(lower.nnz()), threads, pull, push, autoMs, grb, static_cast<long long>(t3),
                  grb > 0 ? std::to_string(autoMs / grb).c_str() : "(no GraphBLAS)", agree ? "" : "  COUNTS DIFFER");
    }
  }
#ifdef TESSEL_HAVE_GRAPHBLAS
  GrB_finalize();
#endif
  return 0;
}
