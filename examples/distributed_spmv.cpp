// Row-based distributed SpMV and SpMM (SpDISTAL §VI) with the C++ API: B in CSR, its rows
// in blocks over the ranks (`xy->x`), the dense operand replicated (or, batched SpMM, in
// column blocks fetched two columns at a time), each rank computing its rows of the
// output (owner computes); SpMV also by non-zeros, fused non-zeros and by columns. Checked on rank 0 against plain loops over B's
// entries:
//
//   mpirun -np 4 tessel-distributed-spmv [FILE.mtx ...]
//
// Without files it runs generated inputs that stress the partition: R-MAT (skewed rows),
// one very heavy row, empty rows, and more ranks than rows.
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

double xValue(int64_t j, int64_t col) { return static_cast<double>((j * 13 + col * 7) % 17) / 8.0 - 1.0; }



/// SpMV and SpMM (K columns) on B; false when wrong. Collective.
bool runOn(const std::string& what, const CooData& b, int64_t K) {
  const Machine m = Machine::world();
  const int P = m.grid.size(), me = worldRank();
  const int64_t rows = b.dims[0], cols = b.dims[1];
  const std::string rowsSchedule = "divide(i,io,ii," + std::to_string(P) + "),distribute(io),communicate({a,B,c},io)";
  DistTensor B("B", b.dims, "xy->x", m.grid, Format::parse("ds"));
  B.setFromCoo(b);
  DistTensor a("a", {rows}, "x->x", m.grid), c("c", {cols}, "", m.grid);
  c.fill([](const std::vector<int64_t>& at) { return xValue(at[0], 0); });
  auto spmv = DistributedKernel::compile("a(i) = B(i,j) * c(j)", {a, B, c}, m, rowsSchedule);
  DistRunStats s1 = spmv->run({a, B, c});
  CooData gotA = a.gather();

  DistTensor A("A", {rows, K}, "xy->x", m.grid), C("C", {cols, K}, "", m.grid);
  C.fill([](const std::vector<int64_t>& at) { return xValue(at[0], at[1]); });
  const std::string mmSchedule =
      "divide(i,io,ii," + std::to_string(P) + "),distribute(io),communicate({A,B,C},io)";
  auto spmm = DistributedKernel::compile("A(i,j) = B(i,k) * C(k,j)", {A, B, C}, m, mmSchedule);
  DistRunStats s2 = spmm->run({A, B, C});
  CooData gotMM = A.gather();
  // Batched SpMM (memory-conserving): the dense operand lives in column blocks (xy->y)
  // and each rank fetches 2 of its columns at a time, so no rank holds all of C.
  DistTensor Ab("A", {rows, K}, "xy->x", m.grid), Cb("C", {cols, K}, "xy->y", m.grid);
  Cb.fill([](const std::vector<int64_t>& at) { return xValue(at[0], at[1]); });
  auto batched = DistributedKernel::compile(
      "A(i,j) = B(i,k) * C(k,j)", {Ab, B, Cb}, m,
      "divide(i,io,ii," + std::to_string(P) + "),distribute(io),split(j,jo,ji,2),reorder(io,jo,ii,k,ji),"
      "communicate(B,io),communicate({A,C},jo)");
  batched->run({Ab, B, Cb});
  CooData gotBatched = Ab.gather();

  // Columns distributed while B's rows are: each rank fetches the rows of B its block of
  // columns needs (all of them here) and the partial sums reduce into a's owners.
  DistTensor ac("a", {rows}, "x->x", m.grid);
  auto byCols = DistributedKernel::compile(
      "a(i) = B(i,j) * c(j)", {ac, B, c}, m,
      "divide(j,jo,ji," + std::to_string(P) + "),reorder(jo,i,ji),distribute(jo),communicate({a,B,c},jo)");
  byCols->run({ac, B, c});
  CooData gotCols = ac.gather();
  // Rows in blocks of about equal non-zeros (xy->~x): the same schedule; the distributed
  // loop over i follows B's pieces, so skewed rows spread evenly.
  DistTensor Bnz("B", b.dims, "xy->~x", m.grid, Format::parse("ds"));
  Bnz.setFromCoo(b);
  DistTensor anz("a", {rows}, "x->x", m.grid);
  auto spmvNz = DistributedKernel::compile("a(i) = B(i,j) * c(j)", {anz, Bnz, c}, m, rowsSchedule);
  DistRunStats s3 = spmvNz->run({anz, Bnz, c});
  CooData gotNz = anz.gather();
  const int64_t mostNz = reduceOverRanks(Bnz.sparsePiece().defined() ? Bnz.sparsePiece().storedCount() : 0, true);
  // Non-zeros split evenly across row boundaries ((xy)->~f) with SpDISTAL's schedule: a row
  // shared by two pieces gets both partial sums.
  DistTensor Bf("B", b.dims, "(xy)->~f", m.grid, Format::parse("ds"));
  Bf.setFromCoo(b);
  DistTensor af("a", {rows}, "x->x", m.grid);
  auto spmvF = DistributedKernel::compile(
      "a(i) = B(i,j) * c(j)", {af, Bf, c}, m,
      "fuse(i,j,f),pos(f,fp,B),divide(fp,fo,fi," + std::to_string(P) + "),distribute(fo),communicate({a,B,c},fo)");
  DistRunStats s4 = spmvF->run({af, Bf, c});
  CooData gotF = af.gather();

  bool ok = true;
  if (me == 0) {  // the oracle: B's entries, one by one
    std::vector<double> y(static_cast<size_t>(rows), 0.0), Y(static_cast<size_t>(rows * K), 0.0);
    for (int64_t e = 0; e < b.nnz(); e++) {
      int64_t i = b.coords[static_cast<size_t>(2 * e)], j = b.coords[static_cast<size_t>(2 * e + 1)];
      y[static_cast<size_t>(i)] += b.values[static_cast<size_t>(e)] * xValue(j, 0);
      for (int64_t k = 0; k < K; k++) Y[static_cast<size_t>(i * K + k)] += b.values[static_cast<size_t>(e)] * xValue(j, k);
    }
    ok = example::allClose(example::denseOf(gotA), y, what + " spmv") && example::allClose(example::denseOf(gotMM), Y, what + " spmm") &&
         example::allClose(example::denseOf(gotBatched), Y, what + " spmm batched") &&
         example::allClose(example::denseOf(gotNz), y, what + " spmv by non-zeros") && example::allClose(example::denseOf(gotF), y, what + " spmv fused non-zeros") &&
         example::allClose(example::denseOf(gotCols), y, what + " spmv by columns (B's rows fetched)");
    if (ok)
      std::printf("%-28s OK  %lld x %lld, %lld nnz on %d ranks: spmv %.3f ms, spmm(%lld) %.3f ms, spmv ~x %.3f ms "
                  "(most non-zeros on a rank: %lld), spmv ~f %.3f ms\n",
                  what.c_str(), static_cast<long long>(rows), static_cast<long long>(cols),
                  static_cast<long long>(b.nnz()), P, s1.seconds * 1e3, static_cast<long long>(K), s2.seconds * 1e3,
                  s3.seconds * 1e3, static_cast<long long>(mostNz), s4.seconds * 1e3);
  }
  return reduceOverRanks(ok ? 0 : 1, true) == 0;
}

CooData heavyRow(int64_t n) {
  CooData c;
  c.dims = {n, n};
  for (int64_t j = 0; j < n; j++) c.add({n / 3, j}, 1.0 + static_cast<double>(j % 5));
  c.add({0, 0}, 2.0);
  c.add({n - 1, n - 1}, 3.0);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  bool ok = true;
  try {
    if (argc > 1) {
      for (int f = 1; f < argc; f++) ok &= runOn(argv[f], readTensorFile(argv[f]).data, 16);
    } else {
      ok &= runOn("rmat-10", generateRmat(10, 8, 0.57, 0.19, 0.19, 3), 8);
      ok &= runOn("heavy row", heavyRow(300), 4);
      CooData sparseRows = generateUniformMatrix(500, 400, 0.2, 5);  // most rows empty
      ok &= runOn("mostly empty rows", sparseRows, 4);
      CooData tiny;
      tiny.dims = {2, 3};
      tiny.add({1, 2}, 4.0);
      ok &= runOn("2 rows (ranks without rows)", tiny, 3);
      CooData none;
      none.dims = {5, 5};
      ok &= runOn("no entries", none, 2);
    }
  } catch (const std::exception& e) {
    if (worldRank() == 0) std::fprintf(stderr, "tessel-distributed-spmv: %s\n", e.what());
    ok = false;
  }
  finalizeDistributed();
  return ok ? 0 : 1;
}
