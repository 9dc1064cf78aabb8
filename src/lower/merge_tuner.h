// Adaptive merge loops. A union merge (a sum of sparse operands) can advance its
// iterators branch-free (conditional increments: every step waits for the last
// coordinate load) or with one branch per operand (the CPU speculates past the loads,
// and pays a mispredict where the operands interleave at random). Which is faster
// depends on the data: 2x either way on real matrices (banded FEM patterns favour
// branches, independent random graphs the branch-free loop). Each merge site therefore
// times both on alternating segments (rows) for a short trial, keeps the faster per
// entry, and tries again every so often. Both produce the same results bit for bit.
// The choice outlives the call (function statics, one slot per thread range): the
// next calls reuse it without a trial, twice as many after each trial that agrees (up
// to kMaxReuse), one after a change. A trial on a small input (wiki-Vote: 1024 of its
// 8297 rows, a quarter of each thread's on two threads, every call) otherwise cost
// more than the choice saved.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"
#include "lower/symbols.h"

namespace tessel::lower {

class MergeTuner {
 public:
  explicit MergeTuner(Symbols& sym) : sym_(sym) {}

  /// A new merge site; returns its index.
  int open();
  int sites() const { return static_cast<int>(sites_.size()); }

  /// Before the site's loops: picks the variant for this segment (timed during a trial).
  std::vector<ir::Stmt> pick(int site) const;
  /// True when the segment runs the branching variant.
  ir::Expr branching(int site) const;
  /// After the site's loops: ends a timed segment, which merged `entries` entries (an
  /// expression still valid after the loops).
  std::vector<ir::Stmt> done(int site, const ir::Expr& entries) const;

  /// Declarations of the state of sites [from, sites()) not declared yet. Where the
  /// state would restart too often (a parallel loop's body run once per row), `tuning`
  /// is false and those sites stay branch-free.
  /// `slot`: the thread range's index (0 for serial loops), which keeps its own choice.
  /// The sites declared with tuning are appended to `tuned` when given.
  std::vector<ir::Stmt> declare(int from, bool tuning, const ir::Expr& slot, std::vector<int>* tuned = nullptr);
  /// After the loops of a range (a thread's rows, or a serial kernel's) in which `sites`
  /// were declared: a trial still running, on fewer segments than a trial takes (a
  /// thread's share of 1651 rows, 825, is less than 1024), settles on what it timed,
  /// kMinTrialSegments or more. Unsettled, every call ran a trial over all its rows, half
  /// of them in the slower variant: SpAdd3 on fidapex6 took 2x as long per thread.
  std::vector<ir::Stmt> finish(const std::vector<int>& sites) const;

  static constexpr int64_t kTrialSegments = 512;  ///< per variant, per trial
  static constexpr int64_t kMinTrialSegments = 32;  ///< per variant, to settle a cut-short trial
  static constexpr int64_t kMaxCyclesPerEntry = 100;
  static constexpr int64_t kRetrialAfter = 16384;  ///< segments between trials
  static constexpr int64_t kMaxReuse = 64;   ///< calls that reuse a choice (tessel_tune_keep)
  static constexpr int64_t kMemoSlots = 64;  ///< thread ranges with a choice of their own

 private:
  struct Site {
    ir::Expr left, mode, best, wait, t0, cycles0, cycles1, work0, work1;
    std::string memo;  ///< prefix of the site's statics: _best, _every, _calls
    bool declared = false;
  };
  /// The site's persistent array `field` (best, every, calls), one slot per thread range.
  static ir::Expr memoArray(const Site& t, const char* field);
  /// This thread range's slot in the site's persistent arrays.
  static ir::Expr memoSlot(const Site& t);
  /// Address of the site's persistent `field` in this thread range's slot.
  static ir::Expr memoCell(const Site& t, const char* field);
  /// Keeps the variant faster per merged entry, in the site's state and its statics.
  static ir::Stmt settle(const Site& t);
  Symbols& sym_;
  std::vector<Site> sites_;
};

}  // namespace tessel::lower
