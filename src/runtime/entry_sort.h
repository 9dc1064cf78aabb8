// Sorting a tensor's pending inserts into storage order, equal coordinates grouped
// (the first step of TensorBase::pack).
#pragma once
#include <cstdint>
#include <vector>

#include "tessel/tensor.h"

namespace tessel {

/// The pending entries sorted lexicographically in storage order (stably: equal
/// coordinates keep insertion order) and merged into nu groups of equal coordinates.
/// Group u is the pending entries entry(groupBegin(u)) .. entry(groupEnd(u) - 1).
/// Identity permutations and groups (sorted input, no duplicates) are not materialized.
struct SortedEntries {
  int64_t nu = 0;
  bool permIdentity = true;
  std::vector<int64_t> perm;  // sorted position -> pending entry (unless identity)
  bool groupsIdentity = true;
  std::vector<int64_t> gs;  // group starts in sorted order, size nu + 1 (unless identity)
  // Keyed path: the storage-order coordinates of group u linearized into ukeys[u]
  // (sum of coordinate k times stride[k]). Not used when the key space exceeds 64 bits.
  bool keyed = false;
  std::vector<uint64_t> ukeys;
  std::vector<uint64_t> stride;

  int64_t entry(int64_t i) const { return permIdentity ? i : perm[i]; }
  int64_t groupBegin(int64_t u) const { return groupsIdentity ? u : gs[u]; }
  int64_t groupEnd(int64_t u) const { return groupsIdentity ? u + 1 : gs[u + 1]; }
};

/// Sort `n` pending entries of `t`: one LSD radix sort of 64-bit linearized keys when
/// the product of the dimensions fits in 64 bits, else one stable counting or radix
/// sort per level. O(n * passes).
SortedEntries sortEntries(const TensorImpl& t, int64_t n);

}  // namespace tessel
