// Which storage each tensor variable of a run uses.
//
// The compiler works on tensor variables (TensorVar) and rewrites assignments freely
// (stages, temporaries): its accesses need not carry storage. A run therefore resolves
// storage by variable: the accesses of the assignment it is given carry their tensors'
// storage (ExprNode::binding, set by Access(TensorBase, ...)); the temporaries its stages
// write get storage from the runtime. Every stage's slots are then filled by variable.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "tessel/notation.h"
#include "tessel/tensor.h"

namespace tessel {

class RunBindings {
 public:
  /// The bound accesses of `a`, lhs and rhs. Throws UserError naming a variable
  /// without storage (an assignment over bare TensorVars compiles but cannot run).
  static RunBindings of(const Assignment& a);
  /// v's storage is t (a temporary of the run).
  void bind(const TensorVar& v, std::shared_ptr<TensorImpl> t);
  /// The storage bound to v; InternalError if none.
  const std::shared_ptr<TensorImpl>& at(const TensorVar& v) const;

 private:
  std::vector<std::pair<TensorVar, std::shared_ptr<TensorImpl>>> entries_;  // a handful: linear search
};

/// Storage for `v` without arrays. (TensorBase's constructor would allocate an empty
/// tensor's: a zeroed pos array per level, all of a dense tensor's values.)
TensorBase arraylessTensor(const TensorVar& v);

}  // namespace tessel
