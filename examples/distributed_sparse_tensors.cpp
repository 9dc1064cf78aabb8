// SpDISTAL's sparse tensor kernels on CSF pieces (issue 29), checked on rank 0 against
// plain loops over the tensor's entries:
//
//   mpirun -np 4 tessel-distributed-sparse-tensors [FILE.tns]
//
//   SpTTV     A(i,j) = B(i,j,k) * c(k)
//   SpMTTKRP  A(i,l) = B(i,j,k) * C(j,l) * D(k,l)
//
// B is stored as CSF ("sss") with its slices split over the ranks by non-zeros (xyz->~x):
// skewed slices spread evenly. The factors are replicated; each rank computes the rows of
// the output its slices touch (owner computes).
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "example_check.h"
#include "tessel/distributed.h"
#include "tessel/error.h"
#include "tessel/generate.h"
#include "tessel/io.h"

using namespace tessel;

namespace {

double factor(int64_t r, int64_t l, int salt) { return static_cast<double>((r * 7 + l * 3 + salt) % 11) / 4.0 - 1.0; }



bool runOn(const std::string& what, const CooData& b, int64_t L) {
  const Machine m = Machine::world();
  const int P = m.grid.size(), me = worldRank();
  const int64_t I = b.dims[0], J = b.dims[1], K = b.dims[2];
  const std::string rows = "divide(i,io,ii," + std::to_string(P) + "),distribute(io),communicate({A,B,c},io)";
  DistTensor B("B", b.dims, "xyz->~x", m.grid, Format::parse("sss"));
  B.setFromCoo(b);
  DistTensor A("A", {I, J}, "xy->x", m.grid), c("c", {K}, "", m.grid);
  c.fill([](const std::vector<int64_t>& at) { return factor(at[0], 0, 1); });
  auto ttv = DistributedKernel::compile("A(i,j) = B(i,j,k) * c(k)", {A, B, c}, m, rows);
  DistRunStats s1 = ttv->run({A, B, c});
  CooData gotTtv = A.gather();

  DistTensor M("A", {I, L}, "xy->x", m.grid), C("C", {J, L}, "", m.grid), D("D", {K, L}, "", m.grid);
  C.fill([](const std::vector<int64_t>& at) { return factor(at[0], at[1], 2); });
  D.fill([](const std::vector<int64_t>& at) { return factor(at[0], at[1], 3); });
  const std::string mrows = "divide(i,io,ii," + std::to_string(P) + "),distribute(io),communicate({A,B,C,D},io)";
  auto mttkrp = DistributedKernel::compile("A(i,l) = B(i,j,k) * C(j,l) * D(k,l)", {M, B, C, D}, m, mrows);
  DistRunStats s2 = mttkrp->run({M, B, C, D});
  CooData gotM = M.gather();

  bool ok = true;
  if (me == 0) {
    std::vector<double> ttvWant(static_cast<size_t>(I * J), 0.0), mWant(static_cast<size_t>(I * L), 0.0);
    for (int64_t e = 0; e < b.nnz(); e++) {
      int64_t i = b.coords[static_cast<size_t>(3 * e)], j = b.coords[static_cast<size_t>(3 * e + 1)],
              k = b.coords[static_cast<size_t>(3 * e + 2)];
      double v = b.values[static_cast<size_t>(e)];
      ttvWant[static_cast<size_t>(i * J + j)] += v * factor(k, 0, 1);
      for (int64_t l = 0; l < L; l++) mWant[static_cast<size_t>(i * L + l)] += v * factor(j, l, 2) * factor(k, l, 3);
    }
    ok = example::allClose(example::denseOf(gotTtv), ttvWant, what + " spttv") && example::allClose(example::denseOf(gotM), mWant, what + " spmttkrp");
    if (ok)
      std::printf("%-24s OK  %lldx%lldx%lld, %lld nnz on %d ranks: spttv %.3f ms, spmttkrp(%lld) %.3f ms\n", what.c_str(),
                  static_cast<long long>(I), static_cast<long long>(J), static_cast<long long>(K),
                  static_cast<long long>(b.nnz()), P, s1.seconds * 1e3, static_cast<long long>(L), s2.seconds * 1e3);
  }
  return reduceOverRanks(ok ? 0 : 1, true) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool ok = true;
  try {
    if (argc > 1) {
      for (int f = 1; f < argc; f++) ok &= runOn(argv[f], readTensorFile(argv[f]).data, 8);
    } else {
      ok &= runOn("uniform 30x20x25", generateUniformTensor({30, 20, 25}, 400, 3), 6);
      ok &= runOn("skewed slices", generateSkewedTensor({40, 30, 20}, 600, 1.2, 5), 4);
      CooData few;
      few.dims = {3, 4, 5};
      few.add({2, 1, 4}, 1.5);
      ok &= runOn("one entry", few, 3);
    }
  } catch (const std::exception& e) {
    if (worldRank() == 0) std::fprintf(stderr, "tessel-distributed-sparse-tensors: %s\n", e.what());
    ok = false;
  }
  finalizeDistributed();
  return ok ? 0 : 1;
}
