// PETSc's distributed SpMV (MatMult on MPIAIJ, PETSc's own row layout: equal rows per rank)
// as the peer of `bench_distributed --kernel spmv` (issue 29). Every rank reads the
// matrix and inserts its rows; x is filled like tessel's c. One JSON line on rank 0,
// the median over --reps of the slowest rank's MatMult.
//
//   mpirun -np 4 bench_petsc_spmv [--matrix B.mtx | --rmat 18] [--reps 20]
#include <petscmat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "tessel/generate.h"
#include "tessel/io.h"

namespace {

double fillValue(int64_t j) {  // as bench_distributed's fillValue({j}, 2)
  int64_t h = 2 * 31 + j;
  return static_cast<double>((h * 2654435761LL) % 1000) / 1000.0 - 0.5;
}

}  // namespace

int main(int argc, char** argv) {
  std::string matrix;
  int rmat = 18, reps = 20;
  for (int a = 1; a + 1 < argc; a += 2) {
    std::string k = argv[a];
    if (k == "--matrix") matrix = argv[a + 1];
    else if (k == "--rmat") rmat = std::atoi(argv[a + 1]);
    else if (k == "--reps") reps = std::atoi(argv[a + 1]);
  }
  PetscInitialize(nullptr, nullptr, nullptr, nullptr);
  int rank = 0, size = 1;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  tessel::CooData b = matrix.empty() ? tessel::generateRmat(rmat, 16, 0.57, 0.19, 0.19, 1)
                                     : tessel::readTensorFile(matrix).data;
  const PetscInt rows = static_cast<PetscInt>(b.dims[0]), cols = static_cast<PetscInt>(b.dims[1]);
  Mat A;
  MatCreate(PETSC_COMM_WORLD, &A);
  MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, rows, cols);
  MatSetType(A, MATMPIAIJ);
  PetscInt lo = 0, hi = 0;
  MatSetUp(A);
  MatGetOwnershipRange(A, &lo, &hi);
  // Preallocate from the row counts (diagonal / off-diagonal blocks), then insert own rows.
  PetscInt clo = 0, chi = 0;
  {
    Vec probe;
    MatCreateVecs(A, &probe, nullptr);
    VecGetOwnershipRange(probe, &clo, &chi);
    VecDestroy(&probe);
  }
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
  Vec x, y;
  MatCreateVecs(A, &x, &y);
  PetscInt xlo = 0, xhi = 0;
  VecGetOwnershipRange(x, &xlo, &xhi);
  for (PetscInt j = xlo; j < xhi; j++) VecSetValue(x, j, fillValue(j), INSERT_VALUES);
  VecAssemblyBegin(x);
  VecAssemblyEnd(x);
  MatMult(A, x, y);  // warm-up: the scatter's set-up
  std::vector<double> times;
  for (int r = 0; r < reps; r++) {
    MPI_Barrier(PETSC_COMM_WORLD);
    auto t0 = std::chrono::steady_clock::now();
    MatMult(A, x, y);
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), slowest = 0;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
    times.push_back(slowest);
  }
  std::sort(times.begin(), times.end());
  PetscReal norm = 0;
  VecNorm(y, NORM_2, &norm);
  if (rank == 0)
    std::printf("{\"system\":\"petsc\",\"kernel\":\"spmv\",\"ranks\":%d,\"matrix\":\"%s\",\"nnz\":%lld,"
                "\"median_s\":%.6f,\"gflops\":%.3f,\"y_norm\":%.10g}\n",
                size, matrix.empty() ? ("rmat-" + std::to_string(rmat)).c_str() : matrix.c_str(),
                static_cast<long long>(b.nnz()), times[times.size() / 2],
                2.0 * static_cast<double>(b.nnz()) / times[times.size() / 2] / 1e9, static_cast<double>(norm));
  MatDestroy(&A);
  VecDestroy(&x);
  VecDestroy(&y);
  PetscFinalize();
  return 0;
}
