// MTTKRP A(i,l) = B(i,j,k) * C(j,l) * D(k,l), B CSF (sss), C and D dense with L columns,
// on the 3-tensors of ../shared/data/tensors: the plain kernel, precompute(e,t) (stages:
// t(i,j,l) materialized, then A from it) and precompute(e,t,j) (t(l) per (i,j) inside
// the loop nest, one function). All three are compiled up front and run interleaved in
// this one process (round r runs each variant `reps` times, for `rounds` rounds), so
// machine noise hits them alike; the figure is the median compute time per call.
//
//   bench_precompute_at [--threads N] [--cols L] [--rounds R] [--reps N]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tessel/generate.h"
#include "tessel/io.h"
#include "tessel/kernel.h"
#include "tessel/schedule.h"
#include "tessel/tensor.h"

using namespace tessel;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

/// Largest relative difference between two dense outputs' values.
double maxRelDiff(const TensorBase& a, const TensorBase& b) {
  const auto* x = static_cast<const double*>(a.raw().vals);
  const auto* y = static_cast<const double*>(b.raw().vals);
  double worst = 0;
  for (int64_t e = 0; e < a.storedCount(); e++)
    worst = std::max(worst, std::abs(x[e] - y[e]) / std::max(1.0, std::abs(x[e])));
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1, rounds = 7, reps = 31;
  int64_t cols = 32;
  for (int k = 1; k + 1 < argc; k += 2) {
    std::string o = argv[k];
    int64_t v = std::atoll(argv[k + 1]);
    if (o == "--threads") threads = static_cast<int>(v);
    else if (o == "--cols") cols = v;
    else if (o == "--rounds") rounds = static_cast<int>(v);
    else if (o == "--reps") reps = static_cast<int>(v);
    else {
      std::fprintf(stderr, "usage: bench_precompute_at [--threads N] [--cols L] [--rounds R] [--reps N]\n");
      return 2;
    }
  }
  std::filesystem::path dir = std::filesystem::path(TESSEL_DATA_DIR) / "tensors";
  if (!std::filesystem::is_directory(dir)) {
    std::printf("skipped: %s not present\n", dir.c_str());
    return 0;
  }
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".tns") names.push_back(e.path().stem());
  std::sort(names.begin(), names.end());

  const std::vector<std::pair<std::string, std::string>> variants = {
      {"plain", ""}, {"stages", "precompute(B(i,j,k)*D(k,l),t)"}, {"at loop j", "precompute(B(i,j,k)*D(k,l),t,j)"}};
  std::printf("MTTKRP, L = %lld, %d thread(s), median of %d rounds x %d calls, variants interleaved\n\n",
              static_cast<long long>(cols), threads, rounds, reps);
  std::printf("| tensor | nnz | (i,j) fibers | nnz per fiber | plain ms | stages ms | at loop j ms | "
              "at-loop vs plain | at-loop vs stages |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const std::string& name : names) {
    CooData b = readTns((dir / (name + ".tns")).string()).data;
    if (b.dims.size() != 3) continue;
    TensorBase B("B", Datatype::Float64, b.dims, Format::parse("sss"));
    B.setFromCoo(b);
    TensorBase C("C", Datatype::Float64, {b.dims[1], cols}, Format::parse("dd"));
    C.setFromCoo(generateDense({b.dims[1], cols}, 1));
    TensorBase D("D", Datatype::Float64, {b.dims[2], cols}, Format::parse("dd"));
    D.setFromCoo(generateDense({b.dims[2], cols}, 2));
    std::vector<TensorBase> outs;
    std::vector<Assignment> as;
    std::vector<std::shared_ptr<Kernel>> kernels;
    IndexVar i("i"), j("j"), k("k"), l("l");
    for (size_t v = 0; v < variants.size(); v++) {
      TensorBase A("A", Datatype::Float64, {b.dims[0], cols}, Format::parse("dd"));
      A(i, l) = B(i, j, k) * C(j, l) * D(k, l);
      as.push_back(A.assignment());
      kernels.push_back(Kernel::compile(as.back(), parseSchedule(variants[v].second, as.back())));
      outs.push_back(A);
    }
    std::vector<std::vector<double>> times(variants.size());
    for (int r = 0; r < rounds; r++)
      for (size_t v = 0; v < variants.size(); v++)
        for (int n = 0; n < reps; n++) times[v].push_back(kernels[v]->run(as[v], threads).computeSeconds);
    for (size_t v = 1; v < variants.size(); v++)
      if (double d = maxRelDiff(outs[0], outs[v]); d > 1e-9)
        std::printf("MISMATCH %s: %s differs from plain by %g\n", name.c_str(), variants[v].first.c_str(), d);
    // (i,j) fibers: distinct leading pairs of the CSF tensor.
    int64_t fibers = B.raw().pos[1] ? static_cast<const int32_t*>(B.raw().pos[1])[B.raw().pos_size[1] - 1] : 0;
    double p = median(times[0]) * 1e3, s = median(times[1]) * 1e3, a = median(times[2]) * 1e3;
    std::printf("| %s | %lld | %lld | %.1f | %.4f | %.4f | %.4f | %.2f | %.2f |\n", name.c_str(),
                static_cast<long long>(b.nnz()), static_cast<long long>(fibers),
                fibers ? static_cast<double>(b.nnz()) / static_cast<double>(fibers) : 0.0, p, s, a, p / a, s / a);
    std::fflush(stdout);
  }
  return 0;
}
