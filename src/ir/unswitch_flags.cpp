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

/// Variables s declares or assigns.
std::set<std::string> declaredIn(const Stmt& s) {
  std::set<std::string> names;
  forEachStmt(s, [&](const Stmt& t) {
    if ((t->op == StmtOp::Decl || t->op == StmtOp::Assign) && t->args[0]->op == ExprOp::Var)
      names.insert(t->args[0]->name);
  });
  return names;
}

/// The boolean variables that whole `if` conditions in s test, in order of first use.
std::vector<std::string> testedFlags(const Stmt& s) {
  std::vector<std::string> flags;
  forEachStmt(s, [&](const Stmt& t) {
    if (t->op != StmtOp::If) return;
    const Expr& c = t->args[0];
    if (c->op == ExprOp::Var && !c->type.pointer && c->type.elem == Datatype::Bool &&
        std::find(flags.begin(), flags.end(), c->name) == flags.end())
      flags.push_back(c->name);
  });
  return flags;
}

/// Flags the loop tests that keep their value through it (declared and assigned outside).
std::vector<Expr> invariantFlags(const Stmt& loop) {
  std::set<std::string> local = declaredIn(loop);
  std::vector<Expr> flags;
  for (const std::string& f : testedFlags(loop))
    if (!local.count(f) && flags.size() < kMaxFlags) flags.push_back(var(f, scalar(Datatype::Bool)));
  return flags;
}

/// One copy of `loop` per value of flags[k..]: nested ifs, the flags replaced by
/// constants (the caller's simplify then drops the dead branches).
Stmt copies(const Stmt& loop, const std::vector<Expr>& flags, size_t k, std::map<std::string, Expr>& values) {
  if (k == flags.size()) return renameIn(loop, values);
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
