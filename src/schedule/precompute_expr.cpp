// precompute(e, t): find e in the right-hand side, check that computing it first keeps
// the result, and split the assignment into t(..) = e and the rest.
#include "schedule/precompute_expr.h"

#include <algorithm>
#include <memory>

#include "tessel/error.h"
#include "tessel/tensor.h"

namespace tessel {

namespace {

/// Factors of a chain of products, left to right; {e} when e is not a product.
void factorsOf(const IndexExpr& e, std::vector<IndexExpr>& out) {
  if (e.kind() == ExprKind::Mul) {
    factorsOf(e.node().a, out);
    factorsOf(e.node().b, out);
  } else {
    out.push_back(e);
  }
}

IndexExpr productOf(const std::vector<IndexExpr>& factors) {
  IndexExpr p = factors.front();
  for (size_t f = 1; f < factors.size(); f++) p = p * factors[f];
  return p;
}

/// Where e sits in the right-hand side.
struct Occurrence {
  std::vector<int> path;       ///< from the root: 0 takes operand a, 1 operand b
  std::vector<size_t> picked;  ///< empty: the whole node; else its factors that make e
  bool sumSafe = true;         ///< only *, unary - and numerators between root and node
};

/// Indices of `want` (printed factors) among `have`, each used once; empty if absent.
std::vector<size_t> pickFactors(const std::vector<IndexExpr>& have, const std::vector<std::string>& want) {
  std::vector<size_t> picked;
  std::vector<bool> used(have.size(), false);
  for (const std::string& w : want) {
    size_t f = 0;
    while (f < have.size() && (used[f] || have[f].str() != w)) f++;
    if (f == have.size()) return {};
    used[f] = true;
    picked.push_back(f);
  }
  std::sort(picked.begin(), picked.end());
  return picked;
}

class Finder {
 public:
  explicit Finder(const IndexExpr& e) : want_(e.str()) {
    std::vector<IndexExpr> f;
    factorsOf(e, f);
    if (f.size() > 1)
      for (const IndexExpr& x : f) wantFactors_.push_back(x.str());
  }

  /// The first occurrence in pre-order, if any.
  bool find(const IndexExpr& n, bool safe, bool inChain, Occurrence& out) {
    if (n.str() == want_) return found(safe, {}, out);
    if (n.kind() == ExprKind::Mul && !inChain && !wantFactors_.empty()) {
      std::vector<IndexExpr> have;
      factorsOf(n, have);
      std::vector<size_t> picked = pickFactors(have, wantFactors_);
      if (!picked.empty()) return found(safe, picked, out);
    }
    const ExprNode& x = n.node();
    switch (x.kind) {
      case ExprKind::Access: case ExprKind::Literal: return false;
      case ExprKind::Neg: return down(x.a, 0, safe, false, out);
      case ExprKind::Mul: return down(x.a, 0, safe, true, out) || down(x.b, 1, safe, true, out);
      case ExprKind::Div: return down(x.a, 0, safe, false, out) || down(x.b, 1, false, false, out);
      case ExprKind::Add: case ExprKind::Sub: return down(x.a, 0, false, false, out) || down(x.b, 1, false, false, out);
    }
    return false;
  }

 private:
  bool down(const IndexExpr& child, int side, bool safe, bool inChain, Occurrence& out) {
    path_.push_back(side);
    bool ok = find(child, safe, inChain, out);
    path_.pop_back();
    return ok;
  }
  bool found(bool safe, std::vector<size_t> picked, Occurrence& out) {
    out = Occurrence{path_, std::move(picked), safe};
    return true;
  }

  std::string want_;
  std::vector<std::string> wantFactors_;
  std::vector<int> path_;
};

IndexExpr rebuild(const ExprNode& x, const IndexExpr& a, const IndexExpr& b) {
  switch (x.kind) {
    case ExprKind::Neg: return -a;
    case ExprKind::Add: return a + b;
    case ExprKind::Sub: return a - b;
    case ExprKind::Mul: return a * b;
    case ExprKind::Div: return a / b;
    default: throw InternalError("precompute: rebuilding a leaf");
  }
}

/// e with the occurrence replaced by `by`.
IndexExpr replaceAt(const IndexExpr& e, const Occurrence& o, size_t depth, const IndexExpr& by) {
  if (depth == o.path.size()) {
    if (o.picked.empty()) return by;
    std::vector<IndexExpr> have, kept;
    factorsOf(e, have);
    for (size_t f = 0; f < have.size(); f++) {
      bool picked = std::find(o.picked.begin(), o.picked.end(), f) != o.picked.end();
      if (f == o.picked.front()) kept.push_back(by);
      else if (!picked) kept.push_back(have[f]);
    }
    return productOf(kept);
  }
  const ExprNode& x = e.node();
  if (o.path[depth] == 0) return rebuild(x, replaceAt(x.a, o, depth + 1, by), x.b);
  return rebuild(x, x.a, replaceAt(x.b, o, depth + 1, by));
}

/// The occurrence itself: the node, or the product of its picked factors.
IndexExpr occurrenceExpr(const IndexExpr& rhs, const Occurrence& o) {
  IndexExpr n = rhs;
  for (int side : o.path) n = side == 0 ? n.node().a : n.node().b;
  if (o.picked.empty()) return n;
  std::vector<IndexExpr> have, picked;
  factorsOf(n, have);
  for (size_t f : o.picked) picked.push_back(have[f]);
  return productOf(picked);
}

void varsOf(const IndexExpr& e, std::vector<IndexVar>& out) {
  const ExprNode& x = e.node();
  if (x.kind == ExprKind::Access) {
    for (const IndexVar& v : x.vars)
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    return;
  }
  if (x.a.defined()) varsOf(x.a, out);
  if (x.b.defined()) varsOf(x.b, out);
}

bool contains(const std::vector<IndexVar>& vs, const IndexVar& v) {
  return std::find(vs.begin(), vs.end(), v) != vs.end();
}

struct Located {
  Occurrence where;
  IndexExpr expr;                 ///< the occurrence
  std::vector<IndexVar> outside;  ///< of the occurrence's variables, those used elsewhere
  std::vector<IndexVar> inside;   ///< summed only inside it
};

[[noreturn]] void fail(const ScheduleCommand& c, const std::string& why) {
  throw ScheduleError("schedule command " + c.str() + ": " + why);
}

Located locate(const Assignment& a, const ScheduleCommand& c) {
  if (!c.expr.defined()) fail(c, "no expression to precompute");
  Located l;
  if (!Finder(c.expr).find(a.rhs, true, false, l.where))
    fail(c, "'" + c.expr.str() + "' is not part of the right-hand side " + a.rhs.str() +
                " (a sub-expression as printed, or some of the factors of a product)");
  l.expr = occurrenceExpr(a.rhs, l.where);
  std::vector<IndexVar> mine, rest = a.lhsNode().vars;
  varsOf(l.expr, mine);
  varsOf(replaceAt(a.rhs, l.where, 0, IndexExpr(1.0)), rest);
  for (const IndexVar& v : mine) (contains(rest, v) ? l.outside : l.inside).push_back(v);
  return l;
}

}  // namespace

bool precomputesExpr(const ScheduleCommand& c) {
  return c.kind == ScheduleCommand::Kind::Precompute && c.expr.defined();
}

std::pair<Assignment, Assignment> splitPrecompute(
    const Assignment& a, const ScheduleCommand& c,
    const std::function<TensorBase(const PrecomputeTemporary&)>& temporary) {
  checkAssignment(a);
  bool named = !c.tensor.empty() && c.tensor != a.lhsNode().tensor->name;
  for (const ExprNode* n : rhsAccesses(a)) named &= n->tensor->name != c.tensor;
  if (!named) fail(c, "the temporary needs a name that no tensor of the assignment has");
  Located l = locate(a, c);
  if (!l.inside.empty() && !l.where.sumSafe)
    fail(c, "it sums over " + l.inside.front().name() +
                ", and a '+', '-' or denominator lies between it and the root of " + a.rhs.str() +
                ": computing the sum first would change what the rest is summed with");
  PrecomputeTemporary spec;
  spec.name = c.tensor;
  spec.type = a.lhsNode().tensor->type;
  spec.vars = l.outside;
  for (const IndexVar& v : spec.vars) spec.dims.push_back(extentOf(a, v));
  Access t(temporary(spec), l.outside);
  return {Assignment{t, l.expr, false}, Assignment{a.lhs, replaceAt(a.rhs, l.where, 0, t), a.accumulate}};
}

}  // namespace tessel
