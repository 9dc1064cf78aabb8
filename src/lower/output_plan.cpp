// Choosing the output assembly strategy.
#include "lower/output_plan.h"

#include <algorithm>

#include "format/level_format.h"
#include "tessel/error.h"

namespace tessel::lower {

bool isFactor(const IndexExpr& e, const ExprNode* target) {
  const ExprNode& n = e.node();
  if (&n == target) return true;
  switch (n.kind) {
    case ExprKind::Mul: return isFactor(n.a, target) || isFactor(n.b, target);
    case ExprKind::Neg: return isFactor(n.a, target);
    case ExprKind::Div: return isFactor(n.a, target);
    default: return false;
  }
}

namespace {

/// An input whose leading levels are the output's (same kinds, variables, widths,
/// unique) and a factor of the whole product, so the output's pattern is a copy of
/// them. `denseRoot`: also accept a compressed first level where the output's is dense
/// (its rows come in order, so the entries keep the source's positions).
int findPatternSource(const Problem& p, bool& denseRoot) {
  const Format& of = p.args[0].format;
  int m = of.order();
  // Under a mask the output holds only the entries the mask allows: a subset of any
  // operand's pattern, assembled, not copied.
  for (const AccessInfo& in : p.inputs)
    if (in.node->mask.isMask) return -1;
  for (size_t a = 0; a < p.inputs.size(); a++) {
    const AccessInfo& in = p.inputs[a];
    const Format& f = p.args[in.arg].format;
    if (f.order() < m || f.posWidth() != of.posWidth() || f.crdWidth() != of.crdWidth()) continue;
    bool same = true, root = false;
    for (int k = 0; k < m && same; k++) {
      same = in.levelVars[k] == p.output.levelVars[k] && f.levelIsUnique(k);
      const tessel::LevelFormat &ol = levelFormat(of, k), &il = levelFormat(f, k);
      // The scatter (assemblePatternCopy) rebuilds level 1's pos array row by row; with a
      // dense level 1, level 2's pos would be copied as if every root row were stored,
      // reading past the source's array when its root level is not full.
      if (k == 0 && m > 1 && ol.full() && ol.locatable() && il.hasPosArray() && il.unique() &&
          levelFormat(of, 1).hasPosArray())
        root = true;
      else
        same = same && f.level(k) == of.level(k);
    }
    if (same && isFactor(p.assignment.rhs, in.node)) {
      denseRoot = root;
      return static_cast<int>(a);
    }
  }
  return -1;
}

}  // namespace

bool sparseAt(const Problem& p, const IndexVar& v, int except) {
  for (size_t a = 0; a < p.inputs.size(); a++) {
    if (static_cast<int>(a) == except) continue;
    const Format& f = p.args[p.inputs[a].arg].format;
    for (size_t k = 0; k < p.inputs[a].levelVars.size(); k++)
      if (!levelFormat(f, static_cast<int>(k)).full() && p.inputs[a].levelVars[k] == v) return true;
  }
  return false;
}

bool sparseAtOutputVars(const Problem& p, int except) {
  for (const IndexVar& v : p.output.levelVars)
    if (sparseAt(p, v, except)) return true;
  return false;
}

bool upperLevelsDense(const Format& f) {
  for (int k = 0; k + 1 < f.order(); k++)
    if (!levelFormat(f, k).full()) return false;
  return true;
}

bool rowsInStorageOrder(const Problem& p) {
  const auto& ov = p.output.levelVars;
  for (size_t k = 1; k < ov.size(); k++)
    if (p.depthOf(ov[k - 1]) >= p.depthOf(ov[k])) return false;
  return true;
}

std::vector<IndexExpr> sumTerms(const IndexExpr& e) {
  const ExprNode& n = e.node();
  if (n.kind == ExprKind::Add || n.kind == ExprKind::Sub) {
    std::vector<IndexExpr> t = sumTerms(n.a);
    for (IndexExpr& r : sumTerms(n.b)) t.push_back(n.kind == ExprKind::Sub ? -r : r);
    return t;
  }
  if (n.kind == ExprKind::Neg && (n.a.node().kind == ExprKind::Add || n.a.node().kind == ExprKind::Sub)) {
    std::vector<IndexExpr> t;
    for (IndexExpr& r : sumTerms(n.a)) t.push_back(-r);
    return t;
  }
  return {e};
}

namespace {

/// Sparse operands stored at variable j.
int sparseOperandsAt(const Problem& p, const IndexVar& j) {
  int count = 0;
  for (size_t a = 0; a < p.inputs.size(); a++) {
    const auto& lv = p.inputs[a].levelVars;
    const Format& f = p.args[p.inputs[a].arg].format;
    for (size_t k = 0; k < lv.size(); k++)
      if (lv[k] == j && !levelFormat(f, static_cast<int>(k)).locatable()) count++;  // co-iterated
  }
  return count;
}

/// Every entry of e at the output's last variable j comes from a stored entry of an
/// operand in `by` (a sum needs both sides bounded, a product one factor).
bool boundedBy(const Problem& p, const IndexExpr& e, const IndexVar& j, std::vector<std::pair<int, int>>& by) {
  const ExprNode& n = e.node();
  switch (n.kind) {
    case ExprKind::Sum:  // split out before lowering (splitReductions); analyze() refuses them
      throw InternalError("lowering met a sum(...) node");
    case ExprKind::Access: {
      int a = p.accessIndex(&n);
      if (n.mask.complement || p.maskByRow(a)) return false;  // tested, not iterated: bounds nothing
      const auto& lv = p.inputs[a].levelVars;
      const Format& f = p.args[p.inputs[a].arg].format;
      for (size_t k = 0; k < lv.size(); k++) {
        if (!(lv[k] == j)) continue;
        if (levelFormat(f, static_cast<int>(k)).locatable()) return false;  // no stored-entry count
        // The position at j must determine the output row: the operand is indexed by
        // every upper output variable above j (else one entry serves many rows).
        for (size_t u = 0; u + 1 < p.output.levelVars.size(); u++)
          if (std::find(lv.begin(), lv.begin() + static_cast<long>(k), p.output.levelVars[u]) ==
              lv.begin() + static_cast<long>(k))
            return false;
        by.push_back({a, static_cast<int>(k)});
        return true;
      }
      return false;
    }
    case ExprKind::Literal: return false;
    case ExprKind::Apply:  // may be nonzero where no operand is stored (max(x, 0) under plus_times)
    case ExprKind::Abs: return false;
    case ExprKind::Neg: return boundedBy(p, n.a, j, by);
    case ExprKind::Div: return boundedBy(p, n.a, j, by);
    case ExprKind::Add:
    case ExprKind::Sub: return boundedBy(p, n.a, j, by) && boundedBy(p, n.b, j, by);
    case ExprKind::Mul: {
      std::vector<std::pair<int, int>> left, right;
      bool l = boundedBy(p, n.a, j, left), r = boundedBy(p, n.b, j, right);
      if (l) by.insert(by.end(), left.begin(), left.end());
      else if (r) by.insert(by.end(), right.begin(), right.end());
      return l || r;
    }
  }
  return false;
}

}  // namespace

void gatherInWorkspace(const Problem& p, OutputPlan& plan, const IndexVar& j) {
  const Format& of = p.args[0].format;
  const auto& ov = p.output.levelVars;
  const std::string& out = p.args[0].tensor.name();
  int m = of.order();
  if (m == 0 || !(ov[m - 1] == j))
    throw FormatError("a workspace holds the last level of the output, and " + j.name() +
                      " is not the variable of " + out + "'s last level");
  const tessel::LevelFormat& last = levelFormat(of, m - 1);
  if (!(last.hasPosArray() && last.unique()))
    throw FormatError(out + "'s last level is " +
                      (last.supportsInsert() ? std::string(last.full() ? "dense" : last.name()) + ", which needs no workspace"
                                             : std::string("not compressed")));
  if (plan.kind == OutputKind::Workspace) return;
  int parentDepth = -1;
  for (int k = 0; k < m - 1; k++) parentDepth = std::max(parentDepth, p.depthOf(ov[k]));
  if (parentDepth > p.depthOf(j))
    throw FormatError("the output's upper levels must be iterated before " + j.name());
  plan.kind = OutputKind::Workspace;
  plan.termLoops = sumTerms(p.assignment.rhs).size() > 1 && !plan.scatter;
  plan.singlePass = false;
  plan.patternSource = -1;
  plan.deferLastAppend = false;
  plan.workspaceLevel = m - 1;
  plan.workspaceDepth = parentDepth + 1;
  plan.symbolicDepth = static_cast<int>(p.order.size());
}

std::string OutputPlan::describe() const {
  switch (kind) {
    case OutputKind::Dense:
      if (inPlace) return "dense output, += adds into its values in place";
      return assignsAll ? "dense output, every entry assigned (not zeroed first)" : "dense output";
    case OutputKind::PatternCopy:
      return denseRoot ? "output pattern copied from an input (its first level scattered to dense rows); values computed"
                       : "output pattern copied from an input; values computed";
    case OutputKind::Append:
      return singlePass ? "one-pass assembly: bounded allocation, numeric fill with row counts, prefix sum"
                        : "two-phase assembly: symbolic count, prefix sum, numeric fill";
    case OutputKind::Workspace: {
      std::string how = growRows ? "one-pass assembly (rows appended to growing arrays)" : "two-phase assembly";
      return how + (termLoops ? " through a dense workspace row, one loop per term of the sum"
                              : " through a dense workspace row (reduction before the output's last variable)");
    }
  }
  return "";
}

OutputPlan planOutput(const Problem& p) {
  OutputPlan plan;
  const Format& of = p.args[0].format;
  const auto& ovars = p.output.levelVars;
  int lastOutDepth = -1, firstRedDepth = static_cast<int>(p.order.size());
  for (auto& v : ovars) lastOutDepth = std::max(lastOutDepth, p.depthOf(v));
  for (auto& v : reductionVars(p.assignment))
    firstRedDepth = std::min(firstRedDepth, p.depthOf(v));
  plan.inPlace = p.assignment.accumulate;  // analyze() keeps += only for dense outputs
  plan.scatter = firstRedDepth < lastOutDepth || plan.inPlace;

  if (allLevelsInsert(of)) return plan;  // Dense and Bitmap levels: insert at random
  for (int k = 0; k < of.order(); k++)
    if (levelFormat(of, k).supportsInsert() && !levelFormat(of, k).full())
      throw FormatError("cannot assemble " + p.args[0].tensor.name() + " (" + of.str() + "): level " +
                        std::to_string(k) + " is " + levelFormat(of, k).name() +
                        ", which is inserted into at random; every other level of an output with "
                        "such a level must be dense or bitmap too");
  plan.patternSource = findPatternSource(p, plan.denseRoot);
  if (plan.patternSource >= 0) {
    plan.kind = OutputKind::PatternCopy;
    plan.coversSource = !sparseAtOutputVars(p, plan.patternSource);
    return plan;
  }

  // Levels that must be appended in order are those without random access.
  int m = of.order();
  for (int k = 0; k < m; k++) {
    if (levelFormat(of, k).supportsInsert()) continue;
    int d = p.depthOf(ovars[k]);
    if (d < firstRedDepth) {
      plan.symbolicDepth = std::max(plan.symbolicDepth, d + 1);
      continue;
    }
    // A reduction loop encloses this sparse level: only the last level can be
    // gathered in a one-dimensional workspace, and only if its parents come first.
    bool parentsFirst = true;
    for (int j = 0; j < k; j++) parentsFirst &= p.depthOf(ovars[j]) < firstRedDepth;
    const tessel::LevelFormat& lk = levelFormat(of, k);
    if (k != m - 1 || !parentsFirst || !(lk.hasPosArray() && lk.unique())) {
      throw FormatError(
          "cannot assemble " + p.args[0].tensor.name() + " (" + of.str() + "): level " +
          std::to_string(k) + " (index variable " + ovars[k].name() +
          ") is compressed but the reduction over " + p.order[firstRedDepth].name() +
          " must run outside it; only the last level can be gathered in a workspace. "
          "Make that level dense, or choose operand formats that allow " +
          ovars[k].name() + " before " + p.order[firstRedDepth].name());
    }
    plan.kind = OutputKind::Workspace;
    plan.workspaceLevel = k;
    int parentDepth = -1;
    for (int j = 0; j < k; j++) parentDepth = std::max(parentDepth, p.depthOf(ovars[j]));
    plan.workspaceDepth = parentDepth + 1;
    plan.symbolicDepth = d + 1;
    return plan;
  }
  plan.kind = OutputKind::Append;
  const tessel::LevelFormat& lastLevel = levelFormat(of, m - 1);
  const bool lastCompressed = lastLevel.hasPosArray() && lastLevel.unique();
  if (!lastLevel.supportsInsert() && !plan.scatter &&
      lastOutDepth + 1 < static_cast<int>(p.order.size())) {
    plan.deferLastAppend = true;
    plan.symbolicDepth = static_cast<int>(p.order.size());
  }
  bool upperDense = upperLevelsDense(of);
  const IndexVar& j = ovars[m - 1];
  if (upperDense && lastCompressed && !plan.scatter && !plan.deferLastAppend &&
      lastOutDepth == p.depthOf(j) && sumTerms(p.assignment.rhs).size() > 1 &&
      sparseOperandsAt(p, j) > kAutoWorkspaceTerms) {
    gatherInWorkspace(p, plan, j);
    return plan;
  }
  // (A deferred append -- reductions after the last output level -- fits too: an entry
  // is appended only if its reduction meets a stored value.)
  std::vector<std::pair<int, int>> by;
  // (Not with probed Bitmap operands or tested masks: a skipped case would leave its
  // row's count unwritten.)
  bool probes = p.anyMaskTested();
  for (const AccessInfo& in : p.inputs) probes = probes || anyFlagLevel(p.args[in.arg].format);
  if (upperDense && lastCompressed && !plan.scatter && !probes &&
      rowsInStorageOrder(p) && boundedBy(p, p.assignment.rhs, ovars[m - 1], by)) {
    plan.singlePass = true;
    plan.boundBy = by;
  }
  return plan;
}

}  // namespace tessel::lower
