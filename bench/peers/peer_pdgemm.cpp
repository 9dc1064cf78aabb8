// Peer for tessel's distributed GEMM: ScaLAPACK pdgemm on a BLACS grid, or (mode dgemm) the
// one-rank OpenBLAS cblas_dgemm rate. Prints one JSON line on rank 0.
//
//   bench_pdgemm --m M --n N --k K [--grid PRxPC] [--nb 256] [--reps 5] [--mode pdgemm|dgemm]
//
// Run under MPI with OPENBLAS_NUM_THREADS=1 (one BLAS thread per rank), see shared/PEERS.md.
// The executable links libopenblas itself (before ScaLAPACK), so ScaLAPACK's dgemm_ and our
// cblas_dgemm resolve to the same OpenBLAS kernels whatever the libblas.so.3 alternative is.
#include <mpi.h>
#include <cblas.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
// BLACS C interface and the ScaLAPACK tools (Fortran, no character arguments); PBLAS is C.
void Cblacs_get(int ctxt, int what, int* val);
void Cblacs_gridinit(int* ctxt, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int ctxt);
void Cblacs_exit(int notdone);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* irsrc,
               const int* icsrc, const int* ictxt, const int* lld, int* info);
void pdgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
             const double* alpha, const double* a, const int* ia, const int* ja, const int* desca,
             const double* b, const int* ib, const int* jb, const int* descb, const double* beta,
             double* c, const int* ic, const int* jc, const int* descc);
}

namespace {

// Deterministic fills from global indices: every rank fills its own piece, no communication,
// and any entry of C can be recomputed independently for the check.
double fillA(int64_t i, int64_t j) { return double((i * 7 + j * 3) % 17) / 17.0 - 0.5; }
double fillB(int64_t i, int64_t j) { return double((i * 5 + j * 11) % 13) / 13.0 - 0.5; }

struct Args {
  int64_t m = 0, n = 0, k = 0;
  int pr = 0, pc = 0, nb = 256, reps = 5;
  std::string mode = "pdgemm";
};

bool parseInt(const char* s, int64_t lo, int64_t hi, int64_t* out) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

// Returns an empty string on success, else the error message.
std::string parseArgs(int argc, char** argv, Args* a) {
  const int64_t imax = 2147483647;  // ScaLAPACK dimensions are 32-bit ints
  for (int i = 1; i < argc; ++i) {
    std::string key = argv[i];
    if (i + 1 >= argc) return "missing value after " + key;
    const char* val = argv[++i];
    int64_t v = 0;
    if (key == "--m" || key == "--n" || key == "--k" || key == "--nb" || key == "--reps") {
      if (!parseInt(val, 1, imax, &v)) return "bad value for " + key + ": " + val;
      if (key == "--m") a->m = v;
      else if (key == "--n") a->n = v;
      else if (key == "--k") a->k = v;
      else if (key == "--nb") a->nb = int(v);
      else a->reps = int(v);
    } else if (key == "--grid") {
      const char* x = std::strchr(val, 'x');
      int64_t r = 0, c = 0;
      std::string rs(val, x ? size_t(x - val) : std::strlen(val));
      if (!x || !parseInt(rs.c_str(), 1, imax, &r) || !parseInt(x + 1, 1, imax, &c))
        return std::string("bad --grid (want PRxPC): ") + val;
      a->pr = int(r), a->pc = int(c);
    } else if (key == "--mode") {
      if (std::strcmp(val, "pdgemm") && std::strcmp(val, "dgemm")) return std::string("bad --mode: ") + val;
      a->mode = val;
    } else {
      return "unknown argument " + key;
    }
  }
  if (!a->m || !a->n || !a->k) return "--m, --n and --k are required";
  return "";
}

double median(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  size_t h = t.size() / 2;
  return t.size() % 2 ? t[h] : 0.5 * (t[h - 1] + t[h]);
}

// A handful of global entries of C to check: the corners and a few spread inside.
std::vector<std::pair<int64_t, int64_t>> checkPoints(int64_t m, int64_t n) {
  std::vector<std::pair<int64_t, int64_t>> p = {{0, 0}, {m - 1, n - 1}, {m - 1, 0}, {0, n - 1}};
  for (int64_t s = 1; s <= 4; ++s) p.push_back({(s * 7919) % m, (s * 104729) % n});
  return p;
}

// Error of a computed C(i,j) relative to sum_l |A(i,l) B(l,j)| (the scale rounding errors
// have; the exact value may be near zero).
double relError(int64_t i, int64_t j, int64_t k, double got) {
  double ref = 0, scale = 0;
  for (int64_t l = 0; l < k; ++l) {
    ref += fillA(i, l) * fillB(l, j);
    scale += std::fabs(fillA(i, l) * fillB(l, j));
  }
  return std::fabs(got - ref) / std::max(scale, 1e-300);
}

void printJson(const char* system, const Args& a, int ranks, const std::vector<double>& t) {
  double med = median(t), mn = *std::min_element(t.begin(), t.end());
  // nb is a property of the block-cyclic layout only; dgemm has none.
  std::string nbField = a.mode == "pdgemm" ? "\"nb\":" + std::to_string(a.nb) + "," : "";
  std::printf("{\"system\":\"%s\",\"mode\":\"%s\",\"m\":%lld,\"n\":%lld,\"k\":%lld,\"ranks\":%d,"
              "\"grid\":\"%dx%d\",%s\"reps\":%d,\"median_s\":%.6g,\"min_s\":%.6g,\"gflops\":%.6g,"
              "\"blas_core\":\"%s\",\"blas_threads\":%d}\n",
              system, a.mode.c_str(), (long long)a.m, (long long)a.n, (long long)a.k, ranks, a.pr, a.pc,
              nbField.c_str(), a.reps, med, mn, 2.0 * double(a.m) * double(a.n) * double(a.k) / med / 1e9,
              openblas_get_corename(), openblas_get_num_threads());
  std::fflush(stdout);
}

int runDgemm(const Args& a) {
  std::vector<double> A(size_t(a.m * a.k)), B(size_t(a.k * a.n)), C(size_t(a.m * a.n));
  for (int64_t i = 0; i < a.m; ++i)
    for (int64_t j = 0; j < a.k; ++j) A[size_t(i * a.k + j)] = fillA(i, j);
  for (int64_t i = 0; i < a.k; ++i)
    for (int64_t j = 0; j < a.n; ++j) B[size_t(i * a.n + j)] = fillB(i, j);
  auto call = [&] {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(a.m), int(a.n), int(a.k), 1.0, A.data(),
                int(a.k), B.data(), int(a.n), 0.0, C.data(), int(a.n));
  };
  call();  // warm-up (thread pool, page faults on C)
  for (auto [i, j] : checkPoints(a.m, a.n)) {
    double e = relError(i, j, a.k, C[size_t(i * a.n + j)]);
    if (!(e <= 1e-10)) {
      std::fprintf(stderr, "bench_pdgemm: wrong C(%lld,%lld): relative error %g\n", (long long)i, (long long)j, e);
      return 1;
    }
  }
  std::vector<double> t;
  for (int r = 0; r < a.reps; ++r) {
    double t0 = MPI_Wtime();
    call();
    t.push_back(MPI_Wtime() - t0);
  }
  printJson("openblas", a, 1, t);
  return 0;
}

int runPdgemm(const Args& a, int rank, int nranks) {
  int ctxt = 0, pr = 0, pc = 0, myr = 0, myc = 0;
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", a.pr, a.pc);
  Cblacs_gridinfo(ctxt, &pr, &pc, &myr, &myc);
  const int M = int(a.m), N = int(a.n), K = int(a.k), nb = a.nb, zero = 0, one = 1;
  // Local piece sizes of the block-cyclic layout (source process 0,0), column-major.
  auto loc = [&](int n, int me, int np) { return numroc_(&n, &nb, &me, &zero, &np); };
  int ma = loc(M, myr, pr), ka = loc(K, myc, pc);  // A: M x K
  int kb = loc(K, myr, pr), nbl = loc(N, myc, pc);  // B: K x N
  int mc = ma, nc = nbl;                            // C: M x N
  int descA[9], descB[9], descC[9], info = 0, lldA = std::max(1, ma), lldB = std::max(1, kb), lldC = std::max(1, mc);
  descinit_(descA, &M, &K, &nb, &nb, &zero, &zero, &ctxt, &lldA, &info);
  descinit_(descB, &K, &N, &nb, &nb, &zero, &zero, &ctxt, &lldB, &info);
  descinit_(descC, &M, &N, &nb, &nb, &zero, &zero, &ctxt, &lldC, &info);
  // Global index of local index l on process p of np (block-cyclic, source 0).
  auto glob = [nb](int64_t l, int p, int np) { return (l / nb * np + p) * nb + l % nb; };
  std::vector<double> A(std::max<size_t>(1, size_t(lldA) * ka)), B(std::max<size_t>(1, size_t(lldB) * nbl)),
      C(std::max<size_t>(1, size_t(lldC) * nc));
  for (int64_t lj = 0; lj < ka; ++lj)
    for (int64_t li = 0; li < ma; ++li) A[size_t(lj * lldA + li)] = fillA(glob(li, myr, pr), glob(lj, myc, pc));
  for (int64_t lj = 0; lj < nbl; ++lj)
    for (int64_t li = 0; li < kb; ++li) B[size_t(lj * lldB + li)] = fillB(glob(li, myr, pr), glob(lj, myc, pc));
  const double alpha = 1.0, beta = 0.0;
  auto call = [&] {
    pdgemm_("N", "N", &M, &N, &K, &alpha, A.data(), &one, &one, descA, B.data(), &one, &one, descB, &beta,
            C.data(), &one, &one, descC);
  };
  call();  // warm-up
  // Check: each entry is verified by the rank that owns it; the worst error goes to everyone.
  double worst = 0;
  for (auto [i, j] : checkPoints(a.m, a.n)) {
    if (int(i / nb % pr) != myr || int(j / nb % pc) != myc) continue;
    int64_t li = i / (int64_t(nb) * pr) * nb + i % nb, lj = j / (int64_t(nb) * pc) * nb + j % nb;
    double e = relError(i, j, a.k, C[size_t(lj * lldC + li)]);
    worst = std::isnan(e) ? INFINITY : std::max(worst, e);
  }
  MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (worst > 1e-10) {
    if (rank == 0) std::fprintf(stderr, "bench_pdgemm: wrong result: max relative error %g\n", worst);
    Cblacs_gridexit(ctxt);
    return 1;
  }
  // Each rep starts together; its time is the slowest rank's.
  std::vector<double> t;
  for (int r = 0; r < a.reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    call();
    double dt = MPI_Wtime() - t0, mx = 0;
    MPI_Reduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    t.push_back(mx);
  }
  if (rank == 0) printJson("scalapack", a, nranks, t);
  Cblacs_gridexit(ctxt);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  Args a;
  // Every rank parses the same argv and reaches the same verdict: no communication, no hang.
  std::string err = parseArgs(argc, argv, &a);
  if (err.empty() && a.mode == "dgemm") {
    if (nranks != 1) err = "--mode dgemm runs on one rank";
    a.pr = a.pc = 1;
  } else if (err.empty() && a.pr == 0) {
    for (a.pr = int(std::sqrt(double(nranks))); nranks % a.pr; --a.pr) {}  // most square, PR <= PC
    a.pc = nranks / a.pr;
  } else if (err.empty() && int64_t(a.pr) * a.pc != nranks) {
    err = "grid " + std::to_string(a.pr) + "x" + std::to_string(a.pc) + " needs " +
          std::to_string(int64_t(a.pr) * a.pc) + " ranks, have " + std::to_string(nranks);
  }
  if (!err.empty()) {
    if (rank == 0)
      std::fprintf(stderr, "bench_pdgemm: %s (usage: --m M --n N --k K [--grid PRxPC] [--nb 256] [--reps 5] "
                   "[--mode pdgemm|dgemm])\n", err.c_str());
    MPI_Finalize();
    return 2;
  }
  int rc = 0;
  if (a.mode == "dgemm") {
    rc = runDgemm(a);
    MPI_Finalize();
  } else {
    rc = runPdgemm(a, rank, nranks);
    Cblacs_exit(1);  // 1: leave MPI up, we finalize it ourselves
    MPI_Finalize();
  }
  return rc;
}
