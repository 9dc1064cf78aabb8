// IR node factories and type names.
#include "ir/ir.h"

#include "tessel/error.h"

namespace tessel::ir {

namespace {
std::shared_ptr<ExprNode> node(ExprOp op, Type t) {
  auto n = std::make_shared<ExprNode>();
  n->op = op;
  n->type = t;
  return n;
}
std::shared_ptr<StmtNode> snode(StmtOp op) {
  auto n = std::make_shared<StmtNode>();
  n->op = op;
  return n;
}
bool isFloat(Datatype t) { return t == Datatype::Float32 || t == Datatype::Float64; }
int rank(Datatype t) {
  switch (t) {
    case Datatype::Bool: return 0;
    case Datatype::Int32: return 1;
    case Datatype::Int64: return 2;
    case Datatype::Float32: return 3;
    case Datatype::Float64: return 4;
  }
  return 4;
}
}  // namespace

Expr var(const std::string& name, Type t) {
  auto n = node(ExprOp::Var, t);
  n->name = name;
  return n;
}
Expr intImm(int64_t v, Type t) {
  auto n = node(ExprOp::IntImm, t);
  n->ival = v;
  return n;
}
Expr floatImm(double v, Type t) {
  auto n = node(ExprOp::FloatImm, t);
  n->fval = v;
  return n;
}
Expr zeroOf(Datatype t) { return isFloat(t) ? floatImm(0, scalar(t)) : intImm(0, scalar(t)); }
Expr load(Expr array, Expr index) {
  TESSEL_CHECK(array->type.pointer, "load from a non-pointer");
  Type t = array->type;
  if (t.pointerToPointer) {
    t.pointerToPointer = false;  // an element of a pointer array is a pointer
  } else {
    t.pointer = false;
    t.constData = false;
  }
  auto n = node(ExprOp::Load, t);
  n->args = {std::move(array), std::move(index)};
  return n;
}
Expr field(Expr structPtr, const std::string& name, Type t, int64_t level) {
  auto n = node(ExprOp::Field, t);
  n->name = name;
  n->ival = level;
  n->args = {std::move(structPtr)};
  return n;
}
Expr cast(Type t, Expr e) {
  if (e->type == t) return e;
  auto n = node(ExprOp::Cast, t);
  n->args = {std::move(e)};
  return n;
}
Expr call(const std::string& fn, std::vector<Expr> args, Type t) {
  auto n = node(ExprOp::Call, t);
  n->name = fn;
  n->args = std::move(args);
  return n;
}
Expr addressOf(Expr lvalue) {
  TESSEL_CHECK(lvalue->op == ExprOp::Var || lvalue->op == ExprOp::Load || lvalue->op == ExprOp::Field,
               "address of a value that is not stored");
  Type t = lvalue->type;
  if (t.pointer) {
    t.pointerToPointer = true;
  } else {
    t.pointer = true;
    t.constData = false;
  }
  auto n = node(ExprOp::AddressOf, t);
  n->args = {std::move(lvalue)};
  return n;
}
Expr elemSize(Expr array) {
  TESSEL_CHECK(array->type.pointer, "element size of a non-pointer");
  auto n = node(ExprOp::ElemSize, opaque(TypeKind::Size, false));
  n->args = {std::move(array)};
  return n;
}
Expr unary(ExprOp op, Expr a) {
  auto n = node(op, op == ExprOp::Not ? scalar(Datatype::Bool) : a->type);
  n->args = {std::move(a)};
  return n;
}
Expr select(Expr cond, Expr a, Expr b) {
  auto n = node(ExprOp::Select, a->type);
  n->args = {std::move(cond), std::move(a), std::move(b)};
  return n;
}
Expr binary(ExprOp op, Expr a, Expr b) {
  Type t;
  switch (op) {
    case ExprOp::Eq: case ExprOp::Ne: case ExprOp::Lt: case ExprOp::Le:
    case ExprOp::Gt: case ExprOp::Ge: case ExprOp::And: case ExprOp::Or:
      t = scalar(Datatype::Bool);
      break;
    default:
      t = rank(a->type.elem) >= rank(b->type.elem) ? a->type : b->type;
      t.pointer = false;
      t.constData = false;
      t.pointerToPointer = false;
  }
  auto n = node(op, t);
  n->args = {std::move(a), std::move(b)};
  return n;
}

Stmt block(std::vector<Stmt> stmts) {
  auto n = snode(StmtOp::Block);
  for (auto& s : stmts)
    if (s) n->body.push_back(std::move(s));
  return n;
}
Stmt decl(Expr v, Expr init) {
  auto n = snode(StmtOp::Decl);
  n->args = {std::move(v), std::move(init)};
  return n;
}
Stmt persistentArray(Expr v, int64_t count) {
  TESSEL_CHECK(v->type.pointer, "a persistent array's variable is not a pointer");
  auto n = snode(StmtOp::Decl);
  n->args = {std::move(v), nullptr};
  n->persistent = true;
  n->ival = count;
  return n;
}
Stmt assign(Expr v, Expr value) {
  auto n = snode(StmtOp::Assign);
  n->args = {std::move(v), std::move(value)};
  return n;
}
Stmt store(Expr array, Expr index, Expr value, bool accumulate) {
  return store(std::move(array), std::move(index), std::move(value), accumulate ? ReduceOp::Add : ReduceOp::None);
}
Stmt store(Expr array, Expr index, Expr value, ReduceOp op) {
  auto n = snode(StmtOp::Store);
  n->args = {std::move(array), std::move(index), std::move(value)};
  n->accumulate = op;
  return n;
}
Expr reduceExpr(ReduceOp op, Expr a, Expr b) {
  switch (op) {
    case ReduceOp::Add: return add(std::move(a), std::move(b));
    case ReduceOp::Min: return binary(ExprOp::Min, std::move(a), std::move(b));
    case ReduceOp::Max: return binary(ExprOp::Max, std::move(a), std::move(b));
    case ReduceOp::Or:
    case ReduceOp::And: {
      // Logical on values of any type: nonzero is true, the result 1 or 0 of a's type.
      Type t = a->type;
      Expr za = t.elem == Datatype::Float32 || t.elem == Datatype::Float64 ? floatImm(0, t) : intImm(0, t);
      Expr one = t.elem == Datatype::Float32 || t.elem == Datatype::Float64 ? floatImm(1, t) : intImm(1, t);
      Expr ca = binary(ExprOp::Ne, std::move(a), za), cb = binary(ExprOp::Ne, std::move(b), za);
      return select(binary(op == ReduceOp::Or ? ExprOp::Or : ExprOp::And, ca, cb), one, za);
    }
    case ReduceOp::Any: {
      Type t = b->type;
      Expr zb = t.elem == Datatype::Float32 || t.elem == Datatype::Float64 ? floatImm(0, t) : intImm(0, t);
      Expr present = binary(ExprOp::Ne, b, zb);
      return select(present, std::move(b), std::move(a));
    }
    case ReduceOp::None: break;
  }
  throw InternalError("reduceExpr: no operator");
}
Stmt atomicAdd(Expr array, Expr index, Expr value) {
  auto n = snode(StmtOp::Store);
  n->args = {std::move(array), std::move(index), std::move(value)};
  n->accumulate = ReduceOp::Add;
  n->atomic = true;
  return n;
}
Stmt forRange(Expr v, Expr begin, Expr end, Stmt body, LoopInfo loop) {
  TESSEL_CHECK((loop.kind == LoopKind::CpuParallel) == (loop.strategy != ParallelStrategy::None),
               "a CPU-parallel loop needs a strategy, and only it");
  auto n = snode(StmtOp::For);
  n->args = {std::move(v), std::move(begin), std::move(end)};
  n->body = {std::move(body)};
  n->loop = std::move(loop);
  return n;
}
Stmt whileLoop(Expr cond, Stmt body) {
  auto n = snode(StmtOp::While);
  n->args = {std::move(cond)};
  n->body = {std::move(body)};
  return n;
}
Stmt ifThen(Expr cond, Stmt then, Stmt otherwise) {
  auto n = snode(StmtOp::If);
  n->args = {std::move(cond)};
  n->body = {std::move(then)};
  if (otherwise) n->elseBody = {std::move(otherwise)};
  return n;
}
Stmt comment(const std::string& text) {
  auto n = snode(StmtOp::Comment);
  n->text = text;
  return n;
}
Stmt returnCode(int64_t code) {
  auto n = snode(StmtOp::Return);
  n->ival = code;
  return n;
}
Stmt alloc(Expr v, Expr count, bool zero) {
  auto n = snode(StmtOp::Alloc);
  n->args = {std::move(v), std::move(count)};
  n->fill = zero ? AllocFill::Zero : AllocFill::None;
  return n;
}
Stmt allocInto(Expr v, Expr slot, Expr count, AllocFill fill) {
  auto n = snode(StmtOp::Alloc);
  n->args = {std::move(v), std::move(count), std::move(slot)};
  n->fill = fill;
  return n;
}
Stmt freeArray(Expr v) {
  auto n = snode(StmtOp::Free);
  n->args = {std::move(v)};
  return n;
}
Stmt evaluate(Expr e) {
  auto n = snode(StmtOp::Evaluate);
  n->args = {std::move(e)};
  return n;
}
Stmt breakLoop() { return snode(StmtOp::Break); }

const char* loopKindName(LoopKind k) {
  switch (k) {
    case LoopKind::Serial: return "Serial";
    case LoopKind::CpuParallel: return "CpuParallel";
    case LoopKind::Vectorized: return "Vectorized";
    case LoopKind::GpuBlock: return "GpuBlock";
    case LoopKind::GpuThread: return "GpuThread";
    case LoopKind::Distributed: return "Distributed";
  }
  return "unknown";
}

const char* infixSymbol(ExprOp op) {
  switch (op) {
    case ExprOp::Add: return "+";
    case ExprOp::Sub: return "-";
    case ExprOp::Mul: return "*";
    case ExprOp::Div: return "/";
    case ExprOp::Mod: return "%";
    case ExprOp::Eq: return "==";
    case ExprOp::Ne: return "!=";
    case ExprOp::Lt: return "<";
    case ExprOp::Le: return "<=";
    case ExprOp::Gt: return ">";
    case ExprOp::Ge: return ">=";
    case ExprOp::And: return "&&";
    case ExprOp::Or: return "||";
    default: return nullptr;
  }
}

}  // namespace tessel::ir
