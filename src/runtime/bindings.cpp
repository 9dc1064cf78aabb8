// Storage of a run's tensor variables: see bindings.h.
#include "runtime/bindings.h"

#include <algorithm>
#include <iterator>

#include "tessel/error.h"

namespace tessel {

namespace {

void collect(const IndexExpr& e, RunBindings& b, const Assignment& a) {
  if (!e.defined()) return;
  const ExprNode& n = e.node();
  if (n.kind == ExprKind::Access) {
    if (!n.binding)
      throw UserError("tensor variable " + n.tensor.name() + " in " + a.str() +
                      " has no storage: run an assignment over Tensors (a TensorVar alone only compiles)");
    b.bind(n.tensor, n.binding);
    return;
  }
  collect(n.a, b, a);
  collect(n.b, b, a);
}

}  // namespace

RunBindings RunBindings::of(const Assignment& a) {
  RunBindings b;
  collect(a.lhs, b, a);
  collect(a.rhs, b, a);
  if (a.mask.defined()) collect(a.mask.access, b, a);  // the mask's storage, read by its factor
  return b;
}

void RunBindings::bind(const TensorVar& v, std::shared_ptr<TensorImpl> t) {
  for (const auto& [var, impl] : entries_)
    if (var == v) {
      if (impl.get() != t.get()) throw InternalError("tensor variable " + v.name() + " is bound to two storages");
      return;
    }
  entries_.emplace_back(v, std::move(t));
}

const std::shared_ptr<TensorImpl>& RunBindings::at(const TensorVar& v) const {
  for (const auto& [var, impl] : entries_)
    if (var == v) return impl;
  throw InternalError("tensor variable " + v.name() + " has no storage in this run");
}

TensorBase arraylessTensor(const TensorVar& v) {
  if (v.dims().size() > TESSEL_MAX_ORDER) return TensorBase::forVar(v);  // which says why not
  auto impl = std::make_shared<TensorImpl>();
  impl->var = v;
  impl->storage.raw.order = static_cast<int32_t>(v.dims().size());
  std::copy(v.dims().begin(), v.dims().end(), std::begin(impl->storage.raw.dims));
  return TensorBase(impl);
}

}  // namespace tessel
