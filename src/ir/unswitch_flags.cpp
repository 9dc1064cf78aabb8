// Unswitch per-call flags: a loop nest that tests a flag set once before it (whether an
// operand's arrays stream, whether its segments are long enough for two sum chains),
//   for i: { ...; if (flag) A else B; ... }
// becomes one copy of the nest per value of the flag,
//   if (flag) for i: { ...; A; ... } else for i: { ...; B; ... }
// The tests cost a compare and branch per row, and on short rows (SpMV on graphs and road
// networks, 2-20 entries a row) the extra branches in the row loop cost 5-16% in a C
// harness, although each is perfectly predicted. At most kMaxFlags flags deep per nest;
// the outermost loop that tests a flag is copied, a parallel loop included.
#include <algorithm>

#include "ir/ir.h"
#include "ir/rewrite.h"

namespace tessel::ir {

namespace {

constexpr size_t kMaxFlags = 4;

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

/// One copy of `loop` per value of its first invariant flag, that flag replaced by a
/// constant and the dead branches dropped, each copy split again on the flags it still
/// tests: a flag that only matters when another is false (the gathers' and two chains'
/// choices of one sum) adds one copy, not twice as many.
Stmt copies(const Stmt& loop, size_t depth) {
  std::vector<Expr> flags = invariantFlags(loop);
  if (flags.empty() || depth == kMaxFlags) return loop;
  const Expr& f = flags[0];
  Stmt yes = simplify(renameIn(loop, {{f->name, intImm(1, scalar(Datatype::Bool))}}));
  Stmt no = simplify(renameIn(loop, {{f->name, intImm(0, scalar(Datatype::Bool))}}));
  return ifThen(f, copies(yes, depth + 1), copies(no, depth + 1));
}

Stmt rewrite(const Stmt& s) {
  if (!s) return s;
  if (s->op == StmtOp::For) return copies(s, 0);
  auto n = std::make_shared<StmtNode>(*s);
  for (Stmt& c : n->body) c = rewrite(c);
  for (Stmt& c : n->elseBody) c = rewrite(c);
  return n;
}

}  // namespace

Stmt unswitchLoopFlags(const Stmt& s) { return rewrite(s); }

}  // namespace tessel::ir
