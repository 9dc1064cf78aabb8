// The tests of output masks (tessel/notation.h OutputMask) in generated code: where a
// valued mask holds a nonzero, where a complemented mask holds (or lacks) an entry.
#pragma once

#include <map>
#include <vector>

#include "ir/ir.h"
#include "lower/problem.h"
#include "lower/symbols.h"

namespace tessel::lower {

/// The rows of flags that masks read by row (Problem::maskByRow) are scattered into: one
/// array per such mask, a row of the mask's last level per thread, zero between rows.
/// The row under the bound upper coordinates is filled (true where the mask is, valued:
/// where it holds a nonzero) when those are bound, and cleared after the loops below.
class MaskRows {
 public:
  /// `serial`: the kernel has no parallel loop (one row per array).
  MaskRows(const Problem& p, Symbols& sym, bool serial);
  /// Function prologue: allocate the arrays (zeroed); epilogue: free them.
  std::vector<ir::Stmt> allocate() const;
  std::vector<ir::Stmt> release() const;
  /// Scatters every row-read mask of e whose upper variables are bound (and row not
  /// yet scattered): the fill goes to `before` the loops below, the clearing `after`.
  void scatter(Env& env, const IndexExpr& e, std::vector<ir::Stmt>& before, std::vector<ir::Stmt>& after) const;
  /// The flag of the bound coordinate in access a's scattered row (env.maskRow).
  ir::Expr test(const Env& env, int a) const;

 private:
  const Problem& p_;
  Symbols& sym_;
  bool serial_;
  std::map<int, ir::Expr> flags_;  ///< per row-read access: its array
  std::map<int, ir::Expr> len_;    ///< per row-read access: the extent of its last level
};

/// Adds the test of every tested mask factor of e (valued or complemented, see
/// Problem::maskTested) that can be decided at this point to env.probed, so cases
/// outside the mask are skipped in both phases as Bitmap operands' are: a valued mask
/// once its access is resolved (its value is nonzero); a complemented one once its
/// variables are bound, located in its random-access levels and binary-searched in its
/// sparse ones (it is never iterated). Statements computing the tests go to s.
/// A row-read mask whose row is scattered is tested in it (`rows`), else searched.
void probeMasks(const Problem& p, Symbols& sym, const MaskRows& rows, Env& env, const IndexExpr& e,
                std::vector<ir::Stmt>& s);

}  // namespace tessel::lower
