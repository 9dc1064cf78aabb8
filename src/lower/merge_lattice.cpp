// Merge lattice construction: intersection for the semiring's mul (*), union for its
// add (+) and for -, the numerator's support for / (see merge_lattice.h).
#include "lower/merge_lattice.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "tessel/error.h"

namespace tessel::lower {

namespace {

// Expression algebra where an undefined IndexExpr is zero.
IndexExpr mulZ(const IndexExpr& a, const IndexExpr& b) {
  if (!a.defined() || !b.defined()) return {};
  return a * b;
}
IndexExpr addZ(const IndexExpr& a, const IndexExpr& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return a + b;
}
IndexExpr subZ(const IndexExpr& a, const IndexExpr& b) {
  if (!b.defined()) return a;
  if (!a.defined()) return -b;
  return a - b;
}
IndexExpr divZ(const IndexExpr& a, const IndexExpr& b) {
  if (!a.defined()) return {};
  return a / (b.defined() ? b : IndexExpr(0.0));
}

using Points = std::vector<LatticePoint>;

/// op(a, b) where an undefined operand is absent (the semiring's zero, `fill`): the node
/// keeps it undefined, so that a later lattice (an inner loop's) still sees it absent,
/// not as a literal stored everywhere. Both absent: undefined (zero) when op(fill, fill)
/// is fill, else that value, stored everywhere.
IndexExpr applyZ(const BinaryOp& op, double fill, const IndexExpr& a, const IndexExpr& b) {
  if (!a.defined() && !b.defined()) {
    double v = op.apply(fill, fill);
    if (v == fill || (std::isnan(v) && std::isnan(fill))) return {};
    return IndexExpr(v);
  }
  if (a.defined() && b.defined()) return apply(op, a, b);
  auto n = std::make_shared<ExprNode>();
  n->kind = ExprKind::Apply;
  n->op = op;
  n->a = a;
  n->b = b;
  n->depth = 1 + (a.defined() ? a.node().depth : b.node().depth);
  return IndexExpr(std::shared_ptr<const ExprNode>(std::move(n)));
}

std::vector<int> unite(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> r;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(r));
  return r;
}

Points conj(const Points& la, const Points& lb,
            IndexExpr (*op)(const IndexExpr&, const IndexExpr&)) {
  Points r;
  for (auto& pa : la)
    for (auto& pb : lb) r.push_back({unite(pa.iterators, pb.iterators), op(pa.expr, pb.expr)});
  return r;
}

/// Keep the first point of each iterator set: a later one can never be selected, here
/// or after combining (conj and union preserve the order). Without this a sum of n dense
/// terms would carry 2^n - 1 identical points.
Points dedupe(Points pts) {
  Points r;
  std::set<std::vector<int>> seen;
  for (auto& p : pts)
    if (seen.insert(p.iterators).second) r.push_back(std::move(p));
  return r;
}

Points build(const IndexExpr& e, const std::function<int(const ExprNode*)>& iterated, const Semiring& s) {
  const ExprNode& n = e.node();
  // Inverses exist only in plus_times (checkSemiringFits refuses the others earlier).
  if (!s.isPlusTimes() && (n.kind == ExprKind::Sub || n.kind == ExprKind::Neg || n.kind == ExprKind::Div))
    throw InternalError("semiring " + s.name + " met an inverse operator in the merge lattice");
  auto build = [&](const IndexExpr& x) { return lower::build(x, iterated, s); };
  switch (n.kind) {
    case ExprKind::Sum:  // split out before lowering (splitReductions); analyze() refuses them
      throw InternalError("lowering met a sum(...) node");
    case ExprKind::Access: {
      int it = iterated(&n);
      if (it >= 0) return {{{it}, e}};
      return {{{}, e}};
    }
    case ExprKind::Literal:
      return {{{}, e}};
    case ExprKind::Neg: {
      Points r = build(n.a);
      for (auto& p : r) p.expr = p.expr.defined() ? -p.expr : p.expr;
      return r;
    }
    case ExprKind::Mul:
      return dedupe(conj(build(n.a), build(n.b), mulZ));
    case ExprKind::Abs: {  // where |zero| is not the zero (|-inf| under max_plus), stored everywhere
      Points r = build(n.a);
      for (auto& p : r) p.expr = p.expr.defined() ? absolute(p.expr) : p.expr;
      double f = s.zero();
      if (std::fabs(f) != f) r.push_back({{}, IndexExpr(std::fabs(f))});
      return dedupe(r);
    }
    case ExprKind::Apply: {
      // The algebra decides (elementwiseSupport): like `*`, like `+`, or op computed with
      // the zero for the absent operand over the union (and everywhere when op(0, 0) != 0).
      // An undefined operand here is an absent one (applyZ): it has no points.
      const double f = s.zero();
      const BinaryOp& op = n.op;
      Points la = n.a.defined() ? build(n.a) : Points{}, lb = n.b.defined() ? build(n.b) : Points{};
      const ElementwiseSupport sup = elementwiseSupport(op, f);
      Points r;
      for (auto& pa : la)
        for (auto& pb : lb) {
          IndexExpr x;
          if (sup == ElementwiseSupport::Intersection) x = pa.expr.defined() && pb.expr.defined() ? apply(op, pa.expr, pb.expr) : IndexExpr();
          else if (sup == ElementwiseSupport::Union) x = !pa.expr.defined() ? pb.expr : !pb.expr.defined() ? pa.expr : apply(op, pa.expr, pb.expr);
          else x = applyZ(op, f, pa.expr, pb.expr);
          r.push_back({unite(pa.iterators, pb.iterators), x});
        }
      if (sup == ElementwiseSupport::Intersection) return dedupe(r);
      for (auto& pa : la) r.push_back({pa.iterators, sup == ElementwiseSupport::Union ? pa.expr : applyZ(op, f, pa.expr, {})});
      for (auto& pb : lb) r.push_back({pb.iterators, sup == ElementwiseSupport::Union ? pb.expr : applyZ(op, f, {}, pb.expr)});
      if (sup == ElementwiseSupport::Fill) {
        IndexExpr both = applyZ(op, f, {}, {});
        if (both.defined()) r.push_back({{}, both});
      }
      return dedupe(r);
    }
    case ExprKind::Div: {
      Points la = build(n.a), lb = build(n.b);
      Points r = conj(la, lb, divZ);
      for (auto& p : la) r.push_back({p.iterators, divZ(p.expr, {})});
      return dedupe(r);
    }
    case ExprKind::Add:
    case ExprKind::Sub: {
      bool add = n.kind == ExprKind::Add;
      Points la = build(n.a), lb = build(n.b);
      Points r = conj(la, lb, add ? addZ : subZ);
      for (auto& p : la) r.push_back(p);
      for (auto& p : lb) r.push_back({p.iterators, add ? p.expr : subZ({}, p.expr)});
      return dedupe(r);
    }
  }
  throw InternalError("unknown expression kind in lattice");
}

}  // namespace

bool MergeLattice::needsDenseLoop() const {
  return std::any_of(points.begin(), points.end(),
                     [](const LatticePoint& p) { return p.iterators.empty(); });
}

std::vector<LatticePoint> MergeLattice::subLattice(const LatticePoint& p) const {
  std::vector<LatticePoint> r;
  for (auto& q : points)
    if (std::includes(p.iterators.begin(), p.iterators.end(), q.iterators.begin(),
                      q.iterators.end()))
      r.push_back(q);
  return r;
}

std::string MergeLattice::str() const {
  std::string s;
  for (auto& p : points) {
    s += "[";
    for (size_t i = 0; i < p.iterators.size(); i++) {
      if (i) s += ",";
      s += std::to_string(p.iterators[i]);
    }
    s += "] ";
    s += p.expr.str();
    s += "\n";
  }
  return s;
}

MergeLattice buildLattice(const IndexExpr& e, const std::function<int(const ExprNode*)>& iterated,
                          const Semiring& semiring) {
  // A union of n sparse operands has 2^n - 1 points: refuse before it gets exponential.
  int sparse = 0;
  std::function<void(const IndexExpr&)> count = [&](const IndexExpr& x) {
    const ExprNode& n = x.node();
    if (n.kind == ExprKind::Access) sparse += iterated(&n) >= 0;
    if (n.a.defined()) count(n.a);
    if (n.b.defined()) count(n.b);
  };
  count(e);
  if (sparse > kMaxCoiterated)
    throw NotationError(std::string("expression too complex: ") + std::to_string(sparse) +
                        " sparse operands are co-iterated at one index variable (at most " +
                        std::to_string(kMaxCoiterated) + "); split it into several assignments");
  Points pts = build(e, iterated, semiring);
  // Zero points compute nothing; a later point with an iterator set already seen can
  // never be selected (the earlier one matches first).
  MergeLattice l;
  std::set<std::vector<int>> seen;
  for (auto& p : pts) {
    if (!p.expr.defined() || seen.count(p.iterators)) continue;
    seen.insert(p.iterators);
    l.points.push_back(p);
  }
  std::stable_sort(l.points.begin(), l.points.end(), [](const LatticePoint& a, const LatticePoint& b) {
    return a.iterators.size() > b.iterators.size();
  });
  return l;
}

}  // namespace tessel::lower
