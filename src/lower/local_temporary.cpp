// precompute(e, t, at): see local_temporary.h.
#include "lower/local_temporary.h"

#include <algorithm>
#include <tuple>

#include "lower/block_cut.h"
#include "lower/semiring_ir.h"
#include "notation/products.h"
#include "tessel/error.h"

namespace tessel::lower {

using namespace ir;

LocalTemporaryLowering::LocalTemporaryLowering(const Problem& p, const IndexStmtNode& where, Symbols& sym, bool serial)
    : p_(p), t_(*where.temporary), sym_(sym), access_(where.temporaryAccess), serial_(serial) {
  const LocalTemporary& t = t_;
  // A temporary of no index variables (loopfuse's scalar, SDDMM feeding SpMM) is a local
  // variable of each iteration: `acc = acc + v` in a register, which the C compiler and
  // the reduction-chains pass vectorize, where `t[0] += v` through memory is one
  // dependent add per iteration (4x slower at 64 terms).
  scalar_ = t.vars.empty();
  if (t.positionsOf) {
    positionsOf_ = p.accessIndex(t.positionsOf);
    positionsRead_ = p.accessIndex(t.positionsRead);
  }
  all_ = scalar_ ? var(sym_.fresh(t.name), scalar(sym_.computeType())) : var(sym_.fresh(t.name), ptr(sym_.computeType()));
  len_ = var(sym_.fresh(t.name + "_len"), i64());
  stride_ = var(sym_.fresh(t.name + "_stride"), i64());
}

std::optional<LocalSplit> LocalTemporaryLowering::split(const IndexExpr& e) const {
  std::vector<IndexExpr> have, mine, rest;
  factorsOf(e, have);
  for (const IndexExpr& f : have) {
    bool ours = std::find(t_.factors.begin(), t_.factors.end(), f.get()) != t_.factors.end();
    (ours ? mine : rest).push_back(f);
  }
  if (mine.size() != t_.factors.size()) return std::nullopt;
  rest.push_back(access_);
  return LocalSplit{productOf(mine), productOf(rest)};
}

Expr LocalTemporaryLowering::extent(const IndexVar& v) const {
  if (!t_.block || !(*t_.block == v)) return sym_.extent(v);
  // A divide's blocks of a range are at most its blocks of the whole extent.
  return blockLength(sym_.extent(v), t_.blockAmount, t_.blockDivide);
}

Expr LocalTemporaryLowering::index(const Env& env) const {
  Expr idx = intImm(0);
  for (const IndexVar& v : t_.vars) {
    auto b = env.bound.find(v.id());
    TESSEL_CHECK(b != env.bound.end(), "temporary " + t_.name + ": " + v.name() + " is not bound");
    Expr at = b->second;
    if (t_.block && *t_.block == v) {
      auto lo = env.localBlockLo.find(&t_);
      TESSEL_CHECK(lo != env.localBlockLo.end(), "temporary " + t_.name + ": read outside its block");
      at = sub(at, lo->second);
    }
    idx = add(mul(idx, extent(v)), at);
  }
  auto row = env.localRows.find(&t_);
  TESSEL_CHECK(row != env.localRows.end(), "temporary " + t_.name + ": read outside its loop");
  return add(row->second, idx);
}

/// B's position of the entry at the bound variables (t at B's positions).
static Expr positionOf(const Env& env, int access, const std::string& name) {
  const std::vector<LevelState>& st = env.in.at(access);
  TESSEL_CHECK(st.size() == 2, "temporary " + name + ": read or written before B's entry is bound");
  return st.back().pos;
}

bool LocalTemporaryLowering::elementBound(const Env& env) const {
  return atPositions() && env.in.at(positionsOf_).size() == 2;
}

/// t at B's positions: this thread's row plus the position's offset in the block.
Expr LocalTemporaryLowering::positionIndex(const Env& env, int access) const {
  auto row = env.localRows.find(&t_);
  auto first = env.localBlockLo.find(&t_);
  TESSEL_CHECK(row != env.localRows.end() && first != env.localBlockLo.end(),
               "temporary " + t_.name + ": read outside its block");
  return add(row->second, sub(positionOf(env, access, t_.name), first->second));
}

Expr LocalTemporaryLowering::element(const Env& env) const {
  if (atPositions()) return load(all_, positionIndex(env, positionsRead_));
  return scalar_ ? all_ : load(all_, index(env));
}

Stmt LocalTemporaryLowering::addTo(const Env& env, Expr v) const {
  if (scalar_) return assign(all_, applyOp(p_.assignment.semiring.add, all_, std::move(v)));  // the semiring's add
  Expr at = atPositions() ? positionIndex(env, positionsOf_) : index(env);
  return store(all_, at, std::move(v), reduceOpOf(p_.assignment.semiring));
}

/// t at B's positions: a row as long as the most positions any block of rows holds (the
/// blocks as the block loop cuts [0, rows): of blockAmount rows, or blockAmount pieces).
std::vector<Stmt> LocalTemporaryLowering::longestBlock() const {
  const int arg = p_.inputs[positionsOf_].arg;
  Expr pos = sym_.arrays(arg, 1).pos, rows = sym_.extent(*t_.block);
  Expr size = var(sym_.fresh(t_.name + "_rows"), i64()), b = var(sym_.fresh(t_.name + "_b"), i64());
  Expr each = blockLength(rows, t_.blockAmount, t_.blockDivide), blocks = blockCount(rows, size);
  Expr lo = mul(b, size), hi = minOf(add(mul(b, size), size), rows);
  Expr held = sub(cast(i64(), load(pos, hi)), cast(i64(), load(pos, lo)));
  return {decl(len_, intImm(0)), decl(size, each),
          forRange(b, intImm(0), blocks, assign(len_, binary(ExprOp::Max, len_, held)))};
}

std::vector<Stmt> LocalTemporaryLowering::allocate() const {
  if (scalar_) return {};
  std::vector<Stmt> s;
  if (atPositions()) {
    s = longestBlock();
  } else {
    Expr len = intImm(1);
    for (const IndexVar& v : t_.vars) len = mul(len, extent(v));
    s = {decl(len_, len)};
  }
  if (serial_) {
    s.insert(s.end(), {decl(all_), alloc(all_, binary(ExprOp::Max, len_, intImm(1)), false)});
    return s;
  }
  // Threads' rows kThreadGap elements apart: rows back to back shared a cache line at each
  // boundary (malloc aligns to 16 bytes), and every update of the producer's row then
  // bounced that line between cores (<MTTKRP, GEMM>, t(j) of 32 doubles, ran slower on 2
  // threads of the 16-core Xeon than on 1).
  Expr threads = cast(i64(), call("omp_get_max_threads", {}, scalar(Datatype::Int32)));
  s.insert(s.end(), {decl(stride_, add(len_, intImm(kThreadGap))), decl(all_), alloc(all_, mul(stride_, threads), false)});
  return s;
}

Stmt LocalTemporaryLowering::release() const { return scalar_ ? block({}) : ir::freeArray(all_); }

std::vector<Stmt> LocalTemporaryLowering::startRow(Env& env) const {
  if (scalar_) return {decl(all_, zeroValue(p_.assignment.semiring, sym_.computeType(), sym_.outputType()))};
  Expr off = var(sym_.fresh(t_.name + "_row"), i64());
  env.localRows[&t_] = off;
  env.inLocal = true;
  Expr thread = serial_ ? intImm(0) : cast(i64(), call("omp_get_thread_num", {}, scalar(Datatype::Int32)));
  Expr lo, hi;  // the block of rows this row holds (t at blocks)
  if (t_.block) {
    auto r = env.range.find(t_.block->id());
    TESSEL_CHECK(r != env.range.end(), "temporary " + t_.name + ": its block of " + t_.block->name() + " is not set");
    std::tie(lo, hi) = r->second;
  }
  TESSEL_CHECK(lo || !atPositions(), "temporary " + t_.name + ": at B's positions without a block");
  Expr zero = zeroValue(p_.assignment.semiring, sym_.computeType(), sym_.outputType());
  Expr x = var(sym_.fresh(t_.name + "_x"), i64());
  Stmt row = decl(off, mul(thread, serial_ ? len_ : stride_));
  if (atPositions()) {  // the block's rows' positions of B, [pos[lo], pos[hi]), from the row's start
    Expr pos = sym_.arrays(p_.inputs[positionsOf_].arg, 1).pos;
    Expr first = var(sym_.fresh(t_.name + "_first"), i64());
    env.localBlockLo[&t_] = first;
    return {row, decl(first, cast(i64(), load(pos, lo))),
            forRange(x, intImm(0), sub(cast(i64(), load(pos, hi)), first), store(all_, add(off, x), zero))};
  }
  if (lo) env.localBlockLo[&t_] = lo;
  return {row, forRange(x, intImm(0), len_, store(all_, add(off, x), zero))};
}

void LocalTemporaries::add(const Problem& p, const IndexStmtNode& where, Symbols& sym, bool serial) {
  all_.emplace_back(&where, std::make_unique<LocalTemporaryLowering>(p, where, sym, serial));
}

const LocalTemporaryLowering& LocalTemporaries::of(const IndexStmtNode* where) const {
  for (const auto& [w, l] : all_)
    if (w == where) return *l;
  throw InternalError("a where at a loop without its temporary");
}

const LocalTemporaryLowering* LocalTemporaries::reading(const tessel::ExprNode* n) const {
  for (const auto& [w, l] : all_)
    if (l->reads(n)) return l.get();
  return nullptr;
}

std::vector<Stmt> LocalTemporaries::allocate() const {
  std::vector<Stmt> s;
  for (const auto& [w, l] : all_)
    for (Stmt& st : l->allocate()) s.push_back(st);
  return s;
}

std::vector<Stmt> LocalTemporaries::release() const {
  std::vector<Stmt> s;
  for (const auto& [w, l] : all_) s.push_back(l->release());
  return s;
}

}  // namespace tessel::lower
