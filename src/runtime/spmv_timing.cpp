// Timing compiled CSR SpMV kernels on synthetic rows (see spmv_timing.h).
#include "runtime/spmv_timing.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>

#include "tessel/error.h"

namespace tessel::runtime {

namespace {

tessel_tensor_t blank(int order) {
  tessel_tensor_t t;
  std::memset(&t, 0, sizeof t);
  t.order = order;
  return t;
}

void check(int rc) {
  if (rc != TESSEL_OK) throw EnvironmentError("tuning: a calibration kernel failed (code " + std::to_string(rc) + ")");
}

}  // namespace

std::vector<double> leastSpmvTimes(const std::vector<SpmvKernel>& kernels, const SyntheticRows& s, int reps) {
  std::mt19937 rng(s.seed);
  std::uniform_int_distribution<int> len(s.lo, s.hi);
  std::uniform_int_distribution<int64_t> any(0, s.cols - 1), near(-s.band, s.band);
  std::uniform_real_distribution<double> val(0.5, 1.5);
  std::vector<int32_t> pos{0}, crd;
  std::vector<double> vals;
  std::vector<int32_t> row;
  for (int64_t i = 0; i < s.rows; i++) {
    row.clear();
    const int64_t centre = i * s.cols / s.rows;
    const int n = std::min<int64_t>(len(rng), s.cols);
    while (static_cast<int>(row.size()) < n) {
      int64_t j = s.band > 0 ? std::clamp<int64_t>(centre + near(rng), 0, s.cols - 1) : any(rng);
      if (std::find(row.begin(), row.end(), j) == row.end()) row.push_back(static_cast<int32_t>(j));
    }
    std::sort(row.begin(), row.end());
    for (int32_t j : row) crd.push_back(j), vals.push_back(val(rng));
    pos.push_back(static_cast<int32_t>(crd.size()));
  }
  std::vector<double> x(static_cast<size_t>(s.cols));
  for (int64_t j = 0; j < s.cols; j++) x[static_cast<size_t>(j)] = 1.0 + static_cast<double>(j % 7);

  tessel_tensor_t B = blank(2), X = blank(1);
  B.dims[0] = s.rows, B.dims[1] = s.cols;
  B.pos[1] = pos.data(), B.pos_size[1] = static_cast<int64_t>(pos.size());
  B.crd[1] = crd.data(), B.crd_size[1] = static_cast<int64_t>(crd.size());
  B.vals = vals.data(), B.vals_size = static_cast<int64_t>(vals.size());
  X.dims[0] = s.cols, X.vals = x.data(), X.vals_size = s.cols;
  // y: the kernels' assembly allocates its values (malloc'd, ours to free).
  std::vector<tessel_tensor_t> ys(kernels.size(), blank(1));
  for (tessel_tensor_t& y : ys) y.dims[0] = s.rows;
  auto once = [&](size_t k) {
    tessel_tensor_t* args[3];
    args[kernels[k].ySlot] = &ys[k];
    args[kernels[k].bSlot] = &B;
    args[kernels[k].xSlot] = &X;
    check(kernels[k].assemble(args));
    auto t0 = std::chrono::steady_clock::now();
    check(kernels[k].compute(args));
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  std::vector<double> best(kernels.size(), 1e30);
  try {
    for (size_t k = 0; k < kernels.size(); k++) once(k);  // warm: pages, caches
    for (int r = 0; r < reps; r++)
      for (size_t k = 0; k < kernels.size(); k++) best[k] = std::min(best[k], once(k));
  } catch (...) {
    for (tessel_tensor_t& y : ys) std::free(y.vals);
    throw;
  }
  for (tessel_tensor_t& y : ys) std::free(y.vals);
  return best;
}

}  // namespace tessel::runtime
