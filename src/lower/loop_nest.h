// Scheduling: the problem's loop order made concrete (a forall nest around the
// assignment) and rewritten by the schedule's commands into the concrete index notation
// tree (lower/concrete_stmt.h) that lowering walks.
//
// Every loop is either
//   Coord  binds an index variable of the problem (`of`) by co-iterating its operands
//          (merge lattice), possibly restricted to a coordinate range or to a window of
//          one operand's positions set by an enclosing Chunk; or
//   Chunk  a dense loop over blocks that restricts the loops inside it: blocks of
//          `of`'s coordinates (split/divide), or blocks of one operand's stored positions
//          (pos + split/divide; with fuse, positions of two levels at once).
// Schedule commands (tessel/schedule.h) are checked here and throw ScheduleError.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lower/concrete_stmt.h"
#include "lower/problem.h"
#include "tessel/schedule.h"

namespace tessel::lower {

/// A scheduled kernel: its concrete index notation, and every loop of it by depth.
struct LoopNest {
  IndexStmt stmt;  ///< the concrete index notation: what lowering walks
  /// stmt's loops in scheduled order, the index of each its depth. A where's consumer
  /// and producer each run some of the loops after the where's own, in this order.
  std::vector<Loop> loops;
  /// A loop of the schedule wants the output gathered in a workspace at this variable.
  std::optional<IndexVar> precompute;
  std::string schedule;  ///< the schedule's text, for the generated code's header

  /// Index of the Coord loop binding `v` (-1 if none).
  int coordLoopOf(const IndexVar& v) const;
  /// Index of the first loop that touches `v`.
  int firstTouching(const IndexVar& v) const;
  /// Index just past the last loop touching any of `vars` (0 if none).
  int endOfLoopsFor(const std::vector<IndexVar>& vars) const;
  int parallelLoop() const;  ///< -1 if none
  /// The wheres of temporaries at loops (precompute(e, t, at), loopfuse), outer ones
  /// first; empty if none.
  std::vector<const IndexStmtNode*> localWheres() const;
};

/// Apply the schedule to the problem's loop order. `reorder` changes `p.order` (checked
/// against every operand's level order); the other commands build the nest on top of it.
LoopNest scheduleLoops(Problem& p, const Schedule& s);

/// loopfuse's split (SparseLNR): for each factor of the right-hand side's product (in
/// factorsOf order), whether the producer gets it when fusing below depth `depth` of the
/// loop order `order`: the accesses that use no output variable bound below that depth.
std::vector<bool> fusionProducers(const Problem& p, const std::vector<IndexVar>& order, int depth);

}  // namespace tessel::lower
