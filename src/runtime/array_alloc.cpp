// Host arrays, huge pages for large ones (see array_alloc.h).
#include "runtime/array_alloc.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

#include "io/io_util.h"
#include "tessel/error.h"

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

void* allocElements(const std::string& tensor, int64_t count, size_t elemBytes, const char* what, bool zero) {
  size_t bytes = 0;
  if (count < 0 || __builtin_mul_overflow(static_cast<size_t>(count), elemBytes, &bytes))
    throw OverflowError("tensor " + tensor + ": " + what + " of " + std::to_string(count) +
                        " elements of " + std::to_string(elemBytes) +
                        " bytes does not fit in memory (size overflows)");
  // Sizes come from input (a file's header, -g sizes): refuse over the limit (exit 2)
  // before asking the system, which may say yes and leave it to the OOM killer.
  if (bytes > static_cast<size_t>(io_detail::memoryLimit()))
    io_detail::requireMemory(static_cast<long double>(bytes),
                             "tensor " + tensor + ": " + what + " of " + std::to_string(count) + " elements");
  void* p = allocArray(bytes);
  if (!p)
    throw OutOfMemoryError("tensor " + tensor + ": cannot allocate " + std::to_string(bytes) +
                           " bytes for " + what + " (" + std::to_string(count) + " elements)");
  if (zero) std::memset(p, 0, bytes);
  return p;
}

void freeRaw(tessel_tensor_t& raw) {
  for (int k = 0; k < TESSEL_MAX_ORDER; k++) {
    std::free(raw.pos[k]);
    std::free(raw.crd_block[k] ? raw.crd_block[k] : raw.crd[k]);
  }
  std::free(raw.vals_block ? raw.vals_block : raw.vals);
  std::memset(&raw, 0, sizeof raw);
}

}  // namespace tessel
