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

#include "tessel/generate.h"
#include "tessel/io.h"

namespace {

double fillValue(const std::vector<int64_t>& c, int salt) {  // as bench_distributed's
  int64_t h = salt;
  for (int64_t x : c) h = h * 31 + x;
  return static_cast<double>((h * 2654435761LL) % 1000) / 1000.0 - 0.5;
}

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

tessel::CooData shiftedColumns(const tessel::CooData& b, int64_t shift) {  // as bench_distributed's
  tessel::CooData out = b;
  for (int64_t e = 0; e < out.nnz(); e++) out.coords[static_cast<size_t>(2 * e + 1)] = (out.coords[static_cast<size_t>(2 * e + 1)] + shift) % out.dims[1];
  return out;
}

tessel::CooData gemmRight(const tessel::CooData& b) {  // as bench_distributed's
  if (b.dims[0] == b.dims[1]) return b;
  tessel::CooData t;
  t.dims = {b.dims[1], b.dims[0]};
  for (int64_t e = 0; e < b.nnz(); e++)
    t.add({b.coords[static_cast<size_t>(2 * e + 1)], b.coords[static_cast<size_t>(2 * e)]}, b.values[static_cast<size_t>(e)]);
  return t;
}

/// Median over reps of the slowest rank's time of `step` (after one warm-up call).
double timed(int reps, const std::function<void()>& step) {
  step();
  std::vector<double> times;
  for (int r = 0; r < reps; r++) {
    MPI_Barrier(PETSC_COMM_WORLD);
    auto t0 = std::chrono::steady_clock::now();
    step();
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), slowest = 0;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
    times.push_back(slowest);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string matrix, kernel = "spmv";
  int rmat = 18, reps = 20, cols = 64;
  for (int a = 1; a + 1 < argc; a += 2) {
    std::string k = argv[a];
    if (k == "--matrix") matrix = argv[a + 1];
    else if (k == "--rmat") rmat = std::atoi(argv[a + 1]);
    else if (k == "--reps") reps = std::atoi(argv[a + 1]);
    else if (k == "--kernel") kernel = argv[a + 1];
    else if (k == "--cols") cols = std::atoi(argv[a + 1]);
  }
  PetscInitialize(nullptr, nullptr, nullptr, nullptr);
  int rank = 0, size = 1;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  tessel::CooData b = matrix.empty() ? tessel::generateRmat(rmat, 16, 0.57, 0.19, 0.19, 1)
                                     : tessel::readTensorFile(matrix).data;
  Mat B = aijOf(b);
  double t = 0, flops = 0, check = 0;
  if (kernel == "spmv") {
    Vec x, y;
    MatCreateVecs(B, &x, &y);
    PetscInt xlo = 0, xhi = 0;
    VecGetOwnershipRange(x, &xlo, &xhi);
    for (PetscInt j = xlo; j < xhi; j++) VecSetValue(x, j, fillValue({j}, 2), INSERT_VALUES);
    VecAssemblyBegin(x);
    VecAssemblyEnd(x);
    t = timed(reps, [&] { MatMult(B, x, y); });
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
      for (PetscInt k = 0; k < cols; k++) MatSetValue(C, j, k, fillValue({j, k}, 2), INSERT_VALUES);
    MatAssemblyBegin(C, MAT_FINAL_ASSEMBLY);
    MatAssemblyEnd(C, MAT_FINAL_ASSEMBLY);
    MatMatMult(B, C, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &R);
    t = timed(reps, [&] { MatMatMult(B, C, MAT_REUSE_MATRIX, PETSC_DEFAULT, &R); });
    PetscReal norm = 0;
    MatNorm(R, NORM_FROBENIUS, &norm);
    check = norm;
    flops = 2.0 * static_cast<double>(b.nnz()) * cols;
    MatDestroy(&C);
    MatDestroy(&R);
  } else if (kernel == "spadd3") {
    Mat C = aijOf(shiftedColumns(b, 1)), D = aijOf(shiftedColumns(b, 3)), Y = nullptr;
    t = timed(reps, [&] {
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
    Mat E = aijOf(gemmRight(b)), R = nullptr;
    t = timed(reps, [&] {
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
                kernel.c_str(), size, matrix.empty() ? ("rmat-" + std::to_string(rmat)).c_str() : matrix.c_str(),
                static_cast<long long>(b.nnz()), t, flops / t / 1e9, check);
  MatDestroy(&B);
  PetscFinalize();
  return 0;
}
