// Argument slots and access tables for an assignment.
#include "lower/problem.h"

#include "lower/output_plan.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "format/level_format.h"
#include "notation/reductions.h"
#include "tessel/error.h"

namespace tessel::lower {

const AccessInfo& Problem::accessOf(const ExprNode* n) const {
  if (n == output.node) return output;
  return inputs.at(accessIndex(n));
}

int Problem::accessIndex(const ExprNode* n) const {
  for (size_t i = 0; i < inputs.size(); i++)
    if (inputs[i].node == n) return static_cast<int>(i);
  throw InternalError("access not in problem");
}

int Problem::depthOf(const IndexVar& v) const {
  for (size_t d = 0; d < order.size(); d++)
    if (order[d] == v) return static_cast<int>(d);
  throw InternalError("variable " + v.name() + " not in loop order");
}

bool Problem::isOutputVar(const IndexVar& v) const {
  const auto& vs = output.node->vars;
  return std::find(vs.begin(), vs.end(), v) != vs.end();
}

namespace {

std::string cIdentifier(const std::string& name, std::set<std::string>& used) {
  std::string s;
  for (char c : name) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "t_" + s;
  std::string base = s;
  for (int n = 2; used.count(s); n++) s = base + "_" + std::to_string(n);
  used.insert(s);
  return s;
}

std::vector<IndexVar> levelVarsOf(const ExprNode& n, const Format& f) {
  std::vector<IndexVar> vs;
  for (int k = 0; k < f.order(); k++) vs.push_back(n.vars[f.modeOfLevel(k)]);
  return vs;
}

void collectAccesses(const IndexExpr& e, std::vector<const ExprNode*>& out) {
  const ExprNode& n = e.node();
  if (n.kind == ExprKind::Access) {
    out.push_back(&n);
    return;
  }
  if (n.a.defined()) collectAccesses(n.a, out);
  if (n.b.defined()) collectAccesses(n.b, out);
}

}  // namespace

bool Problem::maskByRow(int a) const {
  const MaskRead& m = inputs.at(a).node->mask;
  if (!m.isMask || !(m.complement || maskForm == MaskForm::Push)) return false;
  const Format& f = args[inputs[a].arg].format;
  int last = f.order() - 1;
  for (int k = 0; k < last; k++)
    if (!levelFormat(f, k).locatable() || levelFormat(f, k).hasFlagArray()) return false;
  const tessel::LevelFormat& lf = levelFormat(f, last);
  return !lf.locatable() && lf.hasPosArray() && lf.hasCrdArray() && lf.unique();
}

bool Problem::maskTested(int a) const {
  const MaskRead& m = inputs.at(a).node->mask;
  return m.isMask && (m.valued || m.complement || maskByRow(a));
}

bool Problem::anyMaskTested() const {
  for (size_t a = 0; a < inputs.size(); a++)
    if (maskTested(static_cast<int>(a))) return true;
  return false;
}

Problem analyze(const Assignment& given) {
  checkAssignment(given);
  // One loop nest sums over all its reduction variables around the whole right-hand
  // side; other assignments are split into such ones first (splitReductions). Below,
  // the rhs is that sum's body: every variable not on the lhs is summed around it.
  RootReduction root = rootReduction(loopNestForm(given));
  if (hasSum(root.body))
    throw NotationError(given.str() + ": its sums do not all wrap the whole right-hand side, so it is not one "
                        "loop nest; Kernel::compile computes the inner sums first (splitReductions)");
  Problem p;
  p.stated = given;
  p.assignment = given;
  if (hasSum(given.rhs)) p.assignment.rhs = root.body;
  const ExprNode& lhs = given.lhs.node();
  std::set<std::string> used = {"tensors"};

  TensorArg out;
  out.tensor = lhs.tensor;
  out.format = lhs.tensor.format();
  out.isOutput = true;
  out.cname = cIdentifier(lhs.tensor.name(), used);
  p.args.push_back(out);

  if (given.accumulate && !accumulatesInPlace(given)) {
    // A dense A adds into its values in place (OutputPlan::inPlace). Otherwise
    // A(..) += e  ==>  A(..) = A_old(..) + e, with A_old a snapshot taken at run time.
    // That is only right when e sums over nothing: with a reduction variable, A_old
    // would be added once per reduction iteration. Kernel runs such an assignment in
    // two stages (accumulatesSum), so only a direct lower() call gets here.
    std::vector<IndexVar> summed = reductionVars(given);
    if (!summed.empty())
      throw NotationError(given.str() + ": += with a sum over " + summed[0].name() +
                          " is not one loop nest; compute the sum into a temporary first (T = ...; then " +
                          lhs.tensor.name() + " += T), as Kernel::compile does");
    // A variable of the analysis; a run gives it the output's old arrays.
    TensorVar old(lhs.tensor.name() + "_old", lhs.tensor.datatype(), lhs.tensor.dims(), lhs.tensor.format());
    Access oldAccess(old, lhs.vars);
    // Masked: A_old + M*e keeps A_old where the mask is false; replace clears it.
    if (given.mask.defined())
      p.assignment.rhs = given.mask.replace ? maskFactor(given) * (oldAccess + p.assignment.rhs)
                                            : oldAccess + maskFactor(given) * p.assignment.rhs;
    else
      p.assignment.rhs = oldAccess + p.assignment.rhs;
    p.assignment.accumulate = false;
    TensorArg snap;
    snap.tensor = old;
    snap.format = old.format();
    snap.snapshotOfOutput = true;
    snap.cname = cIdentifier(old.name(), used);
    p.args.push_back(snap);
  } else if (given.mask.defined()) {
    p.assignment.rhs = maskFactor(given) * p.assignment.rhs;  // `=`, or `+=` in place
  }
  if (given.mask.defined()) {
    p.maskForm = given.mask.complement ? MaskForm::Auto : given.mask.form;
    p.assignment.mask = OutputMask{};  // now a factor of the rhs
  }

  std::vector<const ExprNode*> accesses;
  collectAccesses(p.assignment.rhs, accesses);
  for (const ExprNode* n : accesses) {
    int slot = -1;
    for (size_t s = 1; s < p.args.size(); s++)
      if (p.args[s].tensor == n->tensor) slot = static_cast<int>(s);
    if (slot < 0) {
      TensorArg a;
      a.tensor = n->tensor;
      a.format = n->tensor.format();
      a.cname = cIdentifier(n->tensor.name(), used);
      p.args.push_back(a);
      slot = static_cast<int>(p.args.size()) - 1;
    }
    p.inputs.push_back(AccessInfo{n, slot, {}});
  }
  p.output = AccessInfo{&p.assignment.lhs.node(), 0, levelVarsOf(lhs, out.format)};
  Problem before = p;
  p.order = chooseLoopOrder(p);
  for (auto& in : p.inputs) in.levelVars = levelVarsOf(*in.node, p.args[in.arg].format);
  try {
    planOutput(p);
    return p;
  } catch (const FormatError& original) {
    // The sparse output cannot be assembled in this order; put its variables before
    // the reductions, transposing inputs as needed. If that fails too, report the
    // original problem.
    try {
      Problem q = before;
      q.order = chooseLoopOrder(q, true, true);
      for (auto& in : q.inputs) in.levelVars = levelVarsOf(*in.node, q.args[in.arg].format);
      planOutput(q);
      return q;
    } catch (const FormatError&) {
      throw original;
    }
  }
}

}  // namespace tessel::lower
