// PETSc 3.18 peer: MATSEQAIJ on PETSC_COMM_SELF, one MPI rank. PETSc's Seq kernels are
// single-threaded (no OpenMP), so the driver reuses the 1-thread time at 2 threads.
// PetscInitialize is called once (no arguments) on first use.
#include "peers.h"

#ifdef TESSEL_HAVE_PETSC
#include <petscmat.h>

#include <stdexcept>

namespace bench {
namespace {

void ok(PetscErrorCode e, const char* what) {
  if (e) throw std::runtime_error(std::string("PETSc: ") + what + " failed (" + std::to_string(int(e)) + ")");
}
#define PC(call) ok(call, #call)

bool gInit = false;
void init() {
  if (gInit) return;
  PC(PetscInitializeNoArguments());
  gInit = true;
}

/// A SeqAIJ matrix over its own copy of the CSR arrays (MatCreateSeqAIJWithArrays does
/// not copy, so the arrays live here).
struct Aij {
  std::vector<PetscInt> i, j;
  std::vector<PetscScalar> a;
  Mat m = nullptr;
  ~Aij() {
    if (m) MatDestroy(&m);
  }
};
struct Owned {
  Mat m = nullptr;
  ~Owned() {
    if (m) MatDestroy(&m);
  }
};

std::shared_ptr<Aij> toPetsc(const CsrMatrix& A) {
  auto M = std::make_shared<Aij>();
  M->i.assign(A.pos.begin(), A.pos.end());
  M->j.assign(A.crd.begin(), A.crd.end());
  M->a.assign(A.vals.begin(), A.vals.end());
  PC(MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, A.rows, A.cols, M->i.data(), M->j.data(), M->a.data(), &M->m));
  return M;
}

Result sparseOf(Mat Y) {
  PetscInt n;
  const PetscInt *ia, *ja;
  PetscBool done;
  PC(MatGetRowIJ(Y, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  const PetscScalar* v;
  PC(MatSeqAIJGetArrayRead(Y, &v));
  Result r = csrResult(n, ia, ja, v);
  PC(MatSeqAIJRestoreArrayRead(Y, &v));
  PC(MatRestoreRowIJ(Y, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  return r;
}

/// Column-major PETSc dense matrix -> row-major values.
Result denseOf(Mat Y) {
  PetscInt r, c;
  PC(MatGetSize(Y, &r, &c));
  const PetscScalar* v;
  PC(MatDenseGetArrayRead(Y, &v));
  Result res;
  res.dense.resize(size_t(r) * c);
  for (PetscInt i = 0; i < r; i++)
    for (PetscInt k = 0; k < c; k++) res.dense[size_t(i) * c + k] = v[size_t(k) * r + i];
  PC(MatDenseRestoreArrayRead(Y, &v));
  return res;
}

}  // namespace

bool petsc::installed() { return true; }
std::string petsc::version() {
  return std::to_string(PETSC_VERSION_MAJOR) + "." + std::to_string(PETSC_VERSION_MINOR) + "." +
         std::to_string(PETSC_VERSION_SUBMINOR);
}
void petsc::finalize() {
  if (gInit) PetscFinalize();
  gInit = false;
}

std::unique_ptr<PeerRun> petsc::make(const Problem& p) {
  if (p.kind == KernelKind::SDDMM || p.kind == KernelKind::SpTTV || p.kind == KernelKind::SpMTTKRP) return nullptr;
  if (p.A->nnz() >= (int64_t(1) << 31)) return nullptr;  // 32-bit PetscInt
  init();
  auto r = std::make_unique<PeerRun>();
  r->system = "petsc";
  r->maxThreads = 1;
  r->setThreads = [](int) {};
  auto A = toPetsc(*p.A);
  switch (p.kind) {
    case KernelKind::SpMV: {
      struct V {
        Vec v = nullptr;
        ~V() {
          if (v) VecDestroy(&v);
        }
      };
      auto xv = std::make_shared<V>(), yv = std::make_shared<V>();
      PC(VecCreateSeq(PETSC_COMM_SELF, p.X->rows, &xv->v));
      PetscScalar* xa;
      PC(VecGetArray(xv->v, &xa));
      std::copy(p.X->v.begin(), p.X->v.end(), xa);
      PC(VecRestoreArray(xv->v, &xa));
      PC(VecCreateSeq(PETSC_COMM_SELF, p.A->rows, &yv->v));
      r->note = "MatMult, MATSEQAIJ; single-threaded";
      r->run = [A, xv, yv] { PC(MatMult(A->m, xv->v, yv->v)); };
      r->result = [yv] {
        const PetscScalar* ya;
        PetscInt n;
        PC(VecGetLocalSize(yv->v, &n));
        PC(VecGetArrayRead(yv->v, &ya));
        Result res;
        res.dense.assign(ya, ya + n);
        PC(VecRestoreArrayRead(yv->v, &ya));
        return res;
      };
      break;
    }
    case KernelKind::SpMM: {
      auto X = std::make_shared<Owned>(), Y = std::make_shared<Owned>();
      PC(MatCreateSeqDense(PETSC_COMM_SELF, p.X->rows, p.X->cols, nullptr, &X->m));
      PetscScalar* xa;
      PC(MatDenseGetArray(X->m, &xa));
      for (int64_t i = 0; i < p.X->rows; i++)
        for (int64_t k = 0; k < p.X->cols; k++) xa[k * p.X->rows + i] = p.X->v[i * p.X->cols + k];
      PC(MatDenseRestoreArray(X->m, &xa));
      PC(MatAssemblyBegin(X->m, MAT_FINAL_ASSEMBLY));
      PC(MatAssemblyEnd(X->m, MAT_FINAL_ASSEMBLY));
      PC(MatMatMult(A->m, X->m, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Y->m));  // untimed: creates Y
      r->note = "MatMatMult AIJ x SEQDENSE (column-major), MAT_REUSE_MATRIX; single-threaded";
      r->run = [A, X, Y] { PC(MatMatMult(A->m, X->m, MAT_REUSE_MATRIX, PETSC_DEFAULT, &Y->m)); };
      r->result = [Y] { return denseOf(Y->m); };
      break;
    }
    case KernelKind::SpAdd3: {
      auto B = toPetsc(*p.B), C = toPetsc(*p.C);
      auto Y = std::make_shared<Owned>();
      r->note = "MatDuplicate + 2x MatAXPY(DIFFERENT_NONZERO_PATTERN); single-threaded";
      r->run = [A, B, C, Y] {
        if (Y->m) PC(MatDestroy(&Y->m));
        PC(MatDuplicate(A->m, MAT_COPY_VALUES, &Y->m));
        PC(MatAXPY(Y->m, 1.0, B->m, DIFFERENT_NONZERO_PATTERN));
        PC(MatAXPY(Y->m, 1.0, C->m, DIFFERENT_NONZERO_PATTERN));
      };
      r->result = [Y] { return sparseOf(Y->m); };
      break;
    }
    case KernelKind::SpGEMM: {
      auto B = p.B == p.A ? A : toPetsc(*p.B);
      auto Y = std::make_shared<Owned>();
      r->note = "MatMatMult AIJ x AIJ, MAT_INITIAL_MATRIX (symbolic + numeric); single-threaded";
      r->run = [A, B, Y] {
        if (Y->m) PC(MatDestroy(&Y->m));
        PC(MatMatMult(A->m, B->m, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Y->m));
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

#else  // !TESSEL_HAVE_PETSC

namespace bench {
bool petsc::installed() { return false; }
std::string petsc::version() { return ""; }
void petsc::finalize() {}
std::unique_ptr<PeerRun> petsc::make(const Problem&) { return nullptr; }
}  // namespace bench

#endif
