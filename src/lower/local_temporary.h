// precompute(e, t, at): the pieces of a temporary inside the loop nest that need no loop
// lowering state. The loop lowerer emits, per iteration of at's loop,
//   t[..] = 0;  (loops below at over e's variables) t[..] += e;  (loops over the rest's) out += rest * t[..]
// t is dense, one row per thread (the loops above at may run in parallel); a t of no
// index variables is a scalar declared in each iteration instead; a t at a CSR factor's
// positions (LocalTemporary::positionsOf) holds a block of rows' entries of it, its
// consumer iterating the factor's pattern. A nest fused more than
// once (loopfuse inside a producer or consumer) has one temporary per where
// (LocalTemporaries).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "ir/ir.h"
#include "lower/loop_nest.h"
#include "lower/symbols.h"

namespace tessel::lower {

/// A case expression split at the temporary: e's factors, and the rest times t.
struct LocalSplit {
  IndexExpr producer;
  IndexExpr consumer;
};

class LocalTemporaryLowering {
 public:
  /// The temporary of `where` (concrete index notation). `serial`: no loop of the nest
  /// runs in parallel, so one row serves every iteration.
  LocalTemporaryLowering(const Problem& p, const IndexStmtNode& where, Symbols& sym, bool serial);

  /// `e` (a lattice case's expression) split, or nothing when it lacks e's factors (a
  /// case in which they are absent needs no temporary).
  std::optional<LocalSplit> split(const IndexExpr& e) const;
  /// Is this access the consumer's read of t?
  bool reads(const tessel::ExprNode* n) const { return n->tensor == access_.node().tensor; }
  /// t at B's positions (LocalTemporary::positionsOf): the consumer's read of t is
  /// iterated like B, not read as a dense array.
  bool atPositions() const { return positionsOf_ >= 0; }
  /// Producer side, t at B's positions: B's entry is bound, so every loop below adds
  /// into the same element of t (summed in a scalar, then added once: addTo).
  bool elementBound(const Env& env) const;
  /// t's element at the variables bound in `env`, in this thread's row.
  ir::Expr element(const Env& env) const;
  /// t[..] += v at the variables bound in `env`.
  ir::Stmt addTo(const Env& env, ir::Expr v) const;
  /// Declare and allocate t (one row per thread), before the loops; freed after them.
  std::vector<ir::Stmt> allocate() const;
  ir::Stmt release() const;
  /// At the top of each iteration of at's loop: this thread's row offset, zeroed row.
  std::vector<ir::Stmt> startRow(Env& env) const;
  const LocalTemporary& temporary() const { return t_; }

 private:
  const Problem& p_;
  const LocalTemporary& t_;
  Symbols& sym_;
  IndexExpr access_;  ///< t(vars): its tensor is t's identity in the consumer's expression
  ir::Expr all_, len_, stride_;         ///< every thread's rows; one row's length; rows' distance
  /// Elements between threads' rows: at least 128 bytes (two cache lines, which Intel's
  /// adjacent-line prefetcher fetches together) for any element type.
  static constexpr int64_t kThreadGap = 128;
  bool serial_;                         ///< one row, at offset 0 (no thread number per iteration)
  /// t at B's positions: B's access (the producer's factor) and the consumer's read of t,
  /// as input accesses; -1 for a dense t. A thread's row holds one block's positions,
  /// indexed from the block's first (rows as long as the longest block).
  int positionsOf_ = -1, positionsRead_ = -1;
  bool scalar_ = false;                 ///< no index variables: a local scalar per iteration

  ir::Expr index(const Env& env) const;
  ir::Expr positionIndex(const Env& env, int access) const;
  std::vector<ir::Stmt> longestBlock() const;
  /// t's extent along v: v's, or a block's when t is at the outer loop of v's split.
  ir::Expr extent(const IndexVar& v) const;
};

/// The temporaries of every where at a loop of a nest, by where and by the access that
/// reads them.
class LocalTemporaries {
 public:
  void add(const Problem& p, const IndexStmtNode& where, Symbols& sym, bool serial);
  bool empty() const { return all_.empty(); }
  /// The lowering of this where's temporary (it must have been added).
  const LocalTemporaryLowering& of(const IndexStmtNode* where) const;
  /// The temporary this access reads, or null when it is an input's access.
  const LocalTemporaryLowering* reading(const tessel::ExprNode* n) const;
  /// The same, only for a dense t: read, never iterated (a t at B's positions is
  /// iterated as B).
  const LocalTemporaryLowering* readingDense(const tessel::ExprNode* n) const {
    const LocalTemporaryLowering* t = reading(n);
    return t && !t->atPositions() ? t : nullptr;
  }
  std::vector<ir::Stmt> allocate() const;
  std::vector<ir::Stmt> release() const;

 private:
  std::vector<std::pair<const IndexStmtNode*, std::unique_ptr<LocalTemporaryLowering>>> all_;
};

}  // namespace tessel::lower
