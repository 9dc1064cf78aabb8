// Common interface of the peer implementations used by bench/bench_kernels.cpp.
//
// Every peer builds its own copy of the inputs in its native format (not timed), then
// exposes a run() closure (timed by the driver, interleaved round robin with the other
// systems) and a result() for verification against tessel. A peer that does not
// implement a kernel returns nullptr from its make*() function; a peer whose package is
// not installed is compiled as a stub (see peers_stub below) and reports "not installed".
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace bench {

/// CSR matrix (sorted, unique column indices per row), 32-bit indices as tessel's CSR()
/// and the hand loops use; peers convert to their own index types (GraphBLAS: 64-bit).
struct CsrMatrix {
  int64_t rows = 0, cols = 0;
  std::vector<int32_t> pos, crd;  ///< rows + 1, nnz
  std::vector<double> vals;
  int64_t nnz() const { return static_cast<int64_t>(vals.size()); }
};

/// Dense row-major matrix (a vector is cols == 1).
struct DenseMatrix {
  int64_t rows = 0, cols = 0;
  std::vector<double> v;
};

/// A 3-tensor in CSF: three compressed levels (tessel::CSF(3)), 32-bit indices.
/// Level 0: pos0 = {0, n0}, crd0 = the i of each i-fiber; level 1: pos1/crd1 (j);
/// level 2: pos2/crd2 (k); vals one per level-2 position.
struct Csf3 {
  int64_t dims[3] = {0, 0, 0};
  std::vector<int32_t> pos0, crd0, pos1, crd1, pos2, crd2;
  std::vector<double> vals;
  int64_t nnz() const { return static_cast<int64_t>(vals.size()); }
};

enum class KernelKind { SpMV, SpMM, SDDMM, SpAdd3, SpGEMM, SpTTV, SpMTTKRP };
const char* kernelName(KernelKind k);

/// The inputs of one benchmark case. Unused members are empty.
struct Problem {
  KernelKind kind;
  const CsrMatrix* A = nullptr;  ///< SpMV, SpMM, SDDMM, SpAdd3, SpGEMM (left operand)
  const CsrMatrix* B = nullptr;  ///< SpAdd3, SpGEMM (right operand)
  const CsrMatrix* C = nullptr;  ///< SpAdd3
  const DenseMatrix* X = nullptr;  ///< SpMV x (cols 1), SpMM X, SDDMM/SpMTTKRP U, SpTTV c
  const DenseMatrix* Y = nullptr;  ///< SDDMM V (rows = A.cols), SpMTTKRP V
  const Csf3* T = nullptr;         ///< SpTTV, SpMTTKRP
};

/// A result for verification: dense (row-major values) or CSR.
struct Result {
  bool sparse = false;
  std::vector<double> dense;
  int64_t rows = 0;
  std::vector<int64_t> pos, crd;
  std::vector<double> vals;
};

/// A CSR result copied from arrays of any index type.
template <typename I, typename V>
Result csrResult(int64_t rows, const I* pos, const I* crd, const V* vals) {
  Result r;
  r.sparse = true;
  r.rows = rows;
  r.pos.assign(pos, pos + rows + 1);
  r.crd.assign(crd, crd + pos[rows]);
  r.vals.assign(vals, vals + pos[rows]);
  return r;
}

/// One system's prepared implementation of one Problem.
struct PeerRun {
  std::string system;
  std::string note;                           ///< e.g. "single-threaded"
  std::function<void(int threads)> setThreads;  ///< called (untimed) before each run
  std::function<void()> run;                  ///< the timed operation
  std::function<Result()> result;             ///< result of the last run()
  int maxThreads = 1 << 30;                   ///< e.g. 1 for PETSc (no threads)
};

/// Each make function returns nullptr when the system lacks the kernel ("n/a").
/// `installed` reports whether the package was found at build time.
namespace eigen {
bool installed();
std::string version();
std::unique_ptr<PeerRun> make(const Problem& p);
}  // namespace eigen
namespace graphblas {
bool installed();
std::string version();
std::unique_ptr<PeerRun> make(const Problem& p);
void finalize();
}  // namespace graphblas
namespace petsc {
bool installed();
std::string version();
std::unique_ptr<PeerRun> make(const Problem& p);
void finalize();
}  // namespace petsc
namespace hand {
/// How the hand loops are compiled: with tessel's default JIT flags (-O3 -march=native
/// -falign-loops=64; "hand"), portably with -O3 ("hand-O3"), and portably with
/// -O3 -ffast-math as TACO compiles its kernels ("hand-fastmath"). All with -fopenmp.
enum class Flags { Native, O3, FastMath };
/// The peer's name for a variant ("hand", "hand-O3", "hand-fastmath").
const char* name(Flags f);
/// The compiler flags of a variant.
std::vector<std::string> flags(Flags f);
std::unique_ptr<PeerRun> make(const Problem& p, Flags f = Flags::Native);
/// STREAM triad a = b + s*c over n doubles on `threads` threads; bytes/second (24 n / t).
double streamTriad(int threads);
}  // namespace hand

/// Sort each row's (column, value) pairs so CSR results from any system compare.
void normalize(Result& r);

}  // namespace bench
