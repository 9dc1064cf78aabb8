// Software prefetch before an innermost loop over one segment of positions (SpMV's
// row): one hint per segment, kPrefetchAhead positions ahead in its crd (and, at the
// last level, vals) arrays. Rows of a few entries end each stream before the hardware
// prefetcher runs ahead; the hints keep more lines in flight, 10-25% faster when the
// arrays stream from memory. They fetch into every cache level (locality 3): on an
// Intel Xeon non-temporal hints made SpMV 1.5x slower (L1-only fills evicted before
// use). In cache they only cost issue slots (about 8%), so a flag set once per call, for
// levels of at least kPrefetchEntries positions and kPrefetchMeanSegment per segment,
// enables them.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/ir.h"
#include "lower/problem.h"
#include "lower/symbols.h"

namespace tessel::lower {

inline constexpr int64_t kPrefetchAhead = 1024;       ///< positions: 8 KB of doubles, 4 KB of int32
inline constexpr int64_t kPrefetchEntries = 1 << 21;  ///< 24 MB of int32 crd + double vals
inline constexpr int64_t kPrefetchMeanSegment = 4;    ///< entries per segment, at least

/// The hints before the loop over input access a's level k, from position `begin`;
/// the flag that enables them is appended to `flags` (declared once, before the loops).
ir::Stmt prefetchAhead(const Problem& p, Symbols& sym, int a, int k, const ir::Expr& begin,
                       std::vector<ir::Stmt>& flags);

}  // namespace tessel::lower
