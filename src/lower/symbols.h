// Names and array variables of a generated function, and the lowering environment
// (which variables are bound, which level positions are resolved).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "lower/level_format.h"
#include "lower/problem.h"

namespace tessel::lower {

struct LocalTemporary;
class LocalTemporaryLowering;

/// A resolved level of an access: its position and, for non-unique levels, the
/// segment of positions that share the coordinate.
struct LevelState {
  ir::Expr pos, segBegin, segEnd;
};

/// A block of one operand's stored positions at one level (pos + split).
struct PositionWindow {
  int level = -1;
  ir::Expr lo, hi;
};

/// What is known at a point of the loop nest.
struct Env {
  std::map<uint64_t, std::pair<ir::Expr, ir::Expr>> range;  ///< split: [lo, hi) of a variable
  std::map<int, PositionWindow> window;                      ///< per input access
  std::map<uint64_t, ir::Expr> bound;         ///< index variable id -> C variable
  std::vector<std::vector<LevelState>> in;    ///< per input access, resolved levels
  /// Per input access: the condition under which it holds an entry at the current
  /// point (a merged union evaluated without a case chain); absent means always.
  std::map<int, ir::Expr> present;
  /// Per input access: the presence flags of its located levels that may be absent
  /// (Bitmap); an absent entry is zero, and a leaf none of whose terms is present is skipped.
  std::map<int, ir::Expr> probed;
  ir::Expr guarded;  ///< the presence test enclosing this point (not repeated inside)
  std::set<int> maskTested;  ///< input accesses of masks whose test is in `probed` already
  /// Masks read by row (Problem::maskByRow): the offset of the scattered row in the
  /// flags of access a (MaskRows), once its upper coordinates are bound.
  std::map<int, ir::Expr> maskRow;
  /// Per input access: a variable already holding its value (zero where absent; the
  /// branching variant of a merged union loads it while advancing).
  std::map<int, ir::Expr> loaded;
  std::vector<LevelState> out;                ///< resolved output levels
  ir::Expr acc;                               ///< numeric: scalar accumulator in use
  bool inWorkspace = false;
  int pendingLevel = -1;  ///< deferred append of the last output levels from this level on
  ir::Expr hit;           ///< set when the reduction under a deferred append meets a case
  /// Below the loop of precompute(e, t, at): where this thread's row of each (non-scalar)
  /// t starts; loops over variables the expression lacks are skipped (inLocal: producer
  /// and consumer each run only their own loops).
  std::map<const LocalTemporary*, ir::Expr> localRows;
  /// A t at the outer loop of a split: the block's first coordinate (t's index 0).
  std::map<const LocalTemporary*, ir::Expr> localBlockLo;
  bool inLocal = false;
  /// Computing a temporary: leaves add into it, not into the output.
  const LocalTemporaryLowering* localProducer = nullptr;
  /// Computing a temporary at B's positions below B's entry: leaves sum into this scalar.
  ir::Expr localAcc;
};

/// Accesses in an expression, left to right.
std::vector<const ExprNode*> accessesIn(const IndexExpr& e);
/// Whether some access of e is indexed by v.
bool mentions(const IndexExpr& e, const IndexVar& v);

class Symbols {
 public:
  /// `outputArraysLoaded`: the output's pos/crd arrays exist (numeric phase).
  Symbols(const Problem& p, bool outputArraysLoaded);

  /// Declarations of tensor pointers, level dims, pos/crd/vals arrays.
  std::vector<ir::Stmt> prologue() const;
  /// A C name not used before in this function.
  std::string fresh(const std::string& base);

  ir::Expr indexVar(const IndexVar& v) const;
  ir::Expr extent(const IndexVar& v) const;
  LevelArrays arrays(int arg, int k) const { return arrays_.at(arg).at(k); }
  ir::Expr vals(int arg) const { return vals_.at(arg); }
  /// C name of the `tessel_tensor_t*` of an argument.
  const std::string& tensorName(int arg) const { return tensorNames_.at(arg); }
  /// The pointer to an argument's runtime tensor struct.
  ir::Expr tensor(int arg) const { return ir::var(tensorName(arg), ir::tensorPtr()); }
  /// A field of an argument's `tessel_tensor_t` read at run time, e.g. ("crd_size", 1)
  /// for `B->crd_size[1]`; level -1 for a field without levels ("vals_size").
  ir::Expr tensorField(int arg, const std::string& name, int level = -1) const {
    return ir::field(tensor(arg), name, ir::i64(), level);
  }
  /// Position variable of input access `access` at level k.
  ir::Expr iterPos(int access, int k) const { return iterPos_.at(access).at(k); }
  const LevelFormat& level(int arg, int k) const { return *levels_.at(arg).at(k); }
  /// Arithmetic type of the right-hand side (Float64, Float32 or Int64).
  Datatype computeType() const;
  Datatype outputType() const { return p_.outputType(); }

 private:
  const Problem& p_;
  bool outputLoaded_;
  std::set<std::string> used_;
  std::map<uint64_t, ir::Expr> indexVars_;
  std::map<uint64_t, ir::Expr> extents_;
  std::vector<std::string> tensorNames_;
  std::vector<std::vector<LevelArrays>> arrays_;
  std::vector<ir::Expr> vals_;
  std::vector<std::vector<ir::Expr>> iterPos_;
  std::vector<std::vector<std::unique_ptr<LevelFormat>>> levels_;
};

}  // namespace tessel::lower
