// The tests of output masks (tessel/notation.h OutputMask) in generated code: where a
// valued mask holds a nonzero, where a complemented mask holds (or lacks) an entry.
#pragma once

#include <vector>

#include "ir/ir.h"
#include "lower/problem.h"
#include "lower/symbols.h"

namespace tessel::lower {

/// Adds the test of every tested mask factor of e (valued or complemented, see
/// Problem::maskTested) that can be decided at this point to env.probed, so cases
/// outside the mask are skipped in both phases as Bitmap operands' are: a valued mask
/// once its access is resolved (its value is nonzero); a complemented one once its
/// variables are bound, located in its random-access levels and binary-searched in its
/// sparse ones (it is never iterated). Statements computing the tests go to s.
void probeMasks(const Problem& p, Symbols& sym, Env& env, const IndexExpr& e, std::vector<ir::Stmt>& s);

}  // namespace tessel::lower
