// The level formats: Dense, Compressed (unique or not), Singleton and Bitmap. Each
// answers properties, assembly capabilities, sizes and the SpDISTAL partition functions.
#include "format/level_format.h"

#include <algorithm>
#include <functional>
#include <map>

#include "tessel/error.h"

namespace tessel {

namespace {

/// Collects one range list per color; `finish` turns them into the pair.
class Builder : public PartitionBuilder {
 public:
  using Finish = std::function<PartitionPair(const Partition&)>;
  explicit Builder(Finish f) : finish_(std::move(f)) {}
  void createEntry(int color, Range bounds) override {
    if (color < 0) throw InternalError("partition: negative color " + std::to_string(color));
    if (static_cast<size_t>(color) >= entries_.colors.size()) entries_.colors.resize(color + 1);
    entries_.colors[color].push_back(bounds);
  }
  PartitionPair finalize() override {
    for (auto& c : entries_.colors) c = normalizeRanges(c);
    return finish_(entries_);
  }

 private:
  Finish finish_;
  Partition entries_;
};

/// Applies `f` to every range of every color and normalizes.
Partition mapRanges(const Partition& in, const std::function<void(Range, std::vector<Range>&)>& f) {
  Partition out;
  for (auto& c : in.colors) {
    std::vector<Range> r;
    for (const Range& x : c) f(x, r);
    out.colors.push_back(normalizeRanges(std::move(r)));
  }
  return out;
}

// ---- position-space helpers shared by the level kinds ---------------------------------

/// Slots [p*dim + lo, p*dim + hi) of every parent p in `parents` (Dense, Bitmap).
Partition slotsOf(const LevelView& l, const Partition& parents) {
  return mapRanges(parents, [&](Range x, std::vector<Range>& r) { r.push_back({x.lo * l.dim, x.hi * l.dim}); });
}
/// Parents of slot ranges: slot q belongs to parent q / dim.
Partition parentsOfSlots(const LevelView& l, const Partition& slots) {
  return mapRanges(slots, [&](Range x, std::vector<Range>& r) {
    if (l.dim > 0 && x.hi > x.lo) r.push_back({x.lo / l.dim, (x.hi - 1) / l.dim + 1});
  });
}
/// Universe partition of a slot level: each coordinate range under every parent.
Partition coordinateSlots(const LevelView& l, const Partition& coords) {
  return mapRanges(coords, [&](Range x, std::vector<Range>& r) {
    Range c{std::max<int64_t>(x.lo, 0), std::min(x.hi, l.dim)};
    if (c.hi > c.lo)
      for (int64_t p = 0; p < l.parentSize; p++) r.push_back({p * l.dim + c.lo, p * l.dim + c.hi});
  });
}
/// image(pos, parents): positions [pos[a], pos[b]) of parent ranges [a, b).
Partition imageOfPos(const LevelView& l, const Partition& parents) {
  return mapRanges(parents, [&](Range x, std::vector<Range>& r) { r.push_back({l.pos.at(x.lo), l.pos.at(x.hi)}); });
}
/// preimage(pos, positions): parents whose non-empty segment meets the positions.
Partition preimageOfPos(const LevelView& l, const Partition& positions) {
  return mapRanges(positions, [&](Range x, std::vector<Range>& r) {
    int64_t p = std::upper_bound(l.pos.begin(), l.pos.end(), x.lo) - l.pos.begin() - 1;
    for (p = std::max<int64_t>(p, 0); p < l.parentSize && l.pos[p] < x.hi; p++)
      if (l.pos[p + 1] > x.lo && l.pos[p + 1] > l.pos[p]) r.push_back({p, p + 1});
  });
}
/// Positions whose stored coordinate lies in each color's coordinate ranges.
Partition positionsByValue(const LevelView& l, const Partition& coords) {
  return mapRanges(coords, [&](Range x, std::vector<Range>& r) {
    for (int64_t q = 0; q < static_cast<int64_t>(l.crd.size()); q++)
      if (l.crd[q] >= x.lo && l.crd[q] < x.hi) r.push_back({q, q + 1});
  });
}

// ---- the level kinds -------------------------------------------------------------------

/// Slots for every coordinate of every parent (Dense) or, with flags, those present (Bitmap).
class SlotLevel : public LevelFormat {
 public:
  explicit SlotLevel(bool flags) : flags_(flags) {}
  const char* name() const override { return flags_ ? "bitmap (b)" : "dense (d)"; }
  char letter() const override { return flags_ ? 'b' : 'd'; }
  bool full() const override { return !flags_; }
  bool unique() const override { return true; }
  bool compact() const override { return !flags_; }
  bool locatable() const override { return true; }
  bool hasFlagArray() const override { return flags_; }
  bool supportsInsert() const override { return true; }
  int64_t positions(int64_t parentSize, int64_t dim, int64_t) const override { return parentSize * dim; }
  // Table I, Dense: the coordinate space is colored; derived partitions copy it
  // (generalized to a level under a parent: slot p*dim + c). Bitmap colors its slots alike.
  std::unique_ptr<PartitionBuilder> initUniversePartition(const LevelView& l) const override {
    return std::make_unique<Builder>([l](const Partition& c) {
      Partition slots = coordinateSlots(l, c);
      return PartitionPair{parentsOfSlots(l, slots), slots};
    });
  }
  std::unique_ptr<PartitionBuilder> initNonZeroPartition(const LevelView& l) const override {
    return std::make_unique<Builder>([l](const Partition& c) { return PartitionPair{parentsOfSlots(l, c), c}; });
  }
  Partition partitionFromParent(const LevelView& l, const Partition& p) const override { return slotsOf(l, p); }
  Partition partitionFromChild(const LevelView& l, const Partition& c) const override { return parentsOfSlots(l, c); }

 private:
  bool flags_;
};

/// pos/crd level; non-unique when it heads a COO-style singleton chain.
class CompressedLevel : public LevelFormat {
 public:
  explicit CompressedLevel(bool unique) : unique_(unique) {}
  const char* name() const override { return unique_ ? "compressed (s)" : "compressed non-unique (u)"; }
  char letter() const override { return unique_ ? 's' : 'u'; }
  bool full() const override { return false; }
  bool unique() const override { return unique_; }
  bool compact() const override { return true; }
  bool locatable() const override { return false; }
  bool hasPosArray() const override { return true; }
  bool hasCrdArray() const override { return true; }
  bool supportsAppend() const override { return true; }
  int64_t positions(int64_t, int64_t, int64_t lastPos) const override { return lastPos; }
  // Table I, Compressed: universe buckets crd by value ranges, non-zero takes position
  // bounds; both recover the pos partition (the parent's positions) by preimage.
  std::unique_ptr<PartitionBuilder> initUniversePartition(const LevelView& l) const override {
    return std::make_unique<Builder>([l](const Partition& c) {
      Partition crd = positionsByValue(l, c);
      return PartitionPair{preimageOfPos(l, crd), crd};
    });
  }
  std::unique_ptr<PartitionBuilder> initNonZeroPartition(const LevelView& l) const override {
    return std::make_unique<Builder>([l](const Partition& c) { return PartitionPair{preimageOfPos(l, c), c}; });
  }
  Partition partitionFromParent(const LevelView& l, const Partition& p) const override { return imageOfPos(l, p); }
  Partition partitionFromChild(const LevelView& l, const Partition& c) const override { return preimageOfPos(l, c); }

 private:
  bool unique_;
};

/// One coordinate per parent position: positions are the parent's.
class SingletonLevel : public LevelFormat {
 public:
  explicit SingletonLevel(bool unique) : unique_(unique) {}
  const char* name() const override { return "singleton (q)"; }
  char letter() const override { return 'q'; }
  bool full() const override { return false; }
  bool unique() const override { return unique_; }
  bool branchless() const override { return true; }
  bool compact() const override { return true; }
  bool locatable() const override { return false; }
  bool hasCrdArray() const override { return true; }
  bool ownsPositions() const override { return false; }
  bool supportsAppend() const override { return true; }
  int64_t positions(int64_t parentSize, int64_t, int64_t) const override { return parentSize; }
  std::unique_ptr<PartitionBuilder> initUniversePartition(const LevelView& l) const override {
    return std::make_unique<Builder>([l](const Partition& c) {
      Partition crd = positionsByValue(l, c);
      return PartitionPair{crd, crd};
    });
  }
  std::unique_ptr<PartitionBuilder> initNonZeroPartition(const LevelView&) const override {
    return std::make_unique<Builder>([](const Partition& c) { return PartitionPair{c, c}; });
  }
  Partition partitionFromParent(const LevelView&, const Partition& p) const override { return p; }
  Partition partitionFromChild(const LevelView&, const Partition& c) const override { return c; }

 private:
  bool unique_;
};

}  // namespace

const LevelFormat& levelFormat(const Format& f, int k) {
  static const SlotLevel dense(false), bitmap(true);
  static const CompressedLevel compressed(true), compressedNU(false);
  static const SingletonLevel singleton(true), singletonNU(false);
  switch (f.level(k)) {
    case LevelKind::Dense: return dense;
    case LevelKind::Bitmap: return bitmap;
    case LevelKind::Compressed: return compressed;
    case LevelKind::CompressedNU: return compressedNU;
    case LevelKind::Singleton: return f.levelIsUnique(k) ? singleton : singletonNU;
  }
  throw InternalError("levelFormat: unknown level kind " + std::to_string(static_cast<int>(f.level(k))));
}

bool isDenseOverCompressed(const Format& f) {
  if (f.order() < 2) return false;
  const LevelFormat &a = levelFormat(f, 0), &b = levelFormat(f, 1);
  return a.full() && a.locatable() && b.hasPosArray() && b.unique();
}

bool allLevelsInsert(const Format& f) {
  for (int k = 0; k < f.order(); k++)
    if (!levelFormat(f, k).supportsInsert()) return false;
  return true;
}

bool anyFlagLevel(const Format& f) {
  for (int k = 0; k < f.order(); k++)
    if (levelFormat(f, k).hasFlagArray()) return true;
  return false;
}

}  // namespace tessel
