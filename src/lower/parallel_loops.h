// Emitting a scheduled parallel loop (the plan is lower/parallel_plan.h's): its loop
// info, the body of one iteration (its output window, its thread's copy of the
// output), one-pass parallel rows handed out as one work-balanced range per thread
// (paired ranges where a thread fills its window downward), and the per-thread output
// copies of the temporary strategy around the loop nest.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "lower/concrete_stmt.h"
#include "lower/lower_loops.h"
#include "lower/merge_tuner.h"
#include "lower/output_assembly.h"
#include "lower/parallel_plan.h"
#include "lower/problem.h"
#include "lower/symbols.h"

namespace tessel::lower {

/// How a scheduled loop runs: a parallel loop over blocks takes its own share first,
/// one over coordinates guided chunks (rows differ in work).
ir::LoopInfo loopInfo(const Loop& l);

class ParallelLoops {
 public:
  ParallelLoops(const Problem& p, Symbols& sym, OutputAssembly& out, MergeTuner& tuner, const ParallelPlan& pp,
                Phase phase);

  /// One-pass parallel rows: each thread gets one contiguous range of the iterations
  /// [begin, end), cut where the estimated work (OutputAssembly::workBefore; for sums,
  /// the output bound) is evenly divided, instead of iterations handed out one by one.
  /// A thread then appends all its rows in one window (or its own arrays), so the
  /// compaction after the loop moves one run per thread (half the output on 2 threads)
  /// rather than one per block (all of it).
  /// `rowAt(c)`: the first row of iteration c; rowAt(end) is the row after the last.
  ir::Stmt threadRanges(const Loop& l, const ir::Expr& c, const ir::Expr& begin, const ir::Expr& end,
                        const std::function<ir::Expr(const ir::Expr&)>& rowAt, std::vector<ir::Stmt> body,
                        int tuneFrom);

  /// The body of one iteration of a parallel loop: it starts its own output window
  /// (one-pass parallel assembly); under the temporary strategy it writes the thread's
  /// own copy of the output.
  ir::Stmt threadBody(const Loop& l, std::vector<ir::Stmt> body, int tuneFrom);

  /// Temporary strategy: zeroed copies before the loop nest, summed into the output
  /// after it. Around the whole nest, not the parallel loop: a parallel loop inside a
  /// row loop would otherwise allocate, zero and sum whole-output copies once per row
  /// (quadratic). Deferring the sum is exact because every write adds (plan.scatter)
  /// and nothing in the nest reads the output's values.
  ir::Stmt threadCopies(const ir::Stmt& loops);

 private:
  /// One-pass parallel rows, one thread's iterations [first, stop): an even thread
  /// with a partner (t + 1 < nt) runs them in blocks of about kDownwardBlock bound
  /// entries, last block first, each block's entries moved up to meet the next block's
  /// (OutputAssembly::downwardBlockEnd), so they end where the partner's window starts;
  /// other threads run them in one block, in order.
  ir::Stmt pairedRange(const Loop& l, const ir::Expr& c, const ir::Expr& first, const ir::Expr& stop,
                       const ir::Expr& t, const ir::Expr& nt, const std::function<ir::Expr(const ir::Expr&)>& rowAt,
                       const std::vector<ir::Stmt>& body, std::vector<ir::Stmt>& s);

  /// A fresh int64 variable named after `base`, declared with `value` in s.
  ir::Expr declared(const std::string& base, const ir::Expr& value, std::vector<ir::Stmt>& s);

  const Problem& p_;
  Symbols& sym_;
  OutputAssembly& out_;
  MergeTuner& tuner_;
  const ParallelPlan& pp_;
  Phase phase_;
  ir::Expr tmp_;  ///< the temporary strategy's per-thread copies of the output's values
};

}  // namespace tessel::lower
