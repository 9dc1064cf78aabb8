// The operator and semiring values of tessel/operators.h.
#include "tessel/operators.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "tessel/error.h"

namespace tessel {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

BinaryOp make(BinaryOpKind kind, std::string name, std::string symbol, double identity,
              std::optional<double> annihilator, bool idempotent, bool commutative, bool hasIdentity = true) {
  BinaryOp op;
  op.kind = kind;
  op.name = std::move(name);
  op.symbol = std::move(symbol);
  op.identity = identity;
  op.annihilator = annihilator;
  op.idempotent = idempotent;
  op.commutative = commutative;
  op.hasIdentity = hasIdentity;
  return op;
}
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
    case BinaryOpKind::Lt: return a < b ? 1 : 0;
    case BinaryOpKind::Le: return a <= b ? 1 : 0;
    case BinaryOpKind::Gt: return a > b ? 1 : 0;
    case BinaryOpKind::Ge: return a >= b ? 1 : 0;
    case BinaryOpKind::Eq: return a == b ? 1 : 0;
    case BinaryOpKind::Ne: return a != b ? 1 : 0;
    case BinaryOpKind::Custom:
      if (!fn) throw NotationError("operator " + name + " has no function for the reference evaluator");
      return fn(a, b);
  }
  throw InternalError("unknown binary operator");
}

bool BinaryOp::isComparison() const {
  switch (kind) {
    case BinaryOpKind::Lt: case BinaryOpKind::Le: case BinaryOpKind::Gt:
    case BinaryOpKind::Ge: case BinaryOpKind::Eq: case BinaryOpKind::Ne: return true;
    default: return false;
  }
}

ElementwiseSupport elementwiseSupport(const BinaryOp& op, double fill) {
  if (op.annihilator && *op.annihilator == fill) return ElementwiseSupport::Intersection;
  // identity is documented as a left identity; only a commutative op drops either side.
  if (op.hasIdentity && op.commutative && op.identity == fill) return ElementwiseSupport::Union;
  return ElementwiseSupport::Fill;
}

BinaryOp BinaryOp::plus() { return make(BinaryOpKind::Add, "plus", "+", 0.0, std::nullopt, false, true); }
BinaryOp BinaryOp::times() { return make(BinaryOpKind::Mul, "times", "*", 1.0, 0.0, false, true); }
BinaryOp BinaryOp::min() { return make(BinaryOpKind::Min, "min", "min", kInf, -kInf, true, true); }
BinaryOp BinaryOp::max() { return make(BinaryOpKind::Max, "max", "max", -kInf, kInf, true, true); }
BinaryOp BinaryOp::lor() { return make(BinaryOpKind::Or, "or", "or", 0.0, 1.0, true, true); }
BinaryOp BinaryOp::land() { return make(BinaryOpKind::And, "and", "and", 1.0, 0.0, true, true); }
// pair, first and second have no identity: theirs is never used (a semiring's zero is
// its add's identity), so 1 stands in.
BinaryOp BinaryOp::pair() { return make(BinaryOpKind::Pair, "pair", "pair", 1.0, std::nullopt, false, true, false); }
BinaryOp BinaryOp::first() { return make(BinaryOpKind::First, "first", "first", 1.0, std::nullopt, true, false, false); }
BinaryOp BinaryOp::second() { return make(BinaryOpKind::Second, "second", "second", 1.0, std::nullopt, true, false, false); }
BinaryOp BinaryOp::any() { return make(BinaryOpKind::Any, "any", "any", 0.0, std::nullopt, true, true); }
// Comparisons have neither identity nor annihilator: element-wise they compute with the
// fill value in place of an absent operand. (lt, gt are not commutative.)
BinaryOp BinaryOp::lt() { return make(BinaryOpKind::Lt, "lt", "<", 0.0, std::nullopt, false, false, false); }
BinaryOp BinaryOp::le() { return make(BinaryOpKind::Le, "le", "<=", 0.0, std::nullopt, false, false, false); }
BinaryOp BinaryOp::gt() { return make(BinaryOpKind::Gt, "gt", ">", 0.0, std::nullopt, false, false, false); }
BinaryOp BinaryOp::ge() { return make(BinaryOpKind::Ge, "ge", ">=", 0.0, std::nullopt, false, false, false); }
BinaryOp BinaryOp::eq() { return make(BinaryOpKind::Eq, "eq", "==", 0.0, std::nullopt, false, true, false); }
BinaryOp BinaryOp::ne() { return make(BinaryOpKind::Ne, "ne", "!=", 0.0, std::nullopt, false, true, false); }

BinaryOp BinaryOp::custom(const std::string& name, const std::string& cExpr, std::function<double(double, double)> fn,
                          std::optional<double> identity, std::optional<double> annihilator, bool commutative) {
  bool ident = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name) ident = ident && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!ident) throw NotationError("operator name '" + name + "' is not an identifier (letters, digits, '_')");
  if (cExpr.find_first_not_of(" \t") == std::string::npos)
    throw NotationError("operator " + name + " has an empty C expression");
  if (!fn) throw NotationError("operator " + name + " has no function for the reference evaluator");
  BinaryOp op = make(BinaryOpKind::Custom, name, name, identity.value_or(0.0), annihilator, false, commutative,
                     identity.has_value());
  op.cExpr = cExpr;
  op.fn = std::move(fn);
  return op;
}

BinaryOp BinaryOp::byName(const std::string& text) {
  static const std::vector<std::pair<std::string, BinaryOp (*)()>> known = {
      {"+", plus},   {"plus", plus}, {"*", times},  {"times", times}, {"min", min},       {"max", max},
      {"or", lor},   {"lor", lor},   {"and", land}, {"land", land},   {"pair", pair},     {"first", first},
      {"second", second}, {"any", any}};
  for (const auto& [n, make] : known)
    if (n == text) return make();
  throw NotationError("unknown operator '" + text +
                      "' (known: +, *, plus, times, min, max, or, and, pair, first, second, any)");
}

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
