// Dense, Compressed (unique or not) and Singleton level formats.
#include "lower/level_format.h"

#include "tessel/error.h"

namespace tessel::lower {

using namespace ir;

std::pair<Expr, Expr> LevelFormat::bounds(const LevelArrays&, const ParentRef&) const {
  throw InternalError("bounds() on a level that is not iterated by position");
}
Expr LevelFormat::coordinate(const LevelArrays&, Expr) const {
  throw InternalError("coordinate() on a level without coordinates");
}
Expr LevelFormat::locate(const LevelArrays&, Expr, Expr) const {
  throw InternalError("locate() on a level without random access");
}

namespace {

class DenseLevel : public LevelFormat {
 public:
  bool locatable() const override { return true; }
  bool unique() const override { return true; }
  bool ownsPositions() const override { return true; }
  bool hasPosArray() const override { return false; }
  bool hasCrdArray() const override { return false; }
  Expr locate(const LevelArrays& a, Expr parentPos, Expr c) const override {
    return add(mul(parentPos, a.dim), cast(i64(), c));
  }
};

/// pos/crd level; non-unique when it heads a COO-style singleton chain.
class CompressedLevel : public LevelFormat {
 public:
  explicit CompressedLevel(bool unique) : unique_(unique) {}
  bool locatable() const override { return false; }
  bool unique() const override { return unique_; }
  bool ownsPositions() const override { return true; }
  bool hasPosArray() const override { return true; }
  bool hasCrdArray() const override { return true; }
  std::pair<Expr, Expr> bounds(const LevelArrays& a, const ParentRef& parent) const override {
    return {cast(i64(), load(a.pos, parent.pos)),
            cast(i64(), load(a.pos, add(parent.pos, intImm(1))))};
  }
  Expr coordinate(const LevelArrays& a, Expr p) const override {
    return cast(i64(), load(a.crd, p));
  }

 private:
  bool unique_;
};

/// One coordinate per parent position; iterates the parent's segment.
class SingletonLevel : public LevelFormat {
 public:
  explicit SingletonLevel(bool unique) : unique_(unique) {}
  bool locatable() const override { return false; }
  bool unique() const override { return unique_; }
  bool ownsPositions() const override { return false; }
  bool hasPosArray() const override { return false; }
  bool hasCrdArray() const override { return true; }
  std::pair<Expr, Expr> bounds(const LevelArrays&, const ParentRef& parent) const override {
    TESSEL_CHECK(parent.segBegin && parent.segEnd, "singleton level under a unique parent");
    return {parent.segBegin, parent.segEnd};
  }
  Expr coordinate(const LevelArrays& a, Expr p) const override {
    return cast(i64(), load(a.crd, p));
  }

 private:
  bool unique_;
};

}  // namespace

std::unique_ptr<LevelFormat> makeLevelFormat(const Format& f, int k) {
  switch (f.level(k)) {
    case LevelKind::Dense: return std::make_unique<DenseLevel>();
    case LevelKind::Compressed: return std::make_unique<CompressedLevel>(true);
    case LevelKind::CompressedNU: return std::make_unique<CompressedLevel>(false);
    case LevelKind::Singleton: return std::make_unique<SingletonLevel>(f.levelIsUnique(k));
  }
  throw InternalError("unknown level kind");
}

}  // namespace tessel::lower
