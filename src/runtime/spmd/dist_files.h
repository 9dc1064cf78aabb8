// Distributed tensor files (SuperTaco §4.4-4.6): the pieces the parallel readers,
// placement and writer share. Every function here is collective over all ranks.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessel/coo.h"
#include "tessel/distributed.h"
#include "tessel/distribution.h"
#include "tessel/format.h"

namespace tessel::spmd {

/// Runs a step in which ranks do not talk, then agrees: when any rank failed, every rank
/// throws the lowest failing rank's error (same type and message: FileError with its
/// "path:line", MemoryLimitError, ...). Every rank must call it at the same point.
void agreeOnFailure(const std::function<void()>& step);

/// Sends entry e of `local` (coordinates and value) to every rank that `targets(e, out)`
/// lists in `out` (cleared before each call). The result: what arrived, from rank 0's
/// entries to the last rank's, each rank's in its order (so entries whose ranks held them
/// in file order arrive in file order). dims are local's.
CooData exchangeEntries(const CooData& local, const std::function<void(int64_t, std::vector<int>&)>& targets);

/// Moves entries to rank-ordered blocks of the leading dimension, balanced by entries
/// (the blocks a partition `xy->~x` over every rank would have; every duplicate of a
/// coordinate on one rank), in arrival order. Costs a histogram of the leading dimension
/// on every rank (dims[0] counters: O(rows) per rank, never the whole tensor's entries).
CooData toRowBlocks(const CooData& local);

/// The entries sorted lexicographically by coordinates (stable: equal ones keep order).
CooData sortedLexicographically(const CooData& entries);

/// A .tsb file's pieces read by ranges when the file and distribution allow it (CSR under
/// a row partition, xy->x or xy->~x; a dense file under a partition by coordinates):
/// each rank reads only its piece's pos, crd and vals ranges (the header and, for ~x, the
/// pos array by every rank). False (nothing changed) otherwise: read it whole.
bool readBinaryPieces(DistTensor::Impl& t, const std::string& path);

}  // namespace tessel::spmd
