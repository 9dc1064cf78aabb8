// precompute(e, t, at): see local_temporary.h.
#include "lower/local_temporary.h"

#include <algorithm>

#include "lower/semiring_ir.h"
#include "notation/products.h"
#include "tessel/error.h"

namespace tessel::lower {

using namespace ir;

LocalTemporaryLowering::LocalTemporaryLowering(const Problem& p, const LocalTemporary& t, Symbols& sym,
                                               bool serial)
    : p_(p), t_(t), sym_(sym), serial_(serial) {
  // t has an identity (the consumer's access points to it) but no arrays: the kernel
  // allocates its rows itself.
  std::vector<int64_t> dims;
  for (const IndexVar& v : t.vars) dims.push_back(extentOf(p.assignment, v));
  tensor_ = TensorVar(t.name, p.outputType(), dims, DenseFormat(static_cast<int>(t.vars.size())));
  access_ = Access(tensor_, t.vars);
  all_ = var(sym_.fresh(t.name), ptr(sym_.computeType()));
  len_ = var(sym_.fresh(t.name + "_len"), i64());
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

Expr LocalTemporaryLowering::index(const Env& env) const {
  Expr idx = intImm(0);
  for (const IndexVar& v : t_.vars) {
    auto b = env.bound.find(v.id());
    TESSEL_CHECK(b != env.bound.end(), "temporary " + t_.name + ": " + v.name() + " is not bound");
    idx = add(mul(idx, sym_.extent(v)), b->second);
  }
  return add(env.localOffset, idx);
}

Expr LocalTemporaryLowering::element(const Env& env) const { return load(all_, index(env)); }

Stmt LocalTemporaryLowering::addTo(const Env& env, Expr v) const {
  return store(all_, index(env), std::move(v), reduceOpOf(p_.assignment.semiring));  // the semiring's add
}

std::vector<Stmt> LocalTemporaryLowering::allocate() const {
  Expr len = intImm(1);
  for (const IndexVar& v : t_.vars) len = mul(len, sym_.extent(v));
  Expr threads = serial_ ? intImm(1) : cast(i64(), call("omp_get_max_threads", {}, scalar(Datatype::Int32)));
  // At least one element: a zero-sized row must still allocate (tessel_alloc of 0).
  Expr rows = mul(binary(ExprOp::Max, len_, intImm(1)), threads);
  return {decl(len_, len), decl(all_), alloc(all_, rows, false)};
}

std::vector<Stmt> LocalTemporaryLowering::startRow(Env& env) const {
  Expr off = var(sym_.fresh(t_.name + "_row"), i64());
  env.localOffset = off;
  Expr x = var(sym_.fresh(t_.name + "_x"), i64());
  Expr thread = serial_ ? intImm(0) : cast(i64(), call("omp_get_thread_num", {}, scalar(Datatype::Int32)));
  Datatype ct = sym_.computeType();
  return {decl(off, mul(thread, len_)),
          forRange(x, intImm(0), len_, store(all_, add(off, x), zeroValue(p_.assignment.semiring, ct)))};
}

}  // namespace tessel::lower
