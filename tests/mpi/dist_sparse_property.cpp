// Property test of distributed sparse kernels (SpDISTAL), run under mpirun at 1, 2, 3, 4
// and 6 ranks (ctest MPI.sparse-property.npN). With a fixed seed every rank builds the same random
// cases: a kernel (SpMV, SpMM, SpAdd, SDDMM, SpGEMM, SpTTV), random sparse data (empty,
// one entry, a heavy row, empty rows, extents of 1 and fewer rows than ranks), a storage
// format, a distribution of the sparse operand (rows, rows by non-zeros, fused
// non-zeros; for SpMV also columns, whose rows every rank then fetches), dense or sparse
// outputs, the right operand of SpGEMM in row blocks (its needed rows fetched) or
// replicated, 1 or 2 threads per rank, and a second run of the same kernel. Rank 0
// compares the gathered output with plain loops over the entries written here (maps;
// independent of tessel's evaluators).
//
//   mpirun -np 4 dist_sparse_property [cases] [seed]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tessel/distributed.h"
#include "tessel/error.h"

using namespace tessel;

namespace {

using Key = std::vector<int64_t>;
using Entries = std::map<Key, double>;

Entries entriesOf(const CooData& t) {
  Entries out;
  const size_t k = t.dims.size();
  for (int64_t e = 0; e < t.nnz(); e++) {
    Key c(t.coords.begin() + static_cast<long>(e * static_cast<int64_t>(k)),
          t.coords.begin() + static_cast<long>((e + 1) * static_cast<int64_t>(k)));
    out[c] += t.values[static_cast<size_t>(e)];
  }
  return out;
}

CooData cooOf(const std::vector<int64_t>& dims, const Entries& es) {
  CooData c;
  c.dims = dims;
  for (const auto& [k, v] : es) c.add(k, v);
  return c;
}

/// Random sparse data with the shapes that break partitions.
CooData randomSparse(std::mt19937_64& g, std::vector<int64_t> dims) {
  auto pick = [&](int64_t n) { return static_cast<int64_t>(g() % static_cast<uint64_t>(n)); };
  int64_t volume = 1;
  for (int64_t n : dims) volume *= n;
  Entries es;
  const int kind = static_cast<int>(g() % 5);
  const int64_t want = kind == 0 ? 0 : kind == 1 ? 1 : std::min<int64_t>(volume, 1 + pick(3 * dims[0] + 4));
  for (int64_t e = 0; e < want; e++) {
    Key c;
    for (size_t d = 0; d < dims.size(); d++) c.push_back(pick(dims[d]));
    if (kind == 3 && e % 2 == 0) c[0] = 0;  // a heavy first row
    if (kind == 4 && c[0] % 3 != 0) c[0] = 0;  // many empty rows
    es[c] = static_cast<double>(pick(19)) / 4.0 - 2.0;
  }
  return cooOf(dims, es);
}

double denseValue(const Key& c, int salt) {
  int64_t h = salt * 7;
  for (int64_t x : c) h = h * 31 + x;
  return static_cast<double>(h % 13) / 4.0 - 1.5;
}

struct Case {
  std::string kernel, dist, format, what;
  int threads = 1;
  bool sparseOut = false, rightRows = false, byColumns = false;
  std::vector<int64_t> dims;  // I, J, K (K: the dense width, or the 3-tensor's third extent)
  uint64_t seed = 0;
};

Case randomCase(std::mt19937_64& g, int ranks) {
  static const char* kernels[] = {"spmv", "spmm", "spadd", "sddmm", "spgemm", "spttv"};
  static const char* dists[] = {"xy->x", "xy->~x", "(xy)->~f"};
  Case c;
  c.kernel = kernels[g() % 6];
  c.dist = dists[g() % 3];
  auto extent = [&] {
    const int k = static_cast<int>(g() % 4);
    return k == 0 ? int64_t{1} : k == 1 ? static_cast<int64_t>(1 + g() % static_cast<uint64_t>(ranks + 1))
                                        : static_cast<int64_t>(2 + g() % 23);
  };
  c.dims = {extent(), extent(), 1 + static_cast<int64_t>(g() % 4)};
  if (c.kernel == "spttv") {
    c.format = g() % 2 ? "sss" : "dss";
    if (c.dist == "(xy)->~f") c.dist = g() % 2 ? "(xyz)->~f" : "(xy)z->~f";
    else c.dist = c.dist == "xy->x" ? "xyz->x" : "xyz->~x";
  } else {
    c.format = g() % 3 ? "ds" : "ss";
  }
  c.threads = g() % 4 == 0 ? 2 : 1;
  c.sparseOut = c.kernel == "spadd" || c.kernel == "sddmm" || (c.kernel == "spgemm" && g() % 3 != 0);
  if (c.kernel == "spadd" && c.dist == "(xy)->~f") c.dist = "xy->~x";  // the three operands split alike
  if (c.kernel == "spgemm" && c.dist == "(xy)->~f" && c.sparseOut) c.dist = "xy->~x";
  c.rightRows = c.kernel == "spgemm" && g() % 2;
  c.byColumns = c.kernel == "spmv" && c.dist == "xy->x" && g() % 2;
  c.seed = g();
  c.what = c.kernel + " " + c.format + " " + c.dist + (c.sparseOut ? " sparse-out" : "") +
           (c.rightRows ? " right-rows" : "") + (c.byColumns ? " by-columns" : "") + " " +
           std::to_string(c.dims[0]) + "x" + std::to_string(c.dims[1]) + "x" + std::to_string(c.dims[2]) +
           " threads " + std::to_string(c.threads);
  return c;
}

/// The rows schedule, or SpDISTAL's fused one, for P ranks over the operand B.
std::string scheduleFor(const Case& c, int P, const std::string& names) {
  const std::string p = std::to_string(P);
  if (c.byColumns) return "divide(j,jo,ji," + p + "),reorder(jo,i,ji),distribute(jo),communicate(" + names + ",jo)";
  if (c.dist.find('f') != std::string::npos) {
    // B's loops first, in its order, so that the fused ones are adjacent.
    const bool gemm = c.kernel == "spgemm";
    const std::string order = c.kernel == "spmv" ? "" : gemm ? "reorder(i,k,j)," : "reorder(i,j,k),";
    const std::string fuse = c.dist == "(xyz)->~f" ? "fuse(i,j,k,f)" : gemm ? "fuse(i,k,f)" : "fuse(i,j,f)";
    return order + fuse + ",pos(f,fp,B),divide(fp,fo,fi," + p + "),distribute(fo),communicate(" + names + ",fo)";
  }
  return "divide(i,io,ii," + p + "),distribute(io),communicate(" + names + ",io)";
}

/// Runs case c; on rank 0 compares with the loops. Collective.
bool runCase(const Case& c) {
  const Machine m{Grid(worldSize()), c.threads};
  const int P = m.grid.size();
  std::mt19937_64 g(c.seed);
  const int64_t I = c.dims[0], J = c.dims[1], K = c.dims[2];
  const Format fmt = Format::parse(c.format);
  const bool three = c.kernel == "spttv";
  const CooData b = randomSparse(g, three ? std::vector<int64_t>{I, J, K} : std::vector<int64_t>{I, J});
  DistTensor B("B", b.dims, c.dist, m.grid, fmt);
  B.setFromCoo(b);
  // The output follows the loops: rows of a sparse output by B's blocks.
  const std::string rowsOut = c.dist.find('~') != std::string::npos ? "xy->~x" : "xy->x";
  const std::string outDist = c.sparseOut ? (c.dist == "(xy)->~f" ? "(xy)->~f" : rowsOut) : "xy->x";
  Entries want;
  const Entries bs = entriesOf(b);
  CooData got;
  std::string expr;
  std::vector<DistTensor> ts;
  if (c.kernel == "spmv") {
    DistTensor a("a", {I}, "x->x", m.grid), x("c", {J}, "", m.grid);
    x.fill([](const Key& k) { return denseValue(k, 1); });
    expr = "a(i) = B(i,j) * c(j)";
    ts = {a, B, x};
    for (const auto& [k, v] : bs) want[{k[0]}] += v * denseValue({k[1]}, 1);
  } else if (c.kernel == "spmm") {
    DistTensor A("A", {I, K}, "xy->x", m.grid), C("C", {J, K}, "", m.grid);
    C.fill([](const Key& k) { return denseValue(k, 2); });
    expr = "A(i,k) = B(i,j) * C(j,k)";
    ts = {A, B, C};
    for (const auto& [k, v] : bs)
      for (int64_t l = 0; l < K; l++) want[{k[0], l}] += v * denseValue({k[1], l}, 2);
  } else if (c.kernel == "spadd") {
    const CooData cc = randomSparse(g, {I, J}), dd = randomSparse(g, {I, J});
    // C and D in equal row blocks: under B's blocks by non-zeros their rows are fetched.
    DistTensor A("A", {I, J}, outDist, m.grid, fmt), C("C", {I, J}, "xy->x", m.grid, fmt), D("D", {I, J}, "xy->x", m.grid, fmt);
    C.setFromCoo(cc);
    D.setFromCoo(dd);
    expr = "A(i,j) = B(i,j) + C(i,j) + D(i,j)";
    ts = {A, B, C, D};
    want = bs;
    for (const CooData* t : {&cc, &dd})
      for (const auto& [k, v] : entriesOf(*t)) want[k] += v;
  } else if (c.kernel == "sddmm") {
    DistTensor A("A", {I, J}, outDist, m.grid, fmt), C("C", {I, K}, "", m.grid), D("D", {J, K}, "", m.grid);
    C.fill([](const Key& k) { return denseValue(k, 3); });
    D.fill([](const Key& k) { return denseValue(k, 4); });
    expr = "A(i,j) = B(i,j) * C(i,k) * D(j,k)";
    ts = {A, B, C, D};
    for (const auto& [k, v] : bs) {
      double dot = 0;
      for (int64_t l = 0; l < K; l++) dot += denseValue({k[0], l}, 3) * denseValue({k[1], l}, 4);
      want[k] = v * dot;
    }
  } else if (c.kernel == "spgemm") {
    const CooData e = randomSparse(g, {J, K + 2});
    DistTensor E("E", {J, K + 2}, c.rightRows ? "xy->x" : "", m.grid, fmt);
    E.setFromCoo(e);
    DistTensor A = c.sparseOut ? DistTensor("A", {I, K + 2}, outDist, m.grid, fmt) : DistTensor("A", {I, K + 2}, "xy->x", m.grid);
    expr = "A(i,j) = B(i,k) * E(k,j)";
    ts = {A, B, E};
    for (const auto& [kb, v] : bs)
      for (const auto& [ke, w] : entriesOf(e))
        if (ke[0] == kb[1]) want[{kb[0], ke[1]}] += v * w;
  } else {  // spttv
    DistTensor A("A", {I, J}, "xy->x", m.grid), x("c", {K}, "", m.grid);
    x.fill([](const Key& k) { return denseValue(k, 5); });
    expr = "A(i,j) = B(i,j,k) * c(k)";
    ts = {A, B, x};
    for (const auto& [k, v] : bs) want[{k[0], k[1]}] += v * denseValue({k[2]}, 5);
  }
  std::string names = "{";
  for (size_t t = 0; t < ts.size(); t++) names += (t ? "," : "") + ts[t].name();
  names += "}";
  auto kernel = DistributedKernel::compile(expr, ts, m, scheduleFor(c, P, names));
  kernel->run(ts);
  kernel->run(ts);  // a second run replaces the output
  got = ts[0].gather();
  bool ok = true;
  if (worldRank() == 0) {
    Entries have = entriesOf(got);
    const bool denseOut = !ts[0].sparse();
    for (const auto& [k, v] : want) {
      auto it = have.find(k);
      const double h = it == have.end() ? 0.0 : it->second;
      if (std::abs(h - v) > 1e-9 * (1 + std::abs(v))) {
        std::printf("WRONG %s: %s at entry %lld...: %.17g, expected %.17g\n", c.what.c_str(), expr.c_str(),
                    static_cast<long long>(k.empty() ? 0 : k[0]), h, v);
        ok = false;
        break;
      }
    }
    for (const auto& [k, v] : have)
      if (!want.count(k) && (!denseOut || v != 0.0)) {
        std::printf("WRONG %s: %s has an entry outside the expected pattern\n", c.what.c_str(), expr.c_str());
        ok = false;
        break;
      }
  }
  return reduceOverRanks(ok ? 0 : 1, true) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  const int cases = argc > 1 ? std::atoi(argv[1]) : 120;
  const uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 29;
  std::mt19937_64 g(seed);
  int failed = 0;
  std::map<std::string, int> seen;
  for (int n = 0; n < cases; n++) {
    Case c = randomCase(g, worldSize());
    try {
      if (!runCase(c)) failed++;
      seen[c.kernel]++;
    } catch (const Error& e) {
      if (worldRank() == 0) std::printf("ERROR %s: %s\n", c.what.c_str(), e.what());
      failed++;
    }
  }
  if (worldRank() == 0) {
    std::printf("%d sparse cases on %d ranks, %d failed (", cases, worldSize(), failed);
    for (const auto& [k, n] : seen) std::printf(" %s %d", k.c_str(), n);
    std::printf(" )\n");
  }
  finalizeDistributed();
  return failed == 0 ? 0 : 1;
}
