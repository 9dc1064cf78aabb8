// Emitting a scheduled parallel loop: loop info, one iteration's body, work-balanced
// thread ranges for one-pass parallel rows (paired where a thread fills downward), and
// the temporary strategy's per-thread output copies. See lower/parallel_loops.h.
#include "lower/parallel_loops.h"

#include "lower/semiring_ir.h"

namespace tessel::lower {

using namespace ir;

ParallelLoops::ParallelLoops(const Problem& p, Symbols& sym, OutputAssembly& out, MergeTuner& tuner,
                             const ParallelPlan& pp, Phase phase)
    : p_(p), sym_(sym), out_(out), tuner_(tuner), pp_(pp), phase_(phase),
      tmp_(var("tessel_thread_copies", ptr(p.outputType()))) {}

ir::LoopInfo loopInfo(const Loop& l) {
  if (!l.parallel) return ir::serialLoop(l.unroll);
  return ir::cpuParallel(l.kind == Loop::Kind::Chunk ? ir::ParallelStrategy::OwnSharesFirst : ir::ParallelStrategy::Guided,
                         l.unroll);
}

Stmt ParallelLoops::threadRanges(const Loop& l, const Expr& c, const Expr& begin, const Expr& end,
                                 const std::function<Expr(const Expr&)>& rowAt, std::vector<Stmt> body,
                                 int tuneFrom) {
  std::vector<Stmt> s;
  Expr nt = declared("nthreads", maxThreads(), s);
  Expr base = declared("work_lo", out_.workBefore(rowAt(begin)), s);
  Expr total = declared("work_n", sub(out_.workBefore(rowAt(end)), base), s);
  Expr t = var(sym_.fresh("t"), i64());
  std::vector<Stmt> range = out_.iterationPrologue(t);
  // The first iteration whose row starts at or after the k-th of nt shares of the work.
  auto cut = [&](const Expr& k, const std::string& name) {
    Expr share = add(mul(binary(ExprOp::Div, total, nt), k),
                     binary(ExprOp::Div, mul(binary(ExprOp::Mod, total, nt), k), nt));
    Expr target = declared(name + "_target", add(base, share), range);
    Expr lo = declared(name, begin, range), hi = declared(name + "_hi", end, range);
    Expr mid = var(sym_.fresh("mid"), i64());
    Stmt step = block({decl(mid, add(lo, binary(ExprOp::Div, sub(hi, lo), intImm(2)))),
                       ifThen(lt(out_.workBefore(rowAt(mid)), target), assign(lo, add(mid, intImm(1))),
                              assign(hi, mid))});
    range.push_back(whileLoop(lt(lo, hi), step));
    return lo;
  };
  Expr first = cut(t, l.var.name() + "_from");
  Expr last = cut(add(t, intImm(1)), l.var.name() + "_to");
  // The last thread also takes trailing rows the bound gives nothing (empty rows).
  Expr stop = declared(l.var.name() + "_stop", select(eq(add(t, intImm(1)), nt), end, last), range);
  std::vector<int> tuned;
  for (auto& st : tuner_.declare(tuneFrom, true, t, &tuned)) range.push_back(st);  // one range per thread
  if (out_.fillsDownward())
    range.push_back(pairedRange(l, c, first, stop, t, nt, rowAt, body, range));
  else
    range.push_back(forRange(c, first, stop, block(body), ir::serialLoop(l.unroll)));
  for (auto& st : tuner_.finish(tuned)) range.push_back(st);
  for (auto& st : out_.rangeEpilogue(t)) range.push_back(st);
  s.push_back(forRange(t, intImm(0), nt, block(range), cpuParallel(ParallelStrategy::StaticChunk1)));
  return block(s);
}

Stmt ParallelLoops::pairedRange(const Loop& l, const Expr& c, const Expr& first, const Expr& stop, const Expr& t,
                                const Expr& nt, const std::function<Expr(const Expr&)>& rowAt,
                                const std::vector<Stmt>& body, std::vector<Stmt>& s) {
  constexpr int64_t kDownwardBlock = 16384;  // about 200 KB of a double CSR: the shift stays in L2
  Expr down = declared("down", binary(ExprOp::And, eq(binary(ExprOp::Mod, t, intImm(2)), intImm(0)),
                                      lt(add(t, intImm(1)), nt)), s);
  Expr n = declared("n_iter", sub(stop, first), s);
  Expr hi = declared("hi", out_.boundOffset(rowAt(stop)), s);
  Expr span = binary(ExprOp::Max, sub(hi, out_.boundOffset(rowAt(first))), intImm(1));
  Expr perDown = binary(ExprOp::Min, binary(ExprOp::Div, mul(n, intImm(kDownwardBlock)), span), n);
  Expr per = declared("per", binary(ExprOp::Max, select(down, perDown, n), intImm(1)), s);
  Expr b = var(sym_.fresh("b"), i64());
  Expr c1 = var(sym_.fresh("c_hi"), i64()), c0 = var(sym_.fresh("c_lo"), i64()), lo = var(sym_.fresh("lo"), i64());
  std::vector<Stmt> blk = {
      decl(c1, select(down, sub(stop, mul(b, per)), minOf(add(first, mul(add(b, intImm(1)), per)), stop))),
      decl(c0, select(down, binary(ExprOp::Max, first, sub(c1, per)), add(first, mul(b, per)))),
      decl(lo, intImm(0))};
  blk.push_back(ifThen(down, block(out_.downwardBlockStart(lo, hi, rowAt(c0), rowAt(c1)))));
  blk.push_back(forRange(c, c0, c1, block(body), ir::serialLoop(l.unroll)));
  blk.push_back(ifThen(down, out_.downwardBlockEnd(lo, hi, rowAt(c0), rowAt(c1))));
  Expr blocks = binary(ExprOp::Div, add(n, sub(per, intImm(1))), per);
  return forRange(b, intImm(0), blocks, block(blk));
}

Stmt ParallelLoops::threadBody(const Loop& l, std::vector<Stmt> body, int tuneFrom) {
  if (l.parallel && phase_ == Phase::Numeric) {
    std::vector<Stmt> start = out_.iterationPrologue();
    // The state would restart every iteration (a row, perhaps): no trials there.
    for (auto& st : tuner_.declare(tuneFrom, false, intImm(0))) start.push_back(st);
    body.insert(body.begin(), start.begin(), start.end());
  }
  if (!(l.parallel && pp_.temporary && phase_ == Phase::Numeric)) return block(body);
  Expr vals = sym_.vals(0);
  Expr size = sym_.tensorField(0, "vals_size");
  Expr tid = threadNum();
  body.insert(body.begin(), decl(var(vals->name, vals->type), add(tmp_, mul(tid, size))));
  return block(body);
}

Stmt ParallelLoops::threadCopies(const Stmt& loops) {
  if (!(pp_.temporary && phase_ == Phase::Numeric)) return loops;
  Expr vals = sym_.vals(0);
  Expr size = sym_.tensorField(0, "vals_size");
  Expr nt = var(sym_.fresh("nthreads"), i64()), total = var(sym_.fresh("ntmp"), i64());
  Expr t = var(sym_.fresh("t"), i64()), x = var(sym_.fresh("x"), i64());
  std::vector<Stmt> s = {decl(nt, maxThreads()),
                         decl(total, mul(nt, size)), decl(tmp_), alloc(tmp_, total, !out_.needsZeroFill())};
  if (out_.needsZeroFill()) s.push_back(out_.fillWithZero(tmp_, total));
  s.push_back(loops);
  s.push_back(forRange(t, intImm(0), nt,
                       forRange(x, intImm(0), size,
                                store(vals, x, load(tmp_, add(mul(t, size), x)), reduceOpOf(p_.assignment.semiring)),
                                cpuParallel(ParallelStrategy::Static))));
  s.push_back(freeArray(tmp_));
  return block(s);
}

Expr ParallelLoops::declared(const std::string& base, const Expr& value, std::vector<Stmt>& s) {
  Expr v = var(sym_.fresh(base), i64());
  s.push_back(decl(v, value));
  return v;
}

}  // namespace tessel::lower
