// Partitions of one tensor level as plain C++ data (SpDISTAL Table I, without Legion):
// a partition gives each color a set of positions of the level, as sorted disjoint
// [lo, hi) ranges. The distributed backend will turn them into pieces and messages;
// for now they are computed eagerly over a level's arrays.
#pragma once

#include <cstdint>
#include <vector>

namespace tessel {

/// Half-open range [lo, hi).
struct Range {
  int64_t lo = 0, hi = 0;
  bool operator==(const Range&) const = default;
};

/// Per color, the positions it owns (sorted, disjoint, non-empty ranges).
struct Partition {
  std::vector<std::vector<Range>> colors;
  bool operator==(const Partition&) const = default;
};

/// What finalize returns: the partition for deriving the parent level's (through
/// partitionFromChild of this level) and the one for deriving the children's.
struct PartitionPair {
  Partition forParent;  ///< positions of the parent level, per color
  Partition forChild;   ///< positions of this level, per color
};

/// One level's arrays as the partition functions read them (64-bit, already widened).
struct LevelView {
  int64_t dim = 0;         ///< the level's dimension
  int64_t parentSize = 1;  ///< positions of the parent level (1 for the first level)
  std::vector<int64_t> pos;  ///< pos array (empty when the level has none)
  std::vector<int64_t> crd;  ///< crd array (empty when the level has none)
};

/// Builder of an initial partition: init (construction), createEntry per color, finalize.
class PartitionBuilder {
 public:
  virtual ~PartitionBuilder() = default;
  /// Universe: coordinates [lo, hi) go to `color`; non-zero: positions [lo, hi).
  virtual void createEntry(int color, Range bounds) = 0;
  virtual PartitionPair finalize() = 0;
};

/// Sorts and merges a color's ranges (drops empty ones).
std::vector<Range> normalizeRanges(std::vector<Range> r);

}  // namespace tessel
