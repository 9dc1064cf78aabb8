// Software prefetch hints: see prefetch.h.
#include "lower/prefetch.h"

namespace tessel::lower {

using namespace ir;

Stmt prefetchAhead(const Problem& p, Symbols& sym, int a, int k, const Expr& begin, std::vector<Stmt>& flags) {
  int arg = p.inputs[a].arg;
  LevelArrays arr = sym.arrays(arg, k);
  if (!arr.crd || !arr.pos) return block({});
  Expr flag = var(sym.fresh(sym.tensorName(arg) + std::to_string(k) + "_streams"), scalar(Datatype::Bool));
  Expr entries = sym.tensorField(arg, "crd_size", k), segments = sym.tensorField(arg, "pos_size", k);
  // Segments of a few entries (CSF fibers of 2-3) would issue more hints than lines.
  flags.push_back(decl(flag, land(binary(ExprOp::Ge, entries, intImm(kPrefetchEntries)),
                                  binary(ExprOp::Ge, entries, mul(intImm(kPrefetchMeanSegment), segments)))));
  auto hint = [&](const Expr& array) {
    return evaluate(call("tessel_prefetch", {add(array, add(begin, intImm(kPrefetchAhead)))},
                         scalar(Datatype::Int32)));
  };
  std::vector<Stmt> hints = {hint(arr.crd)};
  if (k + 1 == static_cast<int>(p.inputs[a].levelVars.size())) hints.push_back(hint(sym.vals(arg)));
  return ifThen(flag, block(hints));
}

}  // namespace tessel::lower
