// PETSc's distributed sparse kernels (MPIAIJ, PETSc's own row layout: equal rows per
// rank) as the peers of `bench_distributed --kernel spmv|spmm|spadd3|spgemm` (issue 29),
// on the same inputs. Every rank reads the matrix and inserts its rows. One JSON line on
// rank 0: the median over --reps of the slowest rank's time.
//   spmv    MatMult
//   spmm    MatMatMult with a dense matrix of --cols columns (MAT_REUSE_MATRIX)
//   spadd3  MatDuplicate(B) and two MatAXPY(DIFFERENT_NONZERO_PATTERN): B + C + D, C and D
//           B with its columns shifted by 1 and 3 (a fresh output per run, as tessel's)
//   spgemm  MatMatMult(B, E) from scratch (symbolic and numeric), E = B, or B^T when not square
//
//   mpirun -np 4 bench_petsc_sparse [--kernel spmv] [--matrix B.mtx | --rmat 18] [--reps 20] [--cols 64]
#include <petscmat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "../sparse_inputs.h"

namespace {

/// An MPIAIJ matrix of `b`'s entries (coordinates mapped by `at`), preallocated exactly.
Mat aijOf(const tessel::CooData& b) {
  const PetscInt rows = static_cast<PetscInt>(b.dims[0]), cols = static_cast<PetscInt>(b.dims[1]);
  Mat A;
  MatCreate(PETSC_COMM_WORLD, &A);
  MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, rows, cols);
  MatSetType(A, MATMPIAIJ);
  MatSetUp(A);
  PetscInt lo = 0, hi = 0, clo = 0, chi = 0;
  MatGetOwnershipRange(A, &lo, &hi);
  MatGetOwnershipRangeColumn(A, &clo, &chi);
  std::vector<PetscInt> dnz(static_cast<size_t>(hi - lo), 0), onz(static_cast<size_t>(hi - lo), 0);
  for (int64_t e = 0; e < b.nnz(); e++) {
    PetscInt i = static_cast<PetscInt>(b.coords[2 * e]), j = static_cast<PetscInt>(b.coords[2 * e + 1]);
    if (i < lo || i >= hi) continue;
    (j >= clo && j < chi ? dnz : onz)[static_cast<size_t>(i - lo)]++;
  }
  MatMPIAIJSetPreallocation(A, 0, dnz.data(), 0, onz.data());
  MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE);
  for (int64_t e = 0; e < b.nnz(); e++) {
    PetscInt i = static_cast<PetscInt>(b.coords[2 * e]), j = static_cast<PetscInt>(b.coords[2 * e + 1]);
    if (i < lo || i >= hi) continue;
    PetscScalar v = b.values[static_cast<size_t>(e)];
    MatSetValues(A, 1, &i, 1, &j, &v, ADD_VALUES);
  }
  MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY);
  MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY);
  return A;
}

}  // namespace

int main(int argc, char** argv) {
  const bench::PeerArgs args(argc, argv, "spmv", 18);
  const std::string& kernel = args.kernel;
  const int reps = args.reps, cols = args.cols;
  PetscInitialize(nullptr, nullptr, nullptr, nullptr);
  int rank = 0, size = 1;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  const tessel::CooData b = bench::sparseInput(args.matrix, args.rmat);
  Mat B = aijOf(b);
  double t = 0, flops = 0, check = 0;
  if (kernel == "spmv") {
    Vec x, y;
    MatCreateVecs(B, &x, &y);
    PetscInt xlo = 0, xhi = 0;
    VecGetOwnershipRange(x, &xlo, &xhi);
    for (PetscInt j = xlo; j < xhi; j++) VecSetValue(x, j, bench::fillValue({j}, 2), INSERT_VALUES);
    VecAssemblyBegin(x);
    VecAssemblyEnd(x);
    t = bench::timed(reps, [&] { MatMult(B, x, y); });
    PetscReal norm = 0;
    VecNorm(y, NORM_2, &norm);
    check = norm;
    flops = 2.0 * static_cast<double>(b.nnz());
    VecDestroy(&x);
    VecDestroy(&y);
  } else if (kernel == "spmm") {
    PetscInt clo = 0, chi = 0;
    MatGetOwnershipRangeColumn(B, &clo, &chi);
    Mat C, R = nullptr;
    MatCreateDense(PETSC_COMM_WORLD, chi - clo, PETSC_DECIDE, b.dims[1], cols, nullptr, &C);
    for (PetscInt j = clo; j < chi; j++)
      for (PetscInt k = 0; k < cols; k++) MatSetValue(C, j, k, bench::fillValue({j, k}, 2), INSERT_VALUES);
    MatAssemblyBegin(C, MAT_FINAL_ASSEMBLY);
    MatAssemblyEnd(C, MAT_FINAL_ASSEMBLY);
    MatMatMult(B, C, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &R);
    t = bench::timed(reps, [&] { MatMatMult(B, C, MAT_REUSE_MATRIX, PETSC_DEFAULT, &R); });
    PetscReal norm = 0;
    MatNorm(R, NORM_FROBENIUS, &norm);
    check = norm;
    flops = 2.0 * static_cast<double>(b.nnz()) * cols;
    MatDestroy(&C);
    MatDestroy(&R);
  } else if (kernel == "spadd3") {
    Mat C = aijOf(bench::shiftedColumns(b, 1)), D = aijOf(bench::shiftedColumns(b, 3)), Y = nullptr;
    t = bench::timed(reps, [&] {
      if (Y) MatDestroy(&Y);
      MatDuplicate(B, MAT_COPY_VALUES, &Y);
      MatAXPY(Y, 1.0, C, DIFFERENT_NONZERO_PATTERN);
      MatAXPY(Y, 1.0, D, DIFFERENT_NONZERO_PATTERN);
    });
    PetscReal norm = 0;
    MatNorm(Y, NORM_FROBENIUS, &norm);
    check = norm;
    flops = 3.0 * static_cast<double>(b.nnz());
    MatDestroy(&C);
    MatDestroy(&D);
    MatDestroy(&Y);
  } else if (kernel == "spgemm") {
    Mat E = aijOf(bench::gemmRight(b)), R = nullptr;
    t = bench::timed(reps, [&] {
      if (R) MatDestroy(&R);
      MatMatMult(B, E, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &R);
    });
    PetscReal norm = 0;
    MatNorm(R, NORM_FROBENIUS, &norm);
    check = norm;
    MatDestroy(&E);
    MatDestroy(&R);
  } else {
    if (rank == 0) std::fprintf(stderr, "bench_petsc_sparse: unknown --kernel %s\n", kernel.c_str());
    PetscFinalize();
    return 2;
  }
  if (rank == 0)
    std::printf("{\"system\":\"petsc\",\"kernel\":\"%s\",\"ranks\":%d,\"matrix\":\"%s\",\"nnz\":%lld,"
                "\"median_s\":%.6f,\"gflops\":%.3f,\"check_norm\":%.10g}\n",
                kernel.c_str(), size, args.inputName().c_str(),
                static_cast<long long>(b.nnz()), t, flops / t / 1e9, check);
  MatDestroy(&B);
  PetscFinalize();
  return 0;
}
