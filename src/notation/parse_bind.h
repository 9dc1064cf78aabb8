// Parsing with a caller's binding of names: the text syntax (tessel/syntax.h) is one
// parser whether names stand for tensor variables or for Tensors (runtime).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tessel/notation.h"

namespace tessel {

/// The access of tensor `name` by `vars`, or an undefined expression for an unknown name.
using AccessBinder = std::function<IndexExpr(const std::string& name, std::vector<IndexVar> vars)>;

/// parseAssignment with names bound by `bind`.
Assignment parseAssignmentWith(const std::string& text, const AccessBinder& bind);

}  // namespace tessel
