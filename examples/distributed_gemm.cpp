// The distributed GEMM algorithms of DISTAL (Figure 9) as tessel schedules, run with the
// C++ API and checked against a plain triple loop on rank 0:
//
//   mpirun -np 4 tessel-distributed-gemm [algorithm|all] [m] [k] [n]
//
// The algorithms differ only in the machine grid, the distributions and the schedule:
//   summa     2-D grid, k in panels; A's row panels and B's column panels broadcast
//   cannon    square grid, k in q blocks, both inputs rotated (neighbour shifts)
//   pumma     square grid, only A's blocks rotated along rows
//   johnson   3-D cube; each rank one block product, C reduced over the k layers
//   2.5d      q x q x c (Solomonik): c layers each run Cannon on k/c
//   cosma     the grid (pm, pn, pk) that moves the fewest words for this shape and rank
//             count (the model of COSMA, Kwasniewski et al. SC'19): a 2-D grid for square
//             shapes, k split across ranks when k is long
// An algorithm whose grid does not fit the rank count (cannon on 8 ranks) is skipped.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tessel/distributed.h"
#include "tessel/error.h"

using namespace tessel;

namespace {

double valueA(int64_t i, int64_t k) { return static_cast<double>((i * 7 + k * 3) % 11) - 5.0; }
double valueB(int64_t k, int64_t j) { return static_cast<double>((k * 5 + j * 2) % 13) / 4.0 - 1.5; }

/// The largest q with q^d dividing p exactly as q^d == p (0 if none).
int root(int p, int d) {
  for (int q = 1; q <= p; q++) {
    int v = 1;
    for (int e = 0; e < d; e++) v *= q;
    if (v == p) return q;
    if (v > p) break;
  }
  return 0;
}

struct Plan {
  Grid grid;
  std::string distA, distB, distC, schedule;
};

/// COSMA's choice: the grid whose ranks receive the fewest words, counting A's and B's
/// blocks and, when k is split, the partial C blocks reduced into their owners.
Grid cosmaGrid(int64_t m, int64_t n, int64_t k, int p) {
  double best = INFINITY;
  Grid g(p, 1, 1);
  for (int pm = 1; pm <= p; pm++)
    for (int pn = 1; pm * pn <= p; pn++) {
      if (p % (pm * pn)) continue;
      int pk = p / (pm * pn);
      double a = static_cast<double>(m) / pm * static_cast<double>(k) / pk;
      double b = static_cast<double>(k) / pk * static_cast<double>(n) / pn;
      double c = pk > 1 ? static_cast<double>(m) / pm * static_cast<double>(n) / pn : 0.0;
      if (a + b + c < best) {
        best = a + b + c;
        g = Grid(pm, pn, pk);
      }
    }
  return g;
}

/// The plan for `algo` on p ranks, or an empty schedule when the grid does not fit.
Plan planFor(const std::string& algo, int p, int64_t m, int64_t n, int64_t k) {
  const std::string blas = ",substitute({ii,ji,ki},blas)";
  const std::string d3 = "distribute({i,j,k},{io,jo,ko},{ii,ji,ki})";
  if (algo == "summa") {
    int r = 1;
    for (int q = 1; q * q <= p; q++)
      if (p % q == 0) r = q;
    return {Grid(r, p / r), "xy->xy", "xy->xy", "xy->xy",
            "distribute({i,j},{io,jo},{ii,ji}),split(k,ko,ki,256),reorder(ko,ii,ji,ki),communicate(A,jo),"
            "communicate({B,C},ko)" + blas};
  }
  if (algo == "cannon" || algo == "pumma") {
    int q = root(p, 2);
    if (!q) return {};
    std::string rot = algo == "cannon" ? "{io,jo}" : "{io}";
    return {Grid(q, q), "xy->xy", "xy->xy", "xy->xy",
            "distribute({i,j},{io,jo},{ii,ji}),divide(k,ko,ki," + std::to_string(q) +
                "),reorder(ko,ii,ji,ki),rotate(ko," + rot + ",kos),communicate(A,jo),communicate({B,C},kos)" + blas};
  }
  if (algo == "johnson") {
    int q = root(p, 3);
    if (!q) return {};
    return {Grid(q, q, q), "xy->xy0", "xz->x0z", "zy->0yz", d3 + ",communicate({A,B,C},ko)" + blas};
  }
  if (algo == "2.5d") {  // p = q*q*c with c <= q, as many layers as fit
    for (int c = p; c >= 2; c--) {
      if (p % c) continue;
      int q = root(p / c, 2);
      if (!q || c > q) continue;
      return {Grid(q, q, c), "xy->xy0", "xy->xy0", "xy->xy0",
              d3 + ",divide(ki,kio,kii," + std::to_string(q) +
                  "),reorder(kio,ii,ji,kii),rotate(kio,{io,jo},kios),communicate(A,jo),communicate({B,C},kios)" +
                  ",substitute({ii,ji,kii},blas)"};
    }
    return {};
  }
  if (algo == "cosma") {
    Grid g = cosmaGrid(m, n, k, p);
    return {g, "xy->xy0", "xz->x0z", "zy->0yz", d3 + ",communicate({A,B,C},ko)" + blas};
  }
  throw UserError("unknown algorithm '" + algo + "' (summa, cannon, pumma, johnson, 2.5d, cosma, all)");
}

/// Runs one algorithm; false when its result is wrong. Collective.
bool runOne(const std::string& algo, int64_t m, int64_t n, int64_t k) {
  const int p = worldSize(), me = worldRank();
  Plan plan = planFor(algo, p, m, n, k);
  if (plan.schedule.empty()) {
    if (me == 0) std::printf("%-8s skipped: no grid of its shape has %d ranks\n", algo.c_str(), p);
    return true;
  }
  Machine machine{plan.grid};
  // DISTAL's names: A = B * C (A is the output).
  DistTensor A("A", {m, n}, plan.distA, plan.grid), B("B", {m, k}, plan.distB, plan.grid),
      C("C", {k, n}, plan.distC, plan.grid);
  B.fill([](const std::vector<int64_t>& c) { return valueA(c[0], c[1]); });
  C.fill([](const std::vector<int64_t>& c) { return valueB(c[0], c[1]); });
  auto kernel = DistributedKernel::compile("A(i,j) = B(i,k) * C(k,j)", {A, B, C}, machine, plan.schedule);
  DistRunStats stats = kernel->run({A, B, C});
  CooData got = A.gather();
  bool ok = true;
  if (me == 0) {  // the oracle: a triple loop, nothing of tessel's
    std::vector<double> want(static_cast<size_t>(m * n), 0.0);
    for (int64_t i = 0; i < m; i++)
      for (int64_t kk = 0; kk < k; kk++)
        for (int64_t j = 0; j < n; j++) want[static_cast<size_t>(i * n + j)] += valueA(i, kk) * valueB(kk, j);
    std::vector<double> have(static_cast<size_t>(m * n), 0.0);
    for (size_t e = 0; e < got.values.size(); e++)
      have[static_cast<size_t>(got.coords[2 * e] * n + got.coords[2 * e + 1])] = got.values[e];
    for (size_t e = 0; e < want.size() && ok; e++)
      if (std::abs(have[e] - want[e]) > 1e-9 * (1 + std::abs(want[e]))) {
        std::printf("%-8s WRONG at (%lld, %lld): %g, expected %g\n", algo.c_str(), static_cast<long long>(e / n),
                    static_cast<long long>(e % n), have[e], want[e]);
        ok = false;
      }
    int64_t words = 0;
    for (const auto& t : stats.tensors) words += t.maxBytesReceived / 8;
    if (ok)
      std::printf("%-8s OK  grid %-7s %8.2f GFLOP/s  %6.1f ms  received (max rank) %lld words  schedule: %s\n",
                  algo.c_str(), plan.grid.str().c_str(), 2.0 * m * n * k / stats.seconds / 1e9, stats.seconds * 1e3,
                  static_cast<long long>(words), plan.schedule.c_str());
  }
  return reduceOverRanks(ok ? 0 : 1, true) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string algo = argc > 1 ? argv[1] : "all";
  const int64_t m = argc > 2 ? std::atoll(argv[2]) : 300;
  const int64_t k = argc > 3 ? std::atoll(argv[3]) : m;
  const int64_t n = argc > 4 ? std::atoll(argv[4]) : m;
  bool ok = true;
  try {
    std::vector<std::string> all = {"summa", "cannon", "pumma", "johnson", "2.5d", "cosma"};
    for (const std::string& a : algo == "all" ? all : std::vector<std::string>{algo}) ok &= runOne(a, m, n, k);
  } catch (const std::exception& e) {
    // Errors of notation or schedule reach every rank alike.
    if (worldRank() == 0) std::fprintf(stderr, "tessel-distributed-gemm: %s\n", e.what());
    ok = false;
  }
  finalizeDistributed();
  return ok ? 0 : 1;
}
