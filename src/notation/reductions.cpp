// Reduction semantics: where each sum of an assignment sits. The einsum convention
// places an implicit sum around each top-level term of the right-hand side; `sum(j, e)`
// places one explicitly. See explicitReductions in tessel/notation.h.
#include "notation/reductions.h"

#include <algorithm>
#include <set>

#include "tessel/error.h"

namespace tessel {

namespace {

bool contains(const std::vector<IndexVar>& vs, const IndexVar& v) {
  return std::find(vs.begin(), vs.end(), v) != vs.end();
}

/// Variables of e's accesses not bound inside e, appended in order of first appearance.
/// Iterative (an explicit stack), since expressions can be long flat sums.
void collectUnbound(const IndexExpr& root, std::vector<IndexVar>& out) {
  struct Item {
    const ExprNode* node;
    std::vector<IndexVar> bound;
  };
  std::vector<Item> stack{{root.get(), {}}};
  while (!stack.empty()) {
    Item it = std::move(stack.back());
    stack.pop_back();
    const ExprNode& n = *it.node;
    switch (n.kind) {
      case ExprKind::Access:
        for (const IndexVar& v : n.vars)
          if (!contains(it.bound, v) && !contains(out, v)) out.push_back(v);
        break;
      case ExprKind::Literal:
        break;
      case ExprKind::Sum: {
        std::vector<IndexVar> b = it.bound;
        b.push_back(n.vars[0]);
        stack.push_back({n.a.get(), std::move(b)});
        break;
      }
      case ExprKind::Neg:
      case ExprKind::Abs:
        stack.push_back({n.a.get(), std::move(it.bound)});
        break;
      default:  // binary: push b first so a is visited first
        stack.push_back({n.b.get(), it.bound});
        stack.push_back({n.a.get(), std::move(it.bound)});
        break;
    }
  }
}

bool isAdditive(ExprKind k) { return k == ExprKind::Add || k == ExprKind::Sub; }

/// Rewrites each top-level term of e (through `+`, `-`, and negations of sums of
/// terms) with `f`, keeping the additive structure around the terms.
template <typename F>
IndexExpr mapTerms(const IndexExpr& e, const F& f) {
  const ExprNode& n = e.node();
  if (isAdditive(n.kind)) {
    IndexExpr a = mapTerms(n.a, f), b = mapTerms(n.b, f);
    return n.kind == ExprKind::Add ? a + b : a - b;
  }
  if (n.kind == ExprKind::Neg && isAdditive(n.a.node().kind)) return -mapTerms(n.a, f);
  return f(e);
}

/// Calls f on each top-level term, left to right.
template <typename F>
void forEachTerm(const IndexExpr& e, const F& f) {
  std::vector<const IndexExpr*> stack{&e};
  while (!stack.empty()) {
    const IndexExpr* x = stack.back();
    stack.pop_back();
    const ExprNode& n = x->node();
    if (isAdditive(n.kind)) {
      stack.push_back(&n.b);
      stack.push_back(&n.a);
    } else if (n.kind == ExprKind::Neg && isAdditive(n.a.node().kind)) {
      stack.push_back(&n.a);
    } else {
      f(*x);
    }
  }
}

std::string sumText(const ExprNode& s) { return "sum(" + s.vars[0].name() + ", ...)"; }

/// Every Sum in a term: its variable appears in its expression, is not an output
/// variable, is not summed again inside, and is not used outside it within the term.
void checkTerm(const IndexExpr& term, const std::vector<IndexVar>& lhsVars) {
  std::set<IndexVar> summedHere;
  struct Item {
    const ExprNode* node;
    std::vector<IndexVar> bound;
  };
  std::vector<Item> stack{{term.get(), {}}};
  std::vector<const ExprNode*> sums;
  while (!stack.empty()) {  // pass 1: the sums, and their own checks
    Item it = std::move(stack.back());
    stack.pop_back();
    const ExprNode& n = *it.node;
    if (n.kind == ExprKind::Sum) {
      const IndexVar& v = n.vars[0];
      if (contains(lhsVars, v))
        throw NotationError(sumText(n) + ": " + v.name() +
                            " is an index variable of the left-hand side, so it cannot be summed");
      if (contains(it.bound, v))
        throw NotationError(sumText(n) + ": " + v.name() + " is already summed by an enclosing sum");
      std::vector<IndexVar> inner;
      collectUnbound(n.a, inner);
      if (!contains(inner, v))
        throw NotationError(sumText(n) + ": " + v.name() + " does not appear in its expression " + n.a.str());
      summedHere.insert(v);
      std::vector<IndexVar> b = it.bound;
      b.push_back(v);
      stack.push_back({n.a.get(), std::move(b)});
    } else if (n.kind != ExprKind::Access && n.kind != ExprKind::Literal) {
      if (n.b.defined()) stack.push_back({n.b.get(), it.bound});
      stack.push_back({n.a.get(), std::move(it.bound)});
    }
  }
  if (summedHere.empty()) return;
  std::vector<IndexVar> loose;  // pass 2: summed variables used outside their sums
  collectUnbound(term, loose);
  for (const IndexVar& v : loose)
    if (summedHere.count(v))
      throw NotationError("index variable " + v.name() + " is summed by sum(" + v.name() +
                          ", ...) and also used outside that sum in " + term.str() +
                          "; give the two uses different names");
}

}  // namespace

std::vector<IndexVar> unboundVars(const IndexExpr& e) {
  std::vector<IndexVar> out;
  collectUnbound(e, out);
  return out;
}

bool hasSum(const IndexExpr& e) {
  std::vector<const ExprNode*> stack{e.get()};
  while (!stack.empty()) {
    const ExprNode* n = stack.back();
    stack.pop_back();
    if (n->kind == ExprKind::Sum) return true;
    if (n->a.defined()) stack.push_back(n->a.get());
    if (n->b.defined()) stack.push_back(n->b.get());
  }
  return false;
}

void checkSums(const Assignment& a) {
  if (!hasSum(a.rhs)) return;
  const std::vector<IndexVar>& lhsVars = a.lhsNode().vars;
  forEachTerm(a.rhs, [&](const IndexExpr& t) { checkTerm(t, lhsVars); });
}

IndexExpr explicitReductions(const Assignment& a) {
  const std::vector<IndexVar>& lhsVars = a.lhsNode().vars;
  return mapTerms(a.rhs, [&](const IndexExpr& term) {
    std::vector<IndexVar> summed;
    for (const IndexVar& v : unboundVars(term))
      if (!contains(lhsVars, v)) summed.push_back(v);
    IndexExpr e = term;
    for (auto v = summed.rbegin(); v != summed.rend(); ++v) e = sum(*v, e);
    return e;
  });
}

RootReduction rootReduction(const IndexExpr& e) {
  RootReduction r;
  r.body = e;
  while (r.body.node().kind == ExprKind::Sum) {
    r.vars.push_back(r.body.node().vars[0]);
    r.body = r.body.node().a;
  }
  return r;
}

IndexExpr loopNestForm(const Assignment& a) {
  IndexExpr e = explicitReductions(a);
  // sum(j, X) + sum(j, Y) = sum(j, X + Y): when every term sums over the same variables,
  // one loop nest computes them all.
  std::vector<std::vector<IndexVar>> sets;
  forEachTerm(e, [&](const IndexExpr& t) {
    std::vector<IndexVar> vs = rootReduction(t).vars;
    std::sort(vs.begin(), vs.end());
    sets.push_back(std::move(vs));
  });
  if (sets.size() < 2 || sets[0].empty() ||
      !std::all_of(sets.begin(), sets.end(), [&](const auto& s) { return s == sets[0]; }))
    return e;
  std::vector<IndexVar> order;
  forEachTerm(e, [&](const IndexExpr& t) {
    if (order.empty()) order = rootReduction(t).vars;
  });
  IndexExpr merged = mapTerms(e, [](const IndexExpr& t) { return rootReduction(t).body; });
  for (auto v = order.rbegin(); v != order.rend(); ++v) merged = sum(*v, merged);
  return merged;
}

bool reducesAtRoot(const Assignment& a) { return !hasSum(rootReduction(loopNestForm(a)).body); }

}  // namespace tessel
