#include "runtime/spmd/box.h"

#include <algorithm>

namespace tessel::spmd {

int64_t volume(const Box& b) {
  int64_t v = 1;
  for (const Extent& e : b) v *= e.size();
  return v;
}

Box intersect(const Box& a, const Box& b) {
  Box r(a.size());
  for (size_t d = 0; d < a.size(); d++) {
    r[d].lo = std::max(a[d].lo, b[d].lo);
    r[d].hi = std::max(r[d].lo, std::min(a[d].hi, b[d].hi));
  }
  return r;
}

namespace {
/// Row-major offset of `at` (global coordinates) in `box`.
int64_t offsetIn(const Box& box, const std::vector<int64_t>& at) {
  int64_t o = 0;
  for (size_t d = 0; d < box.size(); d++) o = o * box[d].size() + (at[d] - box[d].lo);
  return o;
}
}  // namespace

std::optional<int64_t> contiguousOffset(const Box& box, const Box& region) {
  // Contiguous: full in every dimension after the first partial one, one wide before it.
  size_t d = 0;
  while (d < box.size() && region[d].size() == 1) d++;
  for (size_t e = d + 1; e < box.size(); e++)
    if (!(region[e] == box[e])) return std::nullopt;
  std::vector<int64_t> at;
  for (const Extent& e : region) at.push_back(e.lo);
  return box.empty() ? 0 : offsetIn(box, at);
}

void copyRegion(const double* src, const Box& srcBox, double* dst, const Box& dstBox, const Box& region, bool add) {
  const int64_t n = volume(region);
  if (n == 0) return;
  if (region.empty()) {  // a scalar
    dst[0] = add ? dst[0] + src[0] : src[0];
    return;
  }
  const size_t order = region.size();
  const int64_t row = region[order - 1].size();
  std::vector<int64_t> at;
  for (const Extent& e : region) at.push_back(e.lo);
  for (int64_t done = 0; done < n; done += row) {
    const double* s = src + offsetIn(srcBox, at);
    double* t = dst + offsetIn(dstBox, at);
    if (add)
      for (int64_t x = 0; x < row; x++) t[x] += s[x];
    else
      std::copy(s, s + row, t);
    // Next row: odometer over the dimensions before the last.
    for (size_t d = order - 1; d-- > 0;) {
      if (++at[d] < region[d].hi) break;
      at[d] = region[d].lo;
    }
  }
}

}  // namespace tessel::spmd
