// Text syntax for index notation bound to Tensors (grammar: tessel/syntax.h).
#pragma once

#include <map>
#include <string>

#include "tessel/notation.h"
#include "tessel/syntax.h"
#include "tessel/tensor.h"

namespace tessel {

/// Parse and bind names to tensors (accesses bound to their storage, so the
/// assignment can run). Index variables with the same name are the same variable.
/// Throws ParseError / NotationError (unknown tensor, wrong arity).
Assignment parseAssignment(const std::string& text,
                           const std::map<std::string, TensorBase>& tensors);

}  // namespace tessel
