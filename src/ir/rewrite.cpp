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

std::vector<Stmt> statementsOf(const Stmt& body) {
  return body->op == StmtOp::Block ? body->body : std::vector<Stmt>{body};
}

bool isPureDecl(const Stmt& s) {
  return s->op == StmtOp::Decl && s->args.size() >= 2 && s->args[1] && !hasCall(s->args[1]);
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
