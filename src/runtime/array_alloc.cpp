// Host arrays, huge pages for large ones (see array_alloc.h).
#include "runtime/array_alloc.h"

#include <sys/mman.h>

#include <cstdlib>

namespace tessel {

void* allocArray(size_t bytes) {
  constexpr size_t kHuge = size_t(2) << 20;
  if (bytes >= 4 * kHuge) {
    size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    void* p = nullptr;
    if (::posix_memalign(&p, kHuge, rounded) != 0) return nullptr;
#ifdef MADV_HUGEPAGE
    ::madvise(p, rounded, MADV_HUGEPAGE);
#endif
    return p;
  }
  return std::malloc(bytes ? bytes : 1);
}

}  // namespace tessel
