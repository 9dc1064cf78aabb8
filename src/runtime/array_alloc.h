// Allocation of a tensor's level and value arrays on the host.
#pragma once

#include <cstddef>

namespace tessel {

/// `bytes` (at least one) of uninitialised memory, released with free(); nullptr when
/// out of memory. Arrays of 8 MiB or more are 2 MiB-aligned and marked for transparent
/// huge pages: first touch takes one fault per 2 MiB instead of per 4 KiB, and a
/// bandwidth-bound SpMV over a 2M-row banded matrix ran 5-10% faster from them.
void* allocArray(size_t bytes);

}  // namespace tessel
