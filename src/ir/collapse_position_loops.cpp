// Collapse position loops: a loop over a parent level's positions p whose only work is
// a loop over the child positions of p,
//   for p in [b, e): { pure decls; for q in [F(p), F(p + 1)): body }   (body free of p, decls)
// with F monotone in p (pos-array loads of p, e.g. T1_pos[p]), runs the same q in the
// same order as the single loop
//   for q in [F(b), F(e)): body
// (the children of consecutive parents are consecutive). SpTTV's fibers, element-wise
// kernels on a copied pattern: one loop instead of a short inner loop per row, whose
// exit mispredicts once per row (about 10% of SpTTV on kg-fb15k-237 in a C harness).
// Per-row prefetch hints before the inner loop are dropped (the single loop streams).
// Inner bounds clamped to a window, max(F(p), lo) and min(F(p + 1), hi) as a position
// split makes them, collapse to the clamped range.
#include <optional>

#include "ir/ir.h"
#include "ir/rewrite.h"

namespace tessel::ir {

namespace {

/// `if (flag) { tessel_prefetch(..); ... }`: a hint, safe to drop.
bool isPrefetchHint(const Stmt& s) {
  if (s->op != StmtOp::If || !s->elseBody.empty() || s->body.empty()) return false;
  for (const Stmt& h : statementsOf(s->body[0]))
    if (h->op != StmtOp::Evaluate || h->args[0]->op != ExprOp::Call || h->args[0]->name != "tessel_prefetch")
      return false;
  return true;
}

/// Whether s breaks out of a loop, or reads any of `names`.
bool breaksOrReads(const Stmt& s, const std::set<std::string>& names) {
  return anyStmt(s, [](const Stmt& t) { return t->op == StmtOp::Break; }) || stmtMentionsAny(s, names);
}

/// An inner bound: g, or g clamped by `clamp` (Max for begins, Min for ends) with a
/// limit free of the outer loop's names; g must mention p.
struct Bound {
  Expr g;
  Expr limit;  ///< the clamp's other operand, or null
};

std::optional<Bound> splitBound(const Expr& e, ExprOp clamp, const std::string& p,
                                const std::set<std::string>& perP) {
  if (e->op == clamp && e->args.size() == 2) {
    for (int k = 0; k < 2; k++) {
      const Expr &g = e->args[k], &limit = e->args[1 - k];
      if (ir::mentions(g, p) && !ir::mentionsAny(limit, perP)) return Bound{g, limit};
    }
    return std::nullopt;
  }
  return Bound{e, nullptr};
}

/// The collapsed loop for `outer`, or null when it does not have the shape above.
Stmt collapse(const Stmt& outer) {
  if (outer->op != StmtOp::For || !outer->loop.plain()) return nullptr;
  std::vector<Stmt> stmts = statementsOf(outer->body[0]);
  if (stmts.empty() || stmts.back()->op != StmtOp::For) return nullptr;
  const Stmt& inner = stmts.back();
  // A parallel inner loop was checked for races within one row, not across rows.
  if (inner->loop.kind != LoopKind::Serial || inner->loop.reductionVar) return nullptr;
  const std::string p = outer->args[0]->name;
  std::set<std::string> perP = {p};
  std::map<std::string, Expr> defs;  // the decls, expanded into the inner bounds
  for (size_t k = 0; k + 1 < stmts.size(); k++) {
    if (isPrefetchHint(stmts[k])) continue;  // per-row hints: the single loop streams
    if (!isPureDecl(stmts[k])) return nullptr;
    const Expr& v = stmts[k]->args[0];
    perP.insert(v->name);
    defs[v->name] = rename(stmts[k]->args[1], defs);
  }
  const Stmt& body = inner->body[0];
  if (breaksOrReads(body, perP)) return nullptr;
  auto begin = splitBound(rename(inner->args[1], defs), ExprOp::Max, p, perP);
  auto end = splitBound(rename(inner->args[2], defs), ExprOp::Min, p, perP);
  if (!begin || !end || !childrenOf(begin->g, end->g, outer->args[0])) return nullptr;
  Expr lo = rename(begin->g, {{p, outer->args[1]}}), hi = rename(begin->g, {{p, outer->args[2]}});
  if (begin->limit) lo = binary(ExprOp::Max, lo, begin->limit);
  if (end->limit) hi = minOf(hi, end->limit);
  return forRange(inner->args[0], lo, hi, body, inner->loop);
}

Stmt rewrite(const Stmt& s) {
  if (!s) return s;
  auto n = std::make_shared<StmtNode>(*s);
  for (Stmt& c : n->body) c = rewrite(c);
  for (Stmt& c : n->elseBody) c = rewrite(c);
  if (Stmt flat = collapse(n)) return flat;
  return n;
}

}  // namespace

Stmt collapsePositionLoops(const Stmt& s) { return rewrite(s); }

}  // namespace tessel::ir
