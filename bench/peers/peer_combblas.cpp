// CombBLAS's distributed SpGEMM (Mult_AnXBn_Synch, PlusTimesSRing<double,double>, 2-D SUMMA on
// a square process grid, DCSC blocks) as the peer of `bench_distributed --kernel spgemm`
// (issue 29), on the same inputs as bench_petsc_sparse: B * E, E = B when square, else B^T.
// Every rank reads or generates the matrix and builds its own block of CombBLAS's 2-D block
// layout (SpParMat::Owner's: m / gridrows rows per block, the last block takes the rest;
// the same for columns; duplicates summed, as PETSc's ADD_VALUES). One JSON line on rank 0:
// the median over --reps of the slowest rank's time of one product from scratch (after one
// warm-up), and the Frobenius norm of the product.
//
//   mpirun -np 4 bench_combblas_spgemm [--matrix B.mtx | --rmat 16] [--reps 20]   (np: 1, 4, 9, ...)
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

// tessel's first: CombBLAS's SequenceHeaps defines a function-like macro Error().
#include "../sparse_inputs.h"
#include "CombBLAS/CombBLAS.h"

namespace {

using Local = combblas::SpDCCols<int64_t, double>;
using Dist = combblas::SpParMat<int64_t, double, Local>;

/// [first, end) of block `k` of `q` blocks of `n`: n / q each, the last one takes the rest.
std::pair<int64_t, int64_t> blockOf(int64_t n, int q, int k) {
  const int64_t per = n / q;
  return {per * k, k == q - 1 ? n : per * (k + 1)};
}

/// This rank's block of `b` in CombBLAS's 2-D layout on `grid`, as a distributed matrix.
Dist distOf(const tessel::CooData& b, const std::shared_ptr<combblas::CommGrid>& grid) {
  auto [r0, r1] = blockOf(b.dims[0], grid->GetGridRows(), grid->GetRankInProcCol());
  auto [c0, c1] = blockOf(b.dims[1], grid->GetGridCols(), grid->GetRankInProcRow());
  std::vector<std::tuple<int64_t, int64_t, double>> t;
  for (int64_t e = 0; e < b.nnz(); e++) {
    const int64_t i = b.coords[static_cast<size_t>(2 * e)], j = b.coords[static_cast<size_t>(2 * e + 1)];
    if (i >= r0 && i < r1 && j >= c0 && j < c1) t.emplace_back(i - r0, j - c0, b.values[static_cast<size_t>(e)]);
  }
  // Column-major order (DCSC's), duplicates summed.
  std::sort(t.begin(), t.end(), [](const auto& x, const auto& y) {
    return std::get<1>(x) != std::get<1>(y) ? std::get<1>(x) < std::get<1>(y) : std::get<0>(x) < std::get<0>(y);
  });
  size_t n = 0;
  for (size_t e = 0; e < t.size(); e++) {
    if (n && std::get<0>(t[n - 1]) == std::get<0>(t[e]) && std::get<1>(t[n - 1]) == std::get<1>(t[e]))
      std::get<2>(t[n - 1]) += std::get<2>(t[e]);
    else
      t[n++] = t[e];
  }
  t.resize(n);
  return Dist(new Local(r1 - r0, c1 - c0, static_cast<int64_t>(t.size()), t.data(), false), grid);
}

}  // namespace

int main(int argc, char** argv) {
  const bench::PeerArgs args(argc, argv, "spgemm", 16);
  if (args.kernel != "spgemm") {
    std::fprintf(stderr, "bench_combblas_spgemm: only --kernel spgemm\n");
    return 2;
  }
  const int reps = args.reps;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int q = static_cast<int>(std::lround(std::sqrt(static_cast<double>(size))));
  if (q * q != size) {
    if (rank == 0)
      std::fprintf(stderr, "bench_combblas_spgemm: CombBLAS needs a square process grid; %d ranks is not a square (1, 4, 9, ...)\n", size);
    MPI_Finalize();
    return 2;
  }
  double t = 0, check = 0;
  int64_t nnz = 0;
  {
    auto grid = std::make_shared<combblas::CommGrid>(MPI_COMM_WORLD, q, q);
    tessel::CooData b = bench::sparseInput(args.matrix, args.rmat);
    nnz = b.nnz();
    Dist B = distOf(b, grid), E = distOf(bench::gemmRight(b), grid);
    b = tessel::CooData();
    std::unique_ptr<Dist> R;
    t = bench::timed(reps, [&] {
      R.reset();
      R.reset(new Dist(combblas::Mult_AnXBn_Synch<combblas::PlusTimesSRing<double, double>, double, Local>(B, E)));
    });
    double local = 0;
    if (const auto* d = R->seqptr()->GetDCSC())
      for (int64_t e = 0; e < d->nz; e++) local += d->numx[e] * d->numx[e];
    MPI_Allreduce(&local, &check, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    check = std::sqrt(check);
  }
  if (rank == 0)
    std::printf("{\"system\":\"combblas\",\"kernel\":\"spgemm\",\"ranks\":%d,\"matrix\":\"%s\",\"nnz\":%lld,"
                "\"median_s\":%.6f,\"gflops\":%.3f,\"check_norm\":%.10g}\n",
                size, args.inputName().c_str(),
                static_cast<long long>(nnz), t, 0.0, check);
  MPI_Finalize();
  return 0;
}
