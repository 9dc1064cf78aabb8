// Level formats: the one abstraction that answers every question the compiler and the
// storage ask of one level of a tensor (TACO's ModeFormatImpl, SpDISTAL's partition
// functions). Code outside src/format asks a level format object; it never switches on
// LevelKind. The IR fragments the lowerer builds from these answers live in
// src/lower/level_format.h.
#pragma once

#include <cstdint>
#include <memory>

#include "format/level_partition.h"
#include "tessel/format.h"

namespace tessel {

/// One level kind's answers. Instances are stateless singletons (see levelFormat()).
class LevelFormat {
 public:
  virtual ~LevelFormat() = default;

  /// Short human name with the tool letter, e.g. "dense (d)".
  virtual const char* name() const = 0;
  /// The letter of the level in `-f` (d, s, u, q, b).
  virtual char letter() const = 0;

  // ---- properties (TACO) --------------------------------------------------------------
  /// Every coordinate of the dimension is stored under every parent position.
  virtual bool full() const = 0;
  /// Coordinates under one parent position are sorted.
  virtual bool ordered() const { return true; }
  /// Coordinates do not repeat among siblings.
  virtual bool unique() const = 0;
  /// At most one child per parent position (Singleton).
  virtual bool branchless() const { return false; }
  /// Positions hold only stored entries, no holes (not Bitmap: absent slots exist).
  virtual bool compact() const = 0;
  /// Position = f(parent position, coordinate) in O(1): Dense, Bitmap.
  virtual bool locatable() const = 0;
  /// A located position may be absent: a presence flag must be tested (Bitmap).
  virtual bool hasFlagArray() const { return false; }
  /// pos[k] holds [begin, end) of positions per parent position.
  virtual bool hasPosArray() const { return false; }
  /// crd[k] holds one coordinate per position.
  virtual bool hasCrdArray() const { return false; }
  /// The level has positions of its own (false: shares the parent's, Singleton).
  virtual bool ownsPositions() const { return true; }

  // ---- assembly capabilities --------------------------------------------------------
  /// Entries are appended in coordinate order (Compressed, CompressedNU, Singleton).
  virtual bool supportsAppend() const { return false; }
  /// Random-access insert into a level pre-sized from its parent (Dense, Bitmap).
  virtual bool supportsInsert() const { return false; }

  // ---- sizes -------------------------------------------------------------------------
  /// Positions of this level given the parent's position count, the level's dimension
  /// and, for levels with a pos array, its last entry pos[parentSize].
  virtual int64_t positions(int64_t parentSize, int64_t dim, int64_t lastPos) const = 0;
  /// Elements of the pos array of an output level under `parentSize` positions (0: none).
  int64_t posArraySize(int64_t parentSize) const { return hasPosArray() ? parentSize + 1 : 0; }
  /// Bytes of the presence-flag array (uint8 per slot, stored in crd[k]; 0: none).
  int64_t flagArraySize(int64_t parentSize, int64_t dim) const {
    return hasFlagArray() ? parentSize * dim : 0;
  }

  // ---- partitioning (SpDISTAL Table I) ---------------------------------------------
  /// Starts a universe partition (coordinate ranges per color) of this level.
  virtual std::unique_ptr<PartitionBuilder> initUniversePartition(const LevelView& level) const = 0;
  /// Starts a non-zero partition (position ranges per color) of this level.
  virtual std::unique_ptr<PartitionBuilder> initNonZeroPartition(const LevelView& level) const = 0;
  /// Partition of this level's positions from a partition of its parent's positions.
  virtual Partition partitionFromParent(const LevelView& level, const Partition& parentPart) const = 0;
  /// Partition of the parent's positions from a partition of this level's positions.
  virtual Partition partitionFromChild(const LevelView& level, const Partition& childPart) const = 0;
};

/// The level format of level k of f.
const LevelFormat& levelFormat(const Format& f, int k);

/// Named format families the compiler specializes on, asked through level formats.
/// Level 0 full and locatable, level 1 appended with a pos array and unique (CSR-like).
bool isDenseOverCompressed(const Format& f);
/// Every level supports random-access insert (an output assembled without appends).
bool allLevelsInsert(const Format& f);
/// Some level stores presence flags (Bitmap).
bool anyFlagLevel(const Format& f);

}  // namespace tessel
