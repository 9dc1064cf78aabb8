// What the distributed sparse benchmarks share, so that tessel (bench_distributed) and
// its peers (bench/peers/peer_{petsc_mpi,tpetra,combblas}.cpp) run on the same data and
// report alike: the input matrix, the dense operands' values, SpAdd3's and SpGEMM's other
// operands, the command line, and (MPI programs) the timing rule.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "tessel/coo.h"
#include "tessel/generate.h"
#include "tessel/io.h"

namespace bench {

/// A dense operand's value at coordinates `c` (salt: which operand).
inline double fillValue(const std::vector<int64_t>& c, int salt) {
  int64_t h = salt;
  for (int64_t x : c) h = h * 31 + x;
  return static_cast<double>((h * 2654435761LL) % 1000) / 1000.0 - 0.5;
}

/// --matrix FILE, else R-MAT of --rmat's scale (16 edges per vertex, a=0.57, b=c=0.19, seed 1).
inline tessel::CooData sparseInput(const std::string& matrix, int rmat) {
  return matrix.empty() ? tessel::generateRmat(rmat, 16, 0.57, 0.19, 0.19, 1) : tessel::readTensorFile(matrix).data;
}

/// B with each entry's column moved right by `shift` (mod the columns): SpAdd3's C and D.
inline tessel::CooData shiftedColumns(const tessel::CooData& b, int64_t shift) {
  tessel::CooData out = b;
  for (int64_t e = 0; e < out.nnz(); e++) {
    int64_t& j = out.coords[static_cast<size_t>(2 * e + 1)];
    j = (j + shift) % out.dims[1];
  }
  return out;
}

/// The right operand of SpGEMM: B when square (B * B), else its transpose (B * B^T).
inline tessel::CooData gemmRight(const tessel::CooData& b) {
  if (b.dims[0] == b.dims[1]) return b;
  tessel::CooData t;
  t.dims = {b.dims[1], b.dims[0]};
  for (int64_t e = 0; e < b.nnz(); e++)
    t.add({b.coords[static_cast<size_t>(2 * e + 1)], b.coords[static_cast<size_t>(2 * e)]}, b.values[static_cast<size_t>(e)]);
  return t;
}

/// The peers' command line: --kernel, --matrix, --rmat, --reps, --cols.
struct PeerArgs {
  std::string kernel, matrix;
  int rmat = 18, reps = 20, cols = 64;
  PeerArgs(int argc, char** argv, const std::string& kernelDefault, int rmatDefault) : kernel(kernelDefault), rmat(rmatDefault) {
    for (int a = 1; a + 1 < argc; a += 2) {
      const std::string k = argv[a];
      if (k == "--matrix") matrix = argv[a + 1];
      else if (k == "--rmat") rmat = std::atoi(argv[a + 1]);
      else if (k == "--reps") reps = std::atoi(argv[a + 1]);
      else if (k == "--kernel") kernel = argv[a + 1];
      else if (k == "--cols") cols = std::atoi(argv[a + 1]);
    }
  }
  std::string inputName() const { return matrix.empty() ? "rmat-" + std::to_string(rmat) : matrix; }
};

#ifdef MPI_VERSION
/// Median over reps of the slowest rank's time of `step`, after one warm-up call.
inline double timed(int reps, const std::function<void()>& step) {
  step();
  std::vector<double> times;
  for (int r = 0; r < reps; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    auto t0 = std::chrono::steady_clock::now();
    step();
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), slowest = 0;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    times.push_back(slowest);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}
#endif

}  // namespace bench
