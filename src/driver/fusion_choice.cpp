// defaultSchedule: the schedule tessel picks when the user gives none (the tool, Python).
// A product of several tensors lowers to one perfect nest whose work is the product of
// all its loops' trip counts. Two other ways compute it with less:
//  - SparseLNR's loopfuse at a loop v runs the shared loops once and below v the
//    producer's and the consumer's loops one after the other, exchanging a small
//    temporary; applied again inside the producer or consumer (<SDDMM, SpMM, GEMM>:
//    loopfuse(i),loopfuse(j));
//  - separate kernels: the producer materialized whole into a temporary T (dense, or
//    stored like the producer's sparse factor over T's variables: SDDMM's output in B's
//    pattern) by one kernel, then the consumer kernel reads it. The producer is any two
//    or more of the factors: loopfuse's splits, and the other associativities
//    (<SpTTM, SpTTM>: T(k,m) = C(k,l) * D(l,m) once, then B(i,j,k) * T(k,m)).
// The cost model counts multiplies (innermost iterations times the factors multiplied
// there; a loop over a sparse level runs its average fiber length, read from the bound
// tensor; a dense loop its extent; a fused nest's temporary and consumer only where the
// producer's sparse fiber has entries), a fused temporary its length to zero, and the
// separate T its traffic: each entry written and read back (a dense T's dearer), dearer
// beyond the last-level cache; a fused nest's multiplies dearer than a separate kernel's
// (only a little at blocks of rows, where it is the separate kernels run a block at a
// time without T's traffic), or cheaper where its producer and consumer read the same
// rows of one tensor (one gather serves both). It picks the cheapest plan that lowers,
// when that does at most 80% of the perfect nest's work. Then, for threads > 1, its
// outermost loop runs in parallel (rows in blocks) unless its work is below
// kParallelWork or no parallel schedule of it lowers (a sparse output appended from a
// compressed first level): then ScheduleChoice::threads is 1. Without a plan: the
// parallel default of defaultParallelSchedule.

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <span>
#include <sstream>

#include "driver/pipeline.h"
#include "driver/stages.h"
#include "format/level_format.h"
#include "lower/loop_nest.h"
#include "lower/problem.h"
#include "lower/symbols.h"
#include "notation/products.h"
#include "runtime/tensor_stats.h"
#include "tessel/error.h"
#include "tessel/schedule.h"
#include "tessel/tuning.h"

namespace tessel {

namespace {

/// A factor of a statement: an input's access, or a temporary over `vars` (input -1:
/// dense; else stored like that input, whose sparse levels bound its loops' trips).
struct Factor {
  std::vector<IndexVar> vars;
  int input = -1;
  IndexExpr expr;  ///< the right-hand side's factor (inputs only)
};

/// One way to compute a statement: its estimated cost and the loopfuse commands that
/// make it (at these loops, outer ones first); or, for separate kernels, the precompute.
struct Plan {
  double cost = 0;
  std::vector<IndexVar> fusions;
  std::vector<IndexExpr> separate;  ///< the producer's factors (separate kernels)
  int like = -1;                    ///< separate: the input the temporary is stored like
  /// fused at the outermost loop: rows a block of it holds (fusedBlockRows, for the
  /// threads the plan will run on), or 0 where its rows do not run at blocks
  int64_t blockRows = 0;
  std::string what;                 ///< for the reason
};

// Calibration, from bench_loopfuse at 1 thread on a 2-core AMD EPYC (Zen 4) VM, noisy: a
// separate kernel's multiplies run about 20-25% faster than a fused nest's, for the same
// inner loops (compared in one process, fused 0.75-0.9x on <SpMM, GEMM> and 0.55-0.9x
// on <SDDMM, SpMM>, whose fused nest gathers D's and E's rows together where separate
// kernels gather one at a time), so <SDDMM, SpMM>, whose T is stored like B, ran
// separate at 0.8-1.0x the fused time. A dense T costs far more per entry than its two accesses (zeroed, stored
// and read back whole): <SpMM, GEMM>'s separate kernels ran 0.9-1.8x the fused nest's
// time, about 20 multiplies per entry of T. Beyond the last-level cache, dearer again
// (fusionCacheModel, tessel/tuning.h).
constexpr double kFusedOverhead = 1.25;
/// A fusion at the outermost loop that runs at blocks of rows (blockedFusion) is the
/// separate kernels run a block at a time, T's rows for the block in cache: their
/// multiplies, a little dearer (the producer's and consumer's loops restart each block,
/// the consumer's dense operand is read again each block). Fused at blocks over separate
/// kernels, <SpMM, GEMM> and <SpMMH, GEMM> ran 1.0-1.1x on the 2-core AMD EPYC VM (Zen 4)
/// and 0.95-1.02x on the 2-core Intel Xeon VM; the separate kernels spend 4-11% of their
/// time on T's traffic (bench_loopfuse's ceiling, AMD). With 1.25 the model chose separate
/// kernels where the fused blocks ran 1.11-1.16x faster (AMD, bcsstk33, ca-AstroPh).
constexpr double kBlockedOverhead = 1.05;
/// A fused nest whose producer and consumer read the same rows of one tensor (graph
/// attention with one feature matrix, `B(i,j) * C(i,k) * H(j,k) * H(j,l)` fused at j):
/// the consumer finds the row the producer just gathered in L1, where separate kernels
/// gather it twice. Fused at j against tessel's separate kernels, K = L = 64, 1 thread,
/// 2-core Intel Xeon VM: 1.57x on ca-AstroPh, 1.27x wiki-Vote, 1.19x luxembourg_osm, 1.10x
/// bcsstk33, 1.0x fidapex6 (geomean 1.21x); with two feature matrices, 0.78-1.09x. Its
/// multiplies cost this much of a separate kernel's.
constexpr double kSharedRows = 0.8;
constexpr double kTrafficSparse = 1.0;   ///< per entry of a T stored like a sparse factor
constexpr double kTrafficDense = 20.0;   ///< per entry of a dense T
/// A second kernel call, its temporary's allocation and its stage's parallel schedule
/// (a parallel region at any thread count), as many multiplies as a small fused nest
/// does in that time: on a 4 x 4 x 4 <MTTKRP, GEMM>, 1.3 us more a run than the fused
/// nest at 1 thread and 2.8 us at 2 (2-core Emerald Rapids VM), where the fused nest on
/// kg-nations does its 3.1e5 estimated multiplies in 13 us. (It was 2.5e5 while a staged
/// kernel's run lowered its stages again, 18 us a call.)
constexpr double kSeparateCall = 5e4;

/// Below this estimate (about a millisecond at one thread) a kernel runs on one thread:
/// a parallel region's start and join cost 10-20 us on the VM unloaded, and a thread
/// that waits for a busy core costs a scheduler slice (a 2-thread <MTTKRP, GEMM> of
/// 2000 entries ran 12 ms in parallel against 0.015 ms on one thread, the VM shared).
constexpr double kParallelWork = 1e6;

/// Rows a block of a fusion at the outermost loop holds (rowsPerFusedBlock: the temporary,
/// `temp` entries a row, about 16 KB), or 0 where its rows should not run at blocks. Per
/// row, the producer's gathered rows evicted the consumer's dense operand between rows
/// (<SpMM, GEMM> on bcsstk33: the consumer re-read D, 32 KB, from L2 each row; at blocks of
/// 32 rows the fused nest took 5.9 ms, not 9.5, on the 2-core Intel VM). Not at blocks
/// where the temporary is tiny, too large for a block of 2 rows, or rows are often empty
/// (`busy` below 0.9) or short (the producer's `fiber` below 4 trips): the block's consumer
/// runs every row, where the nest per row skips empty ones and runs the plain nest on rows
/// of one entry (wiki-Vote, a third of rows busy, and luxembourg_osm, 2.1 entries a row:
/// blocks 0.85-0.95x the nest per row). On `threads` threads every thread gets at least
/// 4 blocks (aminoacid's 5 rows in one block of 64 ran on one thread: 0.57x the nest per row).
int64_t fusedBlockRows(double temp, double busy, double fiber, int64_t extent, int threads) {
  if (temp < 8 || busy < 0.9 || fiber < 4) return 0;
  return rowsPerFusedBlock(temp, extent, threads);
}

bool has(std::span<const IndexVar> vs, const IndexVar& v) { return std::find(vs.begin(), vs.end(), v) != vs.end(); }

std::vector<IndexVar> varsOf(const std::vector<Factor>& fs) {
  std::vector<IndexVar> out;
  for (const Factor& f : fs)
    for (const IndexVar& v : f.vars)
      if (!has(out, v)) out.push_back(v);
  return out;
}

class CostModel {
 public:
  CostModel(const lower::Problem& p, const Assignment& a, FusionCacheModel llc, int threads)
      : p_(p), a_(a), llc_(llc), threads_(threads) {}

  /// Trips of the loop over v per iteration of the loops above it, in a nest over fs.
  double trip(const IndexVar& v, const std::vector<Factor>& fs) const {
    double trip = static_cast<double>(extentOf(a_, v));
    for (const Factor& f : fs) {
      if (f.input < 0) continue;
      const lower::AccessInfo& in = p_.inputs[static_cast<size_t>(f.input)];
      const Format& fmt = p_.args[static_cast<size_t>(in.arg)].format;
      for (size_t k = 0; k < in.levelVars.size(); k++) {
        if (!(in.levelVars[k] == v) || levelFormat(fmt, static_cast<int>(k)).full()) continue;
        std::vector<int64_t> pos = boundLevelPositions(*in.node);
        if (pos.size() <= k) continue;  // unbound: no better guess than the extent
        const double above = k == 0 ? 1.0 : static_cast<double>(std::max<int64_t>(pos[k - 1], 1));
        trip = std::min(trip, static_cast<double>(pos[k]) / above);  // a co-iteration's intersection is at most this
      }
    }
    return std::max(trip, 1.0);
  }

  /// The share of the iterations of the loop over `at` in which a fused nest split there
  /// does any work below it: where a sparse level of a producer factor, under `at`'s
  /// level, over a variable the producer sums, stores nothing, the producer's loops are
  /// empty and the nest skips the temporary and the consumer (the plain nest runs there,
  /// over no entries). 1 where no such level is bound.
  double busyShare(const std::vector<Factor>& producer, const IndexVar& at, const std::vector<IndexVar>& tvars) const {
    double busy = 1;
    for (const Factor& f : producer) {
      if (f.input < 0) continue;
      const lower::AccessInfo& in = p_.inputs[static_cast<size_t>(f.input)];
      const Format& fmt = p_.args[static_cast<size_t>(in.arg)].format;
      for (size_t k = 1; k < in.levelVars.size(); k++) {
        if (!(in.levelVars[k - 1] == at) || has(tvars, in.levelVars[k]) || levelFormat(fmt, static_cast<int>(k)).full())
          continue;
        const std::vector<int64_t> pos = boundLevelPositions(*in.node);
        const int64_t nonempty = boundNonemptySegments(*in.node, static_cast<int>(k));
        if (pos.size() <= k || nonempty < 0 || pos[k - 1] <= 0) continue;
        busy = std::min(busy, static_cast<double>(nonempty) / static_cast<double>(pos[k - 1]));
      }
    }
    return busy;
  }

  /// Whether a producer factor and a consumer factor read the same rows of one tensor at
  /// each iteration of the shared loops `outer`: accesses to one argument whose variables
  /// agree wherever either is one of `outer` (H(j,k) and H(j,l) fused at j).
  bool sharesRows(const std::vector<Factor>& producer, const std::vector<Factor>& consumer,
                  std::span<const IndexVar> outer) const {
    for (const Factor& f : producer)
      for (const Factor& g : consumer) {
        if (f.input < 0 || g.input < 0 || f.vars.size() != g.vars.size()) continue;
        if (p_.inputs[static_cast<size_t>(f.input)].arg != p_.inputs[static_cast<size_t>(g.input)].arg) continue;
        bool same = false, differ = false;
        for (size_t k = 0; k < f.vars.size(); k++) {
          const bool fo = has(outer, f.vars[k]), go = has(outer, g.vars[k]);
          if (fo || go) (fo && go && f.vars[k] == g.vars[k] ? same : differ) = true;
        }
        if (same && !differ) return true;
      }
    return false;
  }

  /// `lhs = product of fs` over the loops `chain` (outer first): the perfect nest, then
  /// each fusion (recursively, `left` fusions at most). `outermost`: chain[0] is the
  /// kernel's outermost loop, where a fusion may run at blocks of rows.
  std::vector<Plan> plans(const std::vector<Factor>& fs, const std::vector<IndexVar>& lhs,
                          const std::vector<IndexVar>& chain, int left, bool outermost = false) const {
    Plan perfect;
    perfect.cost = static_cast<double>(fs.size());
    for (const IndexVar& v : chain) perfect.cost *= trip(v, fs);
    std::vector<Plan> out = {perfect};
    if (left <= 0) return out;
    for (size_t d = 0; d + 1 < chain.size(); d++) {
      std::vector<Factor> producer, consumer;
      if (!split(fs, lhs, chain, d, producer, consumer)) continue;
      const std::vector<IndexVar> pv = varsOf(producer), cv = varsOf(consumer);
      std::vector<IndexVar> tvars, pchain, cchain;
      for (size_t e = d + 1; e < chain.size(); e++)
        if (has(pv, chain[e]) && (has(lhs, chain[e]) || has(cv, chain[e]))) tvars.push_back(chain[e]);
      consumer.push_back({tvars, -1, {}});
      const std::vector<IndexVar> cv2 = varsOf(consumer);
      for (size_t e = d + 1; e < chain.size(); e++) {
        if (has(pv, chain[e])) pchain.push_back(chain[e]);
        if (has(cv2, chain[e])) cchain.push_back(chain[e]);
      }
      double shared = 1, temp = 1;
      for (size_t e = 0; e <= d; e++) shared *= trip(chain[e], fs);
      for (const IndexVar& v : tvars) temp *= static_cast<double>(extentOf(a_, v));
      const double busy = busyShare(producer, chain[d], tvars);
      const double fiber = pchain.empty() ? 1 : trip(pchain[0], producer);
      const bool sharedRows = sharesRows(producer, consumer, std::span<const IndexVar>(chain).first(d + 1));
      // Rows a block at the threads asked for and at one thread (0: per row).
      auto blockRows = [&](int threads) -> int64_t {
        const int64_t rows =
            outermost && d == 0 ? fusedBlockRows(temp, busy, fiber, extentOf(a_, chain[0]), threads) : 0;
        return rows >= 2 ? rows : 0;
      };
      const int64_t rowsShared = blockRows(threads_), rowsAlone = threads_ > 1 ? blockRows(1) : rowsShared;
      for (const Plan& pp : plans(producer, tvars, pchain, left - 1))
        for (const Plan& cp : plans(consumer, lhs, cchain, left - 1 - static_cast<int>(pp.fusions.size()))) {
          // The producer's trips are averages over all iterations at chain[d] (empty ones
          // too); the temporary's zeroing and the consumer run only in the busy ones.
          auto price = [&](int64_t rows) {
            const double overhead = sharedRows ? kSharedRows : rows > 0 ? kBlockedOverhead : kFusedOverhead;
            return shared * (overhead * (pp.cost + busy * cp.cost) + busy * temp);
          };
          Plan f;
          f.blockRows = rowsShared;
          f.cost = price(f.blockRows);
          // Too little work to share: it runs on one thread (defaultSchedule), whose
          // blocks are larger (fewer threads never unblock rows, so the price only falls
          // and the plan stays on one thread).
          if (threads_ > 1 && f.cost < kParallelWork) {
            f.blockRows = rowsAlone;
            f.cost = price(f.blockRows);
          }
          f.fusions = {chain[d]};
          f.fusions.insert(f.fusions.end(), pp.fusions.begin(), pp.fusions.end());
          f.fusions.insert(f.fusions.end(), cp.fusions.begin(), cp.fusions.end());
          out.push_back(f);
        }
    }
    return out;
  }

  /// Separate kernels for each way loopfuse would split the kernel's own product:
  /// T(vars the rest uses) = producer, then the rest times T. Then the other
  /// associativities: any other two or more factors as the producer (<SpTTM, SpTTM>:
  /// T(k,m) = C(k,l) * D(l,m) once, then A(i,j,m) = B(i,j,k) * T(k,m), nnz x M
  /// multiplies where the fused nest does nnz x L + fibers x L x M).
  std::vector<Plan> separatePlans(const std::vector<Factor>& fs, const std::vector<IndexVar>& lhs,
                                  const std::vector<IndexVar>& order) const {
    std::vector<Plan> out;
    std::vector<std::vector<int>> seen;
    auto add = [&](const std::vector<Factor>& producer, const std::vector<Factor>& consumer) {
      std::vector<int> key;
      for (const Factor& f : producer) key.push_back(f.input);
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) return;
      seen.push_back(key);
      out.push_back(separatePlan(producer, consumer, lhs, order));
    };
    for (size_t d = 0; d + 1 < order.size(); d++) {
      std::vector<Factor> producer, consumer;
      if (split(fs, lhs, order, d, producer, consumer)) add(producer, consumer);
    }
    const size_t n = fs.size();
    if (n >= 8) return out;  // 2^n producers: few products have more factors
    for (uint32_t mask = 1; mask + 1 < (1u << n); mask++) {
      if (std::popcount(mask) < 2) continue;  // one factor: a copy
      std::vector<Factor> producer, consumer;
      for (size_t f = 0; f < n; f++) (mask >> f & 1 ? producer : consumer).push_back(fs[f]);
      add(producer, consumer);
    }
    return out;
  }

 private:
  /// T(vars the consumer or the output use) = product of `producer`, then the consumer
  /// times T: both kernels' multiplies, T's traffic and a second kernel's call.
  Plan separatePlan(const std::vector<Factor>& producer, std::vector<Factor> consumer, const std::vector<IndexVar>& lhs,
                    const std::vector<IndexVar>& order) const {
    const std::vector<IndexVar> cv = varsOf(consumer);
    std::vector<IndexVar> tvars;  // as precompute orders them: first appearance in the producer
    for (const Factor& f : producer)
      for (const IndexVar& v : f.vars)
        if ((has(lhs, v) || has(cv, v)) && !has(tvars, v)) tvars.push_back(v);
    Plan s;
    for (const Factor& f : producer) {
      s.separate.push_back(f.expr);
      const Format& fmt = p_.args[static_cast<size_t>(p_.inputs[static_cast<size_t>(f.input)].arg)].format;
      if (s.like < 0 && f.vars == tvars && !fmt.isAllDense()) s.like = f.input;
    }
    consumer.push_back({tvars, s.like, {}});
    double first = static_cast<double>(producer.size()), second = static_cast<double>(consumer.size());
    for (const IndexVar& v : order) {
      if (has(varsOf(producer), v)) first *= trip(v, producer);
      if (has(varsOf(consumer), v) || has(lhs, v)) second *= trip(v, consumer);
    }
    double entries = 1;
    if (s.like >= 0) {
      entries = static_cast<double>(std::max<int64_t>(boundStoredCount(*p_.inputs[static_cast<size_t>(s.like)].node), 1));
    } else {
      for (const IndexVar& v : tvars) entries *= static_cast<double>(extentOf(a_, v));
    }
    const double bytes = entries * (s.like >= 0 ? 12.0 : 8.0);  // values, and a sparse T's coordinates
    const bool beyond = bytes > static_cast<double>(llc_.llcBytes);
    const double traffic = entries * (s.like >= 0 ? kTrafficSparse : kTrafficDense) * (beyond ? llc_.beyondLlc : 1.0);
    s.cost = first + second + traffic + kSeparateCall;
    std::ostringstream w;
    w << (s.like >= 0 ? "stored like " + p_.inputs[static_cast<size_t>(s.like)].node->tensor.name() : "dense") << ", "
      << entries << " entries";
    if (beyond) w << ", beyond the " << llc_.size() << " last-level cache";
    s.what = w.str();
    return s;
  }

  /// loopfuse's split below chain[d]: the consumer keeps the factors that use a variable
  /// of the left-hand side bound below it. False when a side is empty or the producer
  /// alone sums over a loop outside chain[d].
  static bool split(const std::vector<Factor>& fs, const std::vector<IndexVar>& lhs, const std::vector<IndexVar>& chain,
                    size_t d, std::vector<Factor>& producer, std::vector<Factor>& consumer) {
    std::vector<IndexVar> below;
    for (size_t e = d + 1; e < chain.size(); e++)
      if (has(lhs, chain[e])) below.push_back(chain[e]);
    for (const Factor& f : fs) {
      bool uses = false;
      for (const IndexVar& v : f.vars) uses |= has(below, v);
      (uses || f.input < 0 ? consumer : producer).push_back(f);
    }
    if (producer.empty() || consumer.empty()) return false;
    const std::vector<IndexVar> cv = varsOf(consumer);
    for (const IndexVar& v : varsOf(producer))
      for (size_t e = 0; e < d; e++)
        if (chain[e] == v && !has(lhs, v) && !has(cv, v)) return false;
    return true;
  }

  const lower::Problem& p_;
  const Assignment& a_;
  FusionCacheModel llc_;
  int threads_;
};

/// A fusion at the outermost loop `v` at blocks of the plan's rows (priced so by the
/// cost model): split(v, v_block, v_in, R), loopfuse(v_block) into `s`. Returns the
/// block loop, or `v` (nothing added) where the plan does not fuse at `v` first or its
/// rows do not run at blocks.
IndexVar blockedFusion(Schedule& s, const Plan& plan, const IndexVar& v) {
  if (plan.fusions.empty() || !(plan.fusions[0] == v) || plan.blockRows < 2) return v;
  IndexVar block(v.name() + "_block"), in(v.name() + "_in");
  s.split(v, block, in, static_cast<int>(plan.blockRows)).loopfuse(block);
  return block;
}

/// A fused nest not fused at blocks runs its outermost loop `v` in blocks of rows that
/// tessel's block loop hands out (own shares first, as the default parallel schedule):
/// `v` becomes the loop inside the blocks, `outer` the block loop. Rows in parallel
/// alone are OpenMP's guided chunks, whose first chunks are large: <SpMMH, GEMM> fused per
/// row on wiki-Vote's skewed rows took 3.2-3.6 ms on 2 threads, in blocks 2.7-2.9 ms.
/// As many blocks as the default parallel schedule's for the plan's estimated `work`.
void rowBlocks(Schedule& s, IndexVar& v, IndexVar& outer, int64_t extent, int threads, double work,
               int blocksPerThread) {
  IndexVar block(v.name() + "_block"), in(v.name() + "_in");
  const int perThread = blocksPerThreadFor(work, threads, blocksPerThread);
  s.split(v, block, in, rowsPerParallelBlock(extent, threads, perThread));
  outer = block;
  v = in;
}

std::string number(double x) {
  std::ostringstream o;
  o.precision(3);
  o << x;
  return o.str();
}

}  // namespace

ScheduleChoice defaultSchedule(const Assignment& a, int threads) { return defaultSchedule(a, threads, hostTuning()); }

ScheduleChoice defaultSchedule(const Assignment& a, int threads, const CpuTuning& tuning) {
  ScheduleChoice choice;
  choice.threads = std::max(1, threads);
  std::vector<IndexExpr> factors;
  factorsOf(a.rhs, factors);
  std::optional<lower::Problem> p;
  // A sparse output too: its entries are assembled alike by every plan (a plan whose
  // fusion or stages cannot make them does not lower and is skipped).
  if (a.rhs.defined() && !a.accumulate && !a.mask.defined() && factors.size() >= 3) {
    try {
      p = lower::analyze(a);
    } catch (const UserError&) {
      p.reset();
    }
  }
  bool plain = p && p->order.size() >= 3;
  std::vector<Factor> fs;
  for (const IndexExpr& f : factors) {
    if (!plain) break;
    if (f.kind() != ExprKind::Access || f.node().mask.isMask) plain = false;
    else fs.push_back({f.node().vars, p->accessIndex(f.get()), f});
  }
  if (plain) {
    CostModel model(*p, a, fusionCacheModel(tuning), threads);
    std::vector<Plan> all = model.plans(fs, a.lhsNode().vars, p->order, 3, true);
    const double perfect = all[0].cost;
    for (const Plan& s : model.separatePlans(fs, a.lhsNode().vars, p->order)) all.push_back(s);
    // Stable: of plans priced alike, fusions first, then loopfuse's own splits.
    std::stable_sort(all.begin() + 1, all.end(), [](const Plan& x, const Plan& y) { return x.cost < y.cost; });
    for (size_t k = 1; k < all.size() && all[k].cost * 1.25 <= perfect; k++) {
      const Plan& plan = all[k];
      Schedule s;
      IndexVar outer = p->order[0];  // the loop that runs in parallel
      std::string why;
      std::optional<Schedule> serial;  // a fused plan's schedule without row blocks
      if (!plan.separate.empty()) {
        const IndexExpr producer = productOf(plan.separate);
        std::string t = "T";  // a name of no tensor of the assignment
        for (const auto& arg : p->args)
          if (arg.tensor.name() == t) t += "_";
        if (plan.like >= 0) s.precomputeLike(producer, t, p->inputs[static_cast<size_t>(plan.like)].node->tensor.name());
        else s.precompute(producer, t);
        if (!driver::lowersStaged(a, s)) continue;
        why = "separate kernels: " + t + " = " + producer.str() + " (" + plan.what + "), then the rest; ";
      } else {
        std::string at;
        const int sharing = threads > 1 && plan.cost >= kParallelWork ? threads : 1;
        const int64_t extent = extentOf(a, p->order[0]);
        outer = blockedFusion(s, plan, p->order[0]);
        const bool blocked = !(outer == p->order[0]);  // the first fusion is already in s
        if (blocked) at = "blocks of " + plan.fusions[0].name();
        // s with the rest of the fusions; inBlocks: the rows in blocks, `par` the block loop.
        auto fuseRest = [&](bool inBlocks, IndexVar& par) {
          Schedule f = s;
          IndexVar row = p->order[0];  // the outermost loop's variable in the fused nest
          if (inBlocks) rowBlocks(f, row, par, extent, sharing, plan.cost, tuning.blocksPerThread);
          for (size_t k = blocked ? 1 : 0; k < plan.fusions.size(); k++)
            f.loopfuse(plan.fusions[k] == p->order[0] ? row : plan.fusions[k]);
          return f;
        };
        // In blocks of rows on several threads where that lowers, else rows as they are.
        IndexVar par = outer;
        Schedule fused = fuseRest(!blocked && sharing > 1, par);
        if (!driver::lowers(a, fused)) {
          if (blocked || sharing <= 1) continue;
          par = outer;
          fused = fuseRest(false, par);
          if (!driver::lowers(a, fused)) continue;
        }
        // Rows in blocks are for the threads: without a parallel schedule that lowers
        // (a sparse output appended from a compressed first level), rows as they are.
        if (!(par == outer)) serial = fuseRest(false, outer);
        s = fused;
        outer = par;
        for (size_t f = blocked ? 1 : 0; f < plan.fusions.size(); f++)
          at += (at.empty() ? "" : ", then ") + plan.fusions[f].name();
        why = "fused at " + at + " (loopfuse): ";
      }
      why += "the cost model's estimate is " + number(plan.cost) + " against the perfect nest's " + number(perfect);
      // The best fused plan and the best separate one, for comparison.
      for (size_t o = 1; o < all.size(); o++)
        if (o != k && all[o].separate.empty() != plan.separate.empty()) {
          why += std::string(" and ") + (all[o].separate.empty() ? "the fused nest's " : "separate kernels' ") +
                 number(all[o].cost);
          break;
        }
      if (threads > 1 && plan.cost < kParallelWork) {
        why += "; one thread (too little work to share)";
        choice.threads = 1;
      } else if (threads > 1) {
        // Separate kernels: the last stage gets its own default parallel schedule (the
        // others get theirs in splitStages): non-zeros split evenly on skewed rows, where
        // plain rows in parallel ran wiki-Vote's <SDDMM, SpMM> 1.2x slower on 2 threads.
        Schedule par = s;
        if (plan.separate.empty()) {
          par.parallelize(outer, CPUThread, NoRaces);
        } else {
          const Assignment rest = driver::splitStages(a, s, nullptr, driver::StageSchedules::Skip).assignments.back();
          const Schedule last = defaultParallelSchedule(rest, threads, tuning.blocksPerThread);
          for (const ScheduleCommand& c : last.commands()) par.add(c);
        }
        if (plan.separate.empty() ? driver::lowers(a, par) : driver::lowersStaged(a, par)) {
          s = par;
          why += !plan.separate.empty() ? "; each kernel on its default parallel schedule"
                 : outer == p->order[0] ? "; rows in parallel"
                                        : "; blocks of rows in parallel";
        } else if (plan.separate.empty()) {
          if (serial) s = *serial;
          why += "; one thread (no parallel schedule of it lowers)";
          choice.threads = 1;
        }
      }
      choice.schedule = s;
      choice.reason = why;
      return choice;
    }
  }
  choice.schedule = defaultParallelSchedule(a, threads, tuning.blocksPerThread);
  if (threads > 1 && !choice.schedule.empty()) choice.reason = "default for " + std::to_string(threads) + " threads";
  return choice;
}

}  // namespace tessel
