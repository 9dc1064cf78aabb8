// Reduction chains: a loop whose only effect is `acc = acc + v` on a floating-point
// scalar runs at one add latency per iteration (4 cycles for a fused multiply-add),
// because C compilers keep the program's summation order. Most such loops in tensor
// kernels (SpMV's row, SDDMM's dot product) are short and latency-bound, so this pass
// lets them sum in a different, still deterministic, order:
//  - every load's index is affine in the loop (dense dot products): `omp simd
//    reduction(+:acc)`, vector lanes as independent chains;
//  - some load is indirect (x[crd[p]]): two scalar chains over even and odd iterations
//    for long rows; short ones keep one chain, its product kept from fusing with the add
//    (tessel_unfused). A plain sparse dot product v[p] * x[crd[p]] (SpMV's row, SpTTV's
//    fiber) also gets vector versions with gathers (AVX-512): 8-entry steps
//    (tessel_gather_dot_*) when its rows average 12 entries or more, 4-entry steps
//    (tessel_gather_dot4_*) for shorter rows of irregular lengths, where the scalar
//    loop's exit mispredicts; shorter rows of one length keep the scalar loop. `omp simd`
//    gathers lost to scalar loads everywhere (a per-row prologue and epilogue).
// The order depends only on the loop's bounds, never on the thread count.
// A semiring's `acc = min(acc, v)` / `max` (exact in any order) gets the vector lanes
// (`reduction(min:acc)`) when every load is affine; other min/max loops stay as written.
#include <functional>
#include <optional>

#include "ir/ir.h"
#include "ir/rewrite.h"

namespace tessel::ir {

namespace {

bool isFloatScalar(const Type& t) {
  return !t.pointer && (t.elem == Datatype::Float32 || t.elem == Datatype::Float64);
}

/// e without the casts around it.
Expr stripCasts(Expr e) {
  while (e->op == ExprOp::Cast) e = e->args[0];
  return e;
}

/// A loop `for p: { decl x = ...; ...; acc = acc + v; }`, the shape this pass rewrites.
struct Reduction {
  Expr acc;
  std::vector<Stmt> decls;  ///< the loop body's declarations, in order
  Expr value;               ///< v
  ReduceOp op = ReduceOp::Add;  ///< acc = acc + v, or min(acc, v) / max(acc, v)
};

std::optional<Reduction> matchReduction(const Stmt& loop) {
  if (loop->op != StmtOp::For || !loop->loop.plain()) return std::nullopt;
  std::vector<Stmt> stmts = statementsOf(loop->body[0]);
  if (stmts.empty()) return std::nullopt;
  const Stmt& last = stmts.back();
  if (last->op != StmtOp::Assign) return std::nullopt;
  const Expr& acc = last->args[0];
  const Expr& sum = last->args[1];
  ReduceOp op = sum->op == ExprOp::Add ? ReduceOp::Add
                : sum->op == ExprOp::Min ? ReduceOp::Min
                : sum->op == ExprOp::Max ? ReduceOp::Max
                                         : ReduceOp::None;
  if (acc->op != ExprOp::Var || !isFloatScalar(acc->type) || op == ReduceOp::None) return std::nullopt;
  if (sum->args[0]->op != ExprOp::Var || sum->args[0]->name != acc->name) return std::nullopt;
  Reduction r{acc, {}, sum->args[1], op};
  if (mentions(r.value, acc->name) || hasCall(r.value)) return std::nullopt;
  for (size_t i = 0; i + 1 < stmts.size(); i++) {
    const Stmt& d = stmts[i];
    if (!isPureDecl(d) || mentions(d->args[1], acc->name)) return std::nullopt;
    r.decls.push_back(d);
  }
  return r;
}

/// A loop `for p in [b, e): { ...; m = c; }` whose body ends with constant assignments
/// to flags that nothing in the loop reads (a sparse output's "row has an entry"): the
/// loop without them, and `if (b < e) { m = c; }` to run after it, which is the same.
/// Then the rest of the body can be a reduction.
std::optional<std::pair<Stmt, Stmt>> withoutMarks(const Stmt& loop) {
  if (loop->op != StmtOp::For || !loop->loop.plain() || hasCall(loop->args[1]) || hasCall(loop->args[2]))
    return std::nullopt;
  std::vector<Stmt> stmts = statementsOf(loop->body[0]);
  std::vector<Stmt> marks;
  while (!stmts.empty() && stmts.back()->op == StmtOp::Assign && stmts.back()->args[0]->op == ExprOp::Var &&
         stmts.back()->args[1]->op == ExprOp::IntImm) {
    marks.insert(marks.begin(), stmts.back());
    stmts.pop_back();
  }
  if (marks.empty() || stmts.empty()) return std::nullopt;
  std::set<std::string> flags;
  for (const Stmt& m : marks) flags.insert(m->args[0]->name);
  if (mentionsAny(loop->args[1], flags) || mentionsAny(loop->args[2], flags) || stmtMentionsAny(block(stmts), flags))
    return std::nullopt;
  auto bare = std::make_shared<StmtNode>(*loop);
  bare->body = {block(stmts)};
  return std::make_pair(Stmt(bare), ifThen(lt(loop->args[1], loop->args[2]), block(marks)));
}

/// Whether some load's index, with the body's declarations substituted, reads memory.
bool hasIndirectLoad(const Reduction& r) {
  std::set<std::string> loaded;  // body variables whose value came from memory
  std::function<bool(const Expr&)> readsMemory = [&](const Expr& e) {
    if (!e) return false;
    if (e->op == ExprOp::Load) return true;
    if (e->op == ExprOp::Var) return loaded.count(e->name) > 0;
    for (const Expr& a : e->args)
      if (readsMemory(a)) return true;
    return false;
  };
  std::function<bool(const Expr&)> indirect = [&](const Expr& e) {
    if (!e) return false;
    if (e->op == ExprOp::Load && readsMemory(e->args[1])) return true;
    for (const Expr& a : e->args)
      if (indirect(a)) return true;
    return false;
  };
  for (const Stmt& d : r.decls) {
    if (indirect(d->args[1])) return true;
    if (readsMemory(d->args[1])) loaded.insert(d->args[0]->name);
  }
  return indirect(r.value);
}

/// A sparse dot product `acc += v[p] * x[crd[p]]`: what tessel_gather_dot_* computes.
struct GatherDot {
  Expr vals, crd, x;
};

/// v[p] * x[(cast)crd[p]] (either order) with float64 (float32) v, x and acc and int32
/// crd, the body's declarations substituted; v, x and crd arrays named by variables.
std::optional<GatherDot> matchGatherDot(const Reduction& r, const Expr& p) {
  Datatype t = r.acc->type.elem;
  std::map<std::string, Expr> value;  // each declaration's value, in terms of p
  for (const Stmt& d : r.decls) value[d->args[0]->name] = rename(d->args[1], value);
  Expr e = rename(r.value, value);
  if (e->op != ExprOp::Mul) return std::nullopt;
  auto arrayOf = [](const Expr& load, Datatype elem) -> Expr {
    if (load->op != ExprOp::Load || load->args[0]->op != ExprOp::Var) return nullptr;
    const Type& a = load->args[0]->type;
    return a.pointer && a.elem == elem ? load->args[0] : nullptr;
  };
  auto atP = [&](const Expr& load) { return sameExpr(load->args[1], p); };
  for (int k = 0; k < 2; k++) {
    const Expr &direct = e->args[k], &gathered = e->args[1 - k];
    Expr v = arrayOf(direct, t), x = arrayOf(gathered, t);
    if (!v || !x || !atP(direct)) continue;
    Expr j = stripCasts(gathered->args[1]);
    Expr crd = arrayOf(j, Datatype::Int32);
    if (crd && atP(j)) return GatherDot{v, crd, x};
  }
  return std::nullopt;
}

/// Loops shorter than this stay one chain.
constexpr int64_t kMinChainLength = 8;
/// Segments of a pos array split into two chains when they average this many entries
/// or more (segmentFlag). Measured on an Intel Xeon (Sapphire Rapids), SpMV, both
/// shapes in one process, alternating: FEM matrices gain from two chains (bcsstk33,
/// mean 68: 25%; fidapex6, mean 30: 12%), graphs lose (ca-AstroPh, mean 21: 8-10%;
/// wiki-Vote, mean 12.5: 13-15%), whose x loads miss L1 and whose rows vary in length.
constexpr int64_t kMinMeanLength = 24;

class ChainSplitter {
 public:
  explicit ChainSplitter(const Stmt& root) : fresh_(root) { findPosArrays(root); }

  Stmt rewrite(const Stmt& s) {
    if (!s) return s;
    if (s->op == StmtOp::For) {
      if (auto r = matchReduction(s)) return sum(s, *r);
      if (auto split = withoutMarks(s))
        if (auto r = matchReduction(split->first)) return block({sum(split->first, *r), split->second});
    }
    auto n = std::make_shared<StmtNode>(*s);
    for (Stmt& c : n->body) c = rewrite(c);
    for (Stmt& c : n->elseBody) c = rewrite(c);
    if (n->op == StmtOp::Block) n->body = withSegmentFlags(n->body);
    return n;
  }

 private:
  Stmt sum(const Stmt& loop, const Reduction& r) {
    if (!hasIndirectLoad(r)) return vectorLanes(loop, r);
    return r.op == ReduceOp::Add ? twoChains(loop, r) : loop;  // chains and gathers are sums
  }

  static Stmt vectorLanes(const Stmt& loop, const Reduction& r) {
    auto n = std::make_shared<StmtNode>(*loop);
    n->loop = vectorReduction(r.acc, r.op);
    return n;
  }

  /// The loop body for position `p`, summing into `acc`, its declarations renamed with
  /// `suffix` (the copy shares the original body's scope); `unfused` as unfusedBody.
  std::vector<Stmt> renamedCopy(const Reduction& r, const Expr& loopVar, const Expr& p, const Expr& acc,
                                const std::string& suffix, bool unfused) {
    std::map<std::string, Expr> to{{loopVar->name, p}};
    std::vector<Stmt> out;
    for (const Stmt& d : r.decls) {
      Expr init = rename(d->args[1], to);
      Expr v = var(fresh_(d->args[0]->name + suffix), d->args[0]->type);
      to[d->args[0]->name] = v;
      out.push_back(decl(v, init));
    }
    Expr value = rename(r.value, to);
    if (unfused) value = call(unfusedFn(r), {value}, r.acc->type);
    out.push_back(assign(acc, add(acc, value)));
    return out;
  }

  static const char* unfusedFn(const Reduction& r) {
    return r.acc->type.elem == Datatype::Float64 ? "tessel_unfused_f64" : "tessel_unfused_f32";
  }

  /// The loop's body, the sum's value kept from fusing with its add: one chain then
  /// waits an add per entry, not a multiply-add (a third less on Golden Cove, where
  /// ca-AstroPh's and wiki-Vote's SpMV went 10% faster and matched PETSc's -O2 loop).
  static Stmt unfusedBody(const Stmt& loop, const Reduction& r) {
    std::vector<Stmt> stmts = statementsOf(loop->body[0]);
    stmts.back() = assign(r.acc, add(r.acc, call(unfusedFn(r), {r.value}, r.acc->type)));
    return block(stmts);
  }

  /// for p in [lo, hi): acc += v(p)   becomes
  ///   if (hi - lo >= kMinChainLength) {
  ///     pairs = (hi - lo) / 2
  ///     for q in [0, pairs): { p = lo+2q: acc += v(p); acc_odd += v(p+1) }
  ///     for p in [lo + 2*pairs, hi): acc += v(p)      (at most one iteration)
  ///     acc = acc + acc_odd
  ///   } else if (lo < hi) {
  ///     acc += unfused(v(lo)); for p in [lo + 1, hi): acc += unfused(v(p))
  ///   }
  /// Short loops (SpMV on road networks: 1-3 entries a row) keep the plain loop: there
  /// two chains save less than their set-up costs. For a segment of a pos array the
  /// test is the array's mean segment length (segmentFlag) instead of this one's. A
  /// sparse dot product tests the gathers first (gatherTest, then the short-rows flag).
  Stmt twoChains(const Stmt& loop, const Reduction& r) {
    const Expr& p = loop->args[0];
    Type t = p->type;
    Expr lo = var(fresh_(p->name + "_lo"), t), hi = var(fresh_(p->name + "_hi"), t);
    Expr q = var(fresh_(p->name + "_pair"), t), pairs = var(fresh_(p->name + "_pairs"), t);
    Expr odd = var(fresh_(r.acc->name + "_odd"), r.acc->type);
    Expr pOdd = var(fresh_(p->name + "_odd"), t);

    std::vector<Stmt> pair = {decl(p, add(lo, mul(intImm(2, t), q)))};
    for (const Stmt& st : statementsOf(loop->body[0])) pair.push_back(st);
    pair.push_back(decl(pOdd, add(p, intImm(1, t))));
    for (Stmt& st : renamedCopy(r, p, pOdd, odd, "_odd", false)) pair.push_back(st);

    Stmt chains = block({decl(odd, zeroOf(r.acc->type.elem)),
                         decl(pairs, binary(ExprOp::Div, sub(hi, lo), intImm(2, t))),
                         forRange(q, intImm(0, t), pairs, block(pair)),
                         forRange(p, add(lo, mul(intImm(2, t), pairs)), hi, loop->body[0]),
                         assign(r.acc, add(r.acc, odd))});
    // The short rows' loop with its first entry peeled: a row of one entry then skips
    // the loop, and the padding that aligns the loop's start (-falign-loops), which runs
    // each time the loop is entered (SpTTV on splatt-med, fibers of 1.02 entries: 1.18x on an Intel Xeon).
    std::vector<Stmt> plainSteps = renamedCopy(r, p, lo, r.acc, "_first", true);
    plainSteps.push_back(forRange(p, add(lo, intImm(1, t)), hi, unfusedBody(loop, r)));
    Stmt plain = ifThen(lt(lo, hi), block(plainSteps));
    Expr useChains = segmentFlag(loop->args[1], loop->args[2], FlagKind::TwoChains);
    if (!useChains) useChains = binary(ExprOp::Ge, sub(hi, lo), intImm(kMinChainLength, t));
    Stmt choice = ifThen(useChains, chains, plain);
    if (auto g = matchGatherDot(r, p)) {
      if (Expr shortRows = segmentFlag(loop->args[1], loop->args[2], FlagKind::ShortGathers))
        choice = ifThen(shortRows, gathers(r, *g, lo, hi, "tessel_gather_dot4"), choice);
      choice = ifThen(gatherTest(loop, lo, hi), gathers(r, *g, lo, hi, "tessel_gather_dot"), choice);
    }
    return block({decl(lo, loop->args[1]), decl(hi, loop->args[2]), choice});
  }

  /// acc += <fn>_f64 / _f32(lo, hi, crd, v, x)
  static Stmt gathers(const Reduction& r, const GatherDot& g, const Expr& lo, const Expr& hi, const std::string& fn) {
    std::string name = fn + (r.acc->type.elem == Datatype::Float64 ? "_f64" : "_f32");
    return assign(r.acc, add(r.acc, call(name, {lo, hi, g.crd, g.vals, g.x}, r.acc->type)));
  }

  /// Whether the gathers pay: by the pos array's mean segment length (one choice per
  /// call, as for two chains), else by this loop's length.
  Expr gatherTest(const Stmt& loop, const Expr& lo, const Expr& hi) {
    if (Expr f = segmentFlag(loop->args[1], loop->args[2], FlagKind::Gathers)) return f;
    return call("tessel_gather_dot_pays", {sub(hi, lo), intImm(1)}, scalar(Datatype::Bool));
  }

  enum class FlagKind { TwoChains, Gathers, ShortGathers };

  /// The per-call flag for [lo, hi) when it is one segment [P[x], P[x + 1]) of a tensor's
  /// pos array P, else null. TwoChains: P's segments average kMinMeanLength entries or
  /// more; Gathers: tessel_gather_dot_pays for P; ShortGathers: tessel_short_gathers_pay
  /// (short rows of irregular lengths, sampled from P). Every segment then takes the same
  /// version, instead of one by its own length, which mispredicts on rows of mixed
  /// lengths (graphs: 7% of SpMV on ca-AstroPh); and the choice depends on the tensor
  /// only, not on how a schedule cuts the rows.
  Expr segmentFlag(const Expr& lo, const Expr& hi, FlagKind kind) {
    const Expr a = stripCasts(lo), b = stripCasts(hi);
    if (a->op != ExprOp::Load || b->op != ExprOp::Load || a->args[0]->op != ExprOp::Var ||
        !sameExpr(a->args[0], b->args[0]) || !sameExpr(b->args[1], add(a->args[1], intImm(1, a->args[1]->type))))
      return nullptr;
    auto level = posLevels_.find(a->args[0]->name);
    if (level == posLevels_.end()) return nullptr;
    PosLevel& l = level->second;
    auto& [flag, flagDecl] = l.flags[kind];
    if (!flag) {
      static const char* suffix[] = {"_long", "_gathers", "_short"};
      const Expr& P = a->args[0];
      flag = var(fresh_(P->name + suffix[static_cast<int>(kind)]), scalar(Datatype::Bool));
      Expr entries = field(l.tensor, "crd_size", i64(), l.k);
      Expr segments = sub(field(l.tensor, "pos_size", i64(), l.k), intImm(1));
      Type boolean = scalar(Datatype::Bool);
      Expr test = kind == FlagKind::TwoChains ? binary(ExprOp::Ge, entries, mul(intImm(kMinMeanLength), segments))
                  : kind == FlagKind::Gathers ? call("tessel_gather_dot_pays", {entries, segments}, boolean)
                                              : call("tessel_short_gathers_pay",
                                                     {P, intImm(P->type.elem == Datatype::Int64), entries, segments},
                                                     boolean);
      flagDecl = decl(flag, test);
    }
    return flag;
  }

  /// Each flag segmentFlag made goes right after its pos array's declaration.
  std::vector<Stmt> withSegmentFlags(const std::vector<Stmt>& stmts) {
    std::vector<Stmt> out;
    for (const Stmt& st : stmts) {
      out.push_back(st);
      if (st->op != StmtOp::Decl) continue;
      auto level = posLevels_.find(st->args[0]->name);
      if (level == posLevels_.end()) continue;
      for (auto& [kind, f] : level->second.flags) out.push_back(f.second);
    }
    return out;
  }

  /// `P = (cast)T->pos[k]`: the kernel's pos arrays, by name.
  void findPosArrays(const Stmt& root) {
    forEachStmt(root, [&](const Stmt& s) {
      if (s->op != StmtOp::Decl || s->args.size() < 2 || !s->args[1]) return;
      Expr init = stripCasts(s->args[1]);
      if (init->op == ExprOp::Field && init->name == "pos" && init->ival >= 0)
        posLevels_[s->args[0]->name] = PosLevel{init->args[0], init->ival, {}};
    });
  }

  struct PosLevel {
    Expr tensor;        ///< the tensor struct pointer
    int64_t k;          ///< the level
    /// segmentFlag's flags, once asked for, and their declarations (placed after P's
    /// declaration, which the kernel has once)
    std::map<FlagKind, std::pair<Expr, Stmt>> flags;
  };
  std::map<std::string, PosLevel> posLevels_;
  FreshNames fresh_;
};

}  // namespace

Stmt splitReductionChains(const Stmt& s) { return ChainSplitter(s).rewrite(s); }

}  // namespace tessel::ir
