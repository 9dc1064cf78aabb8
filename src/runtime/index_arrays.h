// Reading and writing pos/crd arrays of either index width.
#pragma once

#include <cstdint>

#include "tessel/format.h"

namespace tessel {

inline int widthBytes(IndexWidth w) { return w == IndexWidth::W32 ? 4 : 8; }
inline int widthBits(IndexWidth w) { return w == IndexWidth::W32 ? 32 : 64; }
inline int64_t widthMax(IndexWidth w) { return w == IndexWidth::W32 ? static_cast<int64_t>(INT32_MAX) : INT64_MAX; }

inline int64_t readIndex(const void* a, IndexWidth w, int64_t i) {
  return w == IndexWidth::W32 ? static_cast<int64_t>(static_cast<const int32_t*>(a)[i])
                              : static_cast<const int64_t*>(a)[i];
}

inline void writeIndex(void* a, IndexWidth w, int64_t i, int64_t v) {
  if (w == IndexWidth::W32)
    static_cast<int32_t*>(a)[i] = static_cast<int32_t>(v);
  else
    static_cast<int64_t*>(a)[i] = v;
}

}  // namespace tessel
