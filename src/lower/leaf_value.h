// The value of a case expression at the leaf of a loop nest, and where it has an entry:
// loads of resolved operands (the semiring's zero where an operand is absent), literals
// and the semiring's operators; the temporary of a where read by its consumer.
#pragma once

#include "ir/ir.h"
#include "lower/local_temporary.h"
#include "lower/problem.h"
#include "lower/symbols.h"

namespace tessel::lower {

/// e's value in the compute type, with every access of e resolved in `env`. `locals`:
/// the temporaries at loops whose reads e may contain (null if none).
ir::Expr leafValue(const Problem& p, const Symbols& sym, const LocalTemporaries* locals, const IndexExpr& e,
                   const Env& env);

/// Where e has an entry, from the flags of probed (Bitmap) accesses: a product needs
/// every factor, a sum any term. Null: always (no probed access decides it).
ir::Expr leafPresence(const Problem& p, const LocalTemporaries* locals, const IndexExpr& e, const Env& env);

}  // namespace tessel::lower
