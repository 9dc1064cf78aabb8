// Hand-written C loops, JIT-compiled by tessel::jitCompile with the same compiler as
// tessel's generated code, in three builds (hand::Flags): tessel's default flags (-O3
// -march=native -falign-loops=64), portable -O3, and portable -O3 -ffast-math (as TACO
// compiles its kernels), so a flag that is slow on some CPU cannot slow tessel and its
// only baseline alike. All with -fopenmp and
// `#pragma omp parallel for` so they run on the thread count set by omp_set_num_threads
// (called through the module itself, so it is the same OpenMP runtime). Sparse outputs
// are malloc'd inside the timed call (symbolic pass, prefix sum, numeric pass), as
// tessel's assembly does; the previous output is freed inside the timed call too.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>

#include "peers.h"
#include "tessel/tessel.h"

namespace bench {
namespace {

const char* kHandSource = R"(
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

void hand_set_threads(int n) { omp_set_num_threads(n); }

void triad(double* restrict a, const double* restrict b, const double* restrict c, double s, int64_t n) {
  #pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++) a[i] = b[i] + s * c[i];
}
void fill(double* restrict a, double v, int64_t n) {
  #pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++) a[i] = v;
}

void spmv(int64_t rows, const int32_t* restrict pos, const int32_t* restrict crd,
          const double* restrict vals, const double* restrict x, double* restrict y) {
  #pragma omp parallel for schedule(dynamic, 1024)
  for (int64_t i = 0; i < rows; i++) {
    double sum = 0;
    for (int32_t p = pos[i]; p < pos[i + 1]; p++) sum += vals[p] * x[crd[p]];
    y[i] = sum;
  }
}

void spmm(int64_t rows, int64_t K, const int32_t* restrict pos, const int32_t* restrict crd,
          const double* restrict vals, const double* restrict X, double* restrict Y) {
  #pragma omp parallel for schedule(dynamic, 64)
  for (int64_t i = 0; i < rows; i++) {
    double* restrict y = Y + i * K;
    for (int64_t k = 0; k < K; k++) y[k] = 0;
    for (int32_t p = pos[i]; p < pos[i + 1]; p++) {
      const double v = vals[p];
      const double* restrict x = X + (int64_t)crd[p] * K;
      for (int64_t k = 0; k < K; k++) y[k] += v * x[k];
    }
  }
}

/* Y = A .* (U V^T) on A's pattern; the output pattern is copied from A. */
void sddmm(int64_t rows, int64_t K, const int32_t* restrict pos, const int32_t* restrict crd,
           const double* restrict vals, const double* restrict U, const double* restrict V,
           int32_t* restrict ypos, int32_t* restrict ycrd, double* restrict yvals) {
  memcpy(ypos, pos, (rows + 1) * sizeof(int32_t));
  memcpy(ycrd, crd, (size_t)pos[rows] * sizeof(int32_t));
  #pragma omp parallel for schedule(dynamic, 256)
  for (int64_t i = 0; i < rows; i++) {
    const double* restrict u = U + i * K;
    for (int32_t p = pos[i]; p < pos[i + 1]; p++) {
      const double* restrict v = V + (int64_t)crd[p] * K;
      double s = 0;
      for (int64_t k = 0; k < K; k++) s += u[k] * v[k];
      yvals[p] = vals[p] * s;
    }
  }
}

static void prefix(int32_t* pos, int64_t rows) {
  for (int64_t i = 0; i < rows; i++) pos[i + 1] += pos[i];
}

/* Y = A + B (union), two passes: count, then merge. */
void spadd(int64_t rows, const int32_t* restrict ap, const int32_t* restrict ac, const double* restrict av,
           const int32_t* restrict bp, const int32_t* restrict bc, const double* restrict bv,
           int32_t** ypos_out, int32_t** ycrd_out, double** yvals_out) {
  int32_t* yp = (int32_t*)malloc((rows + 1) * sizeof(int32_t));
  yp[0] = 0;
  #pragma omp parallel for schedule(dynamic, 1024)
  for (int64_t i = 0; i < rows; i++) {
    int32_t p = ap[i], pe = ap[i + 1], q = bp[i], qe = bp[i + 1], n = 0;
    while (p < pe && q < qe) {
      int32_t a = ac[p], b = bc[q];
      p += a <= b; q += b <= a; n++;
    }
    yp[i + 1] = n + (pe - p) + (qe - q);
  }
  prefix(yp, rows);
  int32_t* yc = (int32_t*)malloc((size_t)yp[rows] * sizeof(int32_t) + 1);
  double* yv = (double*)malloc((size_t)yp[rows] * sizeof(double) + 1);
  #pragma omp parallel for schedule(dynamic, 1024)
  for (int64_t i = 0; i < rows; i++) {
    int32_t p = ap[i], pe = ap[i + 1], q = bp[i], qe = bp[i + 1], o = yp[i];
    while (p < pe && q < qe) {
      int32_t a = ac[p], b = bc[q];
      if (a == b) { yc[o] = a; yv[o++] = av[p++] + bv[q++]; }
      else if (a < b) { yc[o] = a; yv[o++] = av[p++]; }
      else { yc[o] = b; yv[o++] = bv[q++]; }
    }
    while (p < pe) { yc[o] = ac[p]; yv[o++] = av[p++]; }
    while (q < qe) { yc[o] = bc[q]; yv[o++] = bv[q++]; }
  }
  *ypos_out = yp; *ycrd_out = yc; *yvals_out = yv;
}

static void sort_row(int32_t* c, int32_t n) {
  for (int32_t a = 1; a < n; a++) {
    int32_t v = c[a], b = a - 1;
    while (b >= 0 && c[b] > v) { c[b + 1] = c[b]; b--; }
    c[b + 1] = v;
  }
}
static int cmp_i32(const void* x, const void* y) {
  int32_t a = *(const int32_t*)x, b = *(const int32_t*)y;
  return (a > b) - (a < b);
}

/* Y = A * B, Gustavson: per-thread dense row workspace (values + last-row marker). */
void spgemm(int64_t rows, int64_t cols, const int32_t* restrict ap, const int32_t* restrict ac,
            const double* restrict av, const int32_t* restrict bp, const int32_t* restrict bc,
            const double* restrict bv, int32_t** ypos_out, int32_t** ycrd_out, double** yvals_out) {
  int32_t* yp = (int32_t*)malloc((rows + 1) * sizeof(int32_t));
  yp[0] = 0;
  #pragma omp parallel
  {
    int64_t* mark = (int64_t*)malloc(cols * sizeof(int64_t));
    for (int64_t j = 0; j < cols; j++) mark[j] = -1;
    #pragma omp for schedule(dynamic, 256)
    for (int64_t i = 0; i < rows; i++) {
      int32_t n = 0;
      for (int32_t p = ap[i]; p < ap[i + 1]; p++) {
        int32_t k = ac[p];
        for (int32_t q = bp[k]; q < bp[k + 1]; q++) {
          int32_t j = bc[q];
          if (mark[j] != i) { mark[j] = i; n++; }
        }
      }
      yp[i + 1] = n;
    }
    free(mark);
  }
  prefix(yp, rows);
  int32_t* yc = (int32_t*)malloc((size_t)yp[rows] * sizeof(int32_t) + 1);
  double* yv = (double*)malloc((size_t)yp[rows] * sizeof(double) + 1);
  #pragma omp parallel
  {
    int64_t* mark = (int64_t*)malloc(cols * sizeof(int64_t));
    double* w = (double*)malloc(cols * sizeof(double));
    for (int64_t j = 0; j < cols; j++) mark[j] = -1;
    #pragma omp for schedule(dynamic, 256)
    for (int64_t i = 0; i < rows; i++) {
      int32_t o = yp[i];
      for (int32_t p = ap[i]; p < ap[i + 1]; p++) {
        int32_t k = ac[p];
        double a = av[p];
        for (int32_t q = bp[k]; q < bp[k + 1]; q++) {
          int32_t j = bc[q];
          if (mark[j] != i) { mark[j] = i; w[j] = a * bv[q]; yc[o++] = j; }
          else w[j] += a * bv[q];
        }
      }
      int32_t n = o - yp[i];
      if (n < 32) sort_row(yc + yp[i], n); else qsort(yc + yp[i], n, sizeof(int32_t), cmp_i32);
      for (int32_t q = yp[i]; q < o; q++) yv[q] = w[yc[q]];
    }
    free(mark);
    free(w);
  }
  *ypos_out = yp; *ycrd_out = yc; *yvals_out = yv;
}

/* Y(i,j) = T(i,j,k) * c(k), T in CSF (three compressed levels), Y CSR: Y's rows are T's
   i-fibers, its columns T's j-fibers (in order), so Y.crd is T's level-1 crd. */
void ttv(int64_t d0, const int32_t* restrict pos0, const int32_t* restrict crd0,
         const int32_t* restrict pos1, const int32_t* restrict crd1, const int32_t* restrict pos2,
         const int32_t* restrict crd2, const double* restrict vals, const double* restrict c,
         int32_t** ypos_out, int32_t** ycrd_out, double** yvals_out) {
  int64_t n0 = pos0[1], n1 = pos1[n0];
  int32_t* yp = (int32_t*)calloc(d0 + 1, sizeof(int32_t));
  for (int64_t p0 = 0; p0 < n0; p0++) yp[crd0[p0] + 1] = pos1[p0 + 1] - pos1[p0];
  prefix(yp, d0);
  int32_t* yc = (int32_t*)malloc(n1 * sizeof(int32_t) + 1);
  double* yv = (double*)malloc(n1 * sizeof(double) + 1);
  memcpy(yc, crd1, n1 * sizeof(int32_t));
  #pragma omp parallel for schedule(dynamic, 1024)
  for (int64_t p1 = 0; p1 < n1; p1++) {
    double s = 0;
    for (int32_t p2 = pos2[p1]; p2 < pos2[p1 + 1]; p2++) s += vals[p2] * c[crd2[p2]];
    yv[p1] = s;
  }
  *ypos_out = yp; *ycrd_out = yc; *yvals_out = yv;
}

/* Y(i,l) = T(i,j,k) * U(j,l) * V(k,l), Y dense d0 x L (row-major). */
void mttkrp(int64_t d0, int64_t L, const int32_t* restrict pos0, const int32_t* restrict crd0,
            const int32_t* restrict pos1, const int32_t* restrict crd1, const int32_t* restrict pos2,
            const int32_t* restrict crd2, const double* restrict vals, const double* restrict U,
            const double* restrict V, double* restrict Y) {
  int64_t n0 = pos0[1];
  #pragma omp parallel for schedule(static)
  for (int64_t e = 0; e < d0 * L; e++) Y[e] = 0;
  #pragma omp parallel
  {
    double* t = (double*)malloc(L * sizeof(double));
    #pragma omp for schedule(dynamic, 16)
    for (int64_t p0 = 0; p0 < n0; p0++) {
      double* restrict y = Y + (int64_t)crd0[p0] * L;
      for (int32_t p1 = pos1[p0]; p1 < pos1[p0 + 1]; p1++) {
        for (int64_t l = 0; l < L; l++) t[l] = 0;
        for (int32_t p2 = pos2[p1]; p2 < pos2[p1 + 1]; p2++) {
          const double v = vals[p2];
          const double* restrict vr = V + (int64_t)crd2[p2] * L;
          for (int64_t l = 0; l < L; l++) t[l] += v * vr[l];
        }
        const double* restrict u = U + (int64_t)crd1[p1] * L;
        for (int64_t l = 0; l < L; l++) y[l] += t[l] * u[l];
      }
    }
    free(t);
  }
}
)";

using SetThreadsFn = void (*)(int);
using TriadFn = void (*)(double*, const double*, const double*, double, int64_t);
using FillFn = void (*)(double*, double, int64_t);
using SpmvFn = void (*)(int64_t, const int32_t*, const int32_t*, const double*, const double*, double*);
using SpmmFn = void (*)(int64_t, int64_t, const int32_t*, const int32_t*, const double*, const double*, double*);
using SddmmFn = void (*)(int64_t, int64_t, const int32_t*, const int32_t*, const double*, const double*,
                         const double*, int32_t*, int32_t*, double*);
using SpaddFn = void (*)(int64_t, const int32_t*, const int32_t*, const double*, const int32_t*, const int32_t*,
                         const double*, int32_t**, int32_t**, double**);
using SpgemmFn = void (*)(int64_t, int64_t, const int32_t*, const int32_t*, const double*, const int32_t*,
                          const int32_t*, const double*, int32_t**, int32_t**, double**);
using TtvFn = void (*)(int64_t, const int32_t*, const int32_t*, const int32_t*, const int32_t*, const int32_t*,
                       const int32_t*, const double*, const double*, int32_t**, int32_t**, double**);
using MttkrpFn = void (*)(int64_t, int64_t, const int32_t*, const int32_t*, const int32_t*, const int32_t*,
                          const int32_t*, const int32_t*, const double*, const double*, const double*, double*);

std::shared_ptr<tessel::JitModule> module(hand::Flags f) {
  static std::map<hand::Flags, std::shared_ptr<tessel::JitModule>> modules;
  auto& m = modules[f];
  if (!m) {
    tessel::JitOptions o;
    o.flags = hand::flags(f);
    m = tessel::jitCompile(kHandSource, o);
  }
  return m;
}
template <typename F>
F sym(const char* name, hand::Flags f = hand::Flags::Native) {
  return reinterpret_cast<F>(module(f)->symbol(name));
}

/// A malloc'd CSR output (int32 indices), freed on replacement and destruction.
struct MallocCsr {
  int64_t rows = 0;
  int32_t* pos = nullptr;
  int32_t* crd = nullptr;
  double* vals = nullptr;
  void release() {
    std::free(pos);
    std::free(crd);
    std::free(vals);
    pos = crd = nullptr;
    vals = nullptr;
  }
  ~MallocCsr() { release(); }
  Result toResult() const { return csrResult(rows, pos, crd, vals); }
};

}  // namespace

double hand::streamTriad(int threads) {
  sym<SetThreadsFn>("hand_set_threads")(threads);
  auto triad = sym<TriadFn>("triad");
  auto fill = sym<FillFn>("fill");
  const int64_t n = 40'000'000;
  // Allocate uninitialised and first-touch in parallel, as STREAM does.
  auto* a = static_cast<double*>(std::malloc(n * sizeof(double)));
  auto* b = static_cast<double*>(std::malloc(n * sizeof(double)));
  auto* c = static_cast<double*>(std::malloc(n * sizeof(double)));
  fill(a, 0.0, n);
  fill(b, 1.0, n);
  fill(c, 2.0, n);
  std::vector<double> t;
  for (int r = 0; r < 9; r++) {
    auto t0 = std::chrono::steady_clock::now();
    triad(a, b, c, 3.0, n);
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::free(a);
  std::free(b);
  std::free(c);
  std::sort(t.begin(), t.end());
  return 24.0 * n / t[t.size() / 2];
}

const char* hand::name(Flags f) {
  return f == Flags::Native ? "hand" : f == Flags::O3 ? "hand-O3" : "hand-fastmath";
}

std::vector<std::string> hand::flags(Flags f) {
  switch (f) {
    case Flags::Native: return tessel::jitDefaultFlags();
    case Flags::O3: return {"-O3", "-fopenmp", "-std=gnu11"};
    case Flags::FastMath: return {"-O3", "-ffast-math", "-fopenmp", "-std=gnu11"};
  }
  return {};
}

std::unique_ptr<PeerRun> hand::make(const Problem& p, Flags variant) {
  auto r = std::make_unique<PeerRun>();
  r->system = name(variant);
  std::string fl;
  for (const std::string& x : flags(variant)) fl += " " + x;
  r->note = "C loops, OpenMP, flags" + fl;
  auto setThreads = sym<SetThreadsFn>("hand_set_threads", variant);
  r->setThreads = [setThreads](int n) { setThreads(n); };
  const CsrMatrix* A = p.A;
  switch (p.kind) {
    case KernelKind::SpMV:
    case KernelKind::SpMM: {
      int64_t K = p.X->cols;
      auto y = std::make_shared<std::vector<double>>(A->rows * K);
      if (p.kind == KernelKind::SpMV) {
        auto f = sym<SpmvFn>("spmv", variant);
        r->run = [=] { f(A->rows, A->pos.data(), A->crd.data(), A->vals.data(), p.X->v.data(), y->data()); };
      } else {
        auto f = sym<SpmmFn>("spmm", variant);
        r->run = [=] { f(A->rows, K, A->pos.data(), A->crd.data(), A->vals.data(), p.X->v.data(), y->data()); };
      }
      r->result = [y] { Result res; res.dense = *y; return res; };
      break;
    }
    case KernelKind::SDDMM: {
      auto out = std::make_shared<MallocCsr>();
      out->rows = A->rows;
      out->pos = static_cast<int32_t*>(std::malloc((A->rows + 1) * sizeof(int32_t)));
      out->crd = static_cast<int32_t*>(std::malloc(A->nnz() * sizeof(int32_t) + 1));
      out->vals = static_cast<double*>(std::malloc(A->nnz() * sizeof(double) + 1));
      auto f = sym<SddmmFn>("sddmm", variant);
      r->run = [=] {
        f(A->rows, p.X->cols, A->pos.data(), A->crd.data(), A->vals.data(), p.X->v.data(), p.Y->v.data(),
          out->pos, out->crd, out->vals);
      };
      r->result = [out] { return out->toResult(); };
      r->note = "output arrays preallocated (pattern of A copied in the timed call)";
      break;
    }
    case KernelKind::SpAdd3: {
      auto out = std::make_shared<MallocCsr>();
      out->rows = A->rows;
      auto f = sym<SpaddFn>("spadd", variant);
      const CsrMatrix *B = p.B, *C = p.C;
      r->run = [=] {
        out->release();
        MallocCsr t;
        t.rows = A->rows;
        f(A->rows, A->pos.data(), A->crd.data(), A->vals.data(), B->pos.data(), B->crd.data(), B->vals.data(), &t.pos,
          &t.crd, &t.vals);
        f(A->rows, t.pos, t.crd, t.vals, C->pos.data(), C->crd.data(), C->vals.data(), &out->pos, &out->crd,
          &out->vals);
      };
      r->result = [out] { return out->toResult(); };
      r->note = "two 2-way merges";
      break;
    }
    case KernelKind::SpGEMM: {
      auto out = std::make_shared<MallocCsr>();
      out->rows = A->rows;
      auto f = sym<SpgemmFn>("spgemm", variant);
      const CsrMatrix* B = p.B;
      r->run = [=] {
        out->release();
        f(A->rows, B->cols, A->pos.data(), A->crd.data(), A->vals.data(), B->pos.data(), B->crd.data(),
          B->vals.data(), &out->pos, &out->crd, &out->vals);
      };
      r->result = [out] { return out->toResult(); };
      r->note = "Gustavson, dense row workspace";
      break;
    }
    case KernelKind::SpTTV: {
      const Csf3* T = p.T;
      auto out = std::make_shared<MallocCsr>();
      out->rows = T->dims[0];
      auto f = sym<TtvFn>("ttv", variant);
      r->run = [=] {
        out->release();
        f(T->dims[0], T->pos0.data(), T->crd0.data(), T->pos1.data(), T->crd1.data(), T->pos2.data(),
          T->crd2.data(), T->vals.data(), p.X->v.data(), &out->pos, &out->crd, &out->vals);
      };
      r->result = [out] { return out->toResult(); };
      break;
    }
    case KernelKind::SpMTTKRP: {
      const Csf3* T = p.T;
      int64_t L = p.X->cols;
      auto y = std::make_shared<std::vector<double>>(T->dims[0] * L);
      auto f = sym<MttkrpFn>("mttkrp", variant);
      r->run = [=] {
        f(T->dims[0], L, T->pos0.data(), T->crd0.data(), T->pos1.data(), T->crd1.data(), T->pos2.data(),
          T->crd2.data(), T->vals.data(), p.X->v.data(), p.Y->v.data(), y->data());
      };
      r->result = [y] { Result res; res.dense = *y; return res; };
      break;
    }
  }
  return r;
}

}  // namespace bench
