// Shared helpers of the IR-to-IR passes.
#include "ir/rewrite.h"

namespace tessel::ir {

bool mentions(const Expr& e, const std::string& name) { return mentionsAny(e, {name}); }

bool mentionsAny(const Expr& e, const std::set<std::string>& names) {
  if (!e) return false;
  if (e->op == ExprOp::Var) return names.count(e->name) > 0;
  for (const Expr& a : e->args)
    if (mentionsAny(a, names)) return true;
  return false;
}

bool hasCall(const Expr& e) {
  if (!e) return false;
  if (e->op == ExprOp::Call) return true;
  for (const Expr& a : e->args)
    if (hasCall(a)) return true;
  return false;
}

Expr rename(const Expr& e, const std::map<std::string, Expr>& to) {
  if (!e) return e;
  if (e->op == ExprOp::Var) {
    auto it = to.find(e->name);
    return it == to.end() ? e : it->second;
  }
  auto n = std::make_shared<ExprNode>(*e);
  for (Expr& a : n->args) a = rename(a, to);
  return n;
}

void forEachStmt(const Stmt& s, const std::function<void(const Stmt&)>& f) {
  if (!s) return;
  f(s);
  for (const Stmt& c : s->body) forEachStmt(c, f);
  for (const Stmt& c : s->elseBody) forEachStmt(c, f);
}

bool anyStmt(const Stmt& s, const std::function<bool(const Stmt&)>& pred) {
  if (!s) return false;
  if (pred(s)) return true;
  for (const Stmt& c : s->body)
    if (anyStmt(c, pred)) return true;
  for (const Stmt& c : s->elseBody)
    if (anyStmt(c, pred)) return true;
  return false;
}

bool stmtMentionsAny(const Stmt& s, const std::set<std::string>& names) {
  return anyStmt(s, [&](const Stmt& t) {
    for (const Expr& a : t->args)
      if (mentionsAny(a, names)) return true;
    return false;
  });
}

Stmt renameIn(const Stmt& s, const std::map<std::string, Expr>& to) {
  if (!s) return s;
  auto n = std::make_shared<StmtNode>(*s);
  for (Expr& a : n->args) a = rename(a, to);
  n->loop.reductionVar = rename(n->loop.reductionVar, to);
  for (Stmt& c : n->body) c = renameIn(c, to);
  for (Stmt& c : n->elseBody) c = renameIn(c, to);
  return n;
}

std::vector<Stmt> statementsOf(const Stmt& body) {
  return body->op == StmtOp::Block ? body->body : std::vector<Stmt>{body};
}

bool isPureDecl(const Stmt& s) {
  return s->op == StmtOp::Decl && s->args.size() >= 2 && s->args[1] && !hasCall(s->args[1]);
}

bool sameExpr(const Expr& a, const Expr& b) {
  if (!a || !b) return a == b;
  if (a->op != b->op || !(a->type == b->type) || a->name != b->name || a->ival != b->ival ||
      a->fval != b->fval || a->args.size() != b->args.size())
    return false;
  for (size_t k = 0; k < a->args.size(); k++)
    if (!sameExpr(a->args[k], b->args[k])) return false;
  return true;
}

bool monotoneIn(const Expr& e, const std::string& p) {
  switch (e->op) {
    case ExprOp::Var: return e->name == p;
    case ExprOp::Cast: return !e->type.pointer && monotoneIn(e->args[0], p);
    case ExprOp::Load:
      return e->args[0]->op == ExprOp::Var && e->args[0]->type.constData && monotoneIn(e->args[1], p);
    default: return false;
  }
}

bool childrenOf(const Expr& begin, const Expr& end, const Expr& x) {
  return monotoneIn(begin, x->name) && sameExpr(end, rename(begin, {{x->name, add(x, intImm(1, x->type))}}));
}

namespace {
void collectNames(const Expr& e, std::set<std::string>& names) {
  if (!e) return;
  if (e->op == ExprOp::Var) names.insert(e->name);
  for (const Expr& a : e->args) collectNames(a, names);
}
void collectNames(const Stmt& s, std::set<std::string>& names) {
  if (!s) return;
  for (const Expr& a : s->args) collectNames(a, names);
  collectNames(s->loop.reductionVar, names);
  for (const Stmt& c : s->body) collectNames(c, names);
  for (const Stmt& c : s->elseBody) collectNames(c, names);
}
}  // namespace

FreshNames::FreshNames(const Stmt& root) { collectNames(root, used_); }

std::string FreshNames::operator()(const std::string& base) {
  std::string c = base;
  for (int k = 2; used_.count(c); k++) c = base + std::to_string(k);
  used_.insert(c);
  return c;
}

}  // namespace tessel::ir
