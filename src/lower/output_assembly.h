// The output side of lowering: resolving output positions as variables are bound,
// appending coordinates, storing values, the workspace row, and the allocation code
// of the assemble function (counts -> prefix sums -> arrays).
#pragma once

#include <vector>

#include "ir/ir.h"
#include "lower/lower_loops.h"
#include "lower/output_plan.h"
#include "lower/parallel_plan.h"
#include "lower/symbols.h"

namespace tessel::lower {

class OutputAssembly {
 public:
  OutputAssembly(const Problem& p, const OutputPlan& plan, Symbols& sym, const ParallelPlan& pp);

  /// Declarations and allocations before the loop nest.
  std::vector<ir::Stmt> functionPrologue(Phase phase);
  /// After the loop nest: (symbolic) prefix sums and array allocation; frees.
  std::vector<ir::Stmt> functionEpilogue(Phase phase);

  /// Start of each iteration of the parallel loop, or of each thread's range of them
  /// (one-pass parallel plan: the append position is set by the first row). `thread`:
  /// the range's thread index (needed for thread arrays: thread t fills region t of the output's blocks).
  std::vector<ir::Stmt> iterationPrologue(const ir::Expr& thread = ir::Expr()) const;
  /// A parallel loop over rows hands each thread one contiguous range of them: appends
  /// find their window from the row (rowOffsets), or go to the thread's own arrays.
  bool threadRangesOfRows() const { return plan_.rowOffsets || threadBuffers(); }
  /// Growing workspace rows under a parallel loop: each thread's range of rows goes to
  /// its own arrays, joined after the loop.
  bool threadBuffers() const { return plan_.growRows && pp_.loop >= 0; }
  /// End of each thread's range of iterations `t` (thread buffers: publish them).
  std::vector<ir::Stmt> rangeEpilogue(const ir::Expr& t) const;
  /// One-pass parallel rows: threads fill in pairs, the even one downward so that the
  /// pair's entries meet (see tessel_finish_rows in the generated code).
  bool fillsDownward() const { return plan_.rowOffsets; }
  /// A downward thread, before its block of rows [r0, r1) that ends at `hi`: appends
  /// start at hi minus the block's bound; `lo` (declared by the caller) records where.
  std::vector<ir::Stmt> downwardBlockStart(const ir::Expr& lo, const ir::Expr& hi, const ir::Expr& r0,
                                           const ir::Expr& r1) const;
  /// ... after it: the block's entries moved up to end at `hi`, which becomes their start.
  ir::Stmt downwardBlockEnd(const ir::Expr& lo, const ir::Expr& hi, const ir::Expr& r0, const ir::Expr& r1) const;
  /// One-pass parallel plan: the bound's offset at output row `row` (the sum of the
  /// bounding operands' pos there), where rows from `row` on may start appending.
  ir::Expr boundOffset(const ir::Expr& row) const;
  /// Nondecreasing estimate of the work before output row `row`, to cut threads'
  /// ranges: the bound's offset, or for thread buffers the entries of the CSR operands
  /// over the output's rows (SpGEMM's A) plus one per row.
  ir::Expr workBefore(const ir::Expr& row) const;
  /// Resolve every output level whose variables are now bound (locate, append).
  void resolve(Env& env, Phase phase, std::vector<ir::Stmt>& s);
  /// Append the deferred last output levels (env.pendingLevel) at the end of a reduction.
  void appendPending(Env& env, Phase phase, std::vector<ir::Stmt>& s);
  /// One-pass plan: after the loops of a row that `after` opened (and `before` had
  /// not), store the row's entry count.
  void closeRow(const Env& before, const Env& after, Phase phase, std::vector<ir::Stmt>& s) const;
  /// All output levels have positions.
  bool resolved(const Env& env) const;
  const Semiring& semiring() const { return p_.assignment.semiring; }
  /// The semiring's zero is not 0: arrays that start at zero need a fill loop.
  bool needsZeroFill() const;
  /// for x in [0, count): vals[x] = the semiring's zero.
  ir::Stmt fillWithZero(const ir::Expr& vals, const ir::Expr& count) const;
  /// Store (or accumulate, when a reduction encloses the output) a value.
  ir::Stmt storeValue(const Env& env, const ir::Expr& v) const;

  /// Wrap `inner` (the loops below the output's parent) in a workspace row.
  ir::Stmt workspaceRegion(const Env& env, Phase phase, const ir::Stmt& inner);
  /// Leaf inside a workspace row: mark the coordinate, accumulate the value.
  ir::Stmt workspaceUpdate(const Env& env, Phase phase, const ir::Expr& v) const;

 private:
  int order() const { return p_.args[0].format.order(); }
  const LevelFormat& level(int k) const { return sym_.level(0, k); }
  int chainEnd(int k) const;
  void append(Env& env, Phase phase, int k, std::vector<ir::Stmt>& s);
  ir::Expr parentPos(const Env& env, int k) const;
  bool denseAbove(int k) const;
  std::vector<ir::Stmt> ensureCount(int k, const ir::Expr& index);
  std::vector<ir::Stmt> assembleDense();
  /// Dense plan with zeroSlices: the output's values under first-level position `pos`, zeroed.
  ir::Stmt zeroSlice(const ir::Expr& pos) const;
  std::vector<ir::Stmt> assemblePatternCopy();
  std::vector<ir::Stmt> assembleFromCounts();
  /// Dense-root pattern copy: the output's level-1 pos from the source's segments.
  std::vector<ir::Stmt> scatterRootSegments(const ir::Expr& rows, const ir::Expr& next);
  /// Growing rows: allocate pos (zeroed) and crd/vals of a first guess.
  std::vector<ir::Stmt> assembleGrowable();
  /// Pos (zeroed, one per row of the dense levels above, plus one) and crd/vals of
  /// `capacity` entries for the last level (one-pass plans).
  std::vector<ir::Stmt> allocLastLevel(const ir::Expr& capacity);
  /// Growing rows: make room for `count` more entries after `q`.
  ir::Stmt ensureRoom(const ir::Expr& q, const ir::Expr& count) const;
  /// One-pass plan: allocate pos (zeroed) and crd/vals of the bound.
  std::vector<ir::Stmt> assembleBounded();
  /// One-pass plan, after the numeric loops: row counts -> pos; record the sizes.
  std::vector<ir::Stmt> finishBounded();
  /// One-pass plan in parallel: row counts -> pos; runs of rows moved, in place, from
  /// where their iteration appended them (rowFrom_).
  std::vector<ir::Stmt> compactRows();
  /// The last level's crd and the values as C helpers move them: (char*)crd, its element
  /// size, (char*)vals, its element size.
  std::vector<ir::Expr> lastLevelBytes() const;
  /// Record `count` entries as the last level's crd and the values' sizes.
  std::vector<ir::Stmt> recordCount(const ir::Expr& count);
  /// Entries before the last level (product of the dense upper levels' dims).
  ir::Expr upperSize(std::vector<ir::Stmt>& s);
  ir::Stmt setField(const std::string& fieldName, int k, const ir::Expr& value) const;
  /// memcpy of `count` elements of dst's type from src (a field of an input) to dst.
  ir::Stmt copyArray(const ir::Expr& dst, const ir::Expr& src, const ir::Expr& count) const;
  /// into = a * b, returning TESSEL_ERR_OVERFLOW from the generated function on overflow.
  ir::Stmt mulChecked(const ir::Expr& into, const ir::Expr& a, const ir::Expr& b) const;
  /// Allocate the output's crd array of `level` (copied from argument `copyFrom` if >= 0).
  std::vector<ir::Stmt> allocCrd(int level, const ir::Expr& count, int copyFrom);
  /// Allocate output values; `zero` when the kernel may leave some unwritten (a copied
  /// pattern) -- appended entries always get their value.
  std::vector<ir::Stmt> allocVals(const ir::Expr& count, bool zero);

  const Problem& p_;
  const OutputPlan& plan_;
  Symbols& sym_;
  const ParallelPlan& pp_;
  std::vector<ir::Expr> cnt_, cap_, n_, q_;  // per output level (symbolic counts, numeric counters)
  ir::Expr wVals_, wMark_, wList_, wN_;
  ir::Expr rowStart_;  ///< one-pass plan: where the current row's entries start
  ir::Expr rowFrom_;   ///< one-pass parallel plan: per row, where its entries were appended
  ir::Expr capacity_;  ///< growing rows: entries the output's crd/vals hold
  ir::Expr tCrd_, tVals_, tCount_, failed_;  ///< thread buffers: per thread, and a failure flag
  /// Workspace arrays for all threads (one row each when private); wVals_.. point into them.
  ir::Expr wValsAll_, wMarkAll_, wListAll_;
};

}  // namespace tessel::lower
