// Text syntax for index notation: "A(i,j) = B(i,k) * C(k,j) + D(i,j)", over tensor
// variables (the compiler's side; tessel/parser.h binds names to Tensors).
//
// Grammar:  assignment := access ('=' | '+=') expr
//           expr := arith [('<' | '<=' | '>' | '>=' | '==' | '!=') arith]   (no chains)
//           arith := term (('+'|'-') term)*
//           term := factor (('*' | '/' | '@(' op ',' op ')') factor)*
//           factor := '-' factor | '(' expr ')' | number | sum | call | access
//           sum := 'sum' '(' NAME ',' expr ')'              (an explicit reduction)
//           call := ('min' | 'max') '(' expr ',' expr ')' | 'abs' '(' expr ')'
//           access := NAME [ '(' [NAME (',' NAME)*] ')' ]   (no parentheses: a scalar)
// `sum`, `min`, `max` and `abs` are reserved: no tensor has those names. Comparisons give
// 1 or 0; element-wise semantics in tessel/notation.h (apply). `X @(add,mul) Y` is X * Y
// over the semiring (add, mul) (op: + * plus times min max or and pair first second any),
// which the parser sets as Assignment::semiring; an expression has one semiring, so
// `@(...)` next to a plain `+`, `-`, `*`, `/` or another `@(...)` is refused ("mixing
// semirings ... is not supported"). Reductions follow the einsum convention
// (see explicitReductions in tessel/notation.h).
// Errors throw ParseError with the 1-based column of the offending character.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tessel/notation.h"

namespace tessel {

/// A tensor mentioned in an expression: its name, number of indices, and whether it
/// is the output (left-hand side).
struct TensorUse {
  std::string name;
  int order = 0;
  bool isOutput = false;
  bool accumulated = false;  ///< the output of `+=`: its current values are added to
};

/// Tensors in the text, output first then inputs in order of first appearance.
/// Throws ParseError (syntax) or NotationError (one name used with different orders).
std::vector<TensorUse> scanTensors(const std::string& text);

/// Parse and bind names to tensor variables (accesses without storage). Index
/// variables with the same name are the same variable. Throws ParseError /
/// NotationError (unknown tensor, wrong arity).
Assignment parseAssignment(const std::string& text, const std::map<std::string, TensorVar>& tensors);

}  // namespace tessel
