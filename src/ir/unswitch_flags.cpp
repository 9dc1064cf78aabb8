// Unswitch per-call flags: a loop nest that tests a flag set once before it (whether an
// operand's arrays stream, whether its segments are long enough for two sum chains),
//   for i: { ...; if (flag) A else B; ... }
// becomes one copy of the nest per value of the flag,
//   if (flag) for i: { ...; A; ... } else for i: { ...; B; ... }
// The tests cost a compare and branch per row, and on short rows (SpMV on graphs and road
// networks, 2-20 entries a row) the extra branches in the row loop cost 5-16% in a C
// harness, although each is perfectly predicted. At most kMaxFlags flags per nest (2^k
// copies); the outermost loop that tests a flag is copied, a parallel loop included.
#include <algorithm>

#include "ir/ir.h"
#include "ir/rewrite.h"

namespace tessel::ir {

namespace {

constexpr size_t kMaxFlags = 2;

void declaredIn(const Stmt& s, std::set<std::string>& names) {
  if (!s) return;
  if ((s->op == StmtOp::Decl || s->op == StmtOp::Assign) && s->args[0]->op == ExprOp::Var)
    names.insert(s->args[0]->name);
  for (const Stmt& c : s->body) declaredIn(c, names);
  for (const Stmt& c : s->elseBody) declaredIn(c, names);
}

/// The boolean variables that whole `if` conditions in s test, in order of first use.
void testedFlags(const Stmt& s, std::vector<std::string>& flags) {
  if (!s) return;
  if (s->op == StmtOp::If) {
    const Expr& c = s->args[0];
    if (c->op == ExprOp::Var && !c->type.pointer && c->type.elem == Datatype::Bool &&
        std::find(flags.begin(), flags.end(), c->name) == flags.end())
      flags.push_back(c->name);
  }
  for (const Stmt& c : s->body) testedFlags(c, flags);
  for (const Stmt& c : s->elseBody) testedFlags(c, flags);
}

Stmt substitute(const Stmt& s, const std::map<std::string, Expr>& to) {
  if (!s) return s;
  auto n = std::make_shared<StmtNode>(*s);
  for (Expr& a : n->args) a = rename(a, to);
  for (Stmt& c : n->body) c = substitute(c, to);
  for (Stmt& c : n->elseBody) c = substitute(c, to);
  return n;
}

/// Flags the loop tests that keep their value through it (declared and assigned outside).
std::vector<Expr> invariantFlags(const Stmt& loop) {
  std::vector<std::string> tested;
  testedFlags(loop, tested);
  std::set<std::string> local;
  declaredIn(loop, local);
  std::vector<Expr> flags;
  for (const std::string& f : tested)
    if (!local.count(f) && flags.size() < kMaxFlags) flags.push_back(var(f, scalar(Datatype::Bool)));
  return flags;
}

/// One copy of `loop` per value of flags[k..]: nested ifs, the flags replaced by
/// constants (the caller's simplify then drops the dead branches).
Stmt copies(const Stmt& loop, const std::vector<Expr>& flags, size_t k, std::map<std::string, Expr>& values) {
  if (k == flags.size()) return substitute(loop, values);
  values[flags[k]->name] = intImm(1, scalar(Datatype::Bool));
  Stmt yes = copies(loop, flags, k + 1, values);
  values[flags[k]->name] = intImm(0, scalar(Datatype::Bool));
  Stmt no = copies(loop, flags, k + 1, values);
  values.erase(flags[k]->name);
  return ifThen(flags[k], yes, no);
}

Stmt rewrite(const Stmt& s) {
  if (!s) return s;
  if (s->op == StmtOp::For) {
    std::vector<Expr> flags = invariantFlags(s);
    if (!flags.empty()) {
      std::map<std::string, Expr> values;
      return copies(s, flags, 0, values);
    }
    return s;
  }
  auto n = std::make_shared<StmtNode>(*s);
  for (Stmt& c : n->body) c = rewrite(c);
  for (Stmt& c : n->elseBody) c = rewrite(c);
  return n;
}

}  // namespace

Stmt unswitchLoopFlags(const Stmt& s) { return rewrite(s); }

}  // namespace tessel::ir
