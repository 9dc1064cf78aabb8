// DISTAL's higher-order kernels (§7.2) on all ranks, checked on rank 0 against plain loops:
//
//   mpirun -np 4 tessel-distributed-tensors [ttv|inner|ttm|mttkrp|all] [n] [l]
//
//   ttv     A(i,j)   = B(i,j,k) * c(k)
//   inner   a        = B(i,j,k) * C(i,j,k)           (a replicated on every rank)
//   ttm     A(i,j,l) = B(i,j,k) * C(k,l)             (the leaf is one dgemm)
//   mttkrp  A(i,l)   = B(i,j,k) * C(j,l) * D(k,l)
//
// B is distributed by its first dimension over a 1-D grid of all ranks, the small factors
// are replicated, and each rank computes the rows of the output it owns (owner computes:
// no schedule needed beyond the distributions, except ttm's dgemm leaf). The output of
// ttv then feeds a second kernel without leaving the ranks (A2(i) = A(i,j) * e(j)).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "example_check.h"
#include "tessel/distributed.h"
#include "tessel/error.h"

using namespace tessel;

namespace {

double value(const std::vector<int64_t>& c, int salt) {
  int64_t h = salt;
  for (int64_t x : c) h = h * 31 + x;
  return static_cast<double>(h % 17) / 8.0 - 1.0;
}



void report(const std::string& what, const DistRunStats& s, double flops) {
  int64_t words = 0;
  for (const auto& t : s.tensors) words += t.maxBytesReceived / 8;
  std::printf("%-7s OK  %8.2f GFLOP/s  %6.1f ms  received (max rank) %lld words\n", what.c_str(),
              flops / s.seconds / 1e9, s.seconds * 1e3, static_cast<long long>(words));
}

/// One kernel; false when wrong. Collective.
bool runOne(const std::string& what, int64_t n, int64_t l) {
  const Machine machine = Machine::world();
  const Grid g = machine.grid;
  const int me = worldRank();
  auto B = DistTensor("B", {n, n, n}, "xyz->x", g);
  B.fill([](const std::vector<int64_t>& c) { return value(c, 1); });
  std::vector<double> want;
  CooData got;
  bool ok = true;
  auto fillSmall = [](DistTensor t, int salt) {
    t.fill([salt](const std::vector<int64_t>& c) { return value(c, salt); });
    return t;
  };
  const auto b = [&](int64_t i, int64_t j, int64_t k) { return value({i, j, k}, 1); };
  if (what == "ttv") {
    DistTensor A("A", {n, n}, "xy->x", g), c = fillSmall(DistTensor("c", {n}, "", g), 2);
    auto k1 = DistributedKernel::compile("A(i,j) = B(i,j,k) * c(k)", {A, B, c}, machine);
    DistRunStats s = k1->run({A, B, c});
    // The output stays distributed and feeds the next kernel.
    DistTensor A2("A2", {n}, "x->x", g), e = fillSmall(DistTensor("e", {n}, "", g), 3);
    auto k2 = DistributedKernel::compile("A2(i) = A(i,j) * e(j)", {A2, A, e}, machine);
    k2->run({A2, A, e});
    got = A2.gather();
    if (me == 0) {
      want.assign(static_cast<size_t>(n), 0.0);
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
          double aij = 0;
          for (int64_t k = 0; k < n; k++) aij += b(i, j, k) * value({k}, 2);
          want[static_cast<size_t>(i)] += aij * value({j}, 3);
        }
      ok = example::allClose(example::denseOf(got), want, what);
      if (ok) report(what, s, 2.0 * n * n * n);
    }
  } else if (what == "inner") {
    DistTensor a("a", {}, "", g), C = fillSmall(DistTensor("C", {n, n, n}, "xyz->x", g), 4);
    auto k1 = DistributedKernel::compile("a = B(i,j,k) * C(i,j,k)", {a, B, C}, machine);
    DistRunStats s = k1->run({a, B, C});
    got = a.gather();
    if (me == 0) {
      double sum = 0;
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++)
          for (int64_t k = 0; k < n; k++) sum += b(i, j, k) * value({i, j, k}, 4);
      ok = example::allClose({got.values.empty() ? 0.0 : got.values[0]}, {sum}, what);
      if (ok) report(what, s, 2.0 * n * n * n);
    }
  } else if (what == "ttm") {
    DistTensor A("A", {n, n, l}, "xyz->x", g), C = fillSmall(DistTensor("C", {n, l}, "", g), 5);
    auto k1 = DistributedKernel::compile("A(i,j,l) = B(i,j,k) * C(k,l)", {A, B, C}, machine,
                                         "distribute({i},{io},{ii}),substitute({ii,j,k,l},blas)");
    DistRunStats s = k1->run({A, B, C});
    got = A.gather();
    if (me == 0) {
      want.assign(static_cast<size_t>(n * n * l), 0.0);
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++)
          for (int64_t k = 0; k < n; k++)
            for (int64_t x = 0; x < l; x++) want[static_cast<size_t>((i * n + j) * l + x)] += b(i, j, k) * value({k, x}, 5);
      ok = example::allClose(example::denseOf(got), want, what);
      if (ok) report(what, s, 2.0 * n * n * n * l);
    }
  } else if (what == "mttkrp") {
    DistTensor A("A", {n, l}, "xy->x", g), C = fillSmall(DistTensor("C", {n, l}, "", g), 6),
                                          D = fillSmall(DistTensor("D", {n, l}, "", g), 7);
    auto k1 = DistributedKernel::compile("A(i,l) = B(i,j,k) * C(j,l) * D(k,l)", {A, B, C, D}, machine);
    DistRunStats s = k1->run({A, B, C, D});
    got = A.gather();
    if (me == 0) {
      want.assign(static_cast<size_t>(n * l), 0.0);
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++)
          for (int64_t k = 0; k < n; k++)
            for (int64_t x = 0; x < l; x++)
              want[static_cast<size_t>(i * l + x)] += b(i, j, k) * value({j, x}, 6) * value({k, x}, 7);
      ok = example::allClose(example::denseOf(got), want, what);
      if (ok) report(what, s, 3.0 * n * n * n * l);
    }
  } else {
    throw UserError("unknown kernel '" + what + "' (ttv, inner, ttm, mttkrp, all)");
  }
  return reduceOverRanks(ok ? 0 : 1, true) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string what = argc > 1 ? argv[1] : "all";
  const int64_t n = argc > 2 ? std::atoll(argv[2]) : 40;
  const int64_t l = argc > 3 ? std::atoll(argv[3]) : 16;
  bool ok = true;
  try {
    std::vector<std::string> all = {"ttv", "inner", "ttm", "mttkrp"};
    for (const std::string& w : what == "all" ? all : std::vector<std::string>{what}) ok &= runOne(w, n, l);
  } catch (const std::exception& e) {
    if (worldRank() == 0) std::fprintf(stderr, "tessel-distributed-tensors: %s\n", e.what());
    ok = false;
  }
  finalizeDistributed();
  return ok ? 0 : 1;
}
