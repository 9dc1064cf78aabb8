// Trilinos Tpetra's distributed SpMV (CrsMatrix::apply, Kokkos Serial: one thread per rank)
// as the peer of `bench_distributed --kernel spmv` (issue 29), on the same inputs as
// bench_petsc_sparse. Tpetra's default contiguous uniform row map (equal rows per rank, as
// PETSc's); every rank reads or generates the matrix and inserts its rows (duplicates are
// summed, as PETSc's ADD_VALUES); fillComplete builds the column map and the importer of x.
// x(j) = bench::fillValue({j}, 2). One JSON line on rank 0: the median over --reps of the slowest
// rank's time of apply (after one warm-up), and the 2-norm of y.
//
//   mpirun -np 4 bench_tpetra_spmv [--matrix B.mtx | --rmat 18] [--reps 20]
#include <Teuchos_RCP.hpp>
#include <Tpetra_Core.hpp>
#include <Tpetra_CrsMatrix.hpp>
#include <Tpetra_Map.hpp>
#include <Tpetra_Vector.hpp>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "../sparse_inputs.h"

int main(int argc, char** argv) {
  const bench::PeerArgs args(argc, argv, "spmv", 18);
  if (args.kernel != "spmv") {
    std::fprintf(stderr, "bench_tpetra_spmv: only --kernel spmv\n");
    return 2;
  }
  const int reps = args.reps;
  Tpetra::ScopeGuard scope(&argc, &argv);  // MPI and Kokkos
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double t = 0, check = 0;
  int64_t nnz = 0;
  {
    using Map = Tpetra::Map<>;
    using GO = Map::global_ordinal_type;
    using Matrix = Tpetra::CrsMatrix<double>;
    using Vector = Tpetra::Vector<double>;
    auto comm = Tpetra::getDefaultComm();
    tessel::CooData b = bench::sparseInput(args.matrix, args.rmat);
    nnz = b.nnz();
    const GO rows = static_cast<GO>(b.dims[0]), cols = static_cast<GO>(b.dims[1]);
    Teuchos::RCP<const Map> rowMap = Teuchos::rcp(new Map(rows, 0, comm));
    Teuchos::RCP<const Map> domainMap = rowMap;
    if (cols != rows) domainMap = Teuchos::rcp(new Map(cols, 0, comm));
    // This rank's entries, grouped by row; exact per-row allocation.
    const GO lo = rowMap->getMinGlobalIndex();
    const size_t mine = rowMap->getNodeNumElements();
    std::vector<size_t> count(mine, 0);
    for (int64_t e = 0; e < b.nnz(); e++)
      if (rowMap->isNodeGlobalElement(static_cast<GO>(b.coords[static_cast<size_t>(2 * e)])))
        count[static_cast<size_t>(b.coords[static_cast<size_t>(2 * e)] - lo)]++;
    std::vector<size_t> start(mine + 1, 0);
    for (size_t r = 0; r < mine; r++) start[r + 1] = start[r] + count[r];
    std::vector<GO> colIdx(start[mine]);
    std::vector<double> vals(start[mine]);
    std::vector<size_t> at(start.begin(), start.end() - 1);
    for (int64_t e = 0; e < b.nnz(); e++) {
      const GO i = static_cast<GO>(b.coords[static_cast<size_t>(2 * e)]);
      if (!rowMap->isNodeGlobalElement(i)) continue;
      size_t& p = at[static_cast<size_t>(i - lo)];
      colIdx[p] = static_cast<GO>(b.coords[static_cast<size_t>(2 * e + 1)]);
      vals[p++] = b.values[static_cast<size_t>(e)];
    }
    b = tessel::CooData();
    Teuchos::RCP<Matrix> A = Teuchos::rcp(new Matrix(rowMap, Teuchos::ArrayView<const size_t>(count.data(), count.size())));
    for (size_t r = 0; r < mine; r++)
      if (count[r])
        A->insertGlobalValues(lo + static_cast<GO>(r), Teuchos::ArrayView<const GO>(&colIdx[start[r]], count[r]),
                              Teuchos::ArrayView<const double>(&vals[start[r]], count[r]));
    A->fillComplete(domainMap, rowMap);
    Vector x(A->getDomainMap()), y(A->getRangeMap());
    {
      auto xd = x.getDataNonConst();
      for (size_t l = 0; l < x.getLocalLength(); l++)
        xd[l] = bench::fillValue({static_cast<int64_t>(x.getMap()->getGlobalElement(static_cast<int>(l)))}, 2);
    }
    t = bench::timed(reps, [&] { A->apply(x, y); });
    check = y.norm2();
  }
  if (rank == 0)
    std::printf("{\"system\":\"tpetra\",\"kernel\":\"spmv\",\"ranks\":%d,\"matrix\":\"%s\",\"nnz\":%lld,"
                "\"median_s\":%.6f,\"gflops\":%.3f,\"check_norm\":%.10g}\n",
                size, args.inputName().c_str(),
                static_cast<long long>(nnz), t, 2.0 * static_cast<double>(nnz) / t / 1e9, check);
  return 0;
}
