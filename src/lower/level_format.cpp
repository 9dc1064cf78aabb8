// IR fragments of level formats, chosen by the level's properties.
#include "lower/level_format.h"

#include "tessel/error.h"

namespace tessel::lower {

using namespace ir;

std::pair<Expr, Expr> LevelFormat::bounds(const LevelArrays& a, const ParentRef& parent) const {
  if (f_.hasPosArray())
    return {cast(i64(), load(a.pos, parent.pos)), cast(i64(), load(a.pos, add(parent.pos, intImm(1))))};
  if (!f_.ownsPositions()) {  // shares the parent's positions: iterate its segment
    TESSEL_CHECK(parent.segBegin && parent.segEnd, std::string(f_.name()) + " level under a unique parent");
    return {parent.segBegin, parent.segEnd};
  }
  throw InternalError(std::string("bounds() on a ") + f_.name() + " level, which is not iterated by position");
}

Expr LevelFormat::coordinate(const LevelArrays& a, Expr p) const {
  if (!f_.hasCrdArray()) throw InternalError(std::string("coordinate() on a ") + f_.name() + " level");
  return cast(i64(), load(a.crd, p));
}

Expr LevelFormat::locate(const LevelArrays& a, Expr parentPos, Expr c) const {
  if (!f_.locatable()) throw InternalError(std::string("locate() on a ") + f_.name() + " level");
  return add(mul(parentPos, a.dim), cast(i64(), c));
}

Expr LevelFormat::present(const LevelArrays& a, Expr p) const {
  if (!f_.hasFlagArray()) throw InternalError(std::string("present() on a ") + f_.name() + " level");
  return load(a.flags, p);
}

std::unique_ptr<LevelFormat> makeLevelFormat(const Format& f, int k) {
  return std::make_unique<LevelFormat>(tessel::levelFormat(f, k));
}

}  // namespace tessel::lower
