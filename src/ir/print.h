// A readable pseudo-code printer for the IR, for looking at a program between passes
// (`tessel emit --passes`). Not C: loops read `for i in [a, b)`, loop kinds and atomics
// are shown as annotations; the C backend is what compiles.
#pragma once

#include <string>

#include "ir/ir.h"

namespace tessel::ir {

/// One expression, fully parenthesized below the top.
std::string print(const Expr& e);
/// A statement, indented by `indent` levels of two spaces, one line per statement.
std::string print(const Stmt& s, int indent = 0);
/// `name(tensors) { body }` with the function's doc as a comment.
std::string print(const Function& f);

}  // namespace tessel::ir
