// The IR side of level formats: builds the fragments (bounds, coordinate, locate,
// presence test) the lowerer needs from the answers of tessel::LevelFormat
// (src/format/level_format.h). Which fragment applies is decided by the level format's
// properties, never by its kind.
#pragma once

#include <memory>

#include "format/level_format.h"
#include "ir/ir.h"
#include "tessel/format.h"

namespace tessel::lower {

/// IR variables holding one level's arrays and dimension.
struct LevelArrays {
  ir::Expr pos;    ///< null when the level has no pos array
  ir::Expr crd;    ///< null when the level has no crd array
  ir::Expr flags;  ///< presence flags (Bitmap, the crd slot of tessel_tensor_t); else null
  ir::Expr dim;    ///< level dimension
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
  explicit LevelFormat(const tessel::LevelFormat& f) : f_(f) {}
  /// The level format answering for this level.
  const tessel::LevelFormat& format() const { return f_; }
  bool locatable() const { return f_.locatable(); }
  bool unique() const { return f_.unique(); }
  bool ownsPositions() const { return f_.ownsPositions(); }
  bool hasPosArray() const { return f_.hasPosArray(); }
  bool hasCrdArray() const { return f_.hasCrdArray(); }
  bool hasFlagArray() const { return f_.hasFlagArray(); }

  /// [begin, end) of the positions to iterate under `parent` (non-locatable levels).
  std::pair<ir::Expr, ir::Expr> bounds(const LevelArrays& a, const ParentRef& parent) const;
  /// Coordinate stored at position p.
  ir::Expr coordinate(const LevelArrays& a, ir::Expr p) const;
  /// Position of coordinate c under parent position (locatable levels).
  ir::Expr locate(const LevelArrays& a, ir::Expr parentPos, ir::Expr c) const;
  /// True where the located position p holds an entry (levels with flags).
  ir::Expr present(const LevelArrays& a, ir::Expr p) const;

 private:
  const tessel::LevelFormat& f_;
};

/// The level format for level k of `f`.
std::unique_ptr<LevelFormat> makeLevelFormat(const Format& f, int k);

}  // namespace tessel::lower
