// The operator and semiring values of tessel/operators.h.
#include "tessel/operators.h"

#include <algorithm>
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
    case BinaryOpKind::Or: return (a != 0 || b != 0) ? 1 : 0;
    case BinaryOpKind::And: return (a != 0 && b != 0) ? 1 : 0;
    case BinaryOpKind::Pair: return 1;
    case BinaryOpKind::First: return a;
    case BinaryOpKind::Second: return b;
    case BinaryOpKind::Any: return b != 0 ? b : a;
  }
  throw InternalError("unknown binary operator");
}

BinaryOp BinaryOp::plus() { return {BinaryOpKind::Add, "plus", "+", 0.0, std::nullopt, false, true}; }
BinaryOp BinaryOp::times() { return {BinaryOpKind::Mul, "times", "*", 1.0, 0.0, false, true}; }
BinaryOp BinaryOp::min() { return {BinaryOpKind::Min, "min", "min", kInf, -kInf, true, true}; }
BinaryOp BinaryOp::max() { return {BinaryOpKind::Max, "max", "max", -kInf, kInf, true, true}; }
BinaryOp BinaryOp::lor() { return {BinaryOpKind::Or, "or", "or", 0.0, 1.0, true, true}; }
BinaryOp BinaryOp::land() { return {BinaryOpKind::And, "and", "and", 1.0, 0.0, true, true}; }
// pair, first and second have no identity: theirs is never used (a semiring's zero is
// its add's identity), so 1 stands in.
BinaryOp BinaryOp::pair() { return {BinaryOpKind::Pair, "pair", "pair", 1.0, std::nullopt, false, true}; }
BinaryOp BinaryOp::first() { return {BinaryOpKind::First, "first", "first", 1.0, std::nullopt, true, false}; }
BinaryOp BinaryOp::second() { return {BinaryOpKind::Second, "second", "second", 1.0, std::nullopt, true, false}; }
BinaryOp BinaryOp::any() { return {BinaryOpKind::Any, "any", "any", 0.0, std::nullopt, true, true}; }

Semiring Semiring::of(const BinaryOp& add, const BinaryOp& mul) {
  Semiring s{add.name + "_" + mul.name, add, mul};
  // + as a mul: add's infinite identity annihilates it (inf + x = inf, -inf + x = -inf).
  if (mul.kind == BinaryOpKind::Add && (add.kind == BinaryOpKind::Min || add.kind == BinaryOpKind::Max))
    s.mul.annihilator = add.identity;
  return s;
}

Semiring Semiring::plusTimes() { return of(BinaryOp::plus(), BinaryOp::times()); }
Semiring Semiring::minPlus() { return of(BinaryOp::min(), BinaryOp::plus()); }
Semiring Semiring::maxPlus() { return of(BinaryOp::max(), BinaryOp::plus()); }
Semiring Semiring::maxTimes() { return of(BinaryOp::max(), BinaryOp::times()); }

std::vector<std::string> Semiring::names() {
  return {"plus_times", "min_plus",  "max_plus",   "min_times", "max_times",  "or_and",    "and_or",
          "plus_pair",  "any_pair",  "min_first",  "min_second", "max_first", "max_second", "plus_min"};
}

Semiring Semiring::byName(const std::string& name) {
  static const std::vector<BinaryOp> ops = {BinaryOp::plus(), BinaryOp::times(), BinaryOp::min(), BinaryOp::max(),
                                            BinaryOp::lor(),  BinaryOp::land(),  BinaryOp::pair(), BinaryOp::first(),
                                            BinaryOp::second(), BinaryOp::any()};
  auto names = Semiring::names();
  if (std::find(names.begin(), names.end(), name) != names.end()) {
    size_t cut = name.find('_');
    auto op = [&](const std::string& n) {
      for (const BinaryOp& o : ops)
        if (o.name == n) return o;
      throw InternalError("semiring catalogue names an unknown operator " + n);
    };
    return of(op(name.substr(0, cut)), op(name.substr(cut + 1)));
  }
  std::string known;
  for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
  throw NotationError("unknown semiring '" + name + "' (known: " + known + ")");
}

}  // namespace tessel
