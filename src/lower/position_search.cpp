// Binary searches in generated code (see position_search.h).
#include "lower/position_search.h"

namespace tessel::lower {

using namespace ir;

namespace {

/// lo = first q in [begin, end) with !goRight(q), where goRight is monotone (true then false).
Expr emitSearch(Symbols& sym, const Expr& begin, const Expr& end,
                const std::function<Expr(const Expr&)>& goRight, std::vector<Stmt>& s) {
  Expr lo = var(sym.fresh("lo"), i64()), hi = var(sym.fresh("hi"), i64()), mid = var(sym.fresh("mid"), i64());
  s.push_back(decl(lo, begin));
  s.push_back(decl(hi, end));
  Stmt step = block({decl(mid, add(lo, binary(ExprOp::Div, sub(hi, lo), intImm(2)))),
                     ifThen(goRight(mid), assign(lo, add(mid, intImm(1))), assign(hi, mid))});
  s.push_back(whileLoop(lt(lo, hi), step));
  return lo;
}

}  // namespace

Expr emitLowerBound(Symbols& sym, const LevelFormat& lf, const LevelArrays& arrays, const Expr& begin,
                    const Expr& end, const Expr& target, std::vector<Stmt>& s) {
  return emitSearch(sym, begin, end, [&](const Expr& m) { return lt(lf.coordinate(arrays, m), target); }, s);
}

Expr emitSegmentOf(Symbols& sym, const Expr& pos, const Expr& qb, const Expr& qe, const Expr& p,
                   std::vector<Stmt>& s) {
  Expr q = emitSearch(
      sym, qb, qe,
      [&](const Expr& m) { return binary(ExprOp::Le, cast(i64(), load(pos, add(m, intImm(1)))), p); }, s);
  Expr clamped = var(sym.fresh("seg"), i64());
  s.push_back(decl(clamped, minOf(q, sub(qe, intImm(1)))));
  return clamped;
}

}  // namespace tessel::lower
