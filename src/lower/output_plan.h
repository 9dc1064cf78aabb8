// How the output is assembled:
//  Dense        every level dense: allocate zeroed values, compute writes them.
//  PatternCopy  the output's levels are an input's leading levels and that input is a
//               factor of the whole product (SpTTV, SDDMM): copy its pos/crd arrays,
//               compute values only.
//  Append       entries are produced in order: a symbolic pass counts entries per
//               parent position, a prefix sum gives pos, a numeric pass fills crd/vals.
//  Workspace    a reduction variable is ordered before the last (sparse) output level
//               (SpGEMM): a dense workspace row collects values and coordinates, which
//               are sorted and appended (COMET's workspace transformation).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "lower/problem.h"

namespace tessel::lower {

enum class OutputKind { Dense, PatternCopy, Append, Workspace };

struct OutputPlan {
  OutputKind kind = OutputKind::Dense;
  int patternSource = -1;   ///< PatternCopy: index into Problem::inputs
  /// PatternCopy whose source stores the first level compressed where the output's is
  /// dense (SpTTV from CSF into CSR): the source's level-1 segments are scattered to
  /// their rows for pos; crd and every position below are the source's, in its order.
  bool denseRoot = false;
  /// PatternCopy: no other operand is sparse at the output's variables, so the loops
  /// store every entry of the copied pattern and its values need no zeroing (unless
  /// `scatter`: then they accumulate).
  bool coversSource = false;
  int workspaceLevel = -1;  ///< Workspace: output level held in the workspace (the last)
  int workspaceDepth = -1;  ///< Workspace: loop depth at which a workspace row starts
  bool scatter = false;     ///< a reduction loop encloses the output's last variable, or inPlace
  /// Dense, `+=`: values are added into the output's current values (kept, not zeroed;
  /// every store accumulates).
  bool inPlace = false;
  /// Dense: the compute phase assigns every entry exactly once (set by planParallel),
  /// so assembly need not zero the values first.
  bool assignsAll = false;
  /// Dense: each slice under the first level's position is filled by one iteration of
  /// the loop binding that level's variable, so compute zeroes the slice just before
  /// (in cache) and assembly zeroes nothing: one pass over the output fewer (set by
  /// planParallel).
  bool zeroSlices = false;
  int symbolicDepth = 0;    ///< Append/Workspace: loops the symbolic pass needs
  /// Append: reductions follow the last (sparse) output level, so an entry is appended
  /// only if the reduction meets at least one non-zero case (no explicit zeros).
  bool deferLastAppend = false;
  /// Append in one pass (no symbolic loops): the output's upper levels are dense and its
  /// last level gets at most as many entries as these operands store at that variable
  /// ((input access, level) pairs), so assembly allocates that bound and the numeric pass
  /// appends and counts rows. Sequential kernels only (a global counter).
  bool singlePass = false;
  std::vector<std::pair<int, int>> boundBy;
  /// One pass in parallel over rows (CSR output and CSR bounding operands): each thread
  /// takes one contiguous range of the parallel loop's iterations, cut by the bound, and
  /// appends its rows in order from the sum of the operands' pos at its first row -- a
  /// window of the bound-sized buffer no other thread reaches. Runs of rows are then
  /// moved into place within the same arrays (tessel_finish_rows).
  bool rowOffsets = false;
  /// Workspace, dense levels above the workspace's: each row is appended as soon as it
  /// is gathered, into arrays that double when full, and the row counts prefix-summed
  /// after the loops -- one pass, where the two-phase plan would gather every row twice
  /// (the symbolic count costs about as much as the numeric fill). Set by planParallel:
  /// sequentially, or under a parallel block loop over a CSR output's rows (each thread
  /// fills its own arrays for one contiguous range of blocks; they are joined after).
  bool growRows = false;
  /// Workspace filled by one loop per term of a sum (COMET's workspace for
  /// co-iteration): linear in the number of sparse terms, where merging them would
  /// need 2^n - 1 cases. Chosen when a sum co-iterates more than kAutoWorkspaceTerms
  /// sparse operands at the output's last variable, or by precompute.
  bool termLoops = false;
  std::string describe() const;
};

/// Every level of f but the last is dense (rows of a CSR-like output are indexable).
bool upperLevelsDense(const Format& f);
/// The loops visit the output's levels in storage order (each level's variable deeper
/// than the one above), so its rows come in storage order: what appending rows one
/// after another with a single counter needs (one pass, growing rows).
bool rowsInStorageOrder(const Problem& p);

/// Some operand other than `except` (an index into Problem::inputs, -1 for none) has a
/// sparse level at `v`, so the loops may skip coordinates of v it lacks.
bool sparseAt(const Problem& p, const IndexVar& v, int except = -1);
/// Some operand other than `except` (an index into Problem::inputs, -1 for none) has a
/// sparse level at an output variable, so the loops skip output coordinates it lacks.
bool sparseAtOutputVars(const Problem& p, int except = -1);

/// Sparse terms of a sum above which a sparse output is gathered in a workspace.
constexpr int kAutoWorkspaceTerms = 4;

/// The terms of a top-level sum (a - b gives -b); one term if e is not a sum.
std::vector<IndexExpr> sumTerms(const IndexExpr& e);

/// True if `target` is a factor of e's product tree (so support(e) ⊆ support(target)).
bool isFactor(const IndexExpr& e, const ExprNode* target);

/// Gather the output's last level (variable j) in a dense workspace row -- precompute(j).
/// A sum gets one loop per term. Throws FormatError when j is not that level's variable,
/// the level is not compressed, or the levels above are iterated inside j.
void gatherInWorkspace(const Problem& p, OutputPlan& plan, const IndexVar& j);

/// Throws FormatError when the output cannot be assembled with these formats and
/// this loop order (e.g. a sparse level that would need a multi-level workspace).
OutputPlan planOutput(const Problem& p);

}  // namespace tessel::lower
