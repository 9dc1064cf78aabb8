// Adaptive merge loops. A union merge (a sum of sparse operands) can advance its
// iterators branch-free (conditional increments: every step waits for the last
// coordinate load) or with one branch per operand (the CPU speculates past the loads,
// and pays a mispredict where the operands interleave at random). Which is faster
// depends on the data: 2x either way on real matrices (banded FEM patterns favour
// branches, independent random graphs the branch-free loop). Each merge site therefore
// times both on alternating segments (rows) for a short trial, keeps the faster per
// entry, and tries again every so often. Both produce the same results bit for bit.
#pragma once

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
  std::vector<ir::Stmt> declare(int from, bool tuning);

  static constexpr int64_t kTrialSegments = 512;  ///< per variant, per trial
  static constexpr int64_t kMaxCyclesPerEntry = 100;
  static constexpr int64_t kRetrialAfter = 16384;  ///< segments between trials

 private:
  struct Site {
    ir::Expr left, mode, best, wait, t0, cycles0, cycles1, work0, work1;
    bool declared = false;
  };
  Symbols& sym_;
  std::vector<Site> sites_;
};

}  // namespace tessel::lower
