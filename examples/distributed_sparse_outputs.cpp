// SpDISTAL's kernels with sparse outputs (issue 29): each rank assembles its piece of the
// output in the output's format (both phases, assembly then compute, on its own rows or
// non-zeros), checked on rank 0 against plain loops over the entries:
//
//   mpirun -np 4 tessel-distributed-sparse-outputs [FILE.mtx ...]
//
//   SpAdd3  A(i,j) = B(i,j) + C(i,j) + D(i,j)   rows (xy->x), CSR in and out
//   SDDMM   A(i,j) = B(i,j) * C(i,k) * D(j,k)   non-zeros of B ((xy)->~f), A follows B
//   SpGEMM  A(i,j) = B(i,k) * E(k,j)            rows of B by non-zeros (xy->~x), the rows
//                                               of E its rows reference fetched
#include <cmath>
#include <cstdio>
#include <algorithm>
#include <map>
#include <utility>
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

/// The same matrix's entries with other values (SpAdd3's C and D share some of B's
/// positions and add their own).
CooData shifted(const CooData& b, int64_t shift, double scale) {
  CooData out;
  out.dims = b.dims;
  for (int64_t e = 0; e < b.nnz(); e++) {
    if (e % 3 == 0) continue;  // some positions only B has
    int64_t i = b.coords[static_cast<size_t>(2 * e)], j = b.coords[static_cast<size_t>(2 * e + 1)];
    out.add({i, (j + shift * (e % 2)) % b.dims[1]}, scale * b.values[static_cast<size_t>(e)] + 0.5);
  }
  return out;
}

using Entries = std::map<std::pair<int64_t, int64_t>, double>;

/// Entries of a matrix, duplicates summed (as packing does).
Entries entriesOf(const CooData& t) {
  Entries out;
  for (int64_t e = 0; e < t.nnz(); e++)
    out[{t.coords[static_cast<size_t>(2 * e)], t.coords[static_cast<size_t>(2 * e + 1)]}] += t.values[static_cast<size_t>(e)];
  return out;
}

/// `got` holds exactly the positions of `want` (the output kept the sparsity it should),
/// with values equal to 1e-9 relative (and 1e-13 of the largest); else prints the first difference, naming `what`.
bool sameEntries(const CooData& got, const Entries& want, const std::string& what) {
  Entries have = entriesOf(got);
  double largest = 0;  // sums that cancel to ~0 are exact only to the summands' rounding
  for (const auto& [at, v] : want) largest = std::max(largest, std::abs(v));
  for (const auto& [at, v] : want) {
    auto it = have.find(at);
    if (it == have.end() || std::abs(it->second - v) > 1e-9 * (1 + std::abs(v)) + 1e-13 * largest) {
      std::printf("%s WRONG at (%lld, %lld): %s, expected %.17g\n", what.c_str(), static_cast<long long>(at.first),
                  static_cast<long long>(at.second),
                  it == have.end() ? "absent" : std::to_string(it->second).c_str(), v);
      return false;
    }
  }
  for (const auto& [at, v] : have)
    if (!want.count(at)) {
      std::printf("%s WRONG: an entry at (%lld, %lld), outside the expected pattern\n", what.c_str(),
                  static_cast<long long>(at.first), static_cast<long long>(at.second));
      return false;
    }
  return true;
}

bool runOn(const std::string& what, const CooData& b, bool banded = false) {
  const Machine m = Machine::world();
  const int P = m.grid.size(), me = worldRank();
  const int64_t I = b.dims[0], J = b.dims[1], K = 5;
  const Format csr = Format::parse("ds");
  const std::string p = std::to_string(P);

  // SpAdd3 by rows: every tensor's rows in equal blocks, each rank adds its own.
  DistTensor B("B", b.dims, "xy->x", m.grid, csr), C("C", b.dims, "xy->x", m.grid, csr),
      D("D", b.dims, "xy->x", m.grid, csr), A("A", b.dims, "xy->x", m.grid, csr);
  const CooData c = shifted(b, 1, 2.0), d = shifted(b, 3, -1.0);
  B.setFromCoo(b);
  C.setFromCoo(c);
  D.setFromCoo(d);
  auto add3 = DistributedKernel::compile("A(i,j) = B(i,j) + C(i,j) + D(i,j)", {A, B, C, D}, m,
                                         "divide(i,io,ii," + p + "),distribute(io),communicate({A,B,C,D},io)");
  DistRunStats sAdd = add3->run({A, B, C, D});
  CooData gotAdd = A.gather();

  // SDDMM by non-zeros: B's entries split evenly across row boundaries, the output's
  // pieces follow them (owner computes); the dense factors are replicated.
  DistTensor Bf("B", b.dims, "(xy)->~f", m.grid, csr), Af("A", b.dims, "(xy)->~f", m.grid, csr);
  DistTensor Cd("C", {I, K}, "", m.grid), Dd("D", {J, K}, "", m.grid);
  Bf.setFromCoo(b);
  Cd.fill([](const std::vector<int64_t>& at) { return factor(at[0], at[1], 1); });
  Dd.fill([](const std::vector<int64_t>& at) { return factor(at[0], at[1], 2); });
  auto sddmm = DistributedKernel::compile(
      "A(i,j) = B(i,j) * C(i,k) * D(j,k)", {Af, Bf, Cd, Dd}, m,
      "fuse(i,j,f),pos(f,fp,B),divide(fp,fo,fi," + p + "),distribute(fo),communicate({A,B,C,D},fo)");
  DistRunStats sSd = sddmm->run({Af, Bf, Cd, Dd});
  CooData gotSd = Af.gather();

  // SpGEMM by rows of B split by non-zeros; the right operand (B's transpose) in row
  // blocks: each rank fetches only the rows of E its rows of B reference.
  CooData e;
  e.dims = {J, I};
  for (int64_t x = 0; x < b.nnz(); x++)
    e.add({b.coords[static_cast<size_t>(2 * x + 1)], b.coords[static_cast<size_t>(2 * x)]}, b.values[static_cast<size_t>(x)]);
  DistTensor Bn("B", b.dims, "xy->~x", m.grid, csr), E("E", {J, I}, "xy->x", m.grid, csr), An("A", {I, I}, "xy->~x", m.grid, csr);
  Bn.setFromCoo(b);
  E.setFromCoo(e);
  auto spgemm = DistributedKernel::compile("A(i,j) = B(i,k) * E(k,j)", {An, Bn, E}, m,
                                           "divide(i,io,ii," + p + "),distribute(io),communicate({A,B,E},io)");
  DistRunStats sGemm = spgemm->run({An, Bn, E});
  CooData gotGemm = An.gather();
  // What E cost: at most the entries of the rows a rank needs (coordinates and value).
  int64_t eReceived = 0;
  for (const auto& t : sGemm.tensors)
    if (t.name == "E") eReceived = t.maxBytesReceived;
  const bool fetchedLittle = !banded || P < 3 || eReceived * 2 < e.nnz() * 3 * 8;
  if (me == 0 && !fetchedLittle)
    std::printf("%s spgemm: a rank received %lld bytes of E, as much as half of E: its rows were not filtered\n",
                what.c_str(), static_cast<long long>(eReceived));

  bool ok = true;
  if (me == 0) {
    const Entries bs = entriesOf(b);
    Entries add = bs, sd, gemm;
    for (const CooData* t : {&c, &d})
      for (const auto& [at, v] : entriesOf(*t)) add[at] += v;
    std::vector<std::vector<std::pair<int64_t, double>>> byCol(static_cast<size_t>(J));  // B's columns
    for (const auto& [at, v] : bs) byCol[static_cast<size_t>(at.second)].push_back({at.first, v});
    for (const auto& [at, v] : bs) {
      double dot = 0;
      for (int64_t k = 0; k < K; k++) dot += factor(at.first, k, 1) * factor(at.second, k, 2);
      sd[at] = v * dot;
      for (const auto& [r, w] : byCol[static_cast<size_t>(at.second)]) gemm[{at.first, r}] += v * w;  // (B B^T)(i, r)
    }
    ok = fetchedLittle && sameEntries(gotAdd, add, what + " spadd3") && sameEntries(gotSd, sd, what + " sddmm") &&
         sameEntries(gotGemm, gemm, what + " spgemm");
    if (ok)
      std::printf("%-24s OK  %lldx%lld, %lld nnz on %d ranks: spadd3 %.3f ms (%lld nnz), sddmm %.3f ms, spgemm %.3f ms "
                  "(%lld nnz, E: %lld bytes fetched by the busiest rank)\n",
                  what.c_str(), static_cast<long long>(I), static_cast<long long>(J), static_cast<long long>(b.nnz()), P,
                  sAdd.seconds * 1e3, static_cast<long long>(gotAdd.nnz()), sSd.seconds * 1e3, sGemm.seconds * 1e3,
                  static_cast<long long>(gotGemm.nnz()), static_cast<long long>(eReceived));
  }
  return reduceOverRanks(ok ? 0 : 1, true) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool ok = true;
  try {
    if (argc > 1) {
      for (int f = 1; f < argc; f++) ok &= runOn(argv[f], readTensorFile(argv[f]).data);
    } else {
      ok &= runOn("uniform 40x30", generateUniformMatrix(40, 30, 4, 3));
      ok &= runOn("skewed rows 50x40", generateSkewedTensor({50, 40}, 300, 1.3, 5));
      ok &= runOn("banded 90x90", generateBandedMatrix(90, 2, 7), true);
      ok &= runOn("one entry 6x7", CooData{{6, 7}, {4, 2}, {2.5}});
      ok &= runOn("empty 5x4", CooData{{5, 4}, {}, {}});
    }
  } catch (const Error& e) {
    abortAllRanks(2, std::string("error: ") + e.what());
  }
  finalizeDistributed();
  return ok ? 0 : 1;
}
