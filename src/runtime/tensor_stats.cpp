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

int64_t boundStoredCount(const ExprNode& access) {
  if (access.kind != ExprKind::Access || !access.binding) return -1;
  const TensorBase t(access.binding);
  return t.storedCount();
}

}  // namespace tessel
