// SuiteSparse:GraphBLAS peer (64-bit indices, by-row storage, OpenMP threads set with
// GxB_set(GxB_NTHREADS, n)). Inputs are imported (copied) untimed and materialised with
// GrB_*_wait before timing; every timed call ends with GrB_*_wait(MATERIALIZE) so that
// no pending work escapes the measurement.
#include "peers.h"

#ifdef TESSEL_HAVE_GRAPHBLAS
#include <cstdlib>
#include <cstring>
#include <stdexcept>

extern "C" {
#include <GraphBLAS.h>
}

namespace bench {
namespace {

void ok(GrB_Info info, const char* what) {
  if (info != GrB_SUCCESS && info != GrB_NO_VALUE)
    throw std::runtime_error(std::string("GraphBLAS: ") + what + " failed (" + std::to_string(int(info)) + ")");
}
#define GRB_CHECK(call) ok(call, #call)

bool gInit = false;
void init() {
  if (gInit) return;
  GRB_CHECK(GrB_init(GrB_NONBLOCKING));
  GRB_CHECK(GxB_Global_Option_set(GxB_FORMAT, GxB_BY_ROW));
  gInit = true;
}

/// Shared handle that frees the GraphBLAS object.
struct Mat {
  GrB_Matrix m = nullptr;
  ~Mat() {
    if (m) GrB_Matrix_free(&m);
  }
};
struct Vec {
  GrB_Vector v = nullptr;
  ~Vec() {
    if (v) GrB_Vector_free(&v);
  }
};

std::shared_ptr<Mat> importCsr(const CsrMatrix& A) {
  auto M = std::make_shared<Mat>();
  std::vector<GrB_Index> p(A.pos.begin(), A.pos.end()), c(A.crd.begin(), A.crd.end());
  GRB_CHECK(GrB_Matrix_import_FP64(&M->m, GrB_FP64, A.rows, A.cols, p.data(), c.data(), A.vals.data(), p.size(), c.size(),
                            A.vals.size(), GrB_CSR_FORMAT));
  GRB_CHECK(GxB_Matrix_Option_set(M->m, GxB_FORMAT, GxB_BY_ROW));
  GRB_CHECK(GrB_Matrix_wait(M->m, GrB_MATERIALIZE));
  return M;
}

std::shared_ptr<Mat> importFullRow(const DenseMatrix& X) {
  auto M = std::make_shared<Mat>();
  GRB_CHECK(GrB_Matrix_new(&M->m, GrB_FP64, X.rows, X.cols));
  size_t bytes = X.v.size() * sizeof(double);
  void* buf = std::malloc(bytes + 8);  // GraphBLAS takes ownership (frees with free())
  std::memcpy(buf, X.v.data(), bytes);
  GRB_CHECK(GxB_Matrix_pack_FullR(M->m, &buf, bytes + 8, false, nullptr));
  GRB_CHECK(GrB_Matrix_wait(M->m, GrB_MATERIALIZE));
  return M;
}

std::shared_ptr<Mat> newRowMatrix(GrB_Index r, GrB_Index c) {
  auto M = std::make_shared<Mat>();
  GRB_CHECK(GrB_Matrix_new(&M->m, GrB_FP64, r, c));
  GRB_CHECK(GxB_Matrix_Option_set(M->m, GxB_FORMAT, GxB_BY_ROW));
  return M;
}

Result denseOf(GrB_Matrix M) {
  GrB_Index r, c, n;
  GRB_CHECK(GrB_Matrix_nrows(&r, M));
  GRB_CHECK(GrB_Matrix_ncols(&c, M));
  GRB_CHECK(GrB_Matrix_nvals(&n, M));
  std::vector<GrB_Index> I(n), J(n);
  std::vector<double> X(n);
  GRB_CHECK(GrB_Matrix_extractTuples_FP64(I.data(), J.data(), X.data(), &n, M));
  Result res;
  res.dense.assign(r * c, 0.0);
  for (GrB_Index e = 0; e < n; e++) res.dense[I[e] * c + J[e]] = X[e];
  return res;
}

Result sparseOf(GrB_Matrix M) {
  GrB_Index r, n;
  GRB_CHECK(GrB_Matrix_nrows(&r, M));
  GRB_CHECK(GrB_Matrix_nvals(&n, M));
  std::vector<GrB_Index> I(n), J(n);
  std::vector<double> X(n);
  GRB_CHECK(GrB_Matrix_extractTuples_FP64(I.data(), J.data(), X.data(), &n, M));
  Result res;
  res.sparse = true;
  res.rows = r;
  res.pos.assign(r + 1, 0);
  for (GrB_Index e = 0; e < n; e++) res.pos[I[e] + 1]++;
  for (GrB_Index i = 0; i < r; i++) res.pos[i + 1] += res.pos[i];
  res.crd.resize(n);
  res.vals.resize(n);
  std::vector<int64_t> next(res.pos.begin(), res.pos.end() - 1);
  for (GrB_Index e = 0; e < n; e++) {
    int64_t o = next[I[e]]++;
    res.crd[o] = J[e];
    res.vals[o] = X[e];
  }
  return res;
}

}  // namespace

bool graphblas::installed() { return true; }
std::string graphblas::version() {
  return std::to_string(GxB_IMPLEMENTATION_MAJOR) + "." + std::to_string(GxB_IMPLEMENTATION_MINOR) + "." +
         std::to_string(GxB_IMPLEMENTATION_SUB);
}
void graphblas::finalize() {
  if (gInit) GrB_finalize();
  gInit = false;
}

std::unique_ptr<PeerRun> graphblas::make(const Problem& p) {
  if (p.kind == KernelKind::SpTTV || p.kind == KernelKind::SpMTTKRP) return nullptr;
  init();
  auto r = std::make_unique<PeerRun>();
  r->system = "graphblas";
  r->setThreads = [](int n) { GRB_CHECK(GxB_Global_Option_set(GxB_GLOBAL_NTHREADS, n)); };
  auto A = importCsr(*p.A);
  switch (p.kind) {
    case KernelKind::SpMV: {
      auto x = std::make_shared<Vec>(), y = std::make_shared<Vec>();
      GRB_CHECK(GrB_Vector_new(&x->v, GrB_FP64, p.X->rows));
      size_t bytes = p.X->v.size() * sizeof(double);
      void* buf = std::malloc(bytes + 8);
      std::memcpy(buf, p.X->v.data(), bytes);
      GRB_CHECK(GxB_Vector_pack_Full(x->v, &buf, bytes + 8, false, nullptr));
      GRB_CHECK(GrB_Vector_wait(x->v, GrB_MATERIALIZE));
      GRB_CHECK(GrB_Vector_new(&y->v, GrB_FP64, p.A->rows));
      r->note = "GrB_mxv, PLUS_TIMES_FP64";
      r->run = [A, x, y] {
        GRB_CHECK(GrB_mxv(y->v, nullptr, nullptr, GrB_PLUS_TIMES_SEMIRING_FP64, A->m, x->v, nullptr));
        GRB_CHECK(GrB_Vector_wait(y->v, GrB_MATERIALIZE));
      };
      int64_t rows = p.A->rows;
      r->result = [y, rows] {
        GrB_Index n;
        GRB_CHECK(GrB_Vector_nvals(&n, y->v));
        std::vector<GrB_Index> I(n);
        std::vector<double> X(n);
        GRB_CHECK(GrB_Vector_extractTuples_FP64(I.data(), X.data(), &n, y->v));
        Result res;
        res.dense.assign(rows, 0.0);
        for (GrB_Index e = 0; e < n; e++) res.dense[I[e]] = X[e];
        return res;
      };
      break;
    }
    case KernelKind::SpMM: {
      auto X = importFullRow(*p.X);
      auto Y = newRowMatrix(p.A->rows, p.X->cols);
      r->note = "GrB_mxm, X full by row";
      r->run = [A, X, Y] {
        GRB_CHECK(GrB_mxm(Y->m, nullptr, nullptr, GrB_PLUS_TIMES_SEMIRING_FP64, A->m, X->m, nullptr));
        GRB_CHECK(GrB_Matrix_wait(Y->m, GrB_MATERIALIZE));
      };
      r->result = [Y] { return denseOf(Y->m); };
      break;
    }
    case KernelKind::SDDMM: {
      auto U = importFullRow(*p.X), V = importFullRow(*p.Y);
      auto S = newRowMatrix(p.A->rows, p.A->cols), Y = newRowMatrix(p.A->rows, p.A->cols);
      r->note = "masked mxm S<struct(A)> = U*V' (dot3), then eWiseMult A.*S";
      r->run = [A, U, V, S, Y] {
        GRB_CHECK(GrB_mxm(S->m, A->m, nullptr, GrB_PLUS_TIMES_SEMIRING_FP64, U->m, V->m, GrB_DESC_ST1));
        GRB_CHECK(GrB_Matrix_eWiseMult_BinaryOp(Y->m, nullptr, nullptr, GrB_TIMES_FP64, A->m, S->m, nullptr));
        GRB_CHECK(GrB_Matrix_wait(Y->m, GrB_MATERIALIZE));
      };
      r->result = [Y] { return sparseOf(Y->m); };
      break;
    }
    case KernelKind::SpAdd3: {
      auto B = importCsr(*p.B), C = importCsr(*p.C);
      auto T = newRowMatrix(p.A->rows, p.A->cols), Y = newRowMatrix(p.A->rows, p.A->cols);
      r->note = "GrB_eWiseAdd twice";
      r->run = [A, B, C, T, Y] {
        GRB_CHECK(GrB_Matrix_eWiseAdd_BinaryOp(T->m, nullptr, nullptr, GrB_PLUS_FP64, A->m, B->m, nullptr));
        GRB_CHECK(GrB_Matrix_eWiseAdd_BinaryOp(Y->m, nullptr, nullptr, GrB_PLUS_FP64, T->m, C->m, nullptr));
        GRB_CHECK(GrB_Matrix_wait(Y->m, GrB_MATERIALIZE));
      };
      r->result = [Y] { return sparseOf(Y->m); };
      break;
    }
    case KernelKind::SpGEMM: {
      auto B = p.B == p.A ? A : importCsr(*p.B);
      auto Y = newRowMatrix(p.A->rows, p.B->cols);
      r->note = "GrB_mxm, PLUS_TIMES_FP64";
      r->run = [A, B, Y] {
        GRB_CHECK(GrB_mxm(Y->m, nullptr, nullptr, GrB_PLUS_TIMES_SEMIRING_FP64, A->m, B->m, nullptr));
        GRB_CHECK(GrB_Matrix_wait(Y->m, GrB_MATERIALIZE));
      };
      r->result = [Y] { return sparseOf(Y->m); };
      break;
    }
    default:
      return nullptr;
  }
  return r;
}

}  // namespace bench

#else  // !TESSEL_HAVE_GRAPHBLAS

namespace bench {
bool graphblas::installed() { return false; }
std::string graphblas::version() { return ""; }
void graphblas::finalize() {}
std::unique_ptr<PeerRun> graphblas::make(const Problem&) { return nullptr; }
}  // namespace bench

#endif
