// Statistics of a bound tensor's stored entries, for compile-side heuristics (the
// default parallel schedule) that may look at data but not at storage: they pass an
// access and get a number.
#pragma once

#include <cstdint>
#include <vector>

#include "tessel/notation.h"

namespace tessel {

/// Largest row's share of the non-zeros of the tensor bound to `access` (a packed
/// operand whose levels 0, 1 are dense over compressed); 0 for any other format, an
/// empty tensor, or an access without storage (a bare TensorVar).
double boundRowSkew(const ExprNode& access);

/// The positions each storage level of the tensor bound to `access` holds (a dense level
/// of N under P positions: P * N; a compressed level: its entries), outermost first;
/// empty for an access without storage.
std::vector<int64_t> boundLevelPositions(const ExprNode& access);

/// Segments of compressed level k of the tensor bound to `access` (one per position of
/// level k - 1) that hold at least one entry; -1 for a level without pos or an access
/// without storage.
int64_t boundNonemptySegments(const ExprNode& access, int k);

/// Entries stored by the tensor bound to `access` (every slot of a dense level counts);
/// -1 for an access without storage (a bare TensorVar).
int64_t boundStoredCount(const ExprNode& access);

}  // namespace tessel
