// A semiring's operators as IR: what lowering emits for the assignment's `*`, `+`,
// reductions and absent entries (tessel/operators.h). plus_times gives exactly the IR
// of plain arithmetic (add, mul, zeroOf), so its kernels are unchanged.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "ir/ir.h"
#include "tessel/error.h"
#include "tessel/operators.h"

namespace tessel::lower {

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
  }
  throw InternalError("unknown semiring operator");
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
