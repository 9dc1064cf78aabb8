// Simplifier: folds integer constants and identities so generated code reads like
// hand-written code (`p * 1 + 0` -> `p`), flattens blocks, and drops dead branches.
// Floating-point expressions are left alone (x*0 is not 0 for nan/inf).
#include <algorithm>

#include "ir/ir.h"

namespace tessel::ir {

namespace {

bool isFloatType(const Type& t) {
  return !t.pointer && (t.elem == Datatype::Float32 || t.elem == Datatype::Float64);
}
bool isInt(const Expr& e, int64_t v) { return e->op == ExprOp::IntImm && e->ival == v; }
bool isIntConst(const Expr& e) { return e->op == ExprOp::IntImm; }

Expr foldBinary(ExprOp op, const Expr& a, const Expr& b) {
  bool ints = !isFloatType(a->type) && !isFloatType(b->type);
  if (ints && isIntConst(a) && isIntConst(b)) {
    int64_t x = a->ival, y = b->ival, r;
    switch (op) {
      case ExprOp::Add: if (!__builtin_add_overflow(x, y, &r)) return intImm(r, a->type); break;
      case ExprOp::Sub: if (!__builtin_sub_overflow(x, y, &r)) return intImm(r, a->type); break;
      case ExprOp::Mul: if (!__builtin_mul_overflow(x, y, &r)) return intImm(r, a->type); break;
      default: break;
    }
  }
  if (ints) {
    if (op == ExprOp::Add && isInt(a, 0)) return b;
    if ((op == ExprOp::Add || op == ExprOp::Sub) && isInt(b, 0)) return a;
    if (op == ExprOp::Mul && isInt(a, 1)) return b;
    if (op == ExprOp::Mul && isInt(b, 1)) return a;
    if (op == ExprOp::Mul && (isInt(a, 0) || isInt(b, 0))) return intImm(0, a->type);
  }
  return binary(op, a, b);
}

}  // namespace

Expr simplify(const Expr& e) {
  if (!e) return e;
  switch (e->op) {
    case ExprOp::Var: case ExprOp::IntImm: case ExprOp::FloatImm:
      return e;
    case ExprOp::Add: case ExprOp::Sub: case ExprOp::Mul:
      return foldBinary(e->op, simplify(e->args[0]), simplify(e->args[1]));
    default: {
      bool changed = false;
      std::vector<Expr> args;
      for (auto& a : e->args) {
        args.push_back(simplify(a));
        changed |= args.back() != a;
      }
      if (!changed) return e;
      auto n = std::make_shared<ExprNode>(*e);
      n->args = std::move(args);
      return n;
    }
  }
}

Stmt simplify(const Stmt& s) {
  if (!s) return s;
  auto n = std::make_shared<StmtNode>(*s);
  for (auto& a : n->args) a = simplify(a);
  if (s->op == StmtOp::Block) {
    std::vector<Stmt> flat;
    for (auto& c : s->body) {
      Stmt sc = simplify(c);
      if (!sc) continue;
      if (sc->op == StmtOp::Block)
        flat.insert(flat.end(), sc->body.begin(), sc->body.end());
      else
        flat.push_back(sc);
    }
    n->body = std::move(flat);
    return n;
  }
  for (auto& c : n->body) c = simplify(c);
  for (auto& c : n->elseBody) c = simplify(c);
  if (s->op == StmtOp::If && n->args[0]->op == ExprOp::IntImm) {
    if (n->args[0]->ival) return n->body[0];
    return n->elseBody.empty() ? block({}) : n->elseBody[0];
  }
  return n;
}

}  // namespace tessel::ir
