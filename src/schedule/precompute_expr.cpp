// precompute(e, t): find e in the right-hand side, check that computing it first keeps
// the result, and split the assignment into t(..) = e and the rest.
#include "schedule/precompute_expr.h"

#include <algorithm>
#include <memory>

#include "notation/products.h"
#include "tessel/error.h"

namespace tessel {

namespace {

/// Where e sits in the (explicit-sum) right-hand side.
struct Occurrence {
  std::vector<int> path;       ///< from the root: 0 takes operand a (a Sum's body), 1 operand b
  std::vector<size_t> picked;  ///< empty: the whole node; else its factors that make e
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
  /// `e` as written, or `alsoAs` (e with the sums the assignment gives it written out).
  Finder(const IndexExpr& e, const IndexExpr& alsoAs) : want_(e.str()), wantExplicit_(alsoAs.str()) {
    std::vector<IndexExpr> f;
    factorsOf(e, f);
    if (f.size() > 1)
      for (const IndexExpr& x : f) wantFactors_.push_back(x.str());
  }

  /// The first occurrence in pre-order, if any.
  bool find(const IndexExpr& n, bool inChain, Occurrence& out) {
    if (std::string s = n.str(); s == want_ || s == wantExplicit_) return found({}, out);
    if (n.kind() == ExprKind::Mul && !inChain && !wantFactors_.empty()) {
      std::vector<IndexExpr> have;
      factorsOf(n, have);
      std::vector<size_t> picked = pickFactors(have, wantFactors_);
      if (!picked.empty()) return found(picked, out);
    }
    const ExprNode& x = n.node();
    switch (x.kind) {
      case ExprKind::Access: case ExprKind::Literal: return false;
      case ExprKind::Neg: case ExprKind::Abs: case ExprKind::Sum: return down(x.a, 0, false, out);
      case ExprKind::Mul: return down(x.a, 0, true, out) || down(x.b, 1, true, out);
      default: return down(x.a, 0, false, out) || down(x.b, 1, false, out);
    }
    return false;
  }

 private:
  bool down(const IndexExpr& child, int side, bool inChain, Occurrence& out) {
    path_.push_back(side);
    bool ok = find(child, inChain, out);
    path_.pop_back();
    return ok;
  }
  bool found(std::vector<size_t> picked, Occurrence& out) {
    out = Occurrence{path_, std::move(picked)};
    return true;
  }

  std::string want_, wantExplicit_;
  std::vector<std::string> wantFactors_;
  std::vector<int> path_;
};

/// The node x with new operands; a Sum over a variable in `dropped` gives its body.
IndexExpr rebuild(const ExprNode& x, const IndexExpr& a, const IndexExpr& b,
                  const std::vector<IndexVar>& dropped = {}) {
  switch (x.kind) {
    case ExprKind::Sum:
      if (std::find(dropped.begin(), dropped.end(), x.vars[0]) != dropped.end()) return a;
      return sum(x.vars[0], a);
    case ExprKind::Access:
    case ExprKind::Literal: throw InternalError("precompute: rebuilding a leaf");
    default: return withOperands(x, a, b);
  }
}

/// e with the occurrence replaced by `by`, and the sums over `dropped` on its path removed.
IndexExpr replaceAt(const IndexExpr& e, const Occurrence& o, size_t depth, const IndexExpr& by,
                    const std::vector<IndexVar>& dropped = {}) {
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
  if (o.path[depth] == 0) return rebuild(x, replaceAt(x.a, o, depth + 1, by, dropped), x.b, dropped);
  return rebuild(x, x.a, replaceAt(x.b, o, depth + 1, by, dropped), dropped);
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

bool contains(const std::vector<IndexVar>& vs, const IndexVar& v) {
  return std::find(vs.begin(), vs.end(), v) != vs.end();
}

struct Located {
  IndexExpr rhs;                  ///< the right-hand side with every sum explicit
  Occurrence where;
  IndexExpr expr;                 ///< the occurrence
  std::vector<IndexVar> outside;  ///< its unbound variables the rest still uses: t's indices
  std::vector<IndexVar> moved;    ///< sums on its path over variables only it uses, outermost first
};

/// e with its index variables replaced by a's of the same name (a schedule's
/// expression is parsed apart from the assignment, with variables of its own).
IndexExpr withVarsOf(const IndexExpr& e, const Assignment& a) {
  std::vector<IndexVar> known = freeVars(a);
  for (const IndexVar& v : reductionVars(a)) known.push_back(v);
  auto map = [&](const IndexVar& v) {
    for (const IndexVar& k : known)
      if (k.name() == v.name()) return k;
    return v;
  };
  const ExprNode& n = e.node();
  switch (n.kind) {
    case ExprKind::Access: {
      std::vector<IndexVar> vs;
      for (const IndexVar& v : n.vars) vs.push_back(map(v));
      return accessLike(n, vs);
    }
    case ExprKind::Literal: return e;
    case ExprKind::Sum: return sum(map(n.vars[0]), withVarsOf(n.a, a));
    default: return rebuild(n, withVarsOf(n.a, a), n.b.defined() ? withVarsOf(n.b, a) : IndexExpr());
  }
}

[[noreturn]] void fail(const ScheduleCommand& c, const std::string& why) {
  throw ScheduleError("schedule command " + c.str() + ": " + why);
}

Located locate(const Assignment& a, const ScheduleCommand& c) {
  if (!c.expr.defined()) fail(c, "no expression to precompute");
  Located l;
  l.rhs = explicitReductions(a);
  if (!Finder(c.expr, explicitReductions(Assignment{a.lhs, withVarsOf(c.expr, a), false, a.semiring, {}})).find(l.rhs, false, l.where))
    fail(c, "'" + c.expr.str() + "' is not part of the right-hand side " + a.rhs.str() +
                " (a sub-expression as printed, or some of the factors of a product)");
  l.expr = occurrenceExpr(l.rhs, l.where);
  std::vector<IndexVar> mine = unboundVars(l.expr);
  // A sum on the path moves into t when only e uses its variable. Computing it first is
  // exact only through products, negations, numerators and other sums: in
  // sum(k, B(i,k)*c(k) + d(i)) the sum over k also adds d(i) once per k.
  IndexExpr node = l.rhs;
  std::vector<std::pair<IndexExpr, size_t>> sumsOnPath;  // (Sum node, its depth)
  for (size_t d = 0; d < l.where.path.size(); d++) {
    if (node.kind() == ExprKind::Sum) sumsOnPath.emplace_back(node, d);
    node = l.where.path[d] == 0 ? node.node().a : node.node().b;
  }
  for (const auto& [s, depth] : sumsOnPath) {
    const IndexVar& v = s.node().vars[0];
    if (!contains(mine, v)) continue;
    Occurrence below{std::vector<int>(l.where.path.begin() + static_cast<long>(depth) + 1, l.where.path.end()),
                     l.where.picked};
    if (contains(unboundVars(replaceAt(s.node().a, below, 0, IndexExpr(1.0))), v)) continue;
    IndexExpr x = s.node().a;
    for (size_t d = depth + 1; d < l.where.path.size(); d++) {
      ExprKind k = x.kind();
      int side = l.where.path[d];
      bool safe = k == ExprKind::Mul || k == ExprKind::Neg || k == ExprKind::Sum || (k == ExprKind::Div && side == 0);
      if (!safe)
        fail(c, "it sums over " + v.name() + ", and a '+', '-' or denominator lies between it and sum(" +
                    v.name() + ", ...) in " + l.rhs.str() +
                    ": computing the sum first would change what the rest is summed with");
      x = side == 0 ? x.node().a : x.node().b;
    }
    l.moved.push_back(v);
  }
  for (const IndexVar& v : mine)
    if (!contains(l.moved, v)) l.outside.push_back(v);
  return l;
}

/// precompute(e, t, B): t stored like B, a factor of the product e over exactly t's
/// variables. Exact because e (and the sums moved around it) is zero wherever B has no
/// entry, when the semiring's zero annihilates its mul.
Format patternFormat(const Assignment& a, const ScheduleCommand& c, const Located& l) {
  std::vector<IndexExpr> factors;
  factorsOf(l.expr, factors);
  for (const IndexExpr& f : factors) {
    if (f.kind() != ExprKind::Access || f.node().tensor.name() != c.storedLike) continue;
    if (f.node().vars != l.outside) {
      std::string want;
      for (const IndexVar& v : l.outside) want += (want.empty() ? "" : ",") + v.name();
      fail(c, "the temporary is indexed by (" + want + "), and " + f.str() +
                  " is not: a temporary stored like a tensor takes its pattern, so they need the same variables in the same order");
    }
    if (!a.semiring.zeroAnnihilatesMul())
      fail(c, "a temporary stored like a factor needs a semiring whose zero annihilates its mul, not " + a.semiring.name);
    return f.node().tensor.format();
  }
  fail(c, c.storedLike + " is not a factor of the product '" + l.expr.str() + "'");
}

}  // namespace

bool precomputesExpr(const ScheduleCommand& c) {
  return c.kind == ScheduleCommand::Kind::Precompute && c.expr.defined() && c.vars.empty();
}

std::pair<Assignment, Assignment> splitPrecompute(
    const Assignment& a, const ScheduleCommand& c,
    const std::function<TensorVar(const PrecomputeTemporary&)>& temporary) {
  checkAssignment(a);
  bool named = !c.tensor.empty() && c.tensor != a.lhsNode().tensor.name();
  for (const ExprNode* n : rhsAccesses(a)) named &= n->tensor.name() != c.tensor;
  if (!named) fail(c, "the temporary needs a name that no tensor of the assignment has");
  Located l = locate(a, c);
  PrecomputeTemporary spec;
  spec.name = c.tensor;
  spec.type = a.lhsNode().tensor.datatype();
  spec.vars = l.outside;
  for (const IndexVar& v : spec.vars) spec.dims.push_back(extentOf(a, v));
  spec.format = DenseFormat(static_cast<int>(spec.vars.size()));
  if (!c.storedLike.empty()) spec.format = patternFormat(a, c, l);
  Access t(temporary(spec), l.outside);
  IndexExpr produced = l.expr;
  for (auto v = l.moved.rbegin(); v != l.moved.rend(); ++v) produced = sum(*v, produced);
  return {Assignment{t, produced, false, a.semiring, {}},
          Assignment{a.lhs, replaceAt(l.rhs, l.where, 0, t, l.moved), a.accumulate, a.semiring, a.mask}};
}

}  // namespace tessel
