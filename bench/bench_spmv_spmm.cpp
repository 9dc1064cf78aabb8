// Single-thread CSR SpMV and SpMM: tessel's generated code versus a hand-written C
// loop JIT-compiled with the same compiler and flags, on the real matrices in
// ../shared/data and a generated 2M-row matrix. Reports medians, the ratio, and the
// achieved fraction of measured STREAM-triad bandwidth. Writes CSV to stdout or -o.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "tessel/tessel.h"

#ifndef TESSEL_DATA_DIR
#define TESSEL_DATA_DIR "../shared/data"
#endif

using namespace tessel;
using Clock = std::chrono::steady_clock;

namespace {

const char* kHandWritten = R"(
#include <stdint.h>
void triad(double* restrict a, const double* restrict b, const double* restrict c, double s, int64_t n) {
  for (int64_t i = 0; i < n; i++) a[i] = b[i] + s * c[i];
}
void spmv(int64_t rows, const int32_t* restrict pos, const int32_t* restrict crd,
          const double* restrict vals, const double* restrict x, double* restrict y) {
  for (int64_t i = 0; i < rows; i++) {
    double sum = 0;
    for (int32_t p = pos[i]; p < pos[i + 1]; p++) sum += vals[p] * x[crd[p]];
    y[i] = sum;
  }
}
void spmm(int64_t rows, int64_t K, const int32_t* restrict pos, const int32_t* restrict crd,
          const double* restrict vals, const double* restrict C, double* restrict A) {
  for (int64_t i = 0; i < rows; i++) {
    double* restrict a = A + i * K;
    for (int64_t k = 0; k < K; k++) a[k] = 0;
    for (int32_t p = pos[i]; p < pos[i + 1]; p++) {
      const double v = vals[p];
      const double* restrict c = C + (int64_t)crd[p] * K;
      for (int64_t k = 0; k < K; k++) a[k] += v * c[k];
    }
  }
}
)";

using TriadFn = void (*)(double*, const double*, const double*, double, int64_t);
using SpmvFn = void (*)(int64_t, const int32_t*, const int32_t*, const double*, const double*, double*);
using SpmmFn = void (*)(int64_t, int64_t, const int32_t*, const int32_t*, const double*, const double*, double*);

double seconds(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Timing {
  double compute;  ///< median of tessel's generated compute function
  double run;      ///< median of the whole Kernel::run (assemble + compute + checks)
  double hand;     ///< median of the hand-written loop
};

/// Interleaves tessel runs and hand-written runs (after one warm-up each).
Timing timeInterleaved(const Kernel& k, const Assignment& a, const std::function<void()>& hand, int reps) {
  k.run(a);
  hand();
  std::vector<double> tc, tr, th;
  for (int r = 0; r < reps; r++) {
    // Alternate which goes first, so neither always runs on the other's cache state.
    for (int turn = 0; turn < 2; turn++) {
      if ((r + turn) % 2 == 0) {
        auto t0 = Clock::now();
        RunTimes rt = k.run(a);
        tr.push_back(seconds(t0));
        tc.push_back(rt.computeSeconds);
      } else {
        auto t0 = Clock::now();
        hand();
        th.push_back(seconds(t0));
      }
    }
  }
  return {median(tc), median(tr), median(th)};
}

double streamTriadBandwidth(TriadFn triad) {
  const int64_t n = 40'000'000;
  std::vector<double> a(n), b(n, 1.0), c(n, 2.0);
  std::vector<double> t;
  for (int r = 0; r < 7; r++) {
    auto t0 = Clock::now();
    triad(a.data(), b.data(), c.data(), 3.0, n);
    t.push_back(seconds(t0));
  }
  return 24.0 * n / median(t);  // STREAM convention: 3 arrays x 8 bytes
}

struct Matrix {
  std::string name;
  TensorBase B;
};

int repsFor(int64_t nnz) { return nnz > 5'000'000 ? 7 : nnz > 200'000 ? 21 : 51; }

}  // namespace

int main(int argc, char** argv) {
  std::string csvPath = argc > 2 && std::string(argv[1]) == "-o" ? argv[2] : "";
  FILE* csv = csvPath.empty() ? stdout : std::fopen(csvPath.c_str(), "w");
  if (!csv) {
    std::perror(csvPath.c_str());
    return 1;
  }
  auto hand = jitCompile(kHandWritten);
  auto triad = reinterpret_cast<TriadFn>(hand->symbol("triad"));
  auto spmv = reinterpret_cast<SpmvFn>(hand->symbol("spmv"));
  auto spmm = reinterpret_cast<SpmmFn>(hand->symbol("spmm"));
  double bw = streamTriadBandwidth(triad);
  std::fprintf(stderr, "STREAM triad (1 thread): %.2f GB/s\n", bw / 1e9);

  std::vector<Matrix> mats;
  std::string dir = std::string(TESSEL_DATA_DIR) + "/matrices";
  if (std::filesystem::is_directory(dir)) {
    for (const char* f : {"bcsstk33", "ca-AstroPh", "luxembourg_osm", "wiki-Vote", "bayer10", "bcsstk13",
                          "fidapex6", "hep-th"}) {
      std::string path = dir + "/" + f + ".mtx";
      if (!std::filesystem::exists(path)) continue;
      CooData d = readMtx(path).data;
      TensorBase B(f, Datatype::Float64, d.dims, CSR());
      B.setFromCoo(d);
      mats.push_back({f, B});
    }
  } else {
    std::fprintf(stderr, "skipping real matrices: %s not found\n", dir.c_str());
  }
  // Generated: a banded matrix (x is read in order: bandwidth-bound) and a uniform
  // one (x is read at random: latency-bound), both 2M rows.
  for (auto [name, d] : {std::pair{"banded-2M", generateBandedMatrix(2'000'000, 4, 41)},
                         std::pair{"uniform-2M", generateUniformMatrix(2'000'000, 2'000'000, 8, 42)}}) {
    TensorBase B(name, Datatype::Float64, d.dims, CSR());
    B.setFromCoo(d);
    mats.push_back({name, B});
  }

  std::fprintf(csv, "kernel,matrix,rows,cols,nnz,K,tessel_compute_s,tessel_run_s,handwritten_s,compute_over_hand,tessel_GBps,fraction_of_triad\n");
  IndexVar i("i"), j("j"), k("k");
  for (auto& m : mats) {
    TensorBase& B = m.B;
    int64_t rows = B.dim(0), cols = B.dim(1), nnz = B.storedCount();
    auto* pos = static_cast<const int32_t*>(B.raw().pos[1]);
    auto* crd = static_cast<const int32_t*>(B.raw().crd[1]);
    auto* vals = static_cast<const double*>(B.raw().vals);
    // SpMV
    {
      TensorBase x("x", Datatype::Float64, {cols}, DenseFormat(1));
      x.setFromCoo(generateDense({cols}, 1));
      TensorBase y("y", Datatype::Float64, {rows}, DenseFormat(1));
      y(i) = B(i, j) * x(j);
      auto kern = Kernel::compile(y.assignment());
      kern->run(y.assignment());
      std::vector<double> yh(rows);
      const double* xv = static_cast<const double*>(x.raw().vals);
      Timing t = timeInterleaved(*kern, y.assignment(), [&] { spmv(rows, pos, crd, vals, xv, yh.data()); },
                                 repsFor(nnz));
      double bytes = nnz * 12.0 + (rows + 1) * 4.0 + rows * 8.0 + cols * 8.0;
      std::fprintf(csv, "spmv,%s,%ld,%ld,%ld,1,%.6g,%.6g,%.6g,%.3f,%.2f,%.3f\n", m.name.c_str(), (long)rows,
                   (long)cols, (long)nnz, t.compute, t.run, t.hand, t.compute / t.hand, bytes / t.compute / 1e9,
                   bytes / t.compute / bw);
      std::fflush(csv);
    }
    // SpMM
    for (int64_t K : {int64_t(16), int64_t(64)}) {
      if (rows > 1'000'000 && K > 16) continue;  // 2M x 64 doubles is 1 GB per operand
      TensorBase C("C", Datatype::Float64, {cols, K}, DenseFormat(2));
      C.setFromCoo(generateDense({cols, K}, 2));
      TensorBase A("A", Datatype::Float64, {rows, K}, DenseFormat(2));
      A(i, j) = B(i, k) * C(k, j);
      auto kern = Kernel::compile(A.assignment());
      kern->run(A.assignment());
      std::vector<double> Ah(rows * K);
      const double* cv = static_cast<const double*>(C.raw().vals);
      Timing t = timeInterleaved(*kern, A.assignment(), [&] { spmm(rows, K, pos, crd, vals, cv, Ah.data()); },
                                 repsFor(nnz * K / 8));
      double bytes = nnz * 12.0 + (rows + 1) * 4.0 + rows * K * 8.0 + cols * K * 8.0;
      std::fprintf(csv, "spmm,%s,%ld,%ld,%ld,%ld,%.6g,%.6g,%.6g,%.3f,%.2f,%.3f\n", m.name.c_str(), (long)rows,
                   (long)cols, (long)nnz, (long)K, t.compute, t.run, t.hand, t.compute / t.hand,
                   bytes / t.compute / 1e9, bytes / t.compute / bw);
      std::fflush(csv);
    }
  }
  std::fprintf(stderr, "triad_GBps=%.3f\n", bw / 1e9);
  if (csv != stdout) std::fclose(csv);
  return 0;
}
