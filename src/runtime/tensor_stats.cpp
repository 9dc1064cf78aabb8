// Statistics of bound tensors: see tensor_stats.h.
#include "runtime/tensor_stats.h"

#include <algorithm>

#include "format/level_format.h"
#include "tessel/tensor.h"

namespace tessel {

double boundRowSkew(const ExprNode& access) {
  if (access.kind != ExprKind::Access || !access.binding) return 0;
  const TensorBase t(access.binding);
  const tessel_tensor_t& r = t.raw();
  if (!isDenseOverCompressed(t.format()) || !r.pos[1] || r.vals_size == 0)
    return 0;
  int64_t rows = r.pos_size[1] - 1, most = 0;
  for (int64_t i = 0; i < rows; i++) {
    int64_t n = t.format().posWidth() == IndexWidth::W32
                    ? static_cast<const int32_t*>(r.pos[1])[i + 1] - static_cast<const int32_t*>(r.pos[1])[i]
                    : static_cast<const int64_t*>(r.pos[1])[i + 1] - static_cast<const int64_t*>(r.pos[1])[i];
    most = std::max(most, n);
  }
  return static_cast<double>(most) / static_cast<double>(r.vals_size);
}

std::vector<int64_t> boundLevelPositions(const ExprNode& access) {
  if (access.kind != ExprKind::Access || !access.binding) return {};
  const TensorBase t(access.binding);
  const tessel_tensor_t& r = t.raw();
  const Format& f = t.format();
  std::vector<int64_t> out;
  int64_t above = 1;
  for (int k = 0; k < f.order(); k++) {
    // A full level (dense, bitmap) has a slot per coordinate under each position above;
    // the others (compressed, singleton) one position per stored coordinate.
    if (levelFormat(f, k).full()) above *= std::max<int64_t>(r.dims[k], 0);
    else above = r.crd_size[k];
    out.push_back(above);
  }
  return out;
}

int64_t boundNonemptySegments(const ExprNode& access, int k) {
  if (access.kind != ExprKind::Access || !access.binding) return -1;
  const TensorBase t(access.binding);
  const tessel_tensor_t& r = t.raw();
  if (k < 0 || k >= t.format().order() || !r.pos[k] || r.pos_size[k] < 1) return -1;
  const bool narrow = t.format().posWidth() == IndexWidth::W32;
  int64_t n = 0;
  for (int64_t p = 0; p + 1 < r.pos_size[k]; p++)
    n += narrow ? static_cast<const int32_t*>(r.pos[k])[p + 1] > static_cast<const int32_t*>(r.pos[k])[p]
                : static_cast<const int64_t*>(r.pos[k])[p + 1] > static_cast<const int64_t*>(r.pos[k])[p];
  return n;
}

int64_t boundStoredCount(const ExprNode& access) {
  if (access.kind != ExprKind::Access || !access.binding) return -1;
  const TensorBase t(access.binding);
  return t.storedCount();
}

}  // namespace tessel
