// The scheduled loop nest: the problem's loop order after the schedule's rewrites.
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

#include "lower/problem.h"
#include "tessel/schedule.h"

namespace tessel::lower {

struct Loop {
  enum class Kind { Coord, Chunk } kind = Kind::Coord;
  IndexVar var;  ///< the loop's own name (i, i0, i1, f, fp0, ...)
  IndexVar of;   ///< Coord: the problem variable it binds; Chunk: the innermost variable it restricts

  // Chunk
  bool overPositions = false;  ///< blocks of positions of `access`'s level `level`
  int access = -1;             ///< index into Problem::inputs
  int level = -1;
  std::optional<IndexVar> fusedOuter;  ///< fuse+pos: the variable of level `level - 1`
  int64_t amount = 0;                  ///< block size (split) or pieces (divide)
  /// Blocks of a non-unique level's positions can cut a run of equal coordinates, so
  /// two blocks may write one output entry (like a split reduction).
  bool splitsRuns = false;
  bool divide = false;

  // Coord
  int posAccess = -1;  ///< pos: iterate this access's positions (checked to drive the loop)
  std::optional<int64_t> bound;
  BoundKind boundKind = BoundKind::MaxExact;

  // Either
  bool parallel = false;
  OutputRace race = OutputRace::NoRaces;
  std::string parallelCommand;  ///< for messages
  int64_t unroll = 0;

  /// Problem variables whose iterations this loop splits (Chunk) or binds (Coord).
  std::vector<IndexVar> touches() const;
};

/// precompute(e, t, at): e (some factors of the rhs product) computed per iteration of
/// the loop over `at` into a dense temporary t, which the rest of the product then reads
/// (concrete index notation: forall(at, where(consumer, producer)) inside the nest).
struct LocalTemporary {
  std::string name;
  std::string command;                         ///< for messages
  std::vector<const tessel::ExprNode*> factors;  ///< e's factors: accesses of the rhs
  std::vector<IndexVar> vars;    ///< t's indices: bound below `at`, used by the rest
  std::vector<IndexVar> summed;  ///< used only in e, bound below `at`: summed into t
  IndexVar at;
  int depth = -1;  ///< index of at's loop
};

struct LoopNest {
  std::vector<Loop> loops;
  std::optional<LocalTemporary> local;
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
  /// "forall(i0, forall(i1, ...))" with split/pos/parallel annotations.
  std::string str(const std::string& body) const;
};

/// Apply the schedule to the problem's loop order. `reorder` changes `p.order` (checked
/// against every operand's level order); the other commands build the nest on top of it.
LoopNest scheduleLoops(Problem& p, const Schedule& s);

}  // namespace tessel::lower
