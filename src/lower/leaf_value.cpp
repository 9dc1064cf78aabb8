// Values at the leaf of a loop nest: see leaf_value.h.
#include "lower/leaf_value.h"

#include <cmath>

#include "lower/semiring_ir.h"
#include "tessel/error.h"

namespace tessel::lower {

using namespace ir;

Expr leafValue(const Problem& p, const Symbols& sym, const LocalTemporaries* locals, const IndexExpr& e,
               const Env& env) {
  const tessel::ExprNode& n = e.node();
  const Semiring& semiring = p.assignment.semiring;
  Datatype ct = sym.computeType();
  auto value = [&](const IndexExpr& x) { return leafValue(p, sym, locals, x, env); };
  switch (n.kind) {
    case ExprKind::Sum:  // split out before lowering (splitReductions); analyze() refuses them
      throw InternalError("lowering met a sum(...) node");
    case ExprKind::Access: {
      if (n.mask.isMask) throw InternalError("a mask's value was read as an operand");
      if (const LocalTemporaryLowering* t = locals ? locals->reading(&n) : nullptr) return t->element(env);
      int a = p.accessIndex(&n);
      Expr pos = env.in[a].empty() ? intImm(0) : env.in[a].back().pos;
      TESSEL_CHECK(env.in[a].size() == p.inputs[a].levelVars.size(),
                   "access " + n.tensor.name() + " not fully resolved at the leaf");
      if (auto ld = env.loaded.find(a); ld != env.loaded.end()) return ld->second;
      Expr v = cast(scalar(ct), load(sym.vals(p.inputs[a].arg), pos));
      auto pr = env.present.find(a);
      if (pr != env.present.end()) v = select(pr->second, v, zeroValue(semiring, ct, sym.outputType()));
      auto pb = env.probed.find(a);
      if (pb != env.probed.end()) v = select(pb->second, v, zeroValue(semiring, ct, sym.outputType()));
      return v;
    }
    case ExprKind::Literal:
      // The semiring's zero (a merge lattice's op(zero, zero)) as the absent entry is: an
      // infinity of an integer kernel is its type's extreme.
      if (n.value == semiring.zero()) return zeroValue(semiring, ct, sym.outputType());
      return (ct == Datatype::Float32 || ct == Datatype::Float64) ? floatImm(n.value, scalar(ct))
                                                                    : intImm(static_cast<int64_t>(n.value), scalar(ct));
    case ExprKind::Neg: return unary(ExprOp::Neg, value(n.a));
    case ExprKind::Abs: return absOf(value(n.a));
    case ExprKind::Apply: {  // an undefined operand is absent (merge_lattice.cpp's applyZ)
      auto operand = [&](const IndexExpr& x) { return x.defined() ? value(x) : zeroValue(semiring, ct, sym.outputType()); };
      return applyOp(n.op, operand(n.a), operand(n.b));
    }
    case ExprKind::Add: return applyOp(semiring.add, value(n.a), value(n.b));
    case ExprKind::Sub: return sub(value(n.a), value(n.b));
    case ExprKind::Mul: {
      // A mask's factor selects where the product is computed; its value is no factor.
      auto isMask = [](const IndexExpr& x) { return x.kind() == ExprKind::Access && x.node().mask.isMask; };
      // Where the mask is tested (valued, complemented) a term outside it is the zero,
      // so a sum around it (`A_old + M * e`) keeps its other terms.
      auto masked = [&](const IndexExpr& m, Expr v) {
        auto pb = env.probed.find(p.accessIndex(m.get()));
        if (pb == env.probed.end() || pb->second == env.guarded) return v;  // (the guard tested it already)
        return select(pb->second, v, zeroValue(semiring, ct, sym.outputType()));
      };
      if (isMask(n.a)) return masked(n.a, value(n.b));
      if (isMask(n.b)) return masked(n.b, value(n.a));
      return applyOp(semiring.mul, value(n.a), value(n.b));
    }
    case ExprKind::Div: {
      bool fp = ct == Datatype::Float32 || ct == Datatype::Float64;
      return binary(fp ? ExprOp::Div : ExprOp::IDiv, value(n.a), value(n.b));
    }
  }
  throw InternalError("unknown expression kind");
}

Expr leafPresence(const Problem& p, const LocalTemporaries* locals, const IndexExpr& e, const Env& env) {
  const tessel::ExprNode& n = e.node();
  auto presence = [&](const IndexExpr& x) { return leafPresence(p, locals, x, env); };
  switch (n.kind) {
    case ExprKind::Access: {
      if (locals && locals->reading(&n)) return nullptr;  // a temporary at a loop: dense
      auto pb = env.probed.find(p.accessIndex(&n));
      return pb == env.probed.end() ? nullptr : pb->second;
    }
    case ExprKind::Neg:
    case ExprKind::Div: return presence(n.a);
    case ExprKind::Abs: {
      double f = p.assignment.semiring.zero();
      return std::fabs(f) == f ? presence(n.a) : nullptr;
    }
    case ExprKind::Apply: {  // as the merge lattice: like `*`, like `+`, or everywhere
      const double f = p.assignment.semiring.zero();
      Expr a = n.a.defined() ? presence(n.a) : nullptr, b = n.b.defined() ? presence(n.b) : nullptr;
      const ElementwiseSupport sup = elementwiseSupport(n.op, f);
      if (sup == ElementwiseSupport::Intersection) return !a ? b : !b ? a : land(a, b);
      if (sup == ElementwiseSupport::Fill && n.op.apply(f, f) != f) return nullptr;
      if (!n.a.defined()) return b;  // absent operands never make an entry
      if (!n.b.defined()) return a;
      return a && b ? binary(ExprOp::Or, a, b) : nullptr;
    }
    case ExprKind::Mul: {
      Expr a = presence(n.a), b = presence(n.b);
      return !a ? b : !b ? a : land(a, b);
    }
    case ExprKind::Add:
    case ExprKind::Sub: {
      Expr a = presence(n.a), b = presence(n.b);
      return a && b ? binary(ExprOp::Or, a, b) : nullptr;
    }
    default: return nullptr;
  }
}

}  // namespace tessel::lower
