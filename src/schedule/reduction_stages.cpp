// Splitting an assignment at its inner sums (see reduction_stages.h).
#include "schedule/reduction_stages.h"

#include <algorithm>
#include <set>

#include "notation/reductions.h"
#include "tessel/error.h"

namespace tessel {

namespace {

bool contains(const std::vector<IndexVar>& vs, const IndexVar& v) {
  return std::find(vs.begin(), vs.end(), v) != vs.end();
}

class Splitter {
 public:
  Splitter(const Assignment& a, const std::function<TensorVar(const PrecomputeTemporary&)>& temporary,
           const std::vector<std::string>& taken)
      : a_(a), temporary_(temporary), taken_(taken.begin(), taken.end()) {
    taken_.insert(a.lhsNode().tensor.name());
    for (const ExprNode* n : rhsAccesses(a)) taken_.insert(n->tensor.name());
    if (a.mask.defined()) taken_.insert(a.mask.access.node().tensor.name());
  }

  std::vector<Assignment> run() {
    std::vector<Assignment> out;
    place(a_.lhs, loopNestForm(a_), a_.accumulate, out);
    out.back().mask = a_.mask;  // the last stage writes the output; the temporaries are unmasked
    return out;
  }

 private:
  /// lhs (=|+=) rhs (explicit sums): the stages of rhs's inner sums, then its own.
  void place(const IndexExpr& lhs, const IndexExpr& rhs, bool accumulate, std::vector<Assignment>& out) {
    RootReduction root = rootReduction(rhs);
    IndexExpr body = hoist(root.body, out);
    for (auto v = root.vars.rbegin(); v != root.vars.rend(); ++v) body = sum(*v, body);
    out.push_back(Assignment{lhs, body, accumulate, a_.semiring, {}});
  }

  /// e with every Sum node replaced by a temporary that earlier stages fill.
  IndexExpr hoist(const IndexExpr& e, std::vector<Assignment>& out) {
    const ExprNode& n = e.node();
    switch (n.kind) {
      case ExprKind::Access:
      case ExprKind::Literal:
        return e;
      case ExprKind::Sum: {
        Access t = temporaryFor(e);
        place(t, e, false, out);
        return t;
      }
      default: {
        IndexExpr a = hoist(n.a, out);
        return withOperands(n, a, n.b.defined() ? hoist(n.b, out) : IndexExpr());
      }
    }
    throw InternalError("splitReductions: bad expression node");
  }

  Access temporaryFor(const IndexExpr& sumNode) {
    const ExprNode& out = a_.lhsNode();
    PrecomputeTemporary spec;
    spec.name = freshName(out.tensor.name() + "_sum");
    spec.type = out.tensor.datatype();
    spec.vars = unboundVars(sumNode);
    for (const IndexVar& v : spec.vars) spec.dims.push_back(extentOf(a_, v));
    spec.format = spec.vars == out.vars ? out.tensor.format() : DenseFormat(static_cast<int>(spec.vars.size()));
    return Access(temporary_(spec), spec.vars);
  }

  std::string freshName(const std::string& base) {
    std::string name = base;
    for (int k = 2; taken_.count(name); k++) name = base + std::to_string(k);
    taken_.insert(name);
    return name;
  }

  const Assignment& a_;
  const std::function<TensorVar(const PrecomputeTemporary&)>& temporary_;
  std::set<std::string> taken_;
};

/// Index variables of an assignment's loop nest: its lhs's, then its rhs's (summed ones too).
std::vector<IndexVar> loopVars(const Assignment& a) {
  std::vector<IndexVar> vs = a.lhsNode().vars;
  for (const IndexVar& v : reductionVars(a)) vs.push_back(v);
  return vs;
}

bool mentionsTensor(const Assignment& a, const std::string& name) {
  if (a.lhsNode().tensor.name() == name) return true;
  for (const ExprNode* n : rhsAccesses(a))
    if (n->tensor.name() == name) return true;
  return false;
}

}  // namespace

std::vector<Assignment> splitReductions(const Assignment& a,
                                        const std::function<TensorVar(const PrecomputeTemporary&)>& temporary,
                                        const std::vector<std::string>& taken) {
  // Every run of a kernel splits its assignment again: the common case, one term without
  // a sum node, is one loop nest as it is, without building the explicit form.
  const ExprNode& root = a.rhs.node();
  auto additive = [](ExprKind k) { return k == ExprKind::Add || k == ExprKind::Sub; };
  bool terms = additive(root.kind) || (root.kind == ExprKind::Neg && additive(root.a.node().kind));
  if (!terms && !hasSum(a.rhs)) return {a};
  checkAssignment(a);
  if (!hasSum(a.rhs) && reducesAtRoot(a)) return {a};
  return Splitter(a, temporary, taken).run();
}

size_t scheduledStage(const std::vector<Assignment>& stages, const Assignment& a, const Schedule& s) {
  std::vector<IndexVar> all = loopVars(a), named;
  std::vector<std::string> tensors;
  for (const ScheduleCommand& c : s.commands()) {
    for (const IndexVar& v : c.vars)
      if (contains(all, v) && !contains(named, v)) named.push_back(v);
    if (c.kind == ScheduleCommand::Kind::Pos) tensors.push_back(c.tensor);
  }
  for (size_t k = stages.size(); k-- > 0;) {
    std::vector<IndexVar> mine = loopVars(stages[k]);
    bool fits = std::all_of(named.begin(), named.end(), [&](const IndexVar& v) { return contains(mine, v); });
    for (const std::string& t : tensors) fits = fits && mentionsTensor(stages[k], t);
    if (fits) return k;
  }
  std::string parts;
  for (const Assignment& st : stages) parts += (parts.empty() ? "" : "; ") + st.str();
  throw ScheduleError("schedule " + s.str() + ": no single loop nest of " + a.str() +
                      " has all the index variables and tensors it names (its sums run as separate loop nests: " +
                      parts + ")");
}

}  // namespace tessel
