// How a block loop (split or divide) cuts a range of coordinates or positions into blocks.
// The block loop itself (lower_loops.cpp) and the temporaries sized by its blocks
// (local_temporary.cpp) compute the cut with these, so that they agree by construction.
#pragma once

#include <cstdint>

#include "ir/ir.h"

namespace tessel::lower {

/// The length of each block (the last may be shorter) of `range` elements: `amount` for
/// a split, at least 1 and ceil(range / amount) for a divide into `amount` pieces.
inline ir::Expr blockLength(const ir::Expr& range, int64_t amount, bool divide) {
  using namespace ir;
  if (!divide) return intImm(amount);
  return binary(ExprOp::Max, intImm(1), binary(ExprOp::Div, add(range, intImm(amount - 1)), intImm(amount)));
}

/// How many blocks of `length` elements cover `range` elements: ceil(range / length).
inline ir::Expr blockCount(const ir::Expr& range, const ir::Expr& length) {
  using namespace ir;
  return binary(ExprOp::Div, add(range, sub(length, intImm(1))), length);
}

}  // namespace tessel::lower
