// Boxes (one [lo, hi) per dimension) of row-major dense blocks, and copying between them.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tessel/distribution.h"

namespace tessel::spmd {

using Box = std::vector<Extent>;

int64_t volume(const Box& b);
/// Empty (volume 0) when they do not meet.
Box intersect(const Box& a, const Box& b);
/// The offset of `region` inside `box` when its elements are contiguous there.
std::optional<int64_t> contiguousOffset(const Box& box, const Box& region);
/// Copy (or add, when `add`) `region` from `src` (row-major over `srcBox`) to `dst`
/// (row-major over `dstBox`); region lies in both.
void copyRegion(const double* src, const Box& srcBox, double* dst, const Box& dstBox, const Box& region, bool add);

}  // namespace tessel::spmd
