// The loop lowerer. For each variable of the loop order it builds the merge lattice of
// the expression that remains, emits a dense loop (when some case needs every
// coordinate), a single-iterator loop, or a while loop per lattice point that merges
// sorted coordinates; each case body binds the variable, resolves level positions of
// inputs and output, and recurses on the case's expression.
#include "lower/lower_loops.h"

#include <algorithm>
#include <map>
#include <set>

#include "lower/level_format.h"
#include "lower/merge_lattice.h"
#include "lower/output_assembly.h"
#include "lower/symbols.h"
#include "tessel/error.h"

namespace tessel::lower {

using namespace ir;

namespace {

struct IterVars {
  Expr pos, end, crd, seg;
  Expr crdAtSeg;  ///< coordinate stored at position `seg` (segment scans)
  bool unique = true;
};

class LoopLowerer {
 public:
  LoopLowerer(const Problem& p, const OutputPlan& plan, Phase phase)
      : p_(p), plan_(plan), phase_(phase), sym_(p, phase == Phase::Numeric), out_(p, plan, sym_) {
    depthLimit_ = phase == Phase::Numeric ? static_cast<int>(p.order.size()) : plan.symbolicDepth;
  }

  Stmt run() {
    std::vector<Stmt> s = sym_.prologue();
    Env env;
    env.in.resize(p_.inputs.size());
    for (auto& st : out_.functionPrologue(phase_)) s.push_back(st);
    out_.resolve(env, phase_, s);
    s.push_back(descend(0, p_.assignment.rhs, env));
    for (auto& st : out_.functionEpilogue(phase_)) s.push_back(st);
    return block(s);
  }

 private:
  // ---- positions -------------------------------------------------------------------

  const LevelFormat& fmt(int access, int k) const { return sym_.level(p_.inputs[access].arg, k); }

  ParentRef parentOf(const Env& env, int access) const {
    const auto& st = env.in[access];
    if (st.empty()) return {intImm(0), intImm(0), intImm(1)};
    return {st.back().pos, st.back().segBegin, st.back().segEnd};
  }

  /// Locate every dense level whose variable is bound and whose parent is resolved.
  void resolveInputs(Env& env, const IndexExpr& e, std::vector<Stmt>& s) const {
    for (const tessel::ExprNode* n : accessesIn(e)) {
      int a = p_.accessIndex(n);
      const auto& lv = p_.inputs[a].levelVars;
      auto& st = env.in[a];
      while (st.size() < lv.size()) {
        int k = static_cast<int>(st.size());
        const LevelFormat& lf = fmt(a, k);
        if (!lf.locatable() || !env.bound.count(lv[k].id())) break;
        Expr pos = sym_.iterPos(a, k);
        s.push_back(decl(pos, lf.locate(sym_.arrays(p_.inputs[a].arg, k), parentOf(env, a).pos,
                                        env.bound.at(lv[k].id()))));
        st.push_back({pos, pos, add(pos, intImm(1))});
      }
    }
  }

  int iteratedAt(const Env& env, const tessel::ExprNode* n, const IndexVar& v) const {
    int a = p_.accessIndex(n);
    const auto& lv = p_.inputs[a].levelVars;
    size_t k = env.in[a].size();
    if (k < lv.size() && lv[k] == v && !fmt(a, static_cast<int>(k)).locatable()) return a;
    return -1;
  }

  // ---- values ----------------------------------------------------------------------

  Expr value(const IndexExpr& e, const Env& env) const {
    const tessel::ExprNode& n = e.node();
    Datatype ct = sym_.computeType();
    switch (n.kind) {
      case ExprKind::Access: {
        int a = p_.accessIndex(&n);
        Expr pos = env.in[a].empty() ? intImm(0) : env.in[a].back().pos;
        TESSEL_CHECK(env.in[a].size() == p_.inputs[a].levelVars.size(),
                     "access " + n.tensor->name + " not fully resolved at the leaf");
        return cast(scalar(ct), load(sym_.vals(p_.inputs[a].arg), pos));
      }
      case ExprKind::Literal:
        return (ct == Datatype::Float32 || ct == Datatype::Float64)
                   ? floatImm(n.value, scalar(ct))
                   : intImm(static_cast<int64_t>(n.value), scalar(ct));
      case ExprKind::Neg: return unary(ExprOp::Neg, value(n.a, env));
      case ExprKind::Add: return add(value(n.a, env), value(n.b, env));
      case ExprKind::Sub: return sub(value(n.a, env), value(n.b, env));
      case ExprKind::Mul: return mul(value(n.a, env), value(n.b, env));
      case ExprKind::Div: {
        bool fp = ct == Datatype::Float32 || ct == Datatype::Float64;
        return binary(fp ? ExprOp::Div : ExprOp::IDiv, value(n.a, env), value(n.b, env));
      }
    }
    throw InternalError("unknown expression kind");
  }

  // ---- structure -------------------------------------------------------------------

  Stmt leaf(const IndexExpr& e, const Env& env) {
    spend(nodes(e));
    if (env.hit) {
      Stmt mark = assign(env.hit, intImm(1, scalar(Datatype::Bool)));
      if (phase_ == Phase::Symbolic) return mark;
      return block({assign(env.acc, add(env.acc, value(e, env))), mark});
    }
    if (env.inWorkspace) return out_.workspaceUpdate(env, phase_, phase_ == Phase::Numeric ? value(e, env) : nullptr);
    if (phase_ == Phase::Symbolic) return block({});
    Expr v = value(e, env);
    if (env.acc) return assign(env.acc, add(env.acc, v));
    return out_.storeValue(env, v);
  }

  Stmt descend(int d, const IndexExpr& e, Env env) {
    if (plan_.kind == OutputKind::Workspace && !env.inWorkspace && d == plan_.workspaceDepth) {
      env.inWorkspace = true;
      Stmt inner = descend(d, e, env);
      return out_.workspaceRegion(env, phase_, inner);
    }
    if (env.pendingLevel >= 0 && !env.hit) return deferredAppend(d, e, env);
    if (phase_ == Phase::Numeric && !env.acc && !env.inWorkspace && out_.resolved(env) &&
        d < depthLimit_) {
      Expr acc = var(sym_.fresh("acc"), scalar(sym_.computeType()));
      env.acc = acc;
      Stmt inner = lowerAt(d, e, env);
      return block({decl(acc, zeroOf(sym_.computeType())), inner, out_.storeValue(env, acc)});
    }
    return lowerAt(d, e, env);
  }

  /// The reduction below the last output levels runs first; the entry is appended
  /// (and its value stored) only if some case was met.
  Stmt deferredAppend(int d, const IndexExpr& e, Env env) {
    Expr hit = var(sym_.fresh("hit"), scalar(Datatype::Bool));
    std::vector<Stmt> s = {decl(hit, intImm(0, scalar(Datatype::Bool)))};
    env.hit = hit;
    if (phase_ == Phase::Numeric) {
      env.acc = var(sym_.fresh("acc"), scalar(sym_.computeType()));
      s.push_back(decl(env.acc, zeroOf(sym_.computeType())));
    }
    s.push_back(lowerAt(d, e, env));
    std::vector<Stmt> then;
    Env after = env;
    out_.appendPending(after, phase_, then);
    if (phase_ == Phase::Numeric) then.push_back(out_.storeValue(after, env.acc));
    s.push_back(ifThen(hit, block(then)));
    return block(s);
  }

  Stmt caseBody(int d, const LatticePoint& q, const Env& env, const std::map<int, IterVars>& iv,
                const Expr& v) {
    spend(1);
    Env e2 = env;
    e2.bound[p_.order[d].id()] = v;
    for (int a : q.iterators) {
      const IterVars& it = iv.at(a);
      e2.in[a].push_back({it.pos, it.pos, it.unique ? add(it.pos, intImm(1)) : it.seg});
    }
    std::vector<Stmt> s;
    resolveInputs(e2, q.expr, s);
    out_.resolve(e2, phase_, s);
    s.push_back(descend(d + 1, q.expr, e2));
    return block(s);
  }

  Stmt caseChain(int d, const std::vector<LatticePoint>& pts, const Env& env,
                 const std::map<int, IterVars>& iv, const Expr& v) {
    Stmt chain = nullptr;
    for (auto it = pts.rbegin(); it != pts.rend(); ++it) {
      Expr cond = nullptr;
      for (int a : it->iterators) {
        Expr c = eq(iv.at(a).crd, v);
        cond = cond ? land(cond, c) : c;
      }
      Stmt body = caseBody(d, *it, env, iv, v);
      chain = cond ? ifThen(cond, body, chain) : body;
    }
    return chain;
  }

  /// Segment end of a non-unique iterator: the positions after it that share its
  /// coordinate (scanned only when it matches the loop coordinate v).
  Stmt segment(const IterVars& it, const Expr& v) const {
    if (it.unique) return block({});
    return block({decl(it.seg, add(it.pos, intImm(1))),
                  ifThen(eq(it.crd, v),
                         whileLoop(land(lt(it.seg, it.end), eq(it.crdAtSeg, it.crd)),
                                   assign(it.seg, add(it.seg, intImm(1)))))});
  }

  Stmt advance(const IterVars& it, const Expr& v) const {
    Expr next = it.unique ? add(it.pos, intImm(1)) : it.seg;
    return ifThen(eq(it.crd, v), assign(it.pos, next));
  }

  Stmt lowerAt(int d, const IndexExpr& e, const Env& env) {
    if (d == depthLimit_) return leaf(e, env);
    const IndexVar& v = p_.order[d];
    MergeLattice L = buildLattice(e, [&](const tessel::ExprNode* n) { return iteratedAt(env, n, v); });
    if (L.empty()) return block({});

    std::set<int> its;
    for (auto& pt : L.points) its.insert(pt.iterators.begin(), pt.iterators.end());
    std::vector<Stmt> s;
    std::map<int, IterVars> iv;
    for (int a : its) {
      int k = static_cast<int>(env.in[a].size());
      const LevelFormat& lf = fmt(a, k);
      LevelArrays arr = sym_.arrays(p_.inputs[a].arg, k);
      auto [begin, end] = lf.bounds(arr, parentOf(env, a));
      IterVars it;
      it.pos = sym_.iterPos(a, k);
      it.end = var(it.pos->name + "_end", i64());
      it.crd = var(sym_.fresh(v.name() + p_.args[p_.inputs[a].arg].cname), i64());
      it.seg = var(it.pos->name + "_seg", i64());
      it.crdAtSeg = lf.coordinate(arr, it.seg);
      it.unique = lf.unique();
      iv[a] = it;
      s.push_back(decl(it.pos, begin));
      s.push_back(decl(it.end, end));
    }
    Expr vv = sym_.indexVar(v);
    auto crdOf = [&](int a, const Expr& p) {
      return fmt(a, static_cast<int>(env.in[a].size())).coordinate(sym_.arrays(p_.inputs[a].arg, static_cast<int>(env.in[a].size())), p);
    };
    auto loadCrd = [&](int a) { return decl(iv[a].crd, crdOf(a, iv[a].pos)); };

    if (L.needsDenseLoop()) {
      Expr extent = sym_.extent(v);
      std::vector<Stmt> body;
      for (int a : its) {
        body.push_back(decl(iv[a].crd, extent));
        body.push_back(ifThen(lt(iv[a].pos, iv[a].end), assign(iv[a].crd, crdOf(a, iv[a].pos))));
        body.push_back(segment(iv[a], vv));
      }
      body.push_back(caseChain(d, L.points, env, iv, vv));
      for (int a : its) body.push_back(advance(iv[a], vv));
      s.push_back(forRange(vv, intImm(0), extent, block(body)));
      return block(s);
    }

    if (L.points.size() == 1 && its.size() == 1 && iv.begin()->second.unique) {
      // One sorted unique iterator: a plain for loop over its positions.
      int a = *its.begin();
      s.clear();
      int k = static_cast<int>(env.in[a].size());
      auto [begin, end] = fmt(a, k).bounds(sym_.arrays(p_.inputs[a].arg, k), parentOf(env, a));
      Stmt body = block({decl(vv, crdOf(a, iv[a].pos)), caseBody(d, L.points[0], env, iv, vv)});
      s.push_back(forRange(iv[a].pos, begin, end, body));
      return block(s);
    }

    for (auto& pt : L.points) {
      if (pt.iterators.empty()) continue;
      Expr cond = nullptr;
      for (int a : pt.iterators) {
        Expr c = lt(iv[a].pos, iv[a].end);
        cond = cond ? land(cond, c) : c;
      }
      std::vector<Stmt> body;
      Expr minCrd = nullptr;
      for (int a : pt.iterators) {
        body.push_back(loadCrd(a));
        minCrd = minCrd ? minOf(minCrd, iv[a].crd) : iv[a].crd;
      }
      body.push_back(decl(vv, minCrd));
      for (int a : pt.iterators)
        body.push_back(segment(iv[a], vv));
      std::vector<LatticePoint> cases = L.subLattice(pt);
      if (pt.iterators.size() == 1 && cases.size() == 1) {
        // One iterator left: its coordinate is the loop's, so no case test and no
        // conditional advance.
        const IterVars& it = iv[pt.iterators[0]];
        body.push_back(caseBody(d, cases[0], env, iv, vv));
        body.push_back(assign(it.pos, it.unique ? add(it.pos, intImm(1)) : it.seg));
      } else {
        body.push_back(caseChain(d, cases, env, iv, vv));
        for (int a : pt.iterators) body.push_back(advance(iv[a], vv));
      }
      s.push_back(whileLoop(cond, block(body)));
    }
    return block(s);
  }

  const Problem& p_;
  const OutputPlan& plan_;
  Phase phase_;
  Symbols sym_;
  OutputAssembly out_;
  int depthLimit_;
  /// Nested lattices multiply, and each case evaluates its own expression: bound the
  /// code (and so the C compiler's time) of one kernel. Real kernels use a few hundred.
  static constexpr int64_t kMaxWork = 20000;
  int64_t work_ = 0;
  void spend(int64_t units) {
    work_ += units;
    if (work_ > kMaxWork)
      throw NotationError(std::string("expression too complex: its kernel would exceed ") +
                          std::to_string(kMaxWork) +
                          " co-iteration cases and expression nodes; split it into several assignments");
  }
  static int64_t nodes(const IndexExpr& e) {
    const tessel::ExprNode& n = e.node();
    return 1 + (n.a.defined() ? nodes(n.a) : 0) + (n.b.defined() ? nodes(n.b) : 0);
  }
};

}  // namespace

Stmt lowerLoops(const Problem& p, const OutputPlan& plan, Phase phase) {
  return LoopLowerer(p, plan, phase).run();
}

}  // namespace tessel::lower
