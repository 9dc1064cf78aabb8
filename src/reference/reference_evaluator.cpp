// The reference evaluator: interprets an assignment over coordinate maps, following
// the semantics written in tessel/reference.h as literally as possible.
//
// Every sub-expression evaluates to a Relation: a list of index variables and a map
// from coordinate tuples (one coordinate per variable) to values. The tuples in the
// map are exactly the expression's support.
#include "tessel/reference.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>

#include "tessel/error.h"
#include "tessel/tensor.h"

namespace tessel {

namespace {

using Coords = std::vector<int64_t>;

// Arithmetic in the output's element type: double, or int64 with C semantics
// (wrapping instead of overflow, truncating division, division by zero gives 0).
struct FloatOps {
  using T = double;
  static T fromDouble(double v) { return v; }
  static double toDouble(T v) { return v; }
  static T add(T a, T b) { return a + b; }
  static T sub(T a, T b) { return a - b; }
  static T mul(T a, T b) { return a * b; }
  static T div(T a, T b) { return a / b; }
  static T neg(T a) { return -a; }
};

struct IntOps {
  using T = int64_t;
  static T fromDouble(double v) {
    // C conversion truncates toward zero; keep out-of-range values defined.
    if (!(v == v)) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return static_cast<T>(v);
  }
  static double toDouble(T v) { return static_cast<double>(v); }
  static T add(T a, T b) { return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
  static T sub(T a, T b) { return static_cast<T>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
  static T mul(T a, T b) { return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }
  static T div(T a, T b) {
    if (b == 0) return 0;
    if (a == INT64_MIN && b == -1) return INT64_MIN;
    return a / b;
  }
  static T neg(T a) { return sub(0, a); }
};

template <typename Ops>
class Evaluator {
  using T = typename Ops::T;

  struct Relation {
    std::vector<IndexVar> vars;
    std::map<Coords, T> rows;
  };

  // The semiring's operators, written out here (not taken from the compiler): add
  // folds sums, unions and reductions; mul combines the operands of a product.
  T plus(T a, T b) const { return applyOp(a_.semiring.add, a, b); }
  T times(T a, T b) const { return applyOp(a_.semiring.mul, a, b); }
  static T apply(BinaryOpKind k, T a, T b) {
    switch (k) {
      case BinaryOpKind::Add: return Ops::add(a, b);
      case BinaryOpKind::Mul: return Ops::mul(a, b);
      case BinaryOpKind::Min: return b < a ? b : a;
      case BinaryOpKind::Max: return b > a ? b : a;
      case BinaryOpKind::Or: return (a != T(0) || b != T(0)) ? T(1) : T(0);
      case BinaryOpKind::And: return (a != T(0) && b != T(0)) ? T(1) : T(0);
      case BinaryOpKind::Pair: return T(1);
      case BinaryOpKind::First: return a;
      case BinaryOpKind::Second: return b;
      case BinaryOpKind::Any: return b != T(0) ? b : a;
      case BinaryOpKind::Lt: return a < b ? T(1) : T(0);
      case BinaryOpKind::Le: return a <= b ? T(1) : T(0);
      case BinaryOpKind::Gt: return a > b ? T(1) : T(0);
      case BinaryOpKind::Ge: return a >= b ? T(1) : T(0);
      case BinaryOpKind::Eq: return a == b ? T(1) : T(0);
      case BinaryOpKind::Ne: return a != b ? T(1) : T(0);
      case BinaryOpKind::Custom: break;  // needs the operator's function: see applyOp
    }
    throw InternalError("reference: bad semiring operator");
  }

  // rows[key] = plus(rows[key], v) (inserting v if absent). Keys usually arrive in
  // sorted order, so the last row is tried first.
  void addTo(std::map<Coords, T>& rows, const Coords& key, T v) {
    if (!rows.empty()) {
      auto last = std::prev(rows.end());
      if (last->first == key) {
        last->second = plus(last->second, v);
        return;
      }
      if (last->first < key) {
        rows.emplace_hint(rows.end(), key, v);
        return;
      }
    }
    auto [it, inserted] = rows.emplace(key, v);
    if (!inserted) it->second = plus(it->second, v);
  }

  // rows[key] = v for a key known to be absent.
  static void putNew(std::map<Coords, T>& rows, Coords key, T v) {
    if (rows.empty() || std::prev(rows.end())->first < key)
      rows.emplace_hint(rows.end(), std::move(key), v);
    else
      rows.emplace(std::move(key), v);
  }

 public:
  explicit Evaluator(const Assignment& a) : a_(a) {}

  CooData run() {
    const ExprNode& lhs = a_.lhsNode();
    const std::vector<IndexVar>& outVars = lhs.vars;

    // Each top-level term sums over its own variables not on the left-hand side (the
    // einsum convention); lhs variables absent from a term broadcast.
    Relation r = reorder(extend(evalTerms(a_.rhs), outVars), outVars);
    std::map<Coords, T> out = std::move(r.rows);

    // An output mask (OutputMask) selects from the unmasked result: the expression's
    // entries where the mask is true; the old values of `+=` where it is true, and
    // where it is false too unless the mask replaces.
    std::map<Coords, T> mask;
    auto allowed = [&](const Coords& c) {
      auto it = mask.find(c);
      bool on = it != mask.end() && (!a_.mask.valued || it->second != T(0));
      return on != a_.mask.complement;
    };
    if (a_.mask.defined()) {
      mask = accessRelation(a_.mask.access.node()).rows;  // keyed like the output (same variables)
      for (auto it = out.begin(); it != out.end();) it = allowed(it->first) ? std::next(it) : out.erase(it);
    }

    // `+=` adds the output's current values: old + new, in that order (any's result is
    // its right operand, the new value, as the kernels compute A = A + e).
    if (a_.accumulate) {
      Relation cur = accessRelation(lhs);
      for (const auto& [c, v] : cur.rows) {
        if (a_.mask.defined() && a_.mask.replace && !allowed(c)) continue;
        auto it = out.find(c);
        if (it == out.end())
          out.emplace(c, v);
        else
          it->second = plus(v, it->second);
      }
    }

    CooData result;
    result.dims = lhs.tensor.dims();
    // A scalar always has a value: the semiring's zero when no term met an entry.
    if (outVars.empty() && out.empty()) out.emplace(Coords{}, Ops::fromDouble(a_.semiring.zero()));
    const bool isBool = lhs.tensor.datatype() == Datatype::Bool;
    for (const auto& [c, v] : out) {
      double d = Ops::toDouble(v);
      if (isBool) d = (v != T(0)) ? 1.0 : 0.0;
      result.add(c, d);
    }
    return result;
  }

 private:
  // Column of each of `want` in `have` (every one must be present).
  static std::vector<size_t> positions(const std::vector<IndexVar>& have,
                                       const std::vector<IndexVar>& want) {
    std::vector<size_t> out;
    for (const IndexVar& v : want) {
      auto it = std::find(have.begin(), have.end(), v);
      TESSEL_CHECK(it != have.end(), "reference: variable " + v.name() + " missing");
      out.push_back(static_cast<size_t>(it - have.begin()));
    }
    return out;
  }

  static bool has(const std::vector<IndexVar>& vs, const IndexVar& v) {
    return std::find(vs.begin(), vs.end(), v) != vs.end();
  }

  static bool additive(const ExprNode& n) { return n.kind == ExprKind::Add || n.kind == ExprKind::Sub; }

  // The right-hand side as a sum of terms, each summed over its variables that are not
  // on the left-hand side.
  Relation evalTerms(const IndexExpr& e) {
    const ExprNode& n = e.node();
    if (additive(n)) return addOrSub(evalTerms(n.a), evalTerms(n.b), n.kind == ExprKind::Sub);
    if (n.kind == ExprKind::Neg && additive(n.a.node())) {
      Relation r = evalTerms(n.a);
      for (auto& [c, v] : r.rows) v = Ops::neg(v);
      return r;
    }
    Relation r = eval(e);
    std::vector<IndexVar> keep;
    for (const IndexVar& v : r.vars)
      if (has(a_.lhsNode().vars, v)) keep.push_back(v);
    return project(std::move(r), keep);
  }

  // Sums `r` over every variable not in `keep` (a subset of r.vars, in any order: the
  // result's columns).
  Relation project(Relation r, const std::vector<IndexVar>& keep) {
    if (keep == r.vars) return r;
    std::vector<size_t> where = positions(r.vars, keep);
    Relation out;
    out.vars = keep;
    Coords key(keep.size());
    for (const auto& [c, v] : r.rows) {
      for (size_t k = 0; k < where.size(); k++) key[k] = c[where[k]];
      addTo(out.rows, key, v);
    }
    return out;
  }

  Relation eval(const IndexExpr& e) {
    const ExprNode& n = e.node();
    switch (n.kind) {
      case ExprKind::Sum: {  // sum(v, e): e over all of v's values, v summed out
        Relation r = extend(eval(n.a), {n.vars[0]});
        std::vector<IndexVar> keep;
        for (const IndexVar& v : r.vars)
          if (v != n.vars[0]) keep.push_back(v);
        return project(std::move(r), keep);
      }
      case ExprKind::Access:
        return accessRelation(n);
      case ExprKind::Literal: {
        Relation r;
        r.rows.emplace(Coords{}, Ops::fromDouble(n.value));
        return r;
      }
      case ExprKind::Neg: {
        Relation r = eval(n.a);
        for (auto& [c, v] : r.rows) v = Ops::neg(v);
        return r;
      }
      case ExprKind::Mul:
        return multiply(eval(n.a), eval(n.b));
      case ExprKind::Add:
      case ExprKind::Sub:
        return addOrSub(eval(n.a), eval(n.b), n.kind == ExprKind::Sub);
      case ExprKind::Div:
        return divide(eval(n.a), eval(n.b));
      case ExprKind::Apply:
        return elementwise(eval(n.a), eval(n.b), n.op);
      case ExprKind::Abs: {
        Relation r = eval(n.a);
        for (auto& [c, v] : r.rows) v = v < T(0) ? Ops::neg(v) : v;
        const T f = fill(), af = f < T(0) ? Ops::neg(f) : f;
        return af == f ? r : overDense(std::move(r), af);  // |-inf| under max_plus: everywhere
      }
    }
    throw InternalError("reference: bad expression node");
  }

  // Stored entries of the accessed tensor (explicit zeros included, duplicates summed).
  Relation accessRelation(const ExprNode& n) {
    Relation r;
    r.vars = n.vars;
    // The oracle reads values: every access must be bound to a Tensor's storage.
    if (!n.binding) throw UserError("reference: " + n.tensor.name() + " is a tensor variable without storage");
    TensorBase t(n.binding);
    if (!t.impl()->pendingVals.empty()) t.pack();  // inserted entries count, as in Kernel::run
    CooData coo = t.toCoo();
    const int order = coo.order();
    Coords c(order);
    for (int64_t e = 0; e < coo.nnz(); e++) {
      for (int m = 0; m < order; m++) c[m] = coo.coords[e * order + m];
      addTo(r.rows, c, Ops::fromDouble(coo.values[e]));
    }
    return r;
  }

  // Cross `r` with the full range of every variable of `vars` it lacks (dense broadcast).
  Relation extend(Relation r, const std::vector<IndexVar>& vars) {
    std::vector<IndexVar> missing;
    for (const IndexVar& v : vars)
      if (!has(r.vars, v)) missing.push_back(v);
    if (missing.empty()) return r;
    std::vector<int64_t> extents;
    for (const IndexVar& v : missing) extents.push_back(extentOf(a_, v));

    Relation out;
    out.vars = r.vars;
    out.vars.insert(out.vars.end(), missing.begin(), missing.end());
    for (int64_t ext : extents)
      if (ext <= 0) return out;  // an empty range: no tuples at all
    const size_t base = r.vars.size();
    for (const auto& [c, v] : r.rows) {
      Coords key = c;
      key.resize(base + missing.size(), 0);
      // Odometer over the missing variables (last one fastest).
      for (;;) {
        putNew(out.rows, key, v);
        size_t k = missing.size();
        while (k > 0 && ++key[base + k - 1] == extents[k - 1]) {
          key[base + k - 1] = 0;
          k--;
        }
        if (k == 0) break;
      }
    }
    return out;
  }

  // Reorder the columns of `r` to `vars` (a permutation of r.vars).
  Relation reorder(Relation r, const std::vector<IndexVar>& vars) { return project(std::move(r), vars); }

  static std::vector<IndexVar> unionVars(const std::vector<IndexVar>& a,
                                         const std::vector<IndexVar>& b) {
    std::vector<IndexVar> u = a;
    for (const IndexVar& v : b)
      if (!has(u, v)) u.push_back(v);
    return u;
  }

  // support(a*b) = support(a) ∩ support(b): a natural join on the shared variables.
  Relation multiply(Relation l, Relation r) {
    std::vector<IndexVar> shared;
    for (const IndexVar& v : l.vars)
      if (has(r.vars, v)) shared.push_back(v);
    std::vector<IndexVar> rOnly;
    for (const IndexVar& v : r.vars)
      if (!has(l.vars, v)) rOnly.push_back(v);
    std::vector<size_t> lShared = positions(l.vars, shared);
    std::vector<size_t> rShared = positions(r.vars, shared);
    std::vector<size_t> rRest = positions(r.vars, rOnly);

    Relation out;
    out.vars = l.vars;
    out.vars.insert(out.vars.end(), rOnly.begin(), rOnly.end());
    Coords sk(shared.size());

    if (rOnly.empty()) {
      // Every right variable is on the left: look each left row up directly.
      for (const auto& [c, v] : l.rows) {
        for (size_t k = 0; k < lShared.size(); k++) sk[rShared[k]] = c[lShared[k]];
        auto it = r.rows.find(sk);
        if (it != r.rows.end()) putNew(out.rows, c, times(v, it->second));
      }
      return out;
    }

    // Right rows grouped by their shared coordinates.
    std::map<Coords, std::vector<std::pair<Coords, T>>> groups;
    for (const auto& [c, v] : r.rows) {
      for (size_t k = 0; k < rShared.size(); k++) sk[k] = c[rShared[k]];
      Coords rest(rRest.size());
      for (size_t k = 0; k < rRest.size(); k++) rest[k] = c[rRest[k]];
      groups[sk].emplace_back(std::move(rest), v);
    }

    for (const auto& [c, v] : l.rows) {
      for (size_t k = 0; k < lShared.size(); k++) sk[k] = c[lShared[k]];
      auto g = groups.find(sk);
      if (g == groups.end()) continue;
      for (const auto& [rest, rv] : g->second) {
        Coords key = c;
        key.insert(key.end(), rest.begin(), rest.end());
        putNew(out.rows, std::move(key), times(v, rv));
      }
    }
    return out;
  }

  // support(a±b) = union, over the union of the variables (missing operands are 0).
  Relation addOrSub(Relation l, Relation r, bool subtract) {
    std::vector<IndexVar> u = unionVars(l.vars, r.vars);
    Relation out = reorder(extend(std::move(l), u), u);
    Relation rr = reorder(extend(std::move(r), u), u);
    for (const auto& [c, v] : rr.rows) addTo(out.rows, c, subtract ? Ops::neg(v) : v);
    return out;
  }

  // support(a/b) = support(a) over the union of the variables; a missing b is 0.
  Relation divide(Relation l, Relation r) {
    std::vector<IndexVar> u = unionVars(l.vars, r.vars);
    Relation out = extend(std::move(l), u);  // columns already in order u
    std::vector<size_t> rWhere = positions(out.vars, r.vars);
    Coords key(r.vars.size());
    for (auto& [c, v] : out.rows) {
      for (size_t k = 0; k < rWhere.size(); k++) key[k] = c[rWhere[k]];
      auto it = r.rows.find(key);
      T b = it == r.rows.end() ? T(0) : it->second;
      v = Ops::div(v, b);
    }
    return out;
  }

  // The value of an absent entry: the semiring's zero.
  T fill() const { return Ops::fromDouble(a_.semiring.zero()); }

  // op on two values; a user-declared operator through its function (in double).
  static T applyOp(const BinaryOp& op, T a, T b) {
    if (op.kind == BinaryOpKind::Custom) return Ops::fromDouble(op.fn(Ops::toDouble(a), Ops::toDouble(b)));
    return apply(op.kind, a, b);
  }

  // r with every coordinate of its variables' space that it lacks set to v.
  Relation overDense(Relation r, T v) {
    Relation all;
    all.rows.emplace(Coords{}, v);
    all = extend(std::move(all), r.vars);
    for (auto& [c, x] : r.rows) all.rows[c] = x;
    return all;
  }

  // op(l, r) element-wise over the union of the variables, an absent operand read as
  // fill (the semiring's zero). Support, from op's algebra as written in
  // tessel/notation.h: both stored where fill annihilates op, either where fill is op's
  // (two-sided) identity, else either, and everywhere if op(fill, fill) != fill.
  Relation elementwise(Relation l, Relation r, const BinaryOp& op) {
    const double z = a_.semiring.zero();
    const bool intersect = op.annihilator.has_value() && *op.annihilator == z;
    const bool either = !intersect && op.hasIdentity && op.commutative && op.identity == z;
    std::vector<IndexVar> u = unionVars(l.vars, r.vars);
    Relation L = reorder(extend(std::move(l), u), u), R = reorder(extend(std::move(r), u), u);
    const T f = fill();
    Relation out;
    out.vars = u;
    for (const auto& [c, v] : L.rows) {
      auto it = R.rows.find(c);
      if (it != R.rows.end()) putNew(out.rows, c, applyOp(op, v, it->second));
      else if (!intersect) putNew(out.rows, c, either ? v : applyOp(op, v, f));
    }
    if (!intersect)
      for (const auto& [c, v] : R.rows)
        if (!L.rows.count(c)) out.rows.emplace(c, either ? v : applyOp(op, f, v));
    const T ff = applyOp(op, f, f);
    if (!intersect && !either && !(ff == f || (ff != ff && f != f))) return overDense(std::move(out), ff);
    return out;
  }

  const Assignment& a_;
};

}  // namespace

CooData referenceEvaluate(const Assignment& a) {
  checkAssignment(a);
  switch (a.lhsNode().tensor.datatype()) {
    case Datatype::Bool:
    case Datatype::Int32:
    case Datatype::Int64:
      return Evaluator<IntOps>(a).run();
    case Datatype::Float32:
    case Datatype::Float64:
      break;
  }
  return Evaluator<FloatOps>(a).run();
}

}  // namespace tessel
