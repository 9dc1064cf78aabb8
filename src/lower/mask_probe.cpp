// Tests of output masks: see mask_probe.h.
#include "lower/mask_probe.h"

#include <algorithm>

#include "lower/level_format.h"
#include "lower/lower_loops.h"
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

bool allBound(const Env& env, const std::vector<IndexVar>& vs) {
  return std::all_of(vs.begin(), vs.end(), [&](const IndexVar& v) { return env.bound.count(v.id()) > 0; });
}

}  // namespace

MaskRows::MaskRows(const Problem& p, Symbols& sym, bool serial) : p_(p), sym_(sym), serial_(serial) {
  for (size_t a = 0; a < p.inputs.size(); a++) {
    if (!p.maskByRow(static_cast<int>(a))) continue;
    const std::string& name = p.inputs[a].node->tensor.name();
    flags_[static_cast<int>(a)] = var(sym.fresh(name + "_row_flags"), ptr(Datatype::Bool));
    len_[static_cast<int>(a)] = var(sym.fresh(name + "_row_len"), i64());
  }
}

std::vector<Stmt> MaskRows::allocate() const {
  std::vector<Stmt> s;
  Expr threads = serial_ ? intImm(1) : maxThreads();
  for (const auto& [a, flags] : flags_) {
    const auto& lv = p_.inputs[a].levelVars;
    s.push_back(decl(len_.at(a), binary(ExprOp::Max, sym_.extent(lv.back()), intImm(1))));
    s.push_back(decl(flags));
    s.push_back(alloc(flags, mul(len_.at(a), threads), true));
  }
  return s;
}

std::vector<Stmt> MaskRows::release() const {
  std::vector<Stmt> s;
  for (const auto& [a, flags] : flags_) s.push_back(freeArray(flags));
  return s;
}

void MaskRows::scatter(Env& env, const IndexExpr& e, std::vector<Stmt>& before, std::vector<Stmt>& after) const {
  for (const tessel::ExprNode* n : accessesIn(e)) {
    if (!n->mask.isMask) continue;  // (nor a temporary's read at a loop: not an input)
    int a = p_.accessIndex(n);
    if (!flags_.count(a) || env.maskRow.count(a)) continue;
    const auto& lv = p_.inputs[a].levelVars;
    std::vector<IndexVar> upper(lv.begin(), lv.end() - 1);
    if (!allBound(env, upper) || env.bound.count(lv.back().id())) continue;
    int arg = p_.inputs[a].arg, last = static_cast<int>(lv.size()) - 1;
    // The row's parent position: the dense upper levels located.
    Expr parent = intImm(0);
    for (int k = 0; k < last; k++) parent = sym_.level(arg, k).locate(sym_.arrays(arg, k), parent, env.bound.at(lv[k].id()));
    Expr mp = var(sym_.fresh("mask_parent"), i64()), off = var(sym_.fresh("mask_row"), i64());
    before.push_back(decl(mp, cast(i64(), parent)));
    // This thread's row (one per thread; 0 outside a parallel region, or in a serial kernel).
    before.push_back(decl(off, serial_ ? intImm(0) : mul(threadNum(), len_.at(a))));
    const LevelFormat& lf = sym_.level(arg, last);
    LevelArrays arr = sym_.arrays(arg, last);
    auto [b, end] = lf.bounds(arr, ParentRef{mp, mp, add(mp, intImm(1))});
    Expr q = var(sym_.fresh("mask_q"), i64());
    Expr slot = add(off, cast(i64(), lf.coordinate(arr, q)));
    Expr on = n->mask.valued ? nonzero(p_, sym_, a, q) : intImm(1, scalar(Datatype::Bool));
    before.push_back(forRange(q, cast(i64(), b), cast(i64(), end), store(flags_.at(a), slot, on)));
    after.push_back(forRange(q, cast(i64(), b), cast(i64(), end), store(flags_.at(a), slot, intImm(0, scalar(Datatype::Bool)))));
    env.maskRow[a] = off;
  }
}

Expr MaskRows::test(const Env& env, int a) const {
  const auto& lv = p_.inputs[a].levelVars;
  return load(flags_.at(a), add(env.maskRow.at(a), env.bound.at(lv.back().id())));
}

void probeMasks(const Problem& p, Symbols& sym, const MaskRows& rows, Env& env, const IndexExpr& e,
                std::vector<Stmt>& s) {
  for (const tessel::ExprNode* n : accessesIn(e)) {
    if (!n->mask.isMask) continue;
    int a = p.accessIndex(n);
    if (!p.maskTested(a) || env.maskTested.count(a)) continue;
    const auto& lv = p.inputs[a].levelVars;
    Expr in;  // where the mask, before any complement, is true
    if (n->mask.complement || p.maskByRow(a)) {
      if (!allBound(env, lv)) continue;
      in = env.maskRow.count(a) ? rows.test(env, a) : searchMask(p, sym, env, a, s);
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
