// Text syntax for index notation: "A(i,j) = B(i,k) * C(k,j) + D(i,j)", over tensor
// variables (the compiler's side; tessel/parser.h binds names to Tensors).
//
// Grammar:  assignment := access ('=' | '+=') expr
//           expr := term (('+'|'-') term)*      term := factor (('*'|'/') factor)*
//           factor := '-' factor | '(' expr ')' | number | sum | access
//           sum := 'sum' '(' NAME ',' expr ')'              (an explicit reduction)
//           access := NAME [ '(' [NAME (',' NAME)*] ')' ]   (no parentheses: a scalar)
// `sum` is reserved: no tensor is named sum. Reductions follow the einsum convention
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
