// The loop lowerer. For each variable of the loop order it builds the merge lattice of
// the expression that remains, emits a dense loop (when some case needs every
// coordinate), a single-iterator loop, or a while loop per lattice point that merges
// sorted coordinates; each case body binds the variable, resolves level positions of
// inputs and output, and recurses on the case's expression. How a parallel loop hands
// its iterations to threads is lower/parallel_loops.h's.
#include "lower/lower_loops.h"

#include <algorithm>
#include <map>
#include <set>

#include "lower/block_cut.h"
#include "lower/leaf_value.h"
#include "lower/level_format.h"
#include "lower/local_temporary.h"
#include "lower/mask_probe.h"
#include "lower/merge_lattice.h"
#include "lower/merge_tuner.h"
#include "lower/output_assembly.h"
#include "lower/parallel_loops.h"
#include "lower/position_search.h"
#include "lower/prefetch.h"
#include "lower/semiring_ir.h"
#include "lower/symbols.h"
#include "tessel/error.h"
#include "tessel/runtime_abi.h"

namespace tessel::lower {

using namespace ir;

namespace {

struct IterVars {
  Expr pos, end, crd, seg;
  Expr beginValue, endValue;  ///< the iterated range, after split/pos restrictions
  Expr crdAtSeg;  ///< coordinate stored at position `seg` (segment scans)
  bool unique = true;
};

class LoopLowerer {
 public:
  LoopLowerer(const Problem& p, const OutputPlan& plan, const LoopNest& nest, const ParallelPlan& pp,
              Phase phase)
      : p_(p), plan_(plan), nest_(nest), pp_(pp), phase_(phase), sym_(p, phase == Phase::Numeric),
        out_(p, plan, sym_, pp) {
    int loops = static_cast<int>(nest.loops.size());
    if (phase == Phase::Numeric) {
      depthLimit_ = loops;
    } else if (plan.singlePass || plan.growRows) {
      depthLimit_ = 0;  // assembly only allocates
    } else {
      std::vector<IndexVar> needed(p.order.begin(), p.order.begin() + plan.symbolicDepth);
      depthLimit_ = nest.endOfLoopsFor(needed);
    }
    for (const IndexStmtNode* where : nest.localWheres()) {
      if (phase != Phase::Numeric) break;
      const LocalTemporary& t = *where->temporary;
      TESSEL_CHECK(plan.kind != OutputKind::Workspace, "a temporary at a loop under a workspace (see insertWorkspace)");
      // The consumer reads every entry of t, met or not: exact only where the semiring's
      // zero annihilates its mul (an unmet -inf times a negative factor is not -inf).
      if (!p.assignment.semiring.zeroAnnihilatesMul())
        throw ScheduleError("schedule command " + t.command + ": a temporary at a loop needs a semiring whose zero " +
                            "annihilates its mul (plus_times, min_plus), not " + p.assignment.semiring.name);
      for (int d = t.depth + 1; d < loops; d++)
        if (nest.loops[d].parallel)
          throw ScheduleError("schedule command " + t.command + ": the loops below " + t.at.name() +
                              " run once per temporary and cannot be parallel");
      locals_.add(p, *where, sym_, nest.parallelLoop() < 0);
    }
  }

  Stmt run() {
    std::vector<Stmt> s = sym_.prologue();
    Env env;
    env.in.resize(p_.inputs.size());
    for (auto& st : boundChecks()) s.push_back(st);
    for (auto& st : out_.functionPrologue(phase_)) s.push_back(st);
    for (auto& st : locals_.allocate()) s.push_back(st);
    for (auto& st : maskRows_.allocate()) s.push_back(st);
    out_.resolve(env, phase_, s);
    std::vector<Stmt> afterRows;  // a vector mask is scattered once, before every loop
    if (!(phase_ == Phase::Symbolic && plan_.growRows)) maskRows_.scatter(env, p_.assignment.rhs, s, afterRows);
    if (!(phase_ == Phase::Symbolic && plan_.growRows)) {  // (assembly only allocates)
      Stmt loops = par_.threadCopies(descend(nest_.stmt.get(), p_.assignment.rhs, env));
      for (auto& st : streamFlags_) s.push_back(st);
      std::vector<int> tuned;
      for (auto& st : tuner_.declare(0, true, intImm(0), &tuned)) s.push_back(st);  // merges outside parallel loops
      s.push_back(loops);
      for (auto& st : tuner_.finish(tuned)) s.push_back(st);
    }
    for (auto& st : locals_.release()) s.push_back(st);
    for (auto& st : maskRows_.release()) s.push_back(st);
    for (auto& st : out_.functionEpilogue(phase_)) s.push_back(st);
    return block(s);
  }

 private:
  // ---- positions -------------------------------------------------------------------

  const LevelFormat& fmt(int access, int k) const { return sym_.level(p_.inputs[access].arg, k); }

  ParentRef parentOf(const Env& env, int access) const {
    const auto& st = env.in[access];
    if (st.empty()) return {intImm(0), intImm(0), intImm(1)};
    return {st.back().pos, st.back().segBegin, st.back().segEnd};
  }

  /// Locate every dense level whose variable is bound and whose parent is resolved.
  /// Returns true if a located level has presence flags (a new probe in env.probed).
  bool resolveInputs(Env& env, const IndexExpr& e, std::vector<Stmt>& s) const {
    bool probed = false;
    for (const tessel::ExprNode* n : accessesIn(e)) {
      if (locals_.readingDense(n)) continue;
      if (n->mask.complement || p_.maskByRow(p_.accessIndex(n))) continue;  // tested whole by probeMasks
      int a = p_.accessIndex(n);
      const auto& lv = p_.inputs[a].levelVars;
      auto& st = env.in[a];
      while (st.size() < lv.size()) {
        int k = static_cast<int>(st.size());
        const LevelFormat& lf = fmt(a, k);
        if (!lf.locatable() || !env.bound.count(lv[k].id())) break;
        Expr pos = sym_.iterPos(a, k);
        LevelArrays arr = sym_.arrays(p_.inputs[a].arg, k);
        s.push_back(decl(pos, lf.locate(arr, parentOf(env, a).pos, env.bound.at(lv[k].id()))));
        st.push_back({pos, pos, add(pos, intImm(1))});
        if (lf.hasFlagArray()) {  // located, but the slot may be absent: probe its flag
          Expr flag = lf.present(arr, pos);
          auto pr = env.probed.find(a);
          env.probed[a] = pr == env.probed.end() ? flag : land(pr->second, flag);
          probed = true;
        }
      }
    }
    return probed;
  }

  int iteratedAt(const Env& env, const tessel::ExprNode* n, const IndexVar& v) const {
    if (locals_.readingDense(n)) return -1;  // the temporary is dense: read, never iterated
    int a = p_.accessIndex(n);
    if (n->mask.complement || p_.maskByRow(a)) return -1;  // tested where its variables are bound
    const auto& lv = p_.inputs[a].levelVars;
    size_t k = env.in[a].size();
    if (k < lv.size() && lv[k] == v && !fmt(a, static_cast<int>(k)).locatable()) return a;
    return -1;
  }

  // ---- values ----------------------------------------------------------------------

  const Semiring& semiring() const { return p_.assignment.semiring; }

  Expr value(const IndexExpr& e, const Env& env) const {
    return leafValue(p_, sym_, &locals_, e, env);
  }
  Expr presence(const IndexExpr& e, const Env& env) const {
    return leafPresence(p_, &locals_, e, env);
  }

  /// A leaf where no probed operand is present computes nothing: skip it, so bitmap
  /// operands are visited only at their present coordinates (no explicit zeros stored).
  Stmt leaf(const IndexExpr& e, const Env& env) {
    Stmt s = leafBody(e, env);
    if (env.probed.empty()) return s;
    Expr guard = presence(e, env);
    return guard && guard != env.guarded ? ifThen(guard, s) : s;
  }

  Stmt leafBody(const IndexExpr& e, const Env& env) {
    spend(nodes(e));
    if (env.hit) {
      Stmt mark = assign(env.hit, intImm(1, scalar(Datatype::Bool)));
      if (phase_ == Phase::Symbolic) return mark;
      return block({assign(env.acc, reduceExpr(reduceOpOf(semiring()), env.acc, value(e, env))), mark});
    }
    if (env.inWorkspace) return out_.workspaceUpdate(env, phase_, phase_ == Phase::Numeric ? value(e, env) : nullptr);
    if (phase_ == Phase::Symbolic) return block({});
    if (env.localProducer && env.localAcc) return assign(env.localAcc, reduceExpr(reduceOpOf(semiring()), env.localAcc, value(e, env)));
    if (env.localProducer) return env.localProducer->addTo(env, value(e, env));
    Expr v = value(e, env);
    if (env.acc) return assign(env.acc, reduceExpr(reduceOpOf(semiring()), env.acc, v));
    return out_.storeValue(env, v);
  }

  /// The depth of a statement: its loop's, or past every loop for the assignment.
  int depthOf(const IndexStmtNode* s) const {
    return s->kind == IndexStmtNode::Kind::Forall ? s->depth : static_cast<int>(nest_.loops.size());
  }

  Stmt descend(const IndexStmtNode* d, const IndexExpr& e, Env env) {
    if (d->kind == IndexStmtNode::Kind::Where && !d->temporary) {  // a workspace row (insertWorkspace)
      env.inWorkspace = true;
      return out_.workspaceRegion(env, phase_, lowerStatements(d->producer.get(), e, env));
    }
    if (env.pendingLevel >= 0 && !env.hit) return deferredAppend(d, e, env);
    // A scalar accumulator must not be shared by the iterations of a parallel loop.
    if (phase_ == Phase::Numeric && !env.acc && !env.inWorkspace && !env.localProducer && out_.resolved(env) &&
        depthOf(d) < depthLimit_ && pp_.loop < depthOf(d)) {
      Expr acc = var(sym_.fresh("acc"), scalar(sym_.computeType()));
      env.acc = acc;
      Stmt inner = lowerAt(d, e, env);
      return block({decl(acc, zeroValue(semiring(), sym_.computeType(), sym_.outputType())), inner, out_.storeValue(env, acc)});
    }
    // A producer of t at B's positions, once B's entry is bound: the loops below sum into
    // one element, in a scalar the reduction-chains pass vectorizes (SDDMM's dot product).
    if (phase_ == Phase::Numeric && env.localProducer && !env.localAcc && env.localProducer->elementBound(env)) {
      Expr acc = var(sym_.fresh("acc"), scalar(sym_.computeType()));
      Env inner = env;
      inner.localAcc = acc;
      Stmt body = lowerAt(d, e, inner);
      return block({decl(acc, zeroValue(semiring(), sym_.computeType(), sym_.outputType())), body,
                    env.localProducer->addTo(env, acc)});
    }
    return lowerAt(d, e, env);
  }

  /// A where's producer: one statement, or a sequence of one loop nest per term of the
  /// sum (each scattering into the same workspace row). A case expression has the terms
  /// of the sum that are present in that case, in order: each goes to the first
  /// statement left whose term has all of its operands; statements whose term is absent
  /// from the case are skipped.
  Stmt lowerStatements(const IndexStmtNode* s, const IndexExpr& e, const Env& env) {
    if (s->kind != IndexStmtNode::Kind::Sequence) return descend(s, e, env);
    std::vector<Stmt> out;
    size_t next = 0;
    for (const IndexExpr& term : sumTerms(e)) {
      std::vector<const tessel::ExprNode*> have = accessesIn(term);
      while (next < s->stmts.size() && !containsAll(accessesIn(leafOf(s->stmts[next].get())->rhs), have)) next++;
      TESSEL_CHECK(next < s->stmts.size(), "term " + term.str() + " of a case matches no statement of the sequence");
      out.push_back(descend(s->stmts[next++].get(), term, env));
    }
    return block(out);
  }

  static const IndexStmtNode* leafOf(const IndexStmtNode* s) {
    while (s->kind == IndexStmtNode::Kind::Forall) s = s->body.get();
    TESSEL_CHECK(s->kind == IndexStmtNode::Kind::Assign, "a sequence's statement is not a forall nest");
    return s;
  }

  static bool containsAll(const std::vector<const tessel::ExprNode*>& all, const std::vector<const tessel::ExprNode*>& some) {
    for (const tessel::ExprNode* n : some)
      if (std::find(all.begin(), all.end(), n) == all.end()) return false;
    return true;
  }

  /// The reduction below the last output levels runs first; the entry is appended
  /// (and its value stored) only if some case was met.
  Stmt deferredAppend(const IndexStmtNode* d, const IndexExpr& e, Env env) {
    Expr hit = var(sym_.fresh("hit"), scalar(Datatype::Bool));
    std::vector<Stmt> s = {decl(hit, intImm(0, scalar(Datatype::Bool)))};
    env.hit = hit;
    if (phase_ == Phase::Numeric) {
      env.acc = var(sym_.fresh("acc"), scalar(sym_.computeType()));
      s.push_back(decl(env.acc, zeroValue(semiring(), sym_.computeType(), sym_.outputType())));
    }
    s.push_back(lowerAt(d, e, env));
    std::vector<Stmt> then;
    Env after = env;
    out_.appendPending(after, phase_, then);
    if (phase_ == Phase::Numeric) then.push_back(out_.storeValue(after, env.acc));
    s.push_back(ifThen(hit, block(then)));
    return block(s);
  }

  Stmt caseBody(const IndexStmtNode* d, const LatticePoint& q, const Env& env, const std::map<int, IterVars>& iv,
                const Expr& v) {
    spend(1);
    Env e2 = env;
    e2.bound[d->loop.of.id()] = v;
    for (int a : q.iterators) {
      const IterVars& it = iv.at(a);
      e2.in[a].push_back({it.pos, it.pos, it.unique ? add(it.pos, intImm(1)) : it.seg});
    }
    std::vector<Stmt> s;
    // A case where no probed (Bitmap) operand is present computes nothing: skipped
    // whole, output appends included, in the symbolic and numeric phases alike. (The
    // case's expression may depend on flags probed further out: test at every case.)
    resolveInputs(e2, q.expr, s);
    std::vector<Stmt> afterRow;  // a mask's row, scattered for the loops below, cleared after them
    maskRows_.scatter(e2, q.expr, s, afterRow);
    probeMasks(p_, sym_, maskRows_, e2, q.expr, s);
    Expr guard = e2.probed.empty() ? nullptr : presence(q.expr, e2);
    if (guard == e2.guarded) guard = nullptr;
    if (guard) e2.guarded = guard;
    std::vector<Stmt> body;
    const IndexStmtNode* next = d->body.get();
    if (next->kind == IndexStmtNode::Kind::Where && next->temporary) {
      // Computing a temporary (a where inside a producer) writes no output here.
      if (!e2.localProducer) out_.resolve(e2, phase_, body);
      // The temporary, for cases that have e's factors (and only when computing).
      std::optional<LocalSplit> local;
      if (!locals_.empty()) local = locals_.of(next).split(q.expr);
      body.push_back(local ? localOrPlain(next, *local, q.expr, e2) : descend(next->unsplit.get(), q.expr, e2));
    } else if (e2.localProducer) {  // computing a temporary: the output is not written here
      body.push_back(descend(next, q.expr, e2));
    } else {
      out_.resolve(e2, phase_, body);
      body.push_back(descend(next, q.expr, e2));
    }
    if (guard) s.push_back(ifThen(guard, block(body)));
    else s.insert(s.end(), body.begin(), body.end());
    s.insert(s.end(), afterRow.begin(), afterRow.end());
    if (e2.localProducer) return block(s);
    out_.closeRow(env, e2, phase_, s);
    return block(s);
  }

  /// The temporary pays for zeroing and reading its row only when e's sum below `at` has
  /// a few entries: a fiber of e's first sparse level over a summed variable shorter than
  /// t.minFiber (4 for precompute) runs the plain nest instead. MTTKRP (bench_precompute_at, L = 32):
  /// always the temporary lost 0.67-0.82x on fibers of 1-3 (splatt-med, wn18rr, fb15k);
  /// from 4 entries on it wins (1.2x on kinship, 1.6x on aminoacid), from 16 it gave
  /// those wins up. The test itself costs about 5% where fibers are short (mispredicted).
  Stmt localOrPlain(const IndexStmtNode* w, const LocalSplit& sp, const IndexExpr& whole, const Env& env) {
    Stmt where = localWhere(w, sp, env);
    const LocalTemporary& t = *w->temporary;
    for (const tessel::ExprNode* n : t.factors) {
      if (locals_.readingDense(n)) continue;  // an outer temporary: dense
      int a = p_.accessIndex(n);
      size_t k = env.in[a].size();
      const auto& lv = p_.inputs[a].levelVars;
      if (k >= lv.size() || fmt(a, static_cast<int>(k)).locatable()) continue;
      if (std::find(t.summed.begin(), t.summed.end(), lv[k]) == t.summed.end()) continue;
      auto [begin, end] = fmt(a, static_cast<int>(k)).bounds(sym_.arrays(p_.inputs[a].arg, static_cast<int>(k)), parentOf(env, a));
      if (t.minFiber <= 1) return where;
      Expr shortFiber = lt(sub(end, begin), intImm(t.minFiber));
      return ifThen(shortFiber, descend(w->unsplit.get(), whole, env), where);
    }
    return where;
  }

  /// precompute(e, t, at) inside at's loop: t's row zeroed, filled by e's loops, then
  /// read by the rest's loops (each skips the loops over variables it lacks).
  Stmt localWhere(const IndexStmtNode* w, const LocalSplit& sp, const Env& env) {
    Env base = env;
    const LocalTemporaryLowering& t = locals_.of(w);
    std::vector<Stmt> s = t.startRow(base);
    Env producer = base;
    producer.localProducer = &t;
    producer.localAcc = nullptr;  // (an enclosing t's scalar sum is not this t's)
    s.push_back(descend(w->producer.get(), sp.producer, producer));
    s.push_back(descend(w->consumer.get(), sp.consumer, base));
    return block(s);
  }

  Stmt caseChain(const IndexStmtNode* d, const std::vector<LatticePoint>& pts, const Env& env,
                 const std::map<int, IterVars>& iv, const Expr& v) {
    Stmt chain = nullptr;
    for (auto it = pts.rbegin(); it != pts.rend(); ++it) {
      Expr cond = nullptr;
      for (int a : it->iterators) {
        Expr c = eq(iv.at(a).crd, v);
        cond = cond ? land(cond, c) : c;
      }
      Stmt body = caseBody(d, *it, env, iv, v);
      chain = cond ? ifThen(cond, body, chain) : body;
    }
    return chain;
  }

  /// Segment end of a non-unique iterator: the positions after it that share its
  /// coordinate (scanned only when it matches the loop coordinate v).
  Stmt segment(const IterVars& it, const Expr& v) const {
    if (it.unique) return block({});
    return block({decl(it.seg, add(it.pos, intImm(1))),
                  ifThen(eq(it.crd, v),
                         whileLoop(land(lt(it.seg, it.end), eq(it.crdAtSeg, it.crd)),
                                   assign(it.seg, add(it.seg, intImm(1)))))});
  }

  Stmt advance(const IterVars& it, const Expr& v) const {
    // Branch-free for unique levels: merged coordinates are unpredictable.
    if (it.unique) return assign(it.pos, add(it.pos, cast(i64(), eq(it.crd, v))));
    return ifThen(eq(it.crd, v), assign(it.pos, it.seg));
  }

  // ---- loops ---------------------------------------------------------------------------

  [[noreturn]] void failParallel(const Loop& l, const std::string& why) const {
    throw ScheduleError("schedule command " + l.parallelCommand + ": " + why);
  }

  /// bound(i, ib, n): the promise is checked when the kernel starts.
  std::vector<Stmt> boundChecks() {
    std::vector<Stmt> s;
    for (const Loop& l : nest_.loops) {
      if (!l.bound) continue;
      Expr ext = sym_.extent(l.of), n = intImm(*l.bound);
      Expr broken = l.boundKind == BoundKind::MaxExact ? binary(ExprOp::Ne, ext, n) : binary(ExprOp::Gt, ext, n);
      s.push_back(ifThen(broken, returnCode(TESSEL_ERR_BOUND)));
    }
    return s;
  }

  /// [lo, hi) of a variable: its split block, or the whole extent.
  std::pair<Expr, Expr> rangeOf(const Env& env, const IndexVar& v, const Loop* l = nullptr) const {
    auto r = env.range.find(v.id());
    if (r != env.range.end()) return r->second;
    Expr ext = sym_.extent(v);
    if (l && l->bound && l->boundKind == BoundKind::MaxExact) ext = intImm(*l->bound);
    return {intImm(0), ext};
  }

  Expr declared(const std::string& base, const Expr& value, std::vector<Stmt>& s) {
    Expr v = var(sym_.fresh(base), i64());
    s.push_back(decl(v, value));
    return v;
  }

  /// Narrow an iterator's positions [begin, end) to the enclosing position window and
  /// coordinate range.
  void narrowToBlock(const Env& env, int a, int k, const IndexVar& v, Expr& begin, Expr& end, std::vector<Stmt>& s) {
    auto w = env.window.find(a);
    if (w != env.window.end() && w->second.level == k) {
      begin = declared("wb", binary(ExprOp::Max, begin, w->second.lo), s);
      end = declared("we", minOf(end, w->second.hi), s);
    }
    auto r = env.range.find(v.id());
    if (r != env.range.end()) {
      const LevelFormat& lf = fmt(a, k);
      LevelArrays arr = sym_.arrays(p_.inputs[a].arg, k);
      Expr b = emitLowerBound(sym_, lf, arr, begin, end, r->second.first, s);
      Expr e = emitLowerBound(sym_, lf, arr, b, end, r->second.second, s);
      begin = b;
      end = e;
    }
  }

  /// A block loop of a split: restricts the loops inside to one block of coordinates or
  /// of an operand's positions.
  Stmt lowerChunk(const IndexStmtNode* d, const IndexExpr& e, const Env& env) {
    const Loop& l = d->loop;
    const int tuneFrom = tuner_.sites();  // merge sites below this loop are opened from here
    std::vector<Stmt> s;
    Env inner = env;
    Expr lo, hi, qb, qe;  // qb, qe: fuse+pos, the positions of the level above
    int a = l.access, k = l.level;
    if (!l.overPositions) {
      std::tie(lo, hi) = rangeOf(env, l.of);
    } else if (!l.fusedOuter) {
      auto [b, en] = fmt(a, k).bounds(sym_.arrays(p_.inputs[a].arg, k), parentOf(env, a));
      lo = b;
      hi = en;
      auto w = env.window.find(a);
      if (w != env.window.end() && w->second.level == k) {
        lo = binary(ExprOp::Max, lo, w->second.lo);
        hi = minOf(hi, w->second.hi);
      }
    } else {
      const LevelFormat& up = fmt(a, k - 1);
      LevelArrays upArr = sym_.arrays(p_.inputs[a].arg, k - 1);
      ParentRef parent = parentOf(env, a);
      if (up.locatable()) {
        qb = declared("qb", up.locate(upArr, parent.pos, intImm(0)), s);
        qe = declared("qe", up.locate(upArr, parent.pos, upArr.dim), s);
      } else {
        auto [b, en] = up.bounds(upArr, parent);
        qb = declared("qb", b, s);
        qe = declared("qe", en, s);
      }
      Expr pos = sym_.arrays(p_.inputs[a].arg, k).pos;
      lo = cast(i64(), load(pos, qb));
      hi = cast(i64(), load(pos, qe));
    }
    lo = declared(l.var.name() + "_lo", lo, s);
    hi = declared(l.var.name() + "_hi", hi, s);
    Expr size = blockLength(sub(hi, lo), l.amount, l.divide);
    if (l.divide) size = declared(l.var.name() + "_size", size, s);
    Expr count = declared(l.var.name() + "_n", blockCount(sub(hi, lo), size), s);
    Expr c = var(sym_.fresh(l.var.name()), i64());
    std::vector<Stmt> body;
    Expr blo = declared(l.var.name() + "_begin", add(lo, mul(c, size)), body);
    Expr bhi = declared(l.var.name() + "_end", minOf(add(blo, size), hi), body);
    if (!l.overPositions) {
      inner.range[l.of.id()] = {blo, bhi};
    } else {
      inner.window[a] = PositionWindow{k, blo, bhi};
      if (l.fusedOuter) {
        // The rows (level above) whose segments meet this block of positions.
        Expr pos = sym_.arrays(p_.inputs[a].arg, k).pos;
        Expr qlo = emitSegmentOf(sym_, pos, qb, qe, blo, body);
        Expr qhi = emitSegmentOf(sym_, pos, qb, qe, sub(bhi, intImm(1)), body);
        const LevelFormat& up = fmt(a, k - 1);
        LevelArrays upArr = sym_.arrays(p_.inputs[a].arg, k - 1);
        auto coord = [&](const Expr& q) { return up.locatable() ? sub(q, qb) : up.coordinate(upArr, q); };
        Expr ilo = declared("rlo", coord(qlo), body);
        Expr ihi = declared("rhi", add(coord(qhi), intImm(1)), body);
        inner.range[l.fusedOuter->id()] = {ilo, ihi};
      }
    }
    const IndexStmtNode* next = d->body.get();
    if (next->kind == IndexStmtNode::Kind::Where && next->temporary) {
      // Fused (or precomputed) at this block loop: t holds the block; the output's
      // rows are resolved by the consumer's own loops below.
      std::optional<LocalSplit> local;
      if (!locals_.empty()) local = locals_.of(next).split(e);
      body.push_back(local ? localWhere(next, *local, inner) : descend(next->unsplit.get(), e, inner));
    } else {
      body.push_back(descend(next, e, inner));
    }
    if (l.parallel && phase_ == Phase::Numeric && out_.threadRangesOfRows() && !l.overPositions) {
      s.push_back(par_.threadRanges(l, c, intImm(0), count,
                                    [&](const Expr& k) { return minOf(add(lo, mul(k, size)), hi); }, body, tuneFrom));
      return block(s);
    }
    s.push_back(forRange(c, intImm(0), count, par_.threadBody(l, body, tuneFrom), loopInfo(l)));
    return block(s);
  }

  /// A union of unique iterators whose cases all go straight to the leaf.
  bool mergesWithoutCases(const IndexStmtNode* d, const LatticePoint& pt, const std::vector<LatticePoint>& cases,
                          const std::map<int, IterVars>& iv) const {
    // Absent operands read as the semiring's zero: exact only where that zero
    // annihilates the products it may meet (not max_times: -inf * -2 is +inf).
    if (!semiring().zeroAnnihilatesMul()) return false;
    size_t n = pt.iterators.size();
    if (n < 2 || n > 6 || d->depth + 1 != depthLimit_ || cases.size() != (size_t{1} << n) - 1) return false;
    if (cases[0].iterators != pt.iterators) return false;
    for (int a : pt.iterators)
      if (!iv.at(a).unique) return false;
    return true;
  }

  /// A merge without cases whose iterators walk their operands' last levels (so their
  /// positions are their values'), in the compute phase: it has a branching variant.
  bool branchable(const IndexStmtNode* d, const LatticePoint& pt, const std::vector<LatticePoint>& cases,
                  const std::map<int, IterVars>& iv, const Env& env) const {
    if (phase_ != Phase::Numeric || !mergesWithoutCases(d, pt, cases, iv)) return false;
    for (int a : pt.iterators)
      if (env.in[a].size() + 1 != p_.inputs[a].levelVars.size()) return false;
    return true;
  }

  /// The coordinate at position p of access a's next unresolved level.
  Expr coordAt(const Env& env, int a, const Expr& p) const {
    int k = static_cast<int>(env.in[a].size());
    return fmt(a, k).coordinate(sym_.arrays(p_.inputs[a].arg, k), p);
  }

  /// One while loop per lattice point, merging the sorted coordinates of its iterators.
  /// A point whose every subset of iterators is a case ending in the leaf (a sum) reads
  /// absent operands as zero: with `branching`, each iterator that holds the coordinate
  /// loads its value and advances in an `if` (speculated past the coordinate loads);
  /// without, the values are selected and the iterators advance by their comparisons.
  /// `branched` (when given) tells whether some point took the branching variant.
  std::vector<Stmt> mergeLoops(const IndexStmtNode* d, const MergeLattice& L, const Env& env, const std::map<int, IterVars>& iv,
                               const Expr& vv, bool branching, bool* branched = nullptr) {
    std::vector<Stmt> loops;
    for (auto& pt : L.points) {
      if (pt.iterators.empty()) continue;
      Expr cond = nullptr;
      for (int a : pt.iterators) {
        Expr c = lt(iv.at(a).pos, iv.at(a).end);
        cond = cond ? land(cond, c) : c;
      }
      std::vector<Stmt> body;
      Expr minCrd = nullptr;
      for (int a : pt.iterators) {
        body.push_back(decl(iv.at(a).crd, coordAt(env, a, iv.at(a).pos)));
        minCrd = minCrd ? minOf(minCrd, iv.at(a).crd) : iv.at(a).crd;
      }
      body.push_back(decl(vv, minCrd));
      for (int a : pt.iterators)
        body.push_back(segment(iv.at(a), vv));
      std::vector<LatticePoint> cases = L.subLattice(pt);
      if (branching && branchable(d, pt, cases, iv, env)) {
        if (branched) *branched = true;
        Env e2 = env;
        Datatype ct = sym_.computeType();
        for (int a : pt.iterators) {
          Expr val = var(sym_.fresh(p_.args[p_.inputs[a].arg].cname + "_val"), scalar(ct));
          Expr loaded = cast(scalar(ct), load(sym_.vals(p_.inputs[a].arg), iv.at(a).pos));
          body.push_back(decl(val, zeroValue(semiring(), ct, sym_.outputType())));
          body.push_back(ifThen(eq(iv.at(a).crd, vv), block({assign(val, loaded), assign(iv.at(a).pos, add(iv.at(a).pos, intImm(1)))})));
          e2.loaded[a] = val;
        }
        body.push_back(caseBody(d, cases[0], e2, iv, vv));
      } else if (mergesWithoutCases(d, pt, cases, iv)) {
        Env e2 = env;
        for (int a : pt.iterators) e2.present[a] = eq(iv.at(a).crd, vv);
        body.push_back(caseBody(d, cases[0], e2, iv, vv));
        for (int a : pt.iterators) body.push_back(advance(iv.at(a), vv));
      } else if (pt.iterators.size() == 1 && cases.size() == 1) {
        // One iterator left: its coordinate is the loop's, so no case test and no
        // conditional advance.
        const IterVars& it = iv.at(pt.iterators[0]);
        body.push_back(caseBody(d, cases[0], env, iv, vv));
        body.push_back(assign(it.pos, it.unique ? add(it.pos, intImm(1)) : it.seg));
      } else {
        body.push_back(caseChain(d, cases, env, iv, vv));
        for (int a : pt.iterators) body.push_back(advance(iv.at(a), vv));
      }
      loops.push_back(whileLoop(cond, block(body)));
    }
    return loops;
  }

  Stmt lowerAt(const IndexStmtNode* d, const IndexExpr& e, const Env& env) {
    if (d->kind == IndexStmtNode::Kind::Assign || (d->kind == IndexStmtNode::Kind::Forall && d->depth >= depthLimit_))
      return leaf(e, env);
    if (d->kind != IndexStmtNode::Kind::Forall)  // a where is entered from its loop's cases
      throw InternalError("lowering met a where or sequence outside a loop's case");
    const Loop& loop = d->loop;
    if (env.inLocal && !mentions(e, loop.of)) return descend(d->body.get(), e, env);  // blocks of it too
    if (loop.kind == Loop::Kind::Chunk) return lowerChunk(d, e, env);
    const int tuneFrom = tuner_.sites();
    const IndexVar& v = loop.of;
    MergeLattice L = buildLattice(e, [&](const tessel::ExprNode* n) { return iteratedAt(env, n, v); }, semiring());
    if (L.empty()) return block({});

    std::set<int> its;
    for (auto& pt : L.points) its.insert(pt.iterators.begin(), pt.iterators.end());
    std::vector<Stmt> s;
    std::map<int, IterVars> iv;
    for (int a : its) {
      int k = static_cast<int>(env.in[a].size());
      const LevelFormat& lf = fmt(a, k);
      LevelArrays arr = sym_.arrays(p_.inputs[a].arg, k);
      auto [begin, end] = lf.bounds(arr, parentOf(env, a));
      narrowToBlock(env, a, k, v, begin, end, s);
      IterVars it;
      it.pos = sym_.iterPos(a, k);
      it.end = var(it.pos->name + "_end", i64());
      it.crd = var(sym_.fresh(v.name() + p_.args[p_.inputs[a].arg].cname), i64());
      it.seg = var(it.pos->name + "_seg", i64());
      it.crdAtSeg = lf.coordinate(arr, it.seg);
      it.unique = lf.unique();
      it.beginValue = begin;
      it.endValue = end;
      iv[a] = it;
    }
    auto declareIterators = [&] {
      for (int a : its) {
        s.push_back(decl(iv[a].pos, iv[a].beginValue));
        s.push_back(decl(iv[a].end, iv[a].endValue));
      }
    };
    Expr vv = sym_.indexVar(v);

    if (L.needsDenseLoop()) {
      if (loop.parallel && !its.empty())
        failParallel(loop, "the loop over " + v.name() + " also walks sparse operands in order, so its iterations depend on each other");
      declareIterators();
      auto [lo, hi] = rangeOf(env, v, &loop);
      Expr extent = sym_.extent(v);
      std::vector<Stmt> body;
      for (int a : its) {
        body.push_back(decl(iv[a].crd, extent));
        body.push_back(ifThen(lt(iv[a].pos, iv[a].end), assign(iv[a].crd, coordAt(env, a, iv[a].pos))));
        body.push_back(segment(iv[a], vv));
      }
      body.push_back(caseChain(d, L.points, env, iv, vv));
      for (int a : its) body.push_back(advance(iv[a], vv));
      if (loop.parallel && phase_ == Phase::Numeric && out_.threadRangesOfRows()) {
        s.push_back(par_.threadRanges(loop, vv, lo, hi, [](const Expr& r) { return r; }, body, tuneFrom));
        return block(s);
      }
      s.push_back(forRange(vv, lo, hi, par_.threadBody(loop, body, tuneFrom), loopInfo(loop)));
      return block(s);
    }

    if (L.points.size() == 1 && its.size() == 1 && iv.begin()->second.unique) {
      // One sorted unique iterator: a plain for loop over its positions.
      int a = *its.begin();
      std::vector<Stmt> body = {decl(vv, coordAt(env, a, iv[a].pos)), caseBody(d, L.points[0], env, iv, vv)};
      if (d->depth > 0 && d->depth + 1 == depthLimit_ && phase_ == Phase::Numeric && !loop.parallel)
        s.push_back(prefetchAhead(p_, sym_, a, static_cast<int>(env.in[a].size()), iv[a].beginValue, streamFlags_));
      s.push_back(forRange(iv[a].pos, iv[a].beginValue, iv[a].endValue, par_.threadBody(loop, body, tuneFrom),
                           loopInfo(loop)));
      return block(s);
    }
    if (loop.parallel) {
      std::string names;
      for (int a : its) names += (names.empty() ? "" : ", ") + p_.inputs[a].node->tensor.name();
      failParallel(loop, "the loop over " + v.name() + " merges the sorted coordinates of " + names +
                             ", which is sequential; split it and parallelize the outer loop");
    }
    declareIterators();
    // A union merged without cases (sums) in the compute phase runs in two variants,
    // branch-free and branching, and a tuner picks per segment (lower/merge_tuner.h).
    // Where no point has a branching variant, the branching loops are the only ones.
    bool tuned = false;
    std::vector<Stmt> branching = mergeLoops(d, L, env, iv, vv, true, &tuned);
    if (!tuned) {
      for (Stmt& loop : branching) s.push_back(loop);
      return block(s);
    }
    int site = tuner_.open();
    Expr entries = nullptr;  // the segment's entries, from its bounds (the positions move)
    for (int a : its) {
      Expr n = sub(iv[a].end, iv[a].beginValue);
      entries = entries ? add(entries, n) : n;
    }
    for (auto& st : tuner_.pick(site)) s.push_back(st);
    s.push_back(ifThen(tuner_.branching(site), block(branching), block(mergeLoops(d, L, env, iv, vv, false))));
    for (auto& st : tuner_.done(site, entries)) s.push_back(st);
    return block(s);
  }

  const Problem& p_;
  const OutputPlan& plan_;
  const LoopNest& nest_;
  const ParallelPlan& pp_;
  Phase phase_;
  Symbols sym_;
  OutputAssembly out_;
  int depthLimit_;
  LocalTemporaries locals_;  ///< precompute(e, t, at) and loopfuse, numeric phase
  MergeTuner tuner_{sym_};
  ParallelLoops par_{p_, sym_, out_, tuner_, pp_, phase_};  ///< parallel loops' ranges, bodies, output copies
  MaskRows maskRows_{p_, sym_, pp_.loop < 0};  ///< masks read by row (Problem::maskByRow)
  std::vector<Stmt> streamFlags_;  ///< declared before the loops: whether prefetchAhead's hints run
  /// Nested lattices multiply, and each case evaluates its own expression: bound the
  /// code (and so the C compiler's time) of one kernel. Real kernels use a few hundred.
  static constexpr int64_t kMaxWork = 20000;
  int64_t work_ = 0;
  void spend(int64_t units) {
    work_ += units;
    if (work_ > kMaxWork)
      throw NotationError(std::string("expression too complex: its kernel would exceed ") +
                          std::to_string(kMaxWork) +
                          " co-iteration cases and expression nodes; split it into several assignments");
  }
  static int64_t nodes(const IndexExpr& e) {
    const tessel::ExprNode& n = e.node();
    return 1 + (n.a.defined() ? nodes(n.a) : 0) + (n.b.defined() ? nodes(n.b) : 0);
  }
};

}  // namespace

Stmt lowerLoops(const Problem& p, const OutputPlan& plan, const LoopNest& nest, const ParallelPlan& pp,
                Phase phase) {
  return LoopLowerer(p, plan, nest, pp, phase).run();
}

}  // namespace tessel::lower
