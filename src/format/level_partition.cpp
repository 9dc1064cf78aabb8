// Range helpers of level partitions.
#include "format/level_partition.h"

#include <algorithm>

namespace tessel {

std::vector<Range> normalizeRanges(std::vector<Range> r) {
  std::erase_if(r, [](const Range& x) { return x.hi <= x.lo; });
  std::sort(r.begin(), r.end(), [](const Range& a, const Range& b) { return a.lo < b.lo; });
  std::vector<Range> out;
  for (const Range& x : r) {
    if (!out.empty() && x.lo <= out.back().hi) out.back().hi = std::max(out.back().hi, x.hi);
    else out.push_back(x);
  }
  return out;
}

}  // namespace tessel
