// Building access nodes: shared by notation (TensorVar accesses) and the runtime
// (accesses of Tensors, bound to their storage).
#pragma once

#include <memory>
#include <vector>

#include "tessel/notation.h"

namespace tessel {

/// t(vars), with `binding` (null for a bare variable). Throws NotationError for an
/// undefined t or a wrong number of variables.
std::shared_ptr<const ExprNode> accessNode(const TensorVar& t, TensorBinding binding,
                                           std::vector<IndexVar> vars);

}  // namespace tessel
