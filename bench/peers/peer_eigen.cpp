// Eigen 3.4 peer: SparseMatrix<double, RowMajor, int>. Only the sparse * dense products
// are multi-threaded in Eigen (OpenMP, Eigen::setNbThreads; this file is compiled with
// -fopenmp); sparse + sparse and sparse * sparse run on one thread.
#include "peers.h"

#ifdef TESSEL_HAVE_EIGEN
#include <Eigen/Core>
#include <Eigen/SparseCore>

namespace bench {
namespace {

using SpMat = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;
using DenseR = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

std::shared_ptr<SpMat> toEigen(const CsrMatrix& A) {
  Eigen::Map<const SpMat> m(A.rows, A.cols, A.nnz(), A.pos.data(), A.crd.data(), A.vals.data());
  auto M = std::make_shared<SpMat>(m);
  M->makeCompressed();
  return M;
}

Result sparseOf(const SpMat& Y) {
  Result r;
  r.sparse = true;
  r.rows = Y.rows();
  r.pos.resize(Y.rows() + 1);
  r.pos[0] = 0;
  for (Eigen::Index i = 0; i < Y.outerSize(); i++) {
    for (SpMat::InnerIterator it(Y, i); it; ++it) {
      r.crd.push_back(it.col());
      r.vals.push_back(it.value());
    }
    r.pos[i + 1] = static_cast<int64_t>(r.crd.size());
  }
  return r;
}

}  // namespace

bool eigen::installed() { return true; }
std::string eigen::version() {
  return std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
         std::to_string(EIGEN_MINOR_VERSION);
}

std::unique_ptr<PeerRun> eigen::make(const Problem& p) {
  if (p.kind == KernelKind::SDDMM || p.kind == KernelKind::SpTTV || p.kind == KernelKind::SpMTTKRP) return nullptr;
  auto r = std::make_unique<PeerRun>();
  r->system = "eigen";
  r->setThreads = [](int n) { Eigen::setNbThreads(n); };
  auto A = toEigen(*p.A);
  switch (p.kind) {
    case KernelKind::SpMV: {
      auto x = std::make_shared<Eigen::VectorXd>(Eigen::Map<const Eigen::VectorXd>(p.X->v.data(), p.X->rows));
      auto y = std::make_shared<Eigen::VectorXd>(p.A->rows);
      r->note = "RowMajor SparseMatrix * VectorXd";
      r->run = [A, x, y] { y->noalias() = *A * *x; };
      r->result = [y] {
        Result res;
        res.dense.assign(y->data(), y->data() + y->size());
        return res;
      };
      break;
    }
    case KernelKind::SpMM: {
      auto X = std::make_shared<DenseR>(Eigen::Map<const DenseR>(p.X->v.data(), p.X->rows, p.X->cols));
      auto Y = std::make_shared<DenseR>(p.A->rows, p.X->cols);
      r->note = "RowMajor sparse * RowMajor dense";
      r->run = [A, X, Y] { Y->noalias() = *A * *X; };
      r->result = [Y] {
        Result res;
        res.dense.assign(Y->data(), Y->data() + Y->size());
        return res;
      };
      break;
    }
    case KernelKind::SpAdd3: {
      auto B = toEigen(*p.B), C = toEigen(*p.C);
      auto Y = std::make_shared<SpMat>();
      r->note = "(A+B)+C, one lazy expression; single-threaded";
      r->maxThreads = 1;
      r->run = [A, B, C, Y] { *Y = (*A + *B) + *C; };
      r->result = [Y] { return sparseOf(*Y); };
      break;
    }
    case KernelKind::SpGEMM: {
      auto B = p.B == p.A ? A : toEigen(*p.B);
      auto Y = std::make_shared<SpMat>();
      r->note = "conservative sparse*sparse product; single-threaded";
      r->maxThreads = 1;
      r->run = [A, B, Y] { *Y = *A * *B; };
      r->result = [Y] { return sparseOf(*Y); };
      break;
    }
    default:
      return nullptr;
  }
  return r;
}

}  // namespace bench

#else  // !TESSEL_HAVE_EIGEN

namespace bench {
bool eigen::installed() { return false; }
std::string eigen::version() { return ""; }
std::unique_ptr<PeerRun> eigen::make(const Problem&) { return nullptr; }
}  // namespace bench

#endif
