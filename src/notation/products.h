// A product chain's factors, and a product of factors (the shape precompute matches
// sub-expressions against, before all loops or at a loop).
#pragma once

#include <vector>

#include "tessel/notation.h"

namespace tessel {

/// Factors of a chain of products, left to right; {e} when e is not a product.
void factorsOf(const IndexExpr& e, std::vector<IndexExpr>& out);
/// f0 * f1 * ... (left-associated); `factors` must not be empty.
IndexExpr productOf(const std::vector<IndexExpr>& factors);

}  // namespace tessel
