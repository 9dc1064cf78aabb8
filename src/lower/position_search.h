// Binary searches emitted into generated code: where a coordinate range starts in a
// sorted level, and which segment of a positions array holds a position. They let a
// block of a split loop (or a block of an operand's non-zeros) start anywhere.
#pragma once

#include <functional>
#include <vector>

#include "ir/ir.h"
#include "lower/level_format.h"
#include "lower/symbols.h"

namespace tessel::lower {

/// First position in [begin, end) whose coordinate is >= target. Appends the search to s.
ir::Expr emitLowerBound(Symbols& sym, const LevelFormat& lf, const LevelArrays& arrays, const ir::Expr& begin,
                        const ir::Expr& end, const ir::Expr& target, std::vector<ir::Stmt>& s);

/// First q in [qb, qe) with pos[q + 1] > p: the non-empty segment holding position p
/// (qe - 1 when p is past the end). Appends the search to s.
ir::Expr emitSegmentOf(Symbols& sym, const ir::Expr& pos, const ir::Expr& qb, const ir::Expr& qe,
                       const ir::Expr& p, std::vector<ir::Stmt>& s);

}  // namespace tessel::lower
