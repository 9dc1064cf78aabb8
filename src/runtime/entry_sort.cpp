// Sorting pending inserts into storage order; see entry_sort.h.
#include "runtime/entry_sort.h"

#include <algorithm>
#include <utility>

namespace tessel {

namespace {

/// Stable LSD radix sort of (keys, idx) by the low `bits` bits of keys.
void radixSort(std::vector<uint64_t>& keys, std::vector<int64_t>& idx, int bits) {
  constexpr int D = 11;
  constexpr size_t B = size_t{1} << D;
  const size_t n = keys.size();
  std::vector<uint64_t> k2(n);
  std::vector<int64_t> i2(n);
  std::vector<size_t> count(B + 1);
  for (int shift = 0; shift < bits; shift += D) {
    std::fill(count.begin(), count.end(), 0);
    for (size_t i = 0; i < n; i++) count[((keys[i] >> shift) & (B - 1)) + 1]++;
    bool trivial = false;
    for (size_t d = 1; d <= B && !trivial; d++) trivial = count[d] == n;
    if (trivial) continue;  // every key has the same digit here
    for (size_t d = 0; d < B; d++) count[d + 1] += count[d];
    for (size_t i = 0; i < n; i++) {
      size_t at = count[(keys[i] >> shift) & (B - 1)]++;
      k2[at] = keys[i];
      i2[at] = idx[i];
    }
    keys.swap(k2);
    idx.swap(i2);
  }
}

/// Group the sorted entries; `same(i)` tells whether sorted entry i equals entry i-1.
template <typename Same>
void makeGroups(int64_t n, SortedEntries& s, Same same) {
  int64_t nu = 0;
  for (int64_t i = 0; i < n; i++)
    if (i == 0 || !same(i)) nu++;
  s.nu = nu;
  s.gs.clear();
  s.groupsIdentity = nu == n;
  if (s.groupsIdentity) return;
  s.gs.reserve(static_cast<size_t>(nu) + 1);
  for (int64_t i = 0; i < n; i++)
    if (i == 0 || !same(i)) s.gs.push_back(i);
  s.gs.push_back(n);
}

void identityPerm(int64_t n, SortedEntries& s) {
  s.permIdentity = false;
  s.perm.resize(n);
  for (int64_t i = 0; i < n; i++) s.perm[i] = i;
}

/// Sort and merge through 64-bit linearized keys (the common case: the product of the
/// dimensions fits in 64 bits). Sequential passes only, apart from one gather.
bool sortKeyed(const TensorImpl& t, int64_t n, SortedEntries& s) {
  const int r = static_cast<int>(t.var.dims().size());
  const std::vector<int>& mo = t.var.format().modeOrder();
  s.stride.assign(r, 1);
  uint64_t total = 1;
  for (int k = r - 1; k >= 0; k--) {
    s.stride[k] = total;
    if (__builtin_mul_overflow(total, static_cast<uint64_t>(t.var.dims()[mo[k]]), &total))
      return false;
  }
  s.keyed = true;
  const int64_t* c = t.pendingCoords.data();
  std::vector<uint64_t> keys(n);
  for (int64_t i = 0; i < n; i++) {
    uint64_t key = 0;
    for (int k = 0; k < r; k++) key += static_cast<uint64_t>(c[i * r + mo[k]]) * s.stride[k];
    keys[i] = key;
  }
  bool sorted = true;
  for (int64_t i = 1; i < n && sorted; i++) sorted = keys[i - 1] <= keys[i];
  if (!sorted) {
    identityPerm(n, s);
    int bits = total <= 1 ? 0 : 64 - __builtin_clzll(total - 1);
    radixSort(keys, s.perm, bits);
  }
  makeGroups(n, s, [&](int64_t i) { return keys[i] == keys[i - 1]; });
  // Compact the keys in place into one key per group.
  if (!s.groupsIdentity) {
    for (int64_t u = 0; u < s.nu; u++) keys[u] = keys[s.gs[u]];
    keys.resize(s.nu);
  }
  s.ukeys = std::move(keys);
  return true;
}

/// General path (key space beyond 64 bits): LSD over levels through an index
/// permutation, one stable counting sort (small extents) or radix sort per level.
void sortGeneral(const TensorImpl& t, int64_t n, SortedEntries& s) {
  const int r = static_cast<int>(t.var.dims().size());
  const int64_t* c = t.pendingCoords.data();
  const std::vector<int>& mo = t.var.format().modeOrder();
  s.keyed = false;

  auto less = [&](int64_t a, int64_t b) {
    for (int k = 0; k < r; k++) {
      int64_t ca = c[a * r + mo[k]], cb = c[b * r + mo[k]];
      if (ca != cb) return ca < cb;
    }
    return false;
  };
  bool sorted = true;
  for (int64_t i = 1; i < n && sorted; i++)
    if (less(i, i - 1)) sorted = false;
  if (!sorted) {
    identityPerm(n, s);
    std::vector<int64_t>& perm = s.perm;
    std::vector<int64_t> next(n);
    std::vector<uint64_t> keys;
    std::vector<int64_t> count;
    for (int k = r - 1; k >= 0; k--) {
      const int m = mo[k];
      const int64_t N = t.var.dims()[m];
      if (N <= 4 * n + 1024) {
        count.assign(static_cast<size_t>(N) + 1, 0);
        for (int64_t i = 0; i < n; i++) count[c[perm[i] * r + m] + 1]++;
        for (int64_t x = 0; x < N; x++) count[x + 1] += count[x];
        for (int64_t i = 0; i < n; i++) next[count[c[perm[i] * r + m]]++] = perm[i];
        perm.swap(next);
      } else {
        keys.resize(n);
        for (int64_t i = 0; i < n; i++) keys[i] = static_cast<uint64_t>(c[perm[i] * r + m]);
        radixSort(keys, perm, 64 - __builtin_clzll(static_cast<uint64_t>(N - 1)));
      }
    }
  }
  makeGroups(n, s, [&](int64_t i) {
    const int64_t a = s.entry(i), b = s.entry(i - 1);
    for (int m = 0; m < r; m++)
      if (c[a * r + m] != c[b * r + m]) return false;
    return true;
  });
}

}  // namespace

SortedEntries sortEntries(const TensorImpl& t, int64_t n) {
  SortedEntries s;
  if (!sortKeyed(t, n, s)) sortGeneral(t, n, s);
  return s;
}

}  // namespace tessel
