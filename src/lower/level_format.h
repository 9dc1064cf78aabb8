// Level formats as the lowerer sees them: each answers, with IR fragments, how to
// iterate a level, locate in it, and what its positions are. The lowerer asks these
// questions and never switches on the level kind.
#pragma once

#include <memory>

#include "ir/ir.h"
#include "tessel/format.h"

namespace tessel::lower {

/// IR variables holding one level's arrays and dimension.
struct LevelArrays {
  ir::Expr pos;  ///< null when the level has no pos array
  ir::Expr crd;  ///< null when the level has no crd array
  ir::Expr dim;  ///< level dimension
};

/// Where the parent level stands: its position, and for a non-unique parent the
/// segment [segBegin, segEnd) of positions that share its coordinate.
struct ParentRef {
  ir::Expr pos;
  ir::Expr segBegin;
  ir::Expr segEnd;
};

class LevelFormat {
 public:
  virtual ~LevelFormat() = default;
  /// Positions can be computed from (parent position, coordinate): Dense.
  virtual bool locatable() const = 0;
  /// Coordinates do not repeat among siblings.
  virtual bool unique() const = 0;
  /// The level has positions of its own (false: shares the parent's, Singleton).
  virtual bool ownsPositions() const = 0;
  virtual bool hasPosArray() const = 0;
  virtual bool hasCrdArray() const = 0;

  /// [begin, end) of the positions to iterate under `parent` (non-locatable levels).
  virtual std::pair<ir::Expr, ir::Expr> bounds(const LevelArrays& a, const ParentRef& parent) const;
  /// Coordinate stored at position p.
  virtual ir::Expr coordinate(const LevelArrays& a, ir::Expr p) const;
  /// Position of coordinate c under parent position (locatable levels).
  virtual ir::Expr locate(const LevelArrays& a, ir::Expr parentPos, ir::Expr c) const;
};

/// The level format for level k of `f`.
std::unique_ptr<LevelFormat> makeLevelFormat(const Format& f, int k);

}  // namespace tessel::lower
