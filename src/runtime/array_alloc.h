// Allocation of a tensor's level and value arrays on the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tessel/runtime_abi.h"

namespace tessel {

/// `bytes` (at least one) of uninitialised memory, released with free(); nullptr when
/// out of memory. Arrays of 8 MiB or more are 2 MiB-aligned and marked for transparent
/// huge pages: first touch takes one fault per 2 MiB instead of per 4 KiB, and a
/// bandwidth-bound SpMV over a 2M-row banded matrix ran 5-10% faster from them.
void* allocArray(size_t bytes);

/// `count` elements of `elemBytes` for `what` (an array of `tensor`), zeroed when `zero`
/// (never NULL; freed with free()). Throws OverflowError when the size overflows,
/// MemoryLimitError over the memory limit (io_detail::requireMemory), OutOfMemoryError
/// when the system has no memory left.
void* allocElements(const std::string& tensor, int64_t count, size_t elemBytes, const char* what, bool zero);

/// Frees every array of `raw` (blocks, where arrays start inside them) and zeroes it.
void freeRaw(tessel_tensor_t& raw);

/// Owns a tessel_tensor_t while it is being built; frees it unless released.
struct RawGuard {
  tessel_tensor_t raw{};
  bool owned = true;
  RawGuard() = default;
  ~RawGuard() {
    if (owned) freeRaw(raw);
  }
  RawGuard(const RawGuard&) = delete;
  RawGuard& operator=(const RawGuard&) = delete;
};

}  // namespace tessel
