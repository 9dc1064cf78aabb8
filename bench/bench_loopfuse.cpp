// Loop fusion (SparseLNR §6.2, issue 31): each fused kernel (loopfuse) beside the perfect
// nest (the same expression, no schedule) and the separate kernels (two assignments, the
// first materializing the temporary the fusion avoids). A fusion at the outermost loop
// runs at blocks of its rows (split, then loopfuse at the block loop); "fused per row"
// is loopfuse at the loop itself, for comparison (for <SDDMM, SpMM>, whose blocks keep the
// temporary at B's positions, the nest fused at j instead; so too for graph attention with
// one feature matrix, "<SDDMM, SpMM> one H"). Inputs are on the real matrices and
// 3-tensors of ../shared/data and generated inputs whose separate temporary exceeds the
// last-level cache. All variants are compiled up front and run interleaved (round r runs
// each `reps` times), so machine noise hits them alike; figures are medians of compute
// time per call (two calls for the separate kernels). The perfect nest, whose cost is
// the product of all loop extents, runs once per round (it takes seconds). Every output
// is compared with the fused one.
//
// The "ceiling" column bounds what fusion can gain by removing the temporary: the
// separate kernels' time over that time less the time to write a buffer of T's size
// and read it back (T's values, and a sparse T's coordinates), on the same threads,
// interleaved with the rest. Fusion that does the separate kernels' work without T is at
// most that much faster; it gains more only where it removes other work too (graph
// attention with one H gathers each row of H once, separate kernels twice).
//
//   bench_loopfuse [--threads N] [--rounds R] [--reps N] [--quick] [--only TEXT]
//
// --quick leaves out the generated inputs beyond the L3 (minutes to generate and run).
// --only runs the rows whose kernel and input names contain each word of TEXT (to profile one).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "tessel/generate.h"
#include "tessel/io.h"
#include "tessel/kernel.h"
#include "tessel/parser.h"
#include "tessel/schedule.h"
#include "tessel/tensor.h"
#include "tessel/tuning.h"

using namespace tessel;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

TensorBase dense(const std::string& name, int64_t rows, int64_t cols, uint64_t seed) {
  TensorBase t(name, Datatype::Float64, {rows, cols}, Format::parse("dd"));
  t.setFromCoo(generateDense({rows, cols}, seed));
  return t;
}

/// Largest difference between two dense outputs relative to the largest magnitude.
double relDiff(const TensorBase& a, const TensorBase& b) {
  const auto* x = static_cast<const double*>(a.raw().vals);
  const auto* y = static_cast<const double*>(b.raw().vals);
  double worst = 0, scale = 1;
  for (int64_t e = 0; e < a.storedCount(); e++) scale = std::max(scale, std::abs(x[e]));
  for (int64_t e = 0; e < a.storedCount(); e++) worst = std::max(worst, std::abs(x[e] - y[e]) / scale);
  return worst;
}

/// One compiled assignment (a stage of a variant).
struct Stage {
  Assignment a;
  std::shared_ptr<Kernel> k;
};

struct Variant {
  std::string name;
  std::vector<Stage> stages;
  TensorBase out;
  std::vector<double> ms;
  std::function<double()> hand = nullptr;  ///< a hand loop instead of stages: its seconds
  int threads = 0;                          ///< its stages' threads; 0: the run's
};

/// The separate kernels' traffic through their temporary, by hand: writes `vals` (and a
/// sparse T's coordinates `crd`) in order on `threads` threads, then reads them back in
/// order, as the producer stores T and the consumer loads it. Seconds.
double streamTemporary(std::vector<double>& vals, std::vector<int32_t>& crd, int threads) {
  static volatile double sink = 0;
  static const std::vector<double> pattern = [] {
    std::vector<double> p(64);
    for (size_t e = 0; e < p.size(); e++) p[e] = 0.5 * static_cast<double>(e);
    return p;
  }();
  const auto start = std::chrono::steady_clock::now();
  const int64_t n = static_cast<int64_t>(vals.size()), c = static_cast<int64_t>(crd.size());
  double* v = vals.data();
  int32_t* k = crd.data();
  const double* from = pattern.data();
  double sum = 0;
  // One parallel region (a region's start costs microseconds, as much as a small T's
  // traffic); vector loops (simd: the sums may be reordered), as a kernel's stores and loads are.
#pragma omp parallel num_threads(threads)
  {
#pragma omp for simd schedule(static) nowait
    for (int64_t e = 0; e < n; e++) v[e] = from[e & 63];
#pragma omp for simd schedule(static)
    for (int64_t e = 0; e < c; e++) k[e] = static_cast<int32_t>(e);
#pragma omp for simd schedule(static) reduction(+ : sum)
    for (int64_t e = 0; e < n; e++) sum += v[e];
#pragma omp for simd schedule(static) reduction(+ : sum)
    for (int64_t e = 0; e < c; e++) sum += k[e];
  }
  sink = sink + sum;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Stage compile(const std::string& expr, std::map<std::string, TensorBase>& t, const std::string& schedule,
              int threads) {
  Assignment a = parseAssignment(expr, t);
  Schedule s = !schedule.empty() ? parseSchedule(schedule, a)
               : threads > 1     ? defaultParallelSchedule(a, threads)
                                 : Schedule();
  return {a, Kernel::compile(a, s)};
}

/// A kernel family: the fused expression, where to fuse, and its two separate stages.
struct Family {
  std::string name, fused, at, producer, consumer;
  std::string target;  // the bar, for the report
  /// The second fused column's fusion point: `at` itself (per row) unless set.
  std::string alsoAt;
};

/// Runs the three variants of `f` on the tensors `t` (inputs; outputs are made here,
/// dense with `outDims`; the separate temporary T dense or in B's pattern), prints a row.
std::string only;  // --only: words each row's kernel and input names must contain
std::map<std::string, std::vector<double>> perRow;  // separate / fused per row, by kernel
std::map<std::string, std::vector<double>> ceilings;  // separate / (separate - T's traffic), by kernel

void runFamily(const Family& f, const std::string& input, std::map<std::string, TensorBase> t,
               const std::vector<int64_t>& outDims, const std::vector<int64_t>& tempDims, const Format& tempFormat,
               int threads, int rounds, int reps, bool perfect, std::vector<double>& vsPerfect,
               std::vector<double>& vsSeparate) {
  {
    std::istringstream words(only);
    for (std::string w; words >> w;)
      if ((f.name + " " + input).find(w) == std::string::npos) return;
  }
  auto output = [&](const std::string& name) {
    return TensorBase(name, Datatype::Float64, outDims, DenseFormat(static_cast<int>(outDims.size())));
  };
  // A nest fused per row or further in runs its rows on several threads in blocks that
  // tessel's block loop hands out, as the automatic choice does (OpenMP's guided chunks of
  // plain parallelize(i) start large, and skewed rows then leave a thread waiting); the
  // tuning's blocks a thread, where the automatic choice may double them for ample work.
  auto inRowBlocks = [&](const std::string& at) {
    if (threads <= 1) return "loopfuse(" + at + ")";
    const int64_t r = rowsPerParallelBlock(outDims[0], threads, hostTuning().blocksPerThread);
    return "split(i,i_block,i_in," + std::to_string(r) + "),loopfuse(" + (at == "i" ? "i_in" : at) +
           "),parallelize(i_block,cpu_thread,no_races)";
  };
  std::vector<Variant> vs;
  t["A"] = output("A");
  // Fused at the outermost loop: at blocks of its rows (the temporary about 16 KB), so the
  // consumer's dense operand stays in cache across the block; per row, the producer's
  // rows evicted it every row. Fused further in: at the loop itself.
  std::string fusedSchedule = inRowBlocks(f.at);
  // Blocks as the automatic choice sizes them (rowsPerFusedBlock). A row of a temporary
  // stored like B holds B's entries in that row (loopfuse stores it at B's positions).
  const bool atPositions = !tempFormat.isAllDense();
  const double rowTemp = atPositions ? static_cast<double>(t.at("B").storedCount()) /
                                           static_cast<double>(std::max<int64_t>(1, outDims[0]))
                                     : static_cast<double>(tempDims.back());
  const int64_t rows = rowsPerFusedBlock(rowTemp, outDims[0], threads, atPositions);
  if (f.at == "i" && rows >= 2) {
    fusedSchedule = "split(i,i0,i1," + std::to_string(rows) + "),loopfuse(i0)" +
                    (threads > 1 ? ",parallelize(i0,cpu_thread,no_races)" : "");
  } else if (atPositions && !f.alsoAt.empty()) {
    fusedSchedule = inRowBlocks(f.alsoAt);  // (per row, t would be a dense row of every j)
  }
  vs.push_back({"fused", {compile(f.fused, t, fusedSchedule, threads)}, t["A"], {}});
  t["A"] = output("A");
  vs.push_back({"per row", {compile(f.fused, t, inRowBlocks(f.alsoAt.empty() ? f.at : f.alsoAt), threads)}, t["A"], {}});
  t["A"] = output("A");
  t["T"] = TensorBase("T", Datatype::Float64, tempDims, tempFormat);
  Stage first = compile(f.producer, t, "", threads);
  vs.push_back({"separate", {first, compile(f.consumer, t, "", threads)}, t["A"], {}});
  // tessel's own choice (defaultSchedule: the cost model), as the tool and Python make it.
  t["A"] = output("A");
  Assignment autoA = parseAssignment(f.fused, t);
  ScheduleChoice chosen = defaultSchedule(autoA, threads);
  vs.push_back({"auto", {{autoA, Kernel::compile(autoA, chosen.schedule)}}, t["A"], {}, nullptr, chosen.threads});
  // T's traffic: a dense T's values, or a T stored like B: B's entries and coordinates.
  const int64_t tEntries = atPositions ? t.at("B").storedCount()
                                       : std::accumulate(tempDims.begin(), tempDims.end(), int64_t{1},
                                                         std::multiplies<int64_t>());
  std::vector<double> tVals(static_cast<size_t>(tEntries));
  std::vector<int32_t> tCrd(atPositions ? static_cast<size_t>(tEntries) : 0);
  vs.push_back({"T traffic", {}, TensorBase(), {}, [&] { return streamTemporary(tVals, tCrd, threads); }});
  if (perfect) {
    t["A"] = output("A");
    vs.push_back({"perfect", {compile(f.fused, t, "", threads)}, t["A"], {}});
  }
  for (int r = 0; r < rounds; r++)
    for (Variant& v : vs)
      for (int n = 0; n < (v.name == "perfect" ? 1 : reps); n++) {
        double s = v.hand ? v.hand() : 0;
        for (Stage& st : v.stages) {
          RunTimes rt = st.k->run(st.a, v.threads ? v.threads : threads);
          s += rt.assembleSeconds + rt.computeSeconds;
        }
        v.ms.push_back(s * 1e3);
      }
  std::string bad;
  for (size_t v = 1; v < vs.size(); v++) {
    if (vs[v].hand) continue;  // (no output)
    if (double d = relDiff(vs[0].out, vs[v].out); d > 1e-9) bad += " MISMATCH(" + vs[v].name + " " + std::to_string(d) + ")";
  }
  double fused = median(vs[0].ms), row = median(vs[1].ms), sep = median(vs[2].ms), au = median(vs[3].ms),
         traffic = median(vs[4].ms), pf = perfect ? median(vs[5].ms) : 0;
  // (No ceiling where T's traffic took as long as the separate kernels: a noisy round.)
  const double ceiling = traffic < sep ? sep / (sep - traffic) : 0;
  if (ceiling > 0) ceilings[f.name].push_back(ceiling);
  vsSeparate.push_back(sep / fused);
  perRow[f.name].push_back(sep / row);
  if (perfect) vsPerfect.push_back(pf / fused);
  double best = std::min({fused, row, sep});
  if (perfect) best = std::min(best, pf);
  // Which of the three the automatic choice is (its schedule), and its time over the best.
  const std::string text = chosen.schedule.str();
  std::string pick = chosen.schedule.empty()              ? "perfect"
                     : text.find("loopfuse") != std::string::npos ? "fused"
                     : text.rfind("precompute(", 0) == 0 ? "separate"
                                                            : "other";
  std::printf("| %s | %s | %.3f | %.3f | %.3f | %s | %.2fx | %.3f | %s | %s | %s %.3f, %.2fx the best |%s\n",
              f.name.c_str(), input.c_str(), fused, row, sep, perfect ? (std::to_string(pf).substr(0, 8)).c_str() : "-",
              sep / fused, traffic, ceiling > 0 ? (std::to_string(ceiling).substr(0, 4) + "x").c_str() : "-", perfect ? (std::to_string(pf / fused).substr(0, 5) + "x").c_str() : "-",
              pick.c_str(), au, au / best, bad.c_str());
  std::fflush(stdout);
}

double geomean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / static_cast<double>(v.size()));
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1, rounds = 5, reps = 5;
  bool quick = false;
  for (int k = 1; k < argc; k++) {
    std::string o = argv[k];
    if (o == "--quick") quick = true;
    else if (k + 1 < argc && o == "--threads") threads = std::atoi(argv[++k]);
    else if (k + 1 < argc && o == "--rounds") rounds = std::atoi(argv[++k]);
    else if (k + 1 < argc && o == "--reps") reps = std::atoi(argv[++k]);
    else if (k + 1 < argc && o == "--only") only = argv[++k];
    else {
      std::fprintf(stderr, "usage: bench_loopfuse [--threads N] [--rounds R] [--reps N] [--quick] [--only TEXT]\n");
      return 2;
    }
  }
  const std::filesystem::path data(TESSEL_DATA_DIR);
  std::vector<std::pair<std::string, CooData>> matrices;
  for (const char* name : {"bcsstk33", "ca-AstroPh", "wiki-Vote", "fidapex6", "luxembourg_osm"}) {
    std::filesystem::path p = data / "matrices" / (std::string(name) + ".mtx");
    if (std::filesystem::exists(p)) matrices.push_back({name, readTensorFile(p.string()).data});
    else std::printf("skipped %s: not present\n", p.c_str());
  }
  // Generated: one in the last-level cache's range (its dense operands, n x 64, are 10 MB
  // each), and one whose separate temporary is twice this machine's L3 (a dense n x 64 T;
  // at least 150000 rows, 77 MB, beyond AMD's 32 MB per core complex; 1.06M rows, 540 MB,
  // on a 260 MB Intel L3), 16 entries a row.
  // The cost model's cache (sysfs's size, not sysconf's: glibc reports a whole EPYC's L3,
  // 320 MB, for a core complex's 32 MB, which made a 1.3M-row input of 3.7 s calls).
  const int64_t l3 = std::max<int64_t>(fusionCacheModel(hostTuning()).llcBytes, 32L << 20);
  const int64_t bigRows = std::max<int64_t>(150000, 2 * l3 / (64 * 8));
  matrices.push_back({"uniform 20000 x 16", generateUniformMatrix(20000, 20000, 16, 1)});
  if (!quick)
    matrices.push_back({"uniform " + std::to_string(bigRows) + " x 16",
                        generateUniformMatrix(bigRows, bigRows, 16, 2)});
  std::vector<std::pair<std::string, CooData>> tensors;
  for (const char* name : {"kg-nations", "kg-umls", "kg-kinship", "aminoacid"}) {
    std::filesystem::path p = data / "tensors" / (std::string(name) + ".tns");
    if (std::filesystem::exists(p)) tensors.push_back({name, readTensorFile(p.string()).data});
  }
  // Generated: T (rows x 32) twice the L3 (at least 300000 rows, 77 MB), 20 entries a row.
  const int64_t tensorRows = std::max<int64_t>(300000, 2 * l3 / (32 * 8));
  if (!quick)
    tensors.push_back({"uniform " + std::to_string(tensorRows) + " x 2000 x 2000, " +
                           std::to_string(20 * tensorRows / 1000000) + "M",
                       generateUniformTensor({tensorRows, 2000, 2000}, 20 * tensorRows, 3)});

  std::printf("loop fusion, %d thread(s), medians of %d rounds x %d calls (perfect nest: 1 call per round), ms\n\n",
              threads, rounds, reps);
  std::printf("| kernel | input | fused | fused per row (SDDMM: at j) | separate | perfect nest | separate / fused | "
              "T traffic | ceiling | perfect / fused | auto |\n"
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> ratios;
  const int64_t K = 64, L = 64, J = 64;
  // <SDDMM, SpMM> fused at blocks of rows keeps the temporary at B's positions; the
  // second column is the nest fused at j (a scalar temporary per entry).
  const Family sddmm{"<SDDMM, SpMM>", "A(i,l) = B(i,j) * C(i,k) * D(j,k) * E(j,l)", "i",
                     "T(i,j) = B(i,j) * C(i,k) * D(j,k)", "A(i,l) = T(i,j) * E(j,l)", "", "j"};
  // Graph attention with one feature matrix: both sides read H(j,:), which the nest fused
  // at j gathers once (its second column) and separate kernels twice.
  const Family shared{"<SDDMM, SpMM> one H", "A(i,l) = B(i,j) * C(i,k) * H(j,k) * H(j,l)", "i",
                      "T(i,j) = B(i,j) * C(i,k) * H(j,k)", "A(i,l) = T(i,j) * H(j,l)", "", "j"};
  const Family spmm{"<SpMM, GEMM>", "A(i,l) = B(i,j) * C(j,k) * D(k,l)", "i", "T(i,k) = B(i,j) * C(j,k)",
                    "A(i,l) = T(i,k) * D(k,l)", ""};
  const Family spmmh{"<SpMMH, GEMM>", "A(i,l) = B(i,k) * C(k,j) * D(k,j) * E(j,l)", "i",
                     "T(i,j) = B(i,k) * C(k,j) * D(k,j)", "A(i,l) = T(i,j) * E(j,l)", ""};
  for (auto& [name, coo] : matrices) {
    const int64_t m = coo.dims[0], n = coo.dims[1];
    TensorBase B("B", Datatype::Float64, coo.dims, Format::parse("ds"));
    B.setFromCoo(coo);
    // The perfect nest costs nnz x K x L: only where that is below ~2e9 multiplies.
    const bool perfect = static_cast<double>(coo.nnz()) * K * L < 2e9;
    runFamily(sddmm, name, {{"B", B}, {"C", dense("C", m, K, 1)}, {"D", dense("D", n, K, 2)}, {"E", dense("E", n, L, 3)}},
              {m, L}, {m, n}, Format::parse("ds"), threads, rounds, reps, perfect, ratios[sddmm.name].first,
              ratios[sddmm.name].second);
    runFamily(shared, name, {{"B", B}, {"C", dense("C", m, K, 1)}, {"H", dense("H", n, K, 2)}}, {m, K}, {m, n},
              Format::parse("ds"), threads, rounds, reps, perfect, ratios[shared.name].first, ratios[shared.name].second);
    runFamily(spmm, name, {{"B", B}, {"C", dense("C", n, K, 4)}, {"D", dense("D", K, L, 5)}}, {m, L}, {m, K},
              Format::parse("dd"), threads, rounds, reps, perfect, ratios[spmm.name].first, ratios[spmm.name].second);
    runFamily(spmmh, name, {{"B", B}, {"C", dense("C", n, J, 6)}, {"D", dense("D", n, J, 7)}, {"E", dense("E", J, L, 8)}},
              {m, L}, {m, J}, Format::parse("dd"), threads, rounds, reps,
              static_cast<double>(coo.nnz()) * J * L < 2e9, ratios[spmmh.name].first, ratios[spmmh.name].second);
  }
  const Family mttkrp{"<MTTKRP, GEMM>", "A(i,m) = B(i,k,l) * C(l,j) * D(k,j) * E(j,m)", "i",
                      "T(i,j) = B(i,k,l) * C(l,j) * D(k,j)", "A(i,m) = T(i,j) * E(j,m)", ""};
  for (auto& [name, coo] : tensors) {
    TensorBase B("B", Datatype::Float64, coo.dims, Format::parse("sss"));
    B.setFromCoo(coo);
    const int64_t Jt = 32, Mt = 64;
    runFamily(mttkrp, name,
              {{"B", B}, {"C", dense("C", coo.dims[2], Jt, 9)}, {"D", dense("D", coo.dims[1], Jt, 10)},
               {"E", dense("E", Jt, Mt, 11)}},
              {coo.dims[0], Mt}, {coo.dims[0], Jt}, Format::parse("dd"), threads, rounds, reps,
              static_cast<double>(coo.nnz()) * Jt * Mt < 2e9, ratios[mttkrp.name].first, ratios[mttkrp.name].second);
  }
  std::printf("\n| kernel | fused vs separate (geomean) | fused per row (SDDMM: at j) vs separate | ceiling (geomean) | "
              "fused vs perfect nest (geomean) |\n|---|---:|---:|---:|---:|\n");
  for (auto& [name, r] : ratios) {
    if (r.second.empty()) continue;  // no input ran it (--only)
    std::printf("| %s | %.2fx | %.2fx | %.2fx | %s |\n", name.c_str(), geomean(r.second), geomean(perRow[name]),
                geomean(ceilings[name]),
                r.first.empty() ? "-" : (std::to_string(geomean(r.first)).substr(0, 6) + "x").c_str());
  }
  return 0;
}
