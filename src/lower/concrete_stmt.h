// Concrete index notation (TACO, COMET): the tree of statements that fixes loop order
// and temporaries. The schedule's rewrites produce it (lower/loop_nest.cpp) and the loop
// lowerer walks it (lower/lower_loops.cpp):
//   forall(i, S)           a loop over i (a Loop: coordinates or blocks, its annotations)
//   where(C, P)            P fills a temporary that C then reads; per iteration of the
//                          enclosing loop when inside one (precompute at a loop)
//   sequence(S1, S2, ...)  statements one after another
//   A(i) = e, A(i) += e    an assignment (the leaf)
// Nodes are immutable; rewrites build new trees that share unchanged subtrees.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lower/problem.h"
#include "tessel/schedule.h"

namespace tessel::lower {

/// A forall's loop: what it binds or restricts, and how it runs.
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
  /// A fiber of e's first sparse level over a summed variable shorter than this runs the
  /// plain nest instead (lower_loops.cpp, localOrPlain); 0: always the temporary.
  int64_t minFiber = 4;
  /// At the outer loop of a split of coordinates (split or divide of `block`): t holds one
  /// block's worth of `block`, indexed from the block's first coordinate, so it stays the
  /// size of a block (SparseLNR's fusion after a split: the consumer reuses its other
  /// operands across the block's rows). Unset when `at` is a loop over coordinates.
  std::optional<IndexVar> block;
  int64_t blockAmount = 0;  ///< the split's block size, or divide's number of pieces
  bool blockDivide = false;
  /// At B's positions: t(i,j) is stored where the producer's factor B(i,j) (CSR, i the
  /// block's variable) stores its entries, and the consumer iterates B's pattern
  /// (`positionsRead`, an access of t with B's levels) instead of every j. SDDMM feeding
  /// SpMM fused at blocks of rows: t holds the block's positions of B, not rows x J. Null
  /// otherwise.
  const tessel::ExprNode* positionsOf = nullptr;
  const tessel::ExprNode* positionsRead = nullptr;
};

struct IndexStmtNode;
using IndexStmt = std::shared_ptr<const IndexStmtNode>;

struct IndexStmtNode {
  enum class Kind { Assign, Forall, Where, Sequence } kind = Kind::Assign;

  // Assign
  IndexExpr lhs, rhs;
  bool accumulate = false;  ///< `+=` (the semiring's add)

  // Forall
  Loop loop;
  int depth = -1;  ///< the loop's place in the scheduled order (LoopNest::loops)
  IndexStmt body;

  // Where
  IndexStmt consumer, producer;
  std::shared_ptr<const LocalTemporary> temporary;  ///< what the producer fills
  IndexExpr temporaryAccess;                        ///< t(vars), as the consumer reads it
  /// The statement the where replaced: the loops below the temporary's loop over the
  /// whole expression, which a kernel runs instead where the temporary does not pay.
  IndexStmt unsplit;

  // Sequence
  std::vector<IndexStmt> stmts;
};

IndexStmt assignStmt(IndexExpr lhs, IndexExpr rhs, bool accumulate);
IndexStmt forallStmt(const Loop& loop, int depth, IndexStmt body);
IndexStmt whereStmt(IndexStmt consumer, IndexStmt producer, std::shared_ptr<const LocalTemporary> t, IndexExpr access,
               IndexStmt unsplit);
IndexStmt sequenceStmt(std::vector<IndexStmt> stmts);

/// t(vars): a dense temporary of `type` over `vars` (extents from `a`) that a kernel
/// allocates itself; its tensor is the temporary's identity in expressions.
IndexExpr denseTemporary(const std::string& name, Datatype type, const std::vector<IndexVar>& vars,
                         const Assignment& a);

/// "forall(i, forall(j, where(forall(l, A(i,l) += t(l) * C(j,l)), forall(k, ...))))",
/// loops annotated with their blocks, positions, parallel and unroll.
std::string str(const IndexStmt& s);

/// The foralls from the root down to the first statement that is not a forall.
std::vector<const IndexStmtNode*> forallChain(const IndexStmt& s);

}  // namespace tessel::lower
