// A semiring's operators as IR: what lowering emits for the assignment's `*`, `+`,
// reductions and absent entries (tessel/operators.h). plus_times gives exactly the IR
// of plain arithmetic (add, mul, zeroOf), so its kernels are unchanged.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "tessel/error.h"
#include "tessel/notation.h"
#include "tessel/operators.h"

namespace tessel::lower {

/// The C function a kernel defines for a user-declared operator (BinaryOp::custom).
inline std::string customOpFunction(const BinaryOp& op) { return "tessel_op_" + op.name; }

/// The C definitions of the user-declared operators `a` uses (its semiring's, its
/// element-wise ones), each guarded so that the stages of one source define it once.
inline std::vector<std::string> customOpDefinitions(const Assignment& a) {
  std::vector<std::string> out;
  auto define = [&](const BinaryOp& op) {
    if (op.kind != BinaryOpKind::Custom) return;
    std::string f = customOpFunction(op);
    std::string d = "#ifndef TESSEL_DEFINED_" + f + "\n#define TESSEL_DEFINED_" + f + "\nstatic inline double " + f +
                    "(double a, double b) { return (double)(" + op.cExpr + "); }\n#endif\n";
    for (const std::string& o : out)
      if (o == d) return;
    out.push_back(d);
  };
  define(a.semiring.add);
  define(a.semiring.mul);
  std::function<void(const IndexExpr&)> walk = [&](const IndexExpr& e) {
    if (!e.defined()) return;
    if (e.kind() == ExprKind::Apply) define(e.node().op);
    walk(e.node().a);
    walk(e.node().b);
  };
  walk(a.rhs);
  return out;
}

/// The IR operation of a semiring operator.
inline ir::Expr applyOp(const BinaryOp& op, ir::Expr a, ir::Expr b) {
  switch (op.kind) {
    case BinaryOpKind::Add: return ir::add(std::move(a), std::move(b));
    case BinaryOpKind::Mul: return ir::mul(std::move(a), std::move(b));
    case BinaryOpKind::Min: return ir::binary(ir::ExprOp::Min, std::move(a), std::move(b));
    case BinaryOpKind::Max: return ir::binary(ir::ExprOp::Max, std::move(a), std::move(b));
    case BinaryOpKind::Or: return ir::reduceExpr(ir::ReduceOp::Or, std::move(a), std::move(b));
    case BinaryOpKind::And: return ir::reduceExpr(ir::ReduceOp::And, std::move(a), std::move(b));
    case BinaryOpKind::Any: return ir::reduceExpr(ir::ReduceOp::Any, std::move(a), std::move(b));
    case BinaryOpKind::Pair: {
      ir::Type t = a->type;
      return t.elem == Datatype::Float32 || t.elem == Datatype::Float64 ? ir::floatImm(1, t) : ir::intImm(1, t);
    }
    case BinaryOpKind::First: return a;
    case BinaryOpKind::Second: return b;
    case BinaryOpKind::Lt:
    case BinaryOpKind::Le:
    case BinaryOpKind::Gt:
    case BinaryOpKind::Ge:
    case BinaryOpKind::Eq:
    case BinaryOpKind::Ne: {  // 1 or 0 in the operands' type
      static const ir::ExprOp cmp[] = {ir::ExprOp::Lt, ir::ExprOp::Le, ir::ExprOp::Gt,
                                       ir::ExprOp::Ge, ir::ExprOp::Eq, ir::ExprOp::Ne};
      ir::Type t = a->type;
      int k = static_cast<int>(op.kind) - static_cast<int>(BinaryOpKind::Lt);
      return ir::cast(t, ir::binary(cmp[k], std::move(a), std::move(b)));
    }
    case BinaryOpKind::Custom: {  // computed in double by the kernel's helper (customOpFunction)
      ir::Type t = a->type, f64 = ir::scalar(Datatype::Float64);
      return ir::cast(t, ir::call(customOpFunction(op), {ir::cast(f64, std::move(a)), ir::cast(f64, std::move(b))}, f64));
    }
  }
  throw InternalError("unknown semiring operator");
}

/// |a| in a's type: a select (both arms are pure).
inline ir::Expr absOf(ir::Expr a) {
  ir::Type t = a->type;
  ir::Expr zero = t.elem == Datatype::Float32 || t.elem == Datatype::Float64 ? ir::floatImm(0, t) : ir::intImm(0, t);
  return ir::select(ir::binary(ir::ExprOp::Lt, a, zero), ir::unary(ir::ExprOp::Neg, a), a);
}

/// The reduction (and accumulating store) operator of a semiring's add.
inline ir::ReduceOp reduceOpOf(const Semiring& s) {
  switch (s.add.kind) {
    case BinaryOpKind::Add: return ir::ReduceOp::Add;
    case BinaryOpKind::Min: return ir::ReduceOp::Min;
    case BinaryOpKind::Max: return ir::ReduceOp::Max;
    case BinaryOpKind::Or: return ir::ReduceOp::Or;
    case BinaryOpKind::And: return ir::ReduceOp::And;
    case BinaryOpKind::Any: return ir::ReduceOp::Any;
    default: break;
  }
  if (s.add.kind == BinaryOpKind::Custom || s.add.isComparison())
    throw NotationError("semiring " + s.name + ": " + s.add.name +
                        " cannot be a semiring's add (kernels reduce with +, min, max, or, and, any); use it as mul "
                        "or element-wise");
  throw InternalError("semiring " + s.name + ": no reduction for its add");
}

/// The semiring's zero (add's identity) as a constant of type t: 0 for plus_times; an
/// infinity becomes the extreme value of the integer type `range` (the output's: an int32
/// output computed in int64 starts at INT32_MAX, so an empty row stores INT32_MAX, not
/// INT64_MAX cut to -1), or of t itself.
inline ir::Expr zeroValue(const Semiring& s, Datatype t, Datatype range) {
  double z = s.zero();
  if (z == 0) return ir::zeroOf(t);
  if (t == Datatype::Float32 || t == Datatype::Float64) return ir::floatImm(z, ir::scalar(t));
  if (std::isinf(z)) {
    if (range == Datatype::Float32 || range == Datatype::Float64) range = t;
    const int64_t hi = range == Datatype::Int32 ? std::numeric_limits<int32_t>::max()
                       : range == Datatype::Bool ? 1
                                                 : std::numeric_limits<int64_t>::max();
    const int64_t lo = range == Datatype::Int32 ? std::numeric_limits<int32_t>::min()
                       : range == Datatype::Bool ? 0
                                                 : std::numeric_limits<int64_t>::min();
    return ir::intImm(z > 0 ? hi : lo, ir::scalar(t));
  }
  return ir::intImm(static_cast<int64_t>(z), ir::scalar(t));
}
inline ir::Expr zeroValue(const Semiring& s, Datatype t) { return zeroValue(s, t, t); }

}  // namespace tessel::lower
