// The operator and semiring values of tessel/operators.h.
#include "tessel/operators.h"

#include <limits>

#include "tessel/error.h"

namespace tessel {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

double BinaryOp::apply(double a, double b) const {
  switch (kind) {
    case BinaryOpKind::Add: return a + b;
    case BinaryOpKind::Mul: return a * b;
    case BinaryOpKind::Min: return a < b ? a : b;
    case BinaryOpKind::Max: return a > b ? a : b;
  }
  throw InternalError("unknown binary operator");
}

BinaryOp BinaryOp::plus() { return {BinaryOpKind::Add, "plus", "+", 0.0, std::nullopt, false, true}; }
BinaryOp BinaryOp::times() { return {BinaryOpKind::Mul, "times", "*", 1.0, 0.0, false, true}; }
BinaryOp BinaryOp::min() { return {BinaryOpKind::Min, "min", "min", kInf, -kInf, true, true}; }
BinaryOp BinaryOp::max() { return {BinaryOpKind::Max, "max", "max", -kInf, kInf, true, true}; }

Semiring Semiring::plusTimes() { return {"plus_times", BinaryOp::plus(), BinaryOp::times()}; }
Semiring Semiring::minPlus() {
  // + as a semiring's mul: +inf (min's identity) annihilates it.
  BinaryOp mul = BinaryOp::plus();
  mul.annihilator = kInf;
  return {"min_plus", BinaryOp::min(), mul};
}
Semiring Semiring::maxTimes() { return {"max_times", BinaryOp::max(), BinaryOp::times()}; }

std::vector<std::string> Semiring::names() { return {"plus_times", "min_plus", "max_times"}; }

Semiring Semiring::byName(const std::string& name) {
  if (name == "plus_times") return plusTimes();
  if (name == "min_plus") return minPlus();
  if (name == "max_times") return maxTimes();
  std::string known;
  for (const auto& n : names()) known += (known.empty() ? "" : ", ") + n;
  throw NotationError("unknown semiring '" + name + "' (known: " + known + ")");
}

}  // namespace tessel
