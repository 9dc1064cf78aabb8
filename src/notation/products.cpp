// Product chains: see products.h.
#include "notation/products.h"

namespace tessel {

void factorsOf(const IndexExpr& e, std::vector<IndexExpr>& out) {
  if (e.kind() == ExprKind::Mul) {
    factorsOf(e.node().a, out);
    factorsOf(e.node().b, out);
  } else {
    out.push_back(e);
  }
}

IndexExpr productOf(const std::vector<IndexExpr>& factors) {
  IndexExpr p = factors.front();
  for (size_t f = 1; f < factors.size(); f++) p = p * factors[f];
  return p;
}

}  // namespace tessel
