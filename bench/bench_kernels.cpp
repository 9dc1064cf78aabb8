// Multicore kernels vs peer libraries.
//
// For each kernel (SpMV, SpMM, SDDMM, SpAdd3, SpGEMM, SpTTV, SpMTTKRP), each input and
// each thread count in {1, 2}: tessel's generated kernel (Kernel::compile with
// defaultParallelSchedule(a, t) when t > 1, run(a, t)) against Eigen, SuiteSparse:
// GraphBLAS, PETSc and hand-written C loops (bench/peers/). Every system runs once as a
// warm-up, its result is verified against tessel's (MISMATCH is printed loudly), then all
// systems at all thread counts are timed round robin (the starting one rotates each
// visit; a visit is an untimed call and a burst of timed ones, see burstFor) and the
// medians reported. All of that runs in passes over every cell (3 by default), and a cell
// reports the median of its passes (combinePasses). The STREAM triad is measured in each
// pass at 1 and 2 threads.
//
//   bench_kernels [--quick] [--kernels spmv,spmm,...] [--threads 1,2] [--peers eigen,graphblas,petsc,hand]
//                 [--passes N] [--seconds S] [-o CSV] [--md TABLE.md] [--svg CHART.svg]
//
// --quick: much smaller inputs (seconds; a smoke test) in one pass, CSV to
// bench/results/kernels_quick.csv unless -o is given. A run of a subset of the kernels,
// peers or thread counts writes $TMPDIR/tessel-bench-kernels-subset.csv instead. Without
// --quick the run takes about 8 minutes on 2 cores. Run from the repository root (the
// default output paths are relative).
//
// tessel's time: assemble + compute of run() for sparse outputs, compute for dense
// outputs (the run() wall time, argument checks included, is reported beside it).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "kernels_report.h"
#include "peers/peers.h"
#include "tessel/tessel.h"

#ifndef TESSEL_DATA_DIR
#define TESSEL_DATA_DIR "../shared/data"
#endif

using namespace bench;
using Clock = std::chrono::steady_clock;

const char* bench::kernelName(KernelKind k) {
  switch (k) {
    case KernelKind::SpMV: return "spmv";
    case KernelKind::SpMM: return "spmm";
    case KernelKind::SDDMM: return "sddmm";
    case KernelKind::SpAdd3: return "spadd3";
    case KernelKind::SpGEMM: return "spgemm";
    case KernelKind::SpTTV: return "spttv";
    case KernelKind::SpMTTKRP: return "spmttkrp";
  }
  return "?";
}

void bench::normalize(Result& r) {
  if (!r.sparse) return;
  std::vector<std::pair<int64_t, double>> row;
  for (int64_t i = 0; i < r.rows; i++) {
    int64_t b = r.pos[i], e = r.pos[i + 1];
    if (std::is_sorted(r.crd.begin() + b, r.crd.begin() + e)) continue;
    row.clear();
    for (int64_t p = b; p < e; p++) row.push_back({r.crd[p], r.vals[p]});
    std::sort(row.begin(), row.end());
    for (int64_t p = b; p < e; p++) r.crd[p] = row[p - b].first, r.vals[p] = row[p - b].second;
  }
}

namespace {

double seconds(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// ---------------------------------------------------------------------------------
// Data

struct Options {
  bool quick = false;
  std::set<std::string> kernels = {"spmv", "spmm", "sddmm", "spadd3", "spgemm", "spttv", "spmttkrp"};
  std::vector<int> threads = {1, 2};
  std::set<std::string> peers = {"eigen", "graphblas", "petsc", "hand", "hand-O3", "hand-fastmath"};  // --peers: a subset
  std::string csv, md, svg;  // csv default: bench/results/kernels.csv (--quick: kernels_quick.csv; a subset: $TMPDIR)
  int passes = 0;            // --passes; 0: 3, or 1 with --quick (see combinePasses)
  /// --variants: tessel compiled with other tuning settings (TESSEL_TUNING's syntax, over
  /// the host's), each timed as one more system "tessel[SETTINGS]" in the same round robin.
  std::vector<std::string> variants;
};

/// A matrix in tessel (CSR) and as plain arrays for the peers.
struct Mat {
  std::string name;
  tessel::TensorBase T;
  CsrMatrix csr;
};

/// A 3-tensor in tessel (CSF) and as plain arrays.
struct Ten {
  std::string name;
  tessel::TensorBase T;
  Csf3 csf;
};

template <typename I>
void copyIdx(const tessel_tensor_t& raw, int level, bool posArr, std::vector<int32_t>& out) {
  const I* a = static_cast<const I*>(posArr ? raw.pos[level] : raw.crd[level]);
  int64_t n = posArr ? raw.pos_size[level] : raw.crd_size[level];
  out.assign(a, a + n);
}
void idx(const tessel::TensorBase& T, int level, bool posArr, std::vector<int32_t>& out) {
  tessel::IndexWidth w = posArr ? T.format().posWidth() : T.format().crdWidth();
  if (w == tessel::IndexWidth::W32)
    copyIdx<int32_t>(T.raw(), level, posArr, out);
  else
    copyIdx<int64_t>(T.raw(), level, posArr, out);
}

Mat makeMat(const std::string& name, const tessel::CooData& d) {
  Mat m{name, tessel::TensorBase(name, tessel::Datatype::Float64, d.dims, tessel::CSR()), {}};
  m.T.setFromCoo(d);
  m.csr.rows = d.dims[0];
  m.csr.cols = d.dims[1];
  idx(m.T, 1, true, m.csr.pos);
  idx(m.T, 1, false, m.csr.crd);
  auto* v = static_cast<const double*>(m.T.raw().vals);
  m.csr.vals.assign(v, v + m.T.storedCount());
  return m;
}

Ten makeTen(const std::string& name, const tessel::CooData& d) {
  Ten t{name, tessel::TensorBase(name, tessel::Datatype::Float64, d.dims, tessel::CSF(3)), {}};
  t.T.setFromCoo(d);
  for (int m = 0; m < 3; m++) t.csf.dims[m] = d.dims[m];
  idx(t.T, 0, true, t.csf.pos0);
  idx(t.T, 0, false, t.csf.crd0);
  idx(t.T, 1, true, t.csf.pos1);
  idx(t.T, 1, false, t.csf.crd1);
  idx(t.T, 2, true, t.csf.pos2);
  idx(t.T, 2, false, t.csf.crd2);
  auto* v = static_cast<const double*>(t.T.raw().vals);
  t.csf.vals.assign(v, v + t.T.storedCount());
  return t;
}

/// A dense tensor (row-major) with deterministic values in [-1, 1), built directly
/// (no CooData: a 500K x 64 operand would need 32M coordinate tuples).
struct Dense {
  tessel::TensorBase T;
  DenseMatrix d;
};
Dense makeDense(const std::string& name, int64_t rows, int64_t cols, uint64_t seed, bool vector = false) {
  std::vector<int64_t> dims = vector ? std::vector<int64_t>{rows} : std::vector<int64_t>{rows, cols};
  Dense out{tessel::TensorBase(name, tessel::Datatype::Float64, dims, tessel::DenseFormat(int(dims.size()))), {}};
  out.T.pack();
  if (out.T.storedCount() != rows * cols) throw std::runtime_error("dense pack did not allocate " + name);
  auto* v = static_cast<double*>(out.T.raw().vals);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t e = 0; e < rows * cols; e++) {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    v[e] = double(z >> 11) * 0x1.0p-52 - 1.0;
  }
  out.d.rows = rows;
  out.d.cols = cols;
  out.d.v.assign(v, v + rows * cols);
  return out;
}

/// Same pattern shifted (columns by `dc`, rows by `dr`, cyclically) with scaled values: a
/// second and third operand for SpAdd3 on real matrices.
tessel::CooData shifted(const tessel::CooData& d, int64_t dr, int64_t dc, double scale) {
  tessel::CooData o;
  o.dims = d.dims;
  o.coords.resize(d.coords.size());
  o.values.resize(d.values.size());
  for (int64_t e = 0; e < d.nnz(); e++) {
    o.coords[2 * e] = (d.coords[2 * e] + dr) % d.dims[0];
    o.coords[2 * e + 1] = (d.coords[2 * e + 1] + dc) % d.dims[1];
    o.values[e] = d.values[e] * scale;
  }
  return o;
}

tessel::CooData readMatrix(const std::string& path) { return tessel::readMtx(path).data; }

// ---------------------------------------------------------------------------------
// Verification

std::string compare(const Result& ref, Result got) {
  normalize(got);
  auto close = [](double a, double b, double floor) {
    return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)) + floor;
  };
  char buf[256];
  if (!ref.sparse) {
    if (got.sparse) return "result is sparse, expected dense";
    if (got.dense.size() != ref.dense.size())
      return "size " + std::to_string(got.dense.size()) + " != " + std::to_string(ref.dense.size());
    double mx = 0;
    for (double v : ref.dense) mx = std::max(mx, std::fabs(v));
    for (size_t e = 0; e < ref.dense.size(); e++)
      if (!close(ref.dense[e], got.dense[e], 1e-12 * mx)) {
        std::snprintf(buf, sizeof buf, "value %zu: %.17g vs tessel %.17g", e, got.dense[e], ref.dense[e]);
        return buf;
      }
    return "";
  }
  if (!got.sparse) return "result is dense, expected sparse";
  if (got.rows != ref.rows) return "rows differ";
  if (got.vals.size() != ref.vals.size())
    return "nnz " + std::to_string(got.vals.size()) + " != tessel " + std::to_string(ref.vals.size());
  double mx = 0;
  for (double v : ref.vals) mx = std::max(mx, std::fabs(v));
  for (int64_t i = 0; i <= ref.rows; i++)
    if (got.pos[i] != ref.pos[i]) return "row " + std::to_string(i) + " pattern differs";
  for (size_t p = 0; p < ref.vals.size(); p++) {
    if (got.crd[p] != ref.crd[p]) return "column index at " + std::to_string(p) + " differs";
    if (!close(ref.vals[p], got.vals[p], 1e-12 * mx)) {
      std::snprintf(buf, sizeof buf, "value at %zu: %.17g vs tessel %.17g", p, got.vals[p], ref.vals[p]);
      return buf;
    }
  }
  return "";
}

template <typename I>
void readIdx(const void* a, int64_t n, std::vector<int64_t>& out) {
  const I* p = static_cast<const I*>(a);
  out.assign(p, p + n);
}

/// tessel's output as a Result (dense: all values; CSR: level 1 arrays).
Result tesselResult(const tessel::TensorBase& Y) {
  Result r;
  const auto& raw = Y.raw();
  auto* v = static_cast<const double*>(raw.vals);
  if (Y.format().isAllDense()) {
    r.dense.assign(v, v + raw.vals_size);
    return r;
  }
  r.sparse = true;
  r.rows = Y.dim(0);
  if (Y.format().posWidth() == tessel::IndexWidth::W32)
    readIdx<int32_t>(raw.pos[1], raw.pos_size[1], r.pos);
  else
    readIdx<int64_t>(raw.pos[1], raw.pos_size[1], r.pos);
  if (Y.format().crdWidth() == tessel::IndexWidth::W32)
    readIdx<int32_t>(raw.crd[1], raw.crd_size[1], r.crd);
  else
    readIdx<int64_t>(raw.crd[1], raw.crd_size[1], r.crd);
  r.vals.assign(v, v + raw.vals_size);
  return r;
}

// ---------------------------------------------------------------------------------
// Measurement



struct Timed {
  std::string name;
  std::function<void()> prepare;  // untimed (thread count)
  std::function<double()> run;    // returns the reported seconds
  std::vector<double> times;
  size_t reps = 0;  // set from the first timed run (repsFor)
  size_t burst = 1;  // timed calls per visit (burstFor)
  bool warmCall = false;  // an untimed call starts each visit
  std::function<void()> untimed;  // that call, when not run() (which records)
  bool variant = false;  // a --variants build (a cell of its own)
};

/// A tessel kernel's timed run: compute and assembly seconds as the kernel reports them;
/// with `walls`, each call's wall time is recorded there too.
Timed timedTessel(std::string name, std::shared_ptr<tessel::Kernel> k, const tessel::Assignment& a, int t,
                  std::vector<double>* walls) {
  Timed s{std::move(name), [] {},
          [k, walls, &a, t] {
            auto t0 = Clock::now();
            tessel::RunTimes rt = k->run(a, t);
            if (walls) walls->push_back(seconds(t0));
            return rt.assembleSeconds + rt.computeSeconds;
          },
          {}};
  s.untimed = [k, &a, t] { k->run(a, t); };
  return s;
}

/// About 0.6 s of each system per case and thread count, 5 to 2001 repetitions, split
/// evenly over the passes (at least 2 a pass): short kernels get many, spread over the
/// round robin, because this shared VM's noise comes in bursts of tens of milliseconds.
/// 101 runs of a 25 us SpMV spanned about 10 ms of a round robin, so one burst could
/// cover a whole cell; 2001 span about 200 ms.
/// --seconds changes the 0.6 s (a quiet many-core machine needs less, and its time is scarce).
double secondsPerCell = 0.6;
int repsFor(double oneRun, bool quick, int passes) {
  if (quick) return 5;
  int r = static_cast<int>(secondsPerCell / passes / std::max(oneRun, 1e-6));
  return std::clamp(r, std::max(2, (5 + passes - 1) / passes), (2001 + passes - 1) / passes);
}

struct Case {
  KernelKind kind;
  std::string input;
  int64_t rows, cols, nnz;
  double bytes = 0;
  Problem problem;
  tessel::TensorBase out;  // tessel's output; its assignment is recorded
};

using Peers = std::vector<std::pair<std::string, std::unique_ptr<PeerRun>>>;

/// One thread count of a case: the systems' timed runs and what their cells report.
struct ThreadRuns {
  int t = 1;
  std::vector<Timed> timed;  // tessel's first when it compiled
  std::shared_ptr<tessel::Kernel> kern;
  std::string tesselNote, tesselErr;
  std::vector<double> walls;  // tessel's run() wall times
  std::map<std::string, std::string> status, notes;
};

/// Compiles tessel's kernel for t threads and runs every system once (warm-up), checking
/// each result against tessel's.
std::unique_ptr<ThreadRuns> prepareThreads(Case& c, int t, Peers& peers, const std::vector<std::string>& variants) {
  const char* kname = kernelName(c.kind);
  const tessel::Assignment& a = c.out.assignment();
  auto tr = std::make_unique<ThreadRuns>();
  ThreadRuns& r = *tr;
  r.t = t;
  try {
    tessel::Schedule s = t > 1 ? tessel::defaultParallelSchedule(a, t) : tessel::Schedule{};
    if (t > 1) r.tesselNote = s.empty() ? "no parallel schedule: runs on 1 thread" : "schedule " + s.str();
    r.kern = tessel::Kernel::compile(a, s);
  } catch (const std::exception& e) {
    r.tesselErr = std::string("error: ") + e.what();
    std::fprintf(stderr, "  tessel (%d threads): %s\n", t, e.what());
  }
  Result ref;
  bool haveRef = false;
  if (r.kern) {
    r.timed.push_back(timedTessel("tessel", r.kern, a, t, &r.walls));
    r.timed.back().run();  // warm-up
    r.walls.clear();
    ref = tesselResult(c.out);
    haveRef = true;
  }
  // Tuning variants: compiled with their flags and blocks a thread, checked, then timed.
  for (const std::string& v : variants) {
    const std::string name = "tessel[" + v + "]";
    try {
      const tessel::CpuTuning tv = tessel::tuningFromSettings(tessel::hostTuning().settings() + "," + v);
      tessel::Schedule s = t > 1 ? tessel::defaultParallelSchedule(a, t, tv.blocksPerThread) : tessel::Schedule{};
      tessel::JitOptions jit;
      jit.flags = tv.jitFlags();
      auto k = tessel::Kernel::compile(a, s, jit);
      k->run(a, t);
      if (haveRef) {
        std::string err = compare(ref, tesselResult(c.out));
        if (!err.empty()) {
          std::fprintf(stderr, "  *** MISMATCH *** %s %s %d threads: %s vs tessel: %s\n", kname, c.input.c_str(), t,
                       name.c_str(), err.c_str());
          continue;
        }
      }
      r.timed.push_back(timedTessel(name, k, a, t, nullptr));
      r.timed.back().variant = true;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "  %s (%d threads): %s\n", name.c_str(), t, e.what());
    }
  }
  for (auto& [name, p] : peers) {
    r.notes[name] = p->note;
    if (t > p->maxThreads) {
      r.status[name] = "1 thread";  // the 1-thread median is reused
      continue;
    }
    PeerRun* pr = p.get();
    p->setThreads(t);
    try {
      pr->run();  // warm-up
      Result got = pr->result();
      std::string err;
      if (haveRef) {
        err = compare(ref, got);
      } else if (name == "hand") {
        ref = got;  // no tessel result: the others are checked against the hand loop
        normalize(ref);
        haveRef = true;
      }
      if (!err.empty())
        std::fprintf(stderr, "  *** MISMATCH *** %s %s %d threads: %s vs tessel: %s\n", kname, c.input.c_str(), t,
                     name.c_str(), err.c_str());
      r.status[name] = err.empty() ? "ok" : "MISMATCH";
    } catch (const std::exception& e) {
      r.status[name] = std::string("error: ") + e.what();
      std::fprintf(stderr, "  %s: %s\n", name.c_str(), e.what());
      continue;
    }
    r.timed.push_back({name, [pr, t] { pr->setThreads(t); },
                       [pr] {
                         auto t0 = Clock::now();
                         pr->run();
                         return seconds(t0);
                       },
                       {}});
  }
  return tr;
}

/// Timed calls a visit makes back to back, after an untimed one: about 0.2 ms of them,
/// 1 to 16. A kernel is measured as iterative solvers and graph algorithms call it, again
/// on the same arrays, their cache state left by its own last call. One call per visit
/// had each call start after the other systems' copies of the problem evicted its
/// arrays: a matrix that fits in a core's L2 (bayer10, fidapex6) then ran at memory
/// speed, and a 2-thread speedup measured the memory's (1.85 for the triad) instead of
/// the kernel's (2.0-2.3 in a harness alternating the two kernels alone).
int burstFor(double oneRun, bool quick) {
  if (quick) return 1;
  return std::clamp(static_cast<int>(2e-4 / std::max(oneRun, 1e-7)), 1, 16);
}

/// Calls longer than this get no untimed call first: their arrays exceed the caches.
constexpr double kNoWarmCall = 2e-3;

/// Times all systems at all thread counts together: a first timed round fixes each one's
/// repetition count (a slow peer no longer limits a fast system's) and burst, then round
/// robin over those still repeating, in a new order each round, each visit an untimed
/// call and a burst of timed ones (burstFor). The 1- and 2-thread runs interleave so
/// that a speedup compares runs on the same machine state: this VM's speed drifts over
/// minutes, and 1- and 2-thread cells timed one after the other gave the same SpMV code a
/// 2-thread speedup of 1.4 in one minute and 1.9 in the next on the smallest matrices.
void timeRoundRobin(std::vector<Timed*> all, bool quick, int passes) {
  size_t rounds = 0;
  for (Timed* s : all) {
    s->prepare();
    s->times.push_back(s->run());
    s->reps = static_cast<size_t>(repsFor(s->times[0], quick, passes));
    s->burst = static_cast<size_t>(burstFor(s->times[0], quick));
    s->warmCall = !quick && s->times[0] < kNoWarmCall;
    rounds = std::max(rounds, (s->reps + s->burst - 1) / s->burst);
  }
  // Each round visits the systems in a new order: in a fixed cyclic order each system
  // always ran after the same one, and on luxembourg_osm's SpMM (5 ms calls, 60 MB
  // operands, no untimed call) that alone spread five builds of the same tessel kernel
  // over 3.5-5.8 ms on the 2-core Intel VM.
  std::mt19937 shuffle(12345);
  std::vector<size_t> order(all.size());
  for (size_t q = 0; q < order.size(); q++) order[q] = q;
  for (size_t r = 1; r <= rounds; r++) {
    std::shuffle(order.begin(), order.end(), shuffle);
    for (size_t q = 0; q < all.size(); q++) {
      Timed& s = *all[order[q]];
      if (s.times.size() >= s.reps) continue;
      s.prepare();
      if (s.warmCall) s.untimed ? s.untimed() : (void)s.run();
      for (size_t b = 0; b < s.burst && s.times.size() < s.reps; b++) s.times.push_back(s.run());
    }
  }
}

/// The cells of one thread count; peers without threads repeat their 1-thread time
/// (from reuse1, filled by the 1-thread cells).
std::vector<Cell> cellsOf(const Case& c, const ThreadRuns& r, const std::map<std::string, std::string>& absent,
                          std::map<std::string, double>& reuse1) {
  const char* kname = kernelName(c.kind);
  auto base = [&](const std::string& sys) {
    Cell cl;
    cl.kernel = kname;
    cl.input = c.input;
    cl.rows = c.rows;
    cl.cols = c.cols;
    cl.nnz = c.nnz;
    cl.threads = r.t;
    cl.system = sys;
    cl.bytes = c.bytes;
    return cl;
  };
  std::vector<Cell> row;
  Cell tc = base("tessel");
  if (r.kern) {
    tc.median = median(r.timed[0].times);
    tc.min = *std::min_element(r.timed[0].times.begin(), r.timed[0].times.end());
    tc.wall = median(r.walls);
    tc.status = "ok";
    tc.note = r.tesselNote;
  } else {
    tc.status = r.tesselErr;
  }
  row.push_back(tc);
  for (const std::string& sys : kPeers) {
    Cell cl = base(sys);
    if (absent.count(sys)) {
      cl.status = absent.at(sys);
    } else {
      cl.status = r.status.count(sys) ? r.status.at(sys) : "n/a";
      cl.note = r.notes.count(sys) ? r.notes.at(sys) : "";
      for (auto& s : r.timed)
        if (s.name == sys) {
          cl.median = cl.wall = median(s.times);
          cl.min = *std::min_element(s.times.begin(), s.times.end());
        }
      std::string key = std::string(kname) + "/" + c.input + "/" + sys;
      if (r.t == 1) reuse1[key] = cl.median, reuse1[key + "/min"] = cl.min;
      if (cl.status == "1 thread") {
        cl.median = cl.wall = reuse1.count(key) ? reuse1[key] : NAN;
        cl.min = reuse1.count(key + "/min") ? reuse1[key + "/min"] : NAN;
        cl.note = "single-threaded: 1-thread time";
        cl.status = "ok";
      }
    }
    row.push_back(cl);
  }
  for (const Timed& s : r.timed)
    if (s.variant) {
      Cell cl = base(s.name);
      cl.median = cl.wall = median(s.times);
      cl.min = *std::min_element(s.times.begin(), s.times.end());
      cl.status = "ok";
      row.push_back(cl);
    }
  std::fprintf(stderr, "%-8s %-16s t=%d", kname, c.input.c_str(), r.t);
  for (auto& cl : row) {
    if (cl.status == "ok")
      std::fprintf(stderr, "  %s %s ms", cl.system.c_str(), fmtTime(cl.median).c_str());
    else if (cl.status == "MISMATCH")
      std::fprintf(stderr, "  %s MISMATCH(%s ms)", cl.system.c_str(), fmtTime(cl.median).c_str());
    else if (cl.status != "n/a")
      std::fprintf(stderr, "  %s [%s]", cl.system.c_str(), cl.status.c_str());
  }
  std::fprintf(stderr, "  (%zu reps)\n", r.timed.empty() ? size_t{0} : r.timed[0].times.size());
  return row;
}

void runCase(Case& c, const Options& opt, std::vector<Cell>& cells, std::map<std::string, double>& reuse1) {
  // Peers are prepared once per case (their setup is not timed).
  Peers peers;
  std::map<std::string, std::string> absent;  // system -> status
  auto add = [&](const std::string& name, bool installed, auto make) {
    if (!opt.peers.count(name)) {
      absent[name] = "skipped: not in --peers";
      return;
    }
    if (!installed) {
      absent[name] = "skipped: " + name + " not installed";
      return;
    }
    try {
      auto p = make(c.problem);
      if (p)
        peers.emplace_back(name, std::move(p));
      else
        absent[name] = "n/a";
    } catch (const std::exception& e) {
      absent[name] = std::string("error: ") + e.what();
      std::fprintf(stderr, "  %s: %s\n", name.c_str(), e.what());
    }
  };
  add("eigen", eigen::installed(), eigen::make);
  add("graphblas", graphblas::installed(), graphblas::make);
  add("petsc", petsc::installed(), petsc::make);
  for (hand::Flags f : {hand::Flags::Native, hand::Flags::O3, hand::Flags::FastMath})
    add(hand::name(f), true, [f](const Problem& p) { return hand::make(p, f); });

  std::vector<int> threads = opt.threads;
  std::sort(threads.begin(), threads.end());  // 1-thread cells first (reuse1)
  std::vector<std::unique_ptr<ThreadRuns>> runs;
  std::vector<Timed*> all;
  for (int t : threads) {
    runs.push_back(prepareThreads(c, t, peers, opt.variants));
    for (Timed& s : runs.back()->timed) all.push_back(&s);
  }
  timeRoundRobin(all, opt.quick, opt.passes);
  for (const auto& r : runs) {
    std::vector<Cell> row = cellsOf(c, *r, absent, reuse1);
    cells.insert(cells.end(), row.begin(), row.end());
  }
}

/// One cell per (kernel, input, threads, system) from the cells of all passes: the median
/// of the passes' medians and run() walls, the least minimum; a pass that failed (a
/// mismatch, an error) decides the status. The VM's disturbances last from milliseconds
/// to minutes (another process on the second core): in one single-pass run every
/// system's 2-thread SpMM cells on bcsstk33 and ca-AstroPh came out near their 1-thread
/// times, in the next run the SpMV ones. Passes over all cells put minutes between a
/// cell's samples, so such a stretch moves one pass of a cell, which the median drops.
std::vector<Cell> combinePasses(const std::vector<std::vector<Cell>>& passes) {
  auto key = [](const Cell& c) {
    return c.kernel + "|" + c.input + "|" + std::to_string(c.threads) + "|" + c.system;
  };
  std::map<std::string, std::vector<const Cell*>> byKey;
  for (const auto& pass : passes)
    for (const Cell& c : pass) byKey[key(c)].push_back(&c);
  std::vector<Cell> out;
  for (const Cell& first : passes[0]) {
    Cell c = first;
    std::vector<double> med, wall, mins;
    for (const Cell* p : byKey[key(first)]) {
      if (p->status != "ok") {
        if (c.status == "ok") c.status = p->status;
        continue;
      }
      if (std::isnan(p->median)) continue;
      med.push_back(p->median);
      wall.push_back(p->wall);
      mins.push_back(p->min);
    }
    if (!med.empty()) {
      c.median = median(med);
      c.wall = median(wall);
      c.min = *std::min_element(mins.begin(), mins.end());
    }
    out.push_back(c);
  }
  return out;
}

/// "a,b,c" -> {"a", "b", "c"} (command-line lists); empty items are dropped.
std::vector<std::string> commaList(const std::string& text, char sep = ',') {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  // Idle OpenMP workers must spin, not sleep: on this kind of VM waking a sleeping worker
  // takes a timer tick (about 8 ms), which would dominate every 2-thread region of every
  // OpenMP-based system (tessel, hand C, Eigen, GraphBLAS). libgomp reads the variable when
  // it loads, so set it and re-execute once.
  if (!std::getenv("OMP_WAIT_POLICY")) {
    setenv("OMP_WAIT_POLICY", "active", 1);
    execv("/proc/self/exe", argv);
    std::perror("bench_kernels: re-exec with OMP_WAIT_POLICY=active failed; continuing");
  }
  std::fprintf(stderr, "OMP_WAIT_POLICY=%s\n", std::getenv("OMP_WAIT_POLICY"));
  Options opt;
  for (int a = 1; a < argc; a++) {
    std::string s = argv[a];
    auto next = [&]() -> std::string {
      if (a + 1 >= argc) {
        std::fprintf(stderr, "bench_kernels: %s needs an argument\n", s.c_str());
        std::exit(2);
      }
      return argv[++a];
    };
    if (s == "--quick") {
      opt.quick = true;
    } else if (s == "--kernels") {
      auto items = commaList(next());
      opt.kernels = {items.begin(), items.end()};
    } else if (s == "--peers") {
      auto items = commaList(next());
      opt.peers = {items.begin(), items.end()};
    } else if (s == "--threads") {
      opt.threads.clear();
      for (const std::string& k : commaList(next())) opt.threads.push_back(std::stoi(k));
    } else if (s == "-o") {
      opt.csv = next();
    } else if (s == "--md") {
      opt.md = next();
    } else if (s == "--svg") {
      opt.svg = next();
    } else if (s == "--passes") {
      opt.passes = std::stoi(next());
    } else if (s == "--seconds") {
      secondsPerCell = std::stod(next());
    } else if (s == "--variants") {
      opt.variants = commaList(next(), ';');  // each variant's settings hold commas
    } else {
      std::fprintf(stderr,
                   "usage: bench_kernels [--quick] [--kernels spmv,spmm,sddmm,spadd3,spgemm,spttv,spmttkrp]\n"
                   "                     [--threads 1,2] [--peers eigen,graphblas,petsc,hand,hand-O3,hand-fastmath]\n"
                   "                     [--passes N] [--seconds S] [--variants 'steal=peek;blocks=4;...']\n"
                   "                     [-o CSV] [--md TABLE.md] [--svg CHART.svg]\n");
      return 2;
    }
  }
  const bool Q = opt.quick;
  if (opt.passes <= 0) opt.passes = Q ? 1 : 3;
  // The canonical CSVs (docs/performance.md cites kernels.csv) are written only by a run of
  // the whole set: a subset's run (--kernels, --peers or --threads) would replace them
  // with a few rows, so it goes to a scratch file unless -o says otherwise.
  const Options whole;
  const bool wholeSet = opt.kernels == whole.kernels && opt.peers == whole.peers && opt.threads == whole.threads && opt.variants.empty();
  if (opt.csv.empty() && wholeSet) opt.csv = Q ? "bench/results/kernels_quick.csv" : "bench/results/kernels.csv";
  if (opt.csv.empty()) opt.csv = (std::filesystem::temp_directory_path() / "tessel-bench-kernels-subset.csv").string();
  auto ver = [](bool in, const std::string& v, const char* name) {
    return in ? v : std::string("skipped: ") + name + " not installed";
  };
  std::string peersLine = "eigen " + ver(eigen::installed(), eigen::version(), "eigen") + ", graphblas " +
                          ver(graphblas::installed(), graphblas::version(), "graphblas") + ", petsc " +
                          ver(petsc::installed(), petsc::version(), "petsc");
  std::fprintf(stderr, "peers: %s, hand C\n", peersLine.c_str());
  std::printf("peers=%s\n", peersLine.c_str());
  // Every figure names its machine and flags: the CPU, tessel's tuning for it, and the
  // hand loops' three builds.
  std::string machine = "CPU: " + tessel::hostTuning().cpu + ". tessel: " + tessel::hostTuning().str() + ". ";
  for (hand::Flags f : {hand::Flags::Native, hand::Flags::O3, hand::Flags::FastMath}) {
    machine += std::string(hand::name(f)) + ":";
    for (const std::string& x : hand::flags(f)) machine += " " + x;
    machine += f == hand::Flags::FastMath ? "." : "; ";
  }
  std::fprintf(stderr, "%s\n", machine.c_str());
  std::printf("machine=%s\n", machine.c_str());

  std::map<int, std::vector<double>> triads;  // per pass, like the cells
  auto measureTriad = [&] {
    for (int t : opt.threads) {
      triads[t].push_back(hand::streamTriad(t));
      std::fprintf(stderr, "triad_GBps_%dt=%.3f\n", t, triads[t].back() / 1e9);
    }
  };

  auto want = [&](const char* k) { return opt.kernels.count(k) > 0; };
  // ---- inputs
  auto t0 = Clock::now();
  std::vector<Mat> real;
  std::string mdir = std::string(TESSEL_DATA_DIR) + "/matrices";
  if (std::filesystem::is_directory(mdir)) {
    std::vector<const char*> names = Q ? std::vector<const char*>{"wiki-Vote", "bcsstk13"}
                                       : std::vector<const char*>{"bcsstk33", "ca-AstroPh", "luxembourg_osm",
                                                                  "wiki-Vote", "bayer10", "fidapex6", "bcsstk13"};
    for (const char* f : names) {
      std::string p = mdir + "/" + f + ".mtx";
      if (!std::filesystem::exists(p)) {
        std::fprintf(stderr, "skipping %s: not found\n", p.c_str());
        continue;
      }
      real.push_back(makeMat(f, readMatrix(p)));
    }
  } else {
    std::fprintf(stderr, "skipping real matrices: %s not found\n", mdir.c_str());
  }
  // Generated (fixed seeds). Big ones only for the bandwidth-bound kernels.
  const int64_t bigN = Q ? 100'000 : 2'000'000, midN = Q ? 20'000 : 300'000, gemmN = Q ? 10'000 : 100'000;
  const int rmatBig = Q ? 14 : 20, rmatMid = Q ? 12 : 17, rmatGemm = Q ? 10 : 14;
  auto label = [](const char* kind, int64_t n) {
    return std::string(kind) + "-" + (n >= 1'000'000 ? std::to_string(n / 1'000'000) + "M" : std::to_string(n / 1000) + "K");
  };
  std::vector<Mat> bigGen, midGen, gemmGen;
  if (want("spmv")) {
    bigGen.push_back(makeMat(label("uniform", bigN), tessel::generateUniformMatrix(bigN, bigN, 10, 42)));
    bigGen.push_back(makeMat(label("banded", bigN), tessel::generateBandedMatrix(bigN, 4, 41)));
    bigGen.push_back(makeMat("rmat-" + std::to_string(rmatBig), tessel::generateRmat(rmatBig, 16, 0.57, 0.19, 0.19, 43)));
  }
  if (want("spmm") || want("sddmm") || want("spadd3")) {
    midGen.push_back(makeMat(label("uniform", midN), tessel::generateUniformMatrix(midN, midN, 10, 44)));
    midGen.push_back(makeMat("rmat-" + std::to_string(rmatMid), tessel::generateRmat(rmatMid, 16, 0.57, 0.19, 0.19, 45)));
  }
  if (want("spgemm")) {
    gemmGen.push_back(makeMat(label("uniform", gemmN), tessel::generateUniformMatrix(gemmN, gemmN, 10, 46)));
    gemmGen.push_back(makeMat("rmat-" + std::to_string(rmatGemm), tessel::generateRmat(rmatGemm, 8, 0.57, 0.19, 0.19, 47)));
  }
  std::vector<Ten> tens;
  if (want("spttv") || want("spmttkrp")) {
    std::string tdir = std::string(TESSEL_DATA_DIR) + "/tensors";
    if (std::filesystem::is_directory(tdir)) {
      std::vector<std::pair<uintmax_t, std::string>> files;
      for (auto& e : std::filesystem::directory_iterator(tdir))
        if (e.path().extension() == ".tns") files.emplace_back(e.file_size(), e.path().string());
      std::sort(files.rbegin(), files.rend());
      if (Q) std::reverse(files.begin(), files.end());  // quick: the smallest
      for (size_t f = 0; f < files.size() && f < (Q ? 1u : 2u); f++) {
        tessel::CooData d = tessel::readTns(files[f].second).data;
        if (d.order() != 3) continue;
        tens.push_back(makeTen(std::filesystem::path(files[f].second).stem().string(), d));
      }
    } else {
      std::fprintf(stderr, "skipping real tensors: %s not found\n", tdir.c_str());
    }
    int64_t d = Q ? 20'000 : 200'000, nnz = Q ? 100'000 : 5'000'000;
    tens.push_back(makeTen(Q ? "skewed-100K" : "skewed-5M", tessel::generateSkewedTensor({d, d, d}, nnz, 1.0, 48)));
  }
  std::fprintf(stderr, "inputs ready in %.1f s\n", seconds(t0));

  std::vector<Cell> cells;  // this pass's
  std::map<std::string, double> reuse1;
  tessel::IndexVar i("i"), j("j"), k("k"), l("l");
  auto runMat = [&](KernelKind kind, Mat& m) {
    Case c;
    c.kind = kind;
    c.input = m.name;
    c.rows = m.csr.rows;
    c.cols = m.csr.cols;
    c.nnz = m.csr.nnz();
    c.problem.kind = kind;
    c.problem.A = &m.csr;
    const int64_t K = 64;
    Dense X, V;
    Mat B, C;
    try {
      switch (kind) {
        case KernelKind::SpMV: {
          X = makeDense("x", c.cols, 1, 1, true);
          c.out = tessel::TensorBase("y", tessel::Datatype::Float64, {c.rows}, tessel::DenseFormat(1));
          c.out(i) = m.T(i, j) * X.T(j);
          c.problem.X = &X.d;
          c.bytes = c.nnz * 12.0 + (c.rows + 1) * 4.0 + c.rows * 8.0 + c.cols * 8.0;
          break;
        }
        case KernelKind::SpMM: {
          X = makeDense("X", c.cols, K, 2);
          c.out = tessel::TensorBase("Y", tessel::Datatype::Float64, {c.rows, K}, tessel::DenseFormat(2));
          c.out(i, k) = m.T(i, j) * X.T(j, k);
          c.problem.X = &X.d;
          c.bytes = c.nnz * 12.0 + (c.rows + 1) * 4.0 + c.rows * K * 8.0 + c.cols * K * 8.0;
          break;
        }
        case KernelKind::SDDMM: {
          X = makeDense("U", c.rows, K, 3);
          V = makeDense("V", c.cols, K, 4);
          c.out = tessel::TensorBase("Y", tessel::Datatype::Float64, {c.rows, c.cols}, tessel::CSR());
          c.out(i, j) = m.T(i, j) * X.T(i, k) * V.T(j, k);
          c.problem.X = &X.d;
          c.problem.Y = &V.d;
          break;
        }
        case KernelKind::SpAdd3: {
          tessel::CooData d = m.T.toCoo();
          B = makeMat(m.name + "-B", shifted(d, 0, 1, 0.5));
          C = makeMat(m.name + "-C", shifted(d, 1, 0, -0.25));
          c.out = tessel::TensorBase("Y", tessel::Datatype::Float64, {c.rows, c.cols}, tessel::CSR());
          c.out(i, j) = m.T(i, j) + B.T(i, j) + C.T(i, j);
          c.problem.B = &B.csr;
          c.problem.C = &C.csr;
          c.nnz = m.csr.nnz() + B.csr.nnz() + C.csr.nnz();
          break;
        }
        case KernelKind::SpGEMM: {
          if (c.rows != c.cols) {
            std::fprintf(stderr, "spgemm %s: not square, skipped\n", m.name.c_str());
            return;
          }
          c.out = tessel::TensorBase("Y", tessel::Datatype::Float64, {c.rows, c.cols}, tessel::CSR());
          c.out(i, j) = m.T(i, k) * m.T(k, j);
          c.problem.B = &m.csr;
          break;
        }
        default:
          return;
      }
      runCase(c, opt, cells, reuse1);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s %s: %s\n", kernelName(kind), m.name.c_str(), e.what());
    }
  };
  auto runTen = [&](KernelKind kind, Ten& T) {
    Case c;
    c.kind = kind;
    c.input = T.name;
    c.rows = T.csf.dims[0];
    c.cols = T.csf.dims[1];
    c.nnz = T.csf.nnz();
    c.problem.kind = kind;
    c.problem.T = &T.csf;
    Dense X, V;
    try {
      if (kind == KernelKind::SpTTV) {
        X = makeDense("c", T.csf.dims[2], 1, 5, true);
        c.out = tessel::TensorBase("Y", tessel::Datatype::Float64, {T.csf.dims[0], T.csf.dims[1]}, tessel::CSR());
        c.out(i, j) = T.T(i, j, k) * X.T(k);
        c.problem.X = &X.d;
      } else {
        const int64_t L = 16;
        X = makeDense("U", T.csf.dims[1], L, 6);
        V = makeDense("V", T.csf.dims[2], L, 7);
        c.out = tessel::TensorBase("Y", tessel::Datatype::Float64, {T.csf.dims[0], L}, tessel::DenseFormat(2));
        c.out(i, l) = T.T(i, j, k) * X.T(j, l) * V.T(k, l);
        c.problem.X = &X.d;
        c.problem.Y = &V.d;
      }
      runCase(c, opt, cells, reuse1);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s %s: %s\n", kernelName(kind), T.name.c_str(), e.what());
    }
  };

  auto forMats = [&](KernelKind kind, std::vector<Mat>& gen) {
    if (!want(kernelName(kind))) return;
    for (auto& m : real) runMat(kind, m);
    for (auto& m : gen) runMat(kind, m);
  };
  std::vector<std::vector<Cell>> passCells;
  for (int pass = 1; pass <= opt.passes; pass++) {
    std::fprintf(stderr, "pass %d of %d\n", pass, opt.passes);
    cells.clear();
    reuse1.clear();
    measureTriad();
    forMats(KernelKind::SpMV, bigGen);
    forMats(KernelKind::SpMM, midGen);
    forMats(KernelKind::SDDMM, midGen);
    forMats(KernelKind::SpAdd3, midGen);
    forMats(KernelKind::SpGEMM, gemmGen);
    for (KernelKind kind : {KernelKind::SpTTV, KernelKind::SpMTTKRP})
      if (want(kernelName(kind)))
        for (auto& T : tens) runTen(kind, T);
    passCells.push_back(cells);
  }
  cells = combinePasses(passCells);
  std::map<int, double> triad;
  for (auto& [t, v] : triads) triad[t] = median(v);

  graphblas::finalize();
  petsc::finalize();

  if (!opt.csv.empty()) {
    std::filesystem::path p(opt.csv);
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
    writeCsv(opt.csv, cells, triad);
  }
  if (!opt.md.empty()) writeMd(opt.md, cells, triad, machine);
  int tmax = *std::max_element(opt.threads.begin(), opt.threads.end());
  if (!opt.svg.empty()) writeSvg(opt.svg, cells, tmax);
  int mismatches = 0;
  for (auto& c : cells) mismatches += c.status == "MISMATCH";
  if (mismatches) std::fprintf(stderr, "*** %d MISMATCH(ES): see above ***\n", mismatches);
  std::fprintf(stderr, "wrote %s%s%s%s%s (total %.0f s)\n", opt.csv.c_str(), opt.md.empty() ? "" : ", ",
               opt.md.c_str(), opt.svg.empty() ? "" : ", ", opt.svg.c_str(), seconds(t0));
  for (auto& [t, bw] : triad) std::printf("triad_GBps_%dt=%.3f\n", t, bw / 1e9);
  return 0;
}
