#include "lower/merge_tuner.h"

#include <limits>

namespace tessel::lower {

using namespace ir;

int MergeTuner::open() {
  std::string base = sym_.fresh("tune");
  auto v = [&](const char* name) { return var(base + "_" + name, i64()); };
  sites_.push_back(Site{v("left"), v("mode"), v("best"), v("wait"), v("t0"), v("cycles0"), v("cycles1"),
                        v("work0"), v("work1"), base + "_memo"});
  return sites() - 1;
}

std::vector<Stmt> MergeTuner::declare(int from, bool tuning, const Expr& slot, std::vector<int>* tuned) {
  std::vector<Stmt> s;
  for (int k = from; k < sites(); k++) {
    Site& t = sites_[k];
    if (t.declared) continue;
    t.declared = true;
    if (tuning && tuned) tuned->push_back(k);
    // The site's choice across calls, one slot per thread range (its rows are the same
    // from call to call): function statics, the choice stored plus one (0: none yet).
    for (const char* f : {"best", "every", "calls"}) s.push_back(persistentArray(memoArray(t, f), kMemoSlots));
    s.push_back(decl(memoSlot(t), slot->op == ExprOp::IntImm ? slot : binary(ExprOp::Mod, slot, intImm(kMemoSlots))));
    auto cell = [&](const char* a) { return memoCell(t, a); };
    const std::string& m = t.memo;
    // A trial first, unless an earlier call's choice is reused; without tuning, no trial
    // ever starts.
    Expr reused = var(m + "_reused", i64());
    s.push_back(decl(reused, tuning ? call("tessel_tune_reuse", {cell("best"), cell("calls")}, i64()) : intImm(-1)));
    Expr fresh = lt(reused, intImm(0));
    s.push_back(decl(t.left, tuning ? select(fresh, intImm(2 * kTrialSegments), intImm(0)) : intImm(0)));
    s.push_back(decl(t.wait, intImm(tuning ? kRetrialAfter : std::numeric_limits<int64_t>::max())));
    s.push_back(decl(t.best, select(fresh, intImm(0), reused)));
    for (const Expr& e : {t.mode, t.t0, t.cycles0, t.cycles1, t.work0, t.work1}) s.push_back(decl(e, intImm(0)));
  }
  return s;
}

std::vector<Stmt> MergeTuner::pick(int site) const {
  const Site& t = sites_[site];
  Stmt trial = block({assign(t.mode, sub(intImm(1), t.mode)), assign(t.t0, call("tessel_clock", {}, i64()))});
  Stmt restart = block({assign(t.left, intImm(2 * kTrialSegments)), assign(t.cycles0, intImm(0)),
                        assign(t.cycles1, intImm(0)), assign(t.work0, intImm(0)), assign(t.work1, intImm(0))});
  Stmt settled = block({assign(t.mode, t.best), assign(t.wait, sub(t.wait, intImm(1))),
                        ifThen(binary(ExprOp::Le, t.wait, intImm(0)), restart)});
  return {ifThen(binary(ExprOp::Gt, t.left, intImm(0)), trial, settled)};
}

Expr MergeTuner::memoArray(const Site& t, const char* field) { return var(t.memo + "_" + field, ptr(Datatype::Int64)); }
Expr MergeTuner::memoSlot(const Site& t) { return var(t.memo + "_slot", i64()); }
Expr MergeTuner::memoCell(const Site& t, const char* field) { return addressOf(load(memoArray(t, field), memoSlot(t))); }

Expr MergeTuner::branching(int site) const { return binary(ExprOp::Ne, sites_[site].mode, intImm(0)); }

std::vector<Stmt> MergeTuner::done(int site, const Expr& entries) const {
  const Site& t = sites_[site];
  // Evaluated only in a trial: off the segment's hot path.
  Expr work = var(sym_.fresh("work"), i64());
  Expr dt = var(sym_.fresh("tune_dt"), i64());
  // A segment interrupted (a timer tick, a page fault) would outweigh hundreds of
  // others: count at most kMaxCyclesPerEntry per entry (both variants take 5-40).
  Expr cap = add(mul(work, intImm(kMaxCyclesPerEntry)), intImm(kMaxCyclesPerEntry * 8));
  Stmt timed = block({decl(work, entries), decl(dt, minOf(sub(call("tessel_clock", {}, i64()), t.t0), cap)),
                      ifThen(branching(site),
                             block({assign(t.cycles1, add(t.cycles1, dt)), assign(t.work1, add(t.work1, work))}),
                             block({assign(t.cycles0, add(t.cycles0, dt)), assign(t.work0, add(t.work0, work))})),
                      assign(t.left, sub(t.left, intImm(1))), ifThen(eq(t.left, intImm(0)), settle(t))});
  return {ifThen(binary(ExprOp::Gt, t.left, intImm(0)), timed)};
}

Stmt MergeTuner::settle(const Site& t) {
  auto f64 = [](const Expr& e) { return cast(scalar(Datatype::Float64), e); };
  // Faster per merged entry: cycles1 / work1 < cycles0 / work0.
  Expr better = lt(mul(f64(t.cycles1), f64(t.work0)), mul(f64(t.cycles0), f64(t.work1)));
  auto cell = [&](const char* a) { return memoCell(t, a); };
  return block({assign(t.best, cast(i64(), better)), assign(t.wait, intImm(kRetrialAfter)),
                evaluate(call("tessel_tune_keep", {cell("best"), cell("every"), cell("calls"), t.best, intImm(kMaxReuse)},
                              opaque(TypeKind::Void, false)))});
}

std::vector<Stmt> MergeTuner::finish(const std::vector<int>& sites) const {
  std::vector<Stmt> s;
  for (int k : sites) {
    const Site& t = sites_[k];
    // Segments timed so far: the trial alternates variants, so each has about half.
    Expr timed = sub(intImm(2 * kTrialSegments), t.left);
    Expr cutShort = land(binary(ExprOp::Gt, t.left, intImm(0)), binary(ExprOp::Ge, timed, intImm(2 * kMinTrialSegments)));
    s.push_back(ifThen(cutShort, settle(t)));
  }
  return s;
}

}  // namespace tessel::lower
