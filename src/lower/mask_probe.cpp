// Tests of output masks: see mask_probe.h.
#include "lower/mask_probe.h"

#include <algorithm>

#include "lower/level_format.h"
#include "lower/position_search.h"
#include "tessel/error.h"

namespace tessel::lower {

using namespace ir;

namespace {

Expr nonzero(const Problem& p, const Symbols& sym, int a, const Expr& pos) {
  Type d = scalar(Datatype::Float64);
  return binary(ExprOp::Ne, cast(d, load(sym.vals(p.inputs[a].arg), pos)), floatImm(0, d));
}

Expr resolvedPos(const Env& env, int a) { return env.in[a].empty() ? intImm(0) : env.in[a].back().pos; }

/// Whether the complemented mask `a` stores the bound coordinates (and, valued, a
/// nonzero there): its unresolved levels located or binary-searched, each only if the
/// level above found its coordinate.
Expr searchMask(const Problem& p, Symbols& sym, const Env& env, int a, std::vector<Stmt>& s) {
  const auto& lv = p.inputs[a].levelVars;
  int arg = p.inputs[a].arg;
  Expr found = var(sym.fresh("in_mask"), scalar(Datatype::Bool));
  Expr mp = var(sym.fresh("mask_pos"), i64());
  s.push_back(decl(found, intImm(1, scalar(Datatype::Bool))));
  s.push_back(decl(mp, cast(i64(), resolvedPos(env, a))));
  for (size_t k = env.in[a].size(); k < lv.size(); k++) {
    const LevelFormat& lf = sym.level(arg, static_cast<int>(k));
    LevelArrays arr = sym.arrays(arg, static_cast<int>(k));
    Expr c = env.bound.at(lv[k].id());
    std::vector<Stmt> t;
    if (lf.locatable()) {
      t.push_back(assign(mp, cast(i64(), lf.locate(arr, mp, c))));
      if (lf.hasFlagArray()) t.push_back(assign(found, lf.present(arr, mp)));
    } else {
      if (!lf.unique())
        throw FormatError("the complemented mask " + p.inputs[a].node->tensor.name() +
                          " has a non-unique level; store it with unique levels (compressed, dense)");
      auto [b, e] = lf.bounds(arr, ParentRef{mp, mp, add(mp, intImm(1))});
      Expr end = var(sym.fresh("mask_end"), i64());
      t.push_back(decl(end, cast(i64(), e)));
      Expr q = emitLowerBound(sym, lf, arr, cast(i64(), b), end, c, t);
      t.push_back(assign(found, land(lt(q, end), eq(cast(i64(), lf.coordinate(arr, q)), c))));
      t.push_back(assign(mp, q));
    }
    s.push_back(ifThen(found, block(t)));
  }
  if (p.inputs[a].node->mask.valued) s.push_back(ifThen(found, assign(found, nonzero(p, sym, a, mp))));
  return found;
}

}  // namespace

void probeMasks(const Problem& p, Symbols& sym, Env& env, const IndexExpr& e, std::vector<Stmt>& s) {
  for (const tessel::ExprNode* n : accessesIn(e)) {
    if (!n->mask.isMask || !(n->mask.valued || n->mask.complement)) continue;
    int a = p.accessIndex(n);
    if (env.maskTested.count(a)) continue;
    const auto& lv = p.inputs[a].levelVars;
    Expr in;  // where the mask, before any complement, is true
    if (n->mask.complement) {
      if (!std::all_of(lv.begin(), lv.end(), [&](const IndexVar& v) { return env.bound.count(v.id()) > 0; }))
        continue;
      in = searchMask(p, sym, env, a, s);
    } else {
      if (env.in[a].size() < lv.size()) continue;
      in = nonzero(p, sym, a, resolvedPos(env, a));
    }
    env.maskTested.insert(a);
    Expr flag = n->mask.complement ? unary(ExprOp::Not, in) : in;
    auto pr = env.probed.find(a);
    env.probed[a] = pr == env.probed.end() ? flag : land(pr->second, flag);
  }
}

}  // namespace tessel::lower
