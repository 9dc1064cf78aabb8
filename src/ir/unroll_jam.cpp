// Unroll and jam: a loop over p whose body only adds into one row of an array,
//   for p: { decl k = crd[p]; ...; for j: { decls; Y[idx(j)] += v(p, j) } }
// (SpMM's and MTTKRP's position loops, dense GEMM's k loop), loads and stores the row
// once per p. Four p at a time, their terms summed before one update,
//   for j: Y[idx(j)] += (v(p0, j) + v(p1, j)) + (v(p2, j) + v(p3, j)),
// do a quarter of the row's loads and stores, which bound the loop on current cores (one
// 256-bit store a cycle): SpMM 1.5-1.7x in a C harness. Like the reduction chains it
// changes the summation order, the same way for every thread count.
#include <optional>

#include "ir/ir.h"
#include "ir/rewrite.h"

namespace tessel::ir {

namespace {

constexpr int64_t kJam = 4;

/// for p: { outer statements; for j: { inner decls; store } }, the shape this pass
/// rewrites. The outer statements are pure declarations and, for a fused nest's producer
/// (loopfuse), scalar sums `for k: { decls; acc = acc op v }` into a scalar declared
/// before them: each copy of p gets its own sum, jammed like the declarations.
struct JamLoop {
  std::vector<Stmt> outerDecls;  ///< declarations and scalar sums, in order
  Stmt inner;
  std::vector<Stmt> innerDecls;
  Stmt store;
  std::set<std::string> perP;  ///< names whose value depends on p: p, outer decls, inner decls using them
};

/// Whether e loads from the array named `array`.
bool loadsFrom(const Expr& e, const std::string& array) {
  if (!e) return false;
  if (e->op == ExprOp::Load && e->args[0]->op == ExprOp::Var && e->args[0]->name == array) return true;
  for (const Expr& a : e->args)
    if (loadsFrom(a, array)) return true;
  return false;
}

/// Whether any expression of s (or of the statements inside it) loads from `array`.
bool stmtLoadsFrom(const Stmt& s, const std::string& array) {
  return anyStmt(s, [&](const Stmt& x) {
    for (const Expr& e : x->args)
      if (loadsFrom(e, array)) return true;
    return false;
  });
}

/// `for k: { pure decls; acc = op(acc, v) }` with acc one of `scalars`: a sum into a
/// scalar the loop over p declared (loopfuse's producer). Nothing else is written.
bool isScalarSum(const Stmt& s, const std::set<std::string>& scalars) {
  if (s->op != StmtOp::For || !s->loop.plain()) return false;
  std::vector<Stmt> body = statementsOf(s->body[0]);
  if (body.empty()) return false;
  const Stmt& last = body.back();
  if (last->op != StmtOp::Assign || last->args[0]->op != ExprOp::Var || !scalars.count(last->args[0]->name))
    return false;
  for (size_t i = 0; i + 1 < body.size(); i++)
    if (!isPureDecl(body[i])) return false;
  return true;
}

std::optional<JamLoop> matchJam(const Stmt& loop) {
  if (loop->op != StmtOp::For || !loop->loop.plain()) return std::nullopt;
  std::vector<Stmt> outer = statementsOf(loop->body[0]);
  if (outer.empty() || outer.back()->op != StmtOp::For || !outer.back()->loop.plain()) return std::nullopt;
  JamLoop m;
  m.perP.insert(loop->args[0]->name);
  std::set<std::string> scalars;  // outer decls of a scalar: what a sum may accumulate into
  for (size_t i = 0; i + 1 < outer.size(); i++) {
    if (isPureDecl(outer[i])) {
      m.outerDecls.push_back(outer[i]);
      m.perP.insert(outer[i]->args[0]->name);
      if (!outer[i]->args[0]->type.pointer) scalars.insert(outer[i]->args[0]->name);
      continue;
    }
    if (!isScalarSum(outer[i], scalars)) return std::nullopt;
    m.outerDecls.push_back(outer[i]);
  }
  m.inner = outer.back();
  if (mentionsAny(m.inner->args[1], m.perP) || mentionsAny(m.inner->args[2], m.perP)) return std::nullopt;
  std::vector<Stmt> inner = statementsOf(m.inner->body[0]);
  if (inner.empty()) return std::nullopt;
  m.store = inner.back();
  if (m.store->op != StmtOp::Store || m.store->accumulate != ReduceOp::Add || m.store->atomic) return std::nullopt;
  for (size_t i = 0; i + 1 < inner.size(); i++) {
    if (!isPureDecl(inner[i])) return std::nullopt;
    m.innerDecls.push_back(inner[i]);
    if (mentionsAny(inner[i]->args[1], m.perP)) m.perP.insert(inner[i]->args[0]->name);
  }
  const Expr& array = m.store->args[0];
  // Every p adds into the same entries, and nothing in the loop reads them back.
  if (array->op != ExprOp::Var || mentionsAny(m.store->args[1], m.perP) || hasCall(m.store->args[2]))
    return std::nullopt;
  for (const Stmt& d : m.outerDecls)
    if (stmtLoadsFrom(d, array->name)) return std::nullopt;
  for (const Stmt& d : m.innerDecls)
    if (loadsFrom(d->args[1], array->name)) return std::nullopt;
  if (loadsFrom(m.store->args[1], array->name) || loadsFrom(m.store->args[2], array->name)) return std::nullopt;
  return m;
}

/// (t0 + t1) + (t2 + t3): a balanced tree, so the terms' adds are independent.
Expr pairwiseSum(std::vector<Expr> terms) {
  while (terms.size() > 1) {
    std::vector<Expr> next;
    for (size_t i = 0; i + 1 < terms.size(); i += 2) next.push_back(add(terms[i], terms[i + 1]));
    if (terms.size() % 2) next.push_back(terms.back());
    terms = std::move(next);
  }
  return terms[0];
}

class Jammer {
 public:
  explicit Jammer(const Stmt& root) : fresh_(root) {}

  Stmt rewrite(const Stmt& s) {
    if (!s) return s;
    if (s->op == StmtOp::For)
      if (auto m = matchJam(s)) return jam(s, *m);
    auto n = std::make_shared<StmtNode>(*s);
    for (Stmt& c : n->body) c = rewrite(c);
    for (Stmt& c : n->elseBody) c = rewrite(c);
    return n;
  }

 private:
  /// for p in [lo, hi): body   becomes
  ///   for q in [0, (hi - lo) / 4): { p = lo + 4q, p_1 = p + 1, ...; outer decls of each;
  ///                                  for j: { inner decls of each; Y[idx] += (v0 + v1) + (v2 + v3) } }
  ///   for p in [lo + 4 * ((hi - lo) / 4), hi): body
  Stmt jam(const Stmt& loop, const JamLoop& m) {
    const Expr& p = loop->args[0];
    Type t = p->type;
    Expr lo = var(fresh_(p->name + "_lo"), t), hi = var(fresh_(p->name + "_hi"), t);
    Expr groups = var(fresh_(p->name + "_groups"), t), q = var(fresh_(p->name + "_group"), t);

    std::vector<Stmt> groupBody, innerBody;
    std::vector<Expr> terms;
    for (int64_t c = 0; c < kJam; c++) {
      std::map<std::string, Expr> to;
      auto renamed = [&](const Expr& v) {
        if (c == 0) return v;
        Expr nv = var(fresh_(v->name + "_" + std::to_string(c)), v->type);
        to[v->name] = nv;
        return nv;
      };
      Expr pc = renamed(p);
      groupBody.push_back(decl(pc, add(add(lo, mul(intImm(kJam, t), q)), intImm(c, t))));
      for (const Stmt& d : m.outerDecls) {
        if (d->op == StmtOp::For) {  // a scalar sum: its own copy, over this copy's names
          groupBody.push_back(renameIn(d, to));
          continue;
        }
        Expr init = rename(d->args[1], to);
        groupBody.push_back(decl(renamed(d->args[0]), init));
      }
      for (const Stmt& d : m.innerDecls) {
        bool varies = m.perP.count(d->args[0]->name) > 0;
        if (c > 0 && !varies) continue;  // the same in every copy: declared once
        Expr init = rename(d->args[1], to);
        innerBody.push_back(decl(varies ? renamed(d->args[0]) : d->args[0], init));
      }
      terms.push_back(rename(m.store->args[2], to));
    }
    innerBody.push_back(store(m.store->args[0], m.store->args[1], pairwiseSum(terms), true));
    groupBody.push_back(forRange(m.inner->args[0], m.inner->args[1], m.inner->args[2], block(innerBody)));

    return block({decl(lo, loop->args[1]), decl(hi, loop->args[2]),
                  decl(groups, binary(ExprOp::Div, sub(hi, lo), intImm(kJam, t))),
                  forRange(q, intImm(0, t), groups, block(groupBody)),
                  forRange(p, add(lo, mul(intImm(kJam, t), groups)), hi, loop->body[0])});
  }

  FreshNames fresh_;
};

}  // namespace

Stmt unrollAndJam(const Stmt& s) { return Jammer(s).rewrite(s); }

}  // namespace tessel::ir
