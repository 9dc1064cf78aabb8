/* The C helpers every generated kernel calls: selects, merge tuning, array growth,
 * thread regions, row assembly, sparse dot products with gathers.
 *
 * Real C11 (GNU dialect, as the JIT compiles it): the build compiles this file with
 * -Wall -Werror (target tessel_kernel_helpers_check), so a mistake here fails the
 * tessel build, not a kernel's JIT compile. The build also embeds its text, after
 * runtime_abi.h's, at the start of every generated kernel (cmake/embed_prelude.cmake,
 * codegen/c_prelude.h). Everything is static: each kernel gets its own copy.
 *
 * Generated code gets the runtime ABI (tessel_tensor_t, TESSEL_ERR_*) from
 * runtime_abi.h's text, which precedes this one; the include below only serves
 * compiling this file on its own. */
#ifndef TESSEL_KERNEL_HELPERS_H
#define TESSEL_KERNEL_HELPERS_H

#ifndef TESSEL_RUNTIME_ABI_H
#include "tessel/runtime_abi.h"
#endif

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <malloc.h>
#include <string.h>
#include <stdbool.h>
#include <math.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#else
static inline int omp_get_thread_num(void) { return 0; }
static inline int omp_get_max_threads(void) { return 1; }
static inline int omp_get_num_threads(void) { return 1; }
#endif

/* r = a * b; true when the product overflowed r's type. */
#define tessel_mul_overflow(a, b, r) __builtin_mul_overflow(a, b, r)
static inline int64_t tessel_min(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t tessel_max(int64_t a, int64_t b) { return a > b ? a : b; }
/* Parallel loops over blocks: each thread takes blocks from its own contiguous share
   first, then from the other threads' shares. Its rows then stay in its core's cache
   from call to call and its counter in its own cache line; with one shared counter
   (schedule(dynamic, 1)) every block cost a contended atomic, 5-10% of a 20-200 us
   SpMV on two threads. Shares are cut for the team the next region gets (at most
   TESSEL_MAX_TEAM; a larger team's extra threads start in the others' shares). */
#define TESSEL_MAX_TEAM 64
typedef struct { int64_t next, end; char pad[48]; } tessel_share_t;
static inline int tessel_shares(tessel_share_t* q, int64_t begin, int64_t end) {
  int nt = omp_get_max_threads();
  if (nt > TESSEL_MAX_TEAM) nt = TESSEL_MAX_TEAM;
  if (nt < 1) nt = 1;
  int64_t n = end > begin ? end - begin : 0, each = n / nt, more = n % nt, at = begin;
  for (int t = 0; t < nt; t++) {
    q[t].next = at;
    at += each + (t < more);
    q[t].end = at;
  }
  return nt;
}
/* How a thread goes on once its own share is done (the host's tuning may pick, with -D):
   TESSEL_STEAL 2 (the default) takes the blocks left in the others' shares, first reading
   whether a share has any, so that a drained share's line is not taken for writing by
   every thread finishing (on 16 cores, 15 such lines a thread at the end of every call:
   SpMV 1.21 -> 1.37x the fastest peer at 16 threads on the 16-core Xeon); 1 takes without
   reading; 0 takes none (a static split: 2-3x slower on skewed rows). */
#ifndef TESSEL_STEAL
#define TESSEL_STEAL 2
#endif
/* The next block for the thread whose shares start at `start` (it is in share *cur);
   0 when every share is taken. */
static inline int tessel_next_block(tessel_share_t* q, int nt, int start, int* cur, int64_t* block) {
  for (;;) {
    if (TESSEL_STEAL != 2 || *cur == start || __atomic_load_n(&q[*cur].next, __ATOMIC_RELAXED) < q[*cur].end) {
      int64_t k = __atomic_fetch_add(&q[*cur].next, 1, __ATOMIC_RELAXED);
      if (k < q[*cur].end) { *block = k; return 1; }
    }
#if TESSEL_STEAL == 0
    /* Own shares only: start, start + team, ... (a team smaller than nt covers them all;
       in a larger one, threads start + k*nt share the share `start`). */
    *cur += omp_get_num_threads();
    if (*cur >= nt) return 0;
#else
    *cur = *cur + 1 == nt ? 0 : *cur + 1;
    if (*cur == start) return 0;
#endif
  }
}
/* Software prefetch of a streamed array ahead of its reads (TESSEL_STREAM_PREFETCH 0:
   none; the host's tuning decides). */
#ifndef TESSEL_STREAM_PREFETCH
#define TESSEL_STREAM_PREFETCH 1
#endif
#if TESSEL_STREAM_PREFETCH
#define tessel_prefetch(p) __builtin_prefetch((p), 0, 3)
#else
#define tessel_prefetch(p) ((void)(p))
#endif
/* Selects evaluate both arms and pick by mask: a merge's "value or zero" is otherwise
   compiled to a branch on which operand holds the coordinate, mispredicted half the time
   on irregular patterns. */
static inline double tessel_sel_f64(int c, double a, double b) {
  uint64_t x, y, m = (uint64_t)0 - (uint64_t)(c != 0);
  memcpy(&x, &a, 8); memcpy(&y, &b, 8); x = (x & m) | (y & ~m); memcpy(&a, &x, 8);
  return a;
}
static inline float tessel_sel_f32(int c, float a, float b) {
  uint32_t x, y, m = (uint32_t)0 - (uint32_t)(c != 0);
  memcpy(&x, &a, 4); memcpy(&y, &b, 4); x = (x & m) | (y & ~m); memcpy(&a, &x, 4);
  return a;
}
static inline int64_t tessel_sel_i64(int c, int64_t a, int64_t b) { return c ? a : b; }
/* x, kept from fusing with the add it feeds (an empty asm the compiler cannot see
   through). A one-chain sparse dot product then waits for the add alone per entry, not
   the multiply-add: shorter where the adder is faster than the FMA (Intel Golden Cove,
   AMD Zen). */
#if defined(__x86_64__) || defined(__i386__)
#define TESSEL_OPAQUE(x) __asm__("" : "+x"(x))
#elif defined(__aarch64__)
#define TESSEL_OPAQUE(x) __asm__("" : "+w"(x))
#else
#define TESSEL_OPAQUE(x) (void)0
#endif
static inline double tessel_unfused_f64(double x) { TESSEL_OPAQUE(x); return x; }
static inline float tessel_unfused_f32(float x) { TESSEL_OPAQUE(x); return x; }
/* Entry r of a pos array of 32-bit or (wide) 64-bit offsets. */
static inline int64_t tessel_pos_at(const void* pos, int wide, int64_t r) {
  return wide ? ((const int64_t*)pos)[r] : (int64_t)((const int32_t*)pos)[r];
}
/* Sparse dot products sum(v[p] * x[crd[p]], p in [lo, hi)) with AVX-512 gathers: eight
   (sixteen) entries a step while more than that remain, then always one masked step of
   the rest (none to all lanes; masked-off lanes touch no memory). A row costs one loop
   test per step, and a row of up to one step's entries one well-predicted test: 10-25%
   faster than a masked step only when some remain, whose extra test mispredicts on rows
   of varying lengths. On Sapphire Rapids SpMV ran 1.3-1.8x the scalar loop on rows
   averaging 12 or more entries (tessel_gather_dot_pays); on shorter rows the 256-bit
   steps below do better (bayer10, mean 7: 8-wide 0.8-1.0x the scalar loop, 4-wide
   1.1x). Lanes sum p - lo mod 8 (16), then a fixed tree: the order depends on the bounds
   only. Without AVX-512 (F and VL) the flags are constant false and the scalar fallbacks
   are never called. Whether they pay depends on the CPU (on Zen 4 the 8-entry gathers
   ran 0.74x the scalar loop on bcsstk33): the host's tuning (tessel/tuning.h) picks,
   with -D flags, the long rows' dot product (TESSEL_USE_GATHERS: these gathers;
   TESSEL_USE_PAIRS: the two-lane steps below; neither: the scalar loop of two chains),
   whether the short rows' gathers are used (TESSEL_USE_SHORT_GATHERS), and the mean
   row length from which a row is long (TESSEL_GATHER_MEAN). */
#ifndef TESSEL_USE_GATHERS
#define TESSEL_USE_GATHERS 1
#endif
#ifndef TESSEL_USE_PAIRS
#define TESSEL_USE_PAIRS 0
#endif
#ifndef TESSEL_USE_SHORT_GATHERS
#define TESSEL_USE_SHORT_GATHERS 1
#endif
#if defined(__AVX512F__) && defined(__AVX512VL__)
#include <immintrin.h>
#define TESSEL_AVX512_GATHERS 1
static inline double tessel_avx512_dot_f64(int64_t lo, int64_t hi, const int32_t* restrict crd,
                                           const double* restrict v, const double* restrict x) {
  __m512d acc = _mm512_setzero_pd();
  int64_t p = lo;
  for (; hi - p > 8; p += 8) {
    __m256i j = _mm256_loadu_si256((const __m256i*)(crd + p));
    acc = _mm512_fmadd_pd(_mm512_loadu_pd(v + p), _mm512_i32gather_pd(j, x, 8), acc);
  }
  __mmask8 m = (__mmask8)((1u << (hi - p)) - 1);
  __m256i j = _mm256_maskz_loadu_epi32(m, crd + p);
  __m512d xj = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), m, j, x, 8);
  acc = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(m, v + p), xj, acc);
  return _mm512_reduce_add_pd(acc);
}
static inline float tessel_avx512_dot_f32(int64_t lo, int64_t hi, const int32_t* restrict crd,
                                          const float* restrict v, const float* restrict x) {
  __m512 acc = _mm512_setzero_ps();
  int64_t p = lo;
  for (; hi - p > 16; p += 16) {
    __m512i j = _mm512_loadu_si512((const void*)(crd + p));
    acc = _mm512_fmadd_ps(_mm512_loadu_ps(v + p), _mm512_i32gather_ps(j, x, 4), acc);
  }
  __mmask16 m = (__mmask16)((1u << (hi - p)) - 1);
  __m512i j = _mm512_maskz_loadu_epi32(m, crd + p);
  __m512 xj = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, j, x, 4);
  acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, v + p), xj, acc);
  return _mm512_reduce_add_ps(acc);
}
/* The same in 256-bit steps of four (eight) entries, for short rows: a row of up to four
   (eight) entries is one masked step. */
static inline double tessel_gather_dot4_f64(int64_t lo, int64_t hi, const int32_t* restrict crd,
                                            const double* restrict v, const double* restrict x) {
  __m256d acc = _mm256_setzero_pd();
  int64_t p = lo;
  for (; hi - p > 4; p += 4) {
    __m128i j = _mm_loadu_si128((const __m128i*)(crd + p));
    acc = _mm256_fmadd_pd(_mm256_loadu_pd(v + p), _mm256_i32gather_pd(x, j, 8), acc);
  }
  __mmask8 m = (__mmask8)((1u << (hi - p)) - 1);
  __m128i j = _mm_maskz_loadu_epi32(m, crd + p);
  __m256d xj = _mm256_mmask_i32gather_pd(_mm256_setzero_pd(), m, j, x, 8);
  acc = _mm256_fmadd_pd(_mm256_maskz_loadu_pd(m, v + p), xj, acc);
  __m128d h = _mm_add_pd(_mm256_castpd256_pd128(acc), _mm256_extractf128_pd(acc, 1));
  return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}
static inline float tessel_gather_dot4_f32(int64_t lo, int64_t hi, const int32_t* restrict crd,
                                           const float* restrict v, const float* restrict x) {
  __m256 acc = _mm256_setzero_ps();
  int64_t p = lo;
  for (; hi - p > 8; p += 8) {
    __m256i j = _mm256_loadu_si256((const __m256i*)(crd + p));
    acc = _mm256_fmadd_ps(_mm256_loadu_ps(v + p), _mm256_i32gather_ps(x, j, 4), acc);
  }
  __mmask8 m = (__mmask8)((1u << (hi - p)) - 1);
  __m256i j = _mm256_maskz_loadu_epi32(m, crd + p);
  __m256 xj = _mm256_mmask_i32gather_ps(_mm256_setzero_ps(), m, j, x, 4);
  acc = _mm256_fmadd_ps(_mm256_maskz_loadu_ps(m, v + p), xj, acc);
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
}
#else
#define TESSEL_AVX512_GATHERS 0
#endif
#if TESSEL_AVX512_GATHERS && TESSEL_USE_GATHERS
#define TESSEL_GATHER_DOT 1
#define tessel_gather_dot_f64 tessel_avx512_dot_f64
#define tessel_gather_dot_f32 tessel_avx512_dot_f32
#elif TESSEL_USE_PAIRS
/* Two-lane steps (four for float) without gathers: each step loads two entries' values
   as a vector, builds x's two entries from scalar loads, and adds both products to one
   vector accumulator, two steps an iteration: fewer instructions per entry than the
   scalar loop and one add (not a fused multiply-add) on the loop-carried chain. On Zen 4
   SpMV ran 1.2x the two-chain scalar loop on bcsstk33 (mean 34) and bcsstk13. Lanes sum
   p - lo mod 2 (4), then the rest in order: the order depends on the bounds only. */
#define TESSEL_GATHER_DOT 1
typedef double tessel_v2d __attribute__((vector_size(16)));
typedef float tessel_v4f __attribute__((vector_size(16)));
static inline double tessel_gather_dot_f64(int64_t lo, int64_t hi, const int32_t* restrict crd,
                                           const double* restrict v, const double* restrict x) {
  tessel_v2d acc = {0, 0};
  int64_t p = lo;
  for (; hi - p >= 4; p += 4) {
    tessel_v2d v0, v1, x0 = {x[crd[p]], x[crd[p + 1]]}, x1 = {x[crd[p + 2]], x[crd[p + 3]]};
    __builtin_memcpy(&v0, v + p, sizeof v0);  /* an unaligned vector load, no aliasing */
    __builtin_memcpy(&v1, v + p + 2, sizeof v1);
    acc += v0 * x0 + v1 * x1;
  }
  double s = acc[0] + acc[1];
  for (; p < hi; p++) s += v[p] * x[crd[p]];
  return s;
}
static inline float tessel_gather_dot_f32(int64_t lo, int64_t hi, const int32_t* restrict crd,
                                          const float* restrict v, const float* restrict x) {
  tessel_v4f acc = {0, 0, 0, 0};
  int64_t p = lo;
  for (; hi - p >= 8; p += 8) {
    tessel_v4f x0 = {x[crd[p]], x[crd[p + 1]], x[crd[p + 2]], x[crd[p + 3]]};
    tessel_v4f x1 = {x[crd[p + 4]], x[crd[p + 5]], x[crd[p + 6]], x[crd[p + 7]]}, v0, v1;
    __builtin_memcpy(&v0, v + p, sizeof v0);
    __builtin_memcpy(&v1, v + p + 4, sizeof v1);
    acc += v0 * x0 + v1 * x1;
  }
  float s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  for (; p < hi; p++) s += v[p] * x[crd[p]];
  return s;
}
#else
#define TESSEL_GATHER_DOT 0
static inline double tessel_gather_dot_f64(int64_t lo, int64_t hi, const int32_t* restrict crd,
                                           const double* restrict v, const double* restrict x) {
  double acc = 0;
  for (int64_t p = lo; p < hi; p++) acc += v[p] * x[crd[p]];
  return acc;
}
static inline float tessel_gather_dot_f32(int64_t lo, int64_t hi, const int32_t* restrict crd,
                                          const float* restrict v, const float* restrict x) {
  float acc = 0;
  for (int64_t p = lo; p < hi; p++) acc += v[p] * x[crd[p]];
  return acc;
}
#endif
#if TESSEL_AVX512_GATHERS && TESSEL_USE_SHORT_GATHERS
#define TESSEL_SHORT_GATHERS 1
#else
#define TESSEL_SHORT_GATHERS 0
#if !TESSEL_AVX512_GATHERS
#define tessel_gather_dot4_f64 tessel_gather_dot_f64
#define tessel_gather_dot4_f32 tessel_gather_dot_f32
#endif
#endif
/* Whether sparse dot products over `entries` entries in `segments` rows use the gathers:
   rows of TESSEL_GATHER_MEAN (12) or more entries on average. */
#ifndef TESSEL_GATHER_MEAN
#define TESSEL_GATHER_MEAN 12
#endif
static inline bool tessel_gather_dot_pays(int64_t entries, int64_t segments) {
  return TESSEL_GATHER_DOT && entries >= TESSEL_GATHER_MEAN * segments;
}
/* Whether the rows of pos array P (int64 when `wide`), `segments` of them, are shorter
   than that and of irregular lengths: 8 or more of 64 sampled pairs of neighbouring rows
   differ. There the scalar loop's exit mispredicts and the 4-entry gathers won
   (luxembourg_osm, mean 2.1: 2-17%; hep-th, 3.8: 2.2x; ca-GrQc, 5.5: 1.7-2x; bayer10,
   7.1: 10%); on rows of one length it predicts perfectly and won (uniform, 2 a row: 12%;
   tridiagonal: 0-5%; cryg2500, a stencil of mean 4.9: 35-50%). */
static bool tessel_short_gathers_pay(const void* P, int wide, int64_t entries, int64_t segments) {
  if (!TESSEL_SHORT_GATHERS || segments < 3 || entries >= TESSEL_GATHER_MEAN * segments) return 0;
  int64_t differ = 0;
  for (int64_t k = 0; k < 64; k++) {
    int64_t r = (segments - 2) * k / 64, mid = tessel_pos_at(P, wide, r + 1);
    differ += mid - tessel_pos_at(P, wide, r) != tessel_pos_at(P, wide, r + 2) - mid;
  }
  return differ >= 8;
}
/* A tuned merge's choice across calls, in the site's statics (lower/merge_tuner.h; the
   choice stored plus one, 0 before any): returns the last trial's choice while it is to
   be reused, counting this call, else -1: this call runs a trial. Relaxed atomics:
   concurrent calls may at worst run an extra trial or reuse a choice once more. */
static int64_t tessel_tune_reuse(int64_t* best, int64_t* calls) {
  int64_t b = __atomic_load_n(best, __ATOMIC_RELAXED), c = __atomic_load_n(calls, __ATOMIC_RELAXED);
  if (b <= 0 || c <= 0) return -1;
  __atomic_store_n(calls, c - 1, __ATOMIC_RELAXED);
  return b - 1;
}
/* A trial picked `now`: the next calls reuse it, twice as many as last time when it
   agrees with the last choice (at most `most`), one when it changed. */
static void tessel_tune_keep(int64_t* best, int64_t* every, int64_t* calls, int64_t now, int64_t most) {
  int64_t e = __atomic_load_n(every, __ATOMIC_RELAXED);
  e = __atomic_load_n(best, __ATOMIC_RELAXED) == now + 1 ? (2 * e < most ? 2 * e : most) : 1;
  __atomic_store_n(every, e, __ATOMIC_RELAXED);
  __atomic_store_n(calls, e, __ATOMIC_RELAXED);
  __atomic_store_n(best, now + 1, __ATOMIC_RELAXED);
}
/* Integer division with C semantics, except that x/0 is 0 and INT64_MIN/-1 wraps. */
static inline int64_t tessel_idiv(int64_t a, int64_t b) {
  return b == 0 ? 0 : (b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b);
}
/* A cycle counter (nanoseconds off x86): a merge times its two variants with it. */
static inline int64_t tessel_clock(void) {
#if defined(__x86_64__) || defined(__i386__)
  return (int64_t)__builtin_ia32_rdtsc();
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
#endif
}
/* Sort a workspace's n coordinates, all in [0, dim): insertion sort for short lists,
   else an LSD radix sort by bytes through `tmp` (n more slots). Branch-free passes:
   quicksort's partition mispredicted about every other comparison on the random
   coordinates of graph rows, and its sort was most of SpGEMM's time there. */
static void tessel_sort_i64(int64_t* a, int64_t n, int64_t dim, int64_t* tmp) {
  if (n <= 32) {
    for (int64_t i = 1; i < n; i++) {
      int64_t v = a[i], k = i - 1;
      while (k >= 0 && a[k] > v) { a[k + 1] = a[k]; k--; }
      a[k + 1] = v;
    }
    return;
  }
  int64_t *src = a, *dst = tmp;
  for (int shift = 0; shift < 64 && ((uint64_t)(dim - 1) >> shift) != 0; shift += 8) {
    int64_t at[257] = {0};
    for (int64_t i = 0; i < n; i++) at[((uint64_t)src[i] >> shift & 255) + 1]++;
    for (int b = 0; b < 256; b++) at[b + 1] += at[b];
    for (int64_t i = 0; i < n; i++) dst[at[(uint64_t)src[i] >> shift & 255]++] = src[i];
    int64_t* t = src;
    src = dst;
    dst = t;
  }
  if (src != a) memcpy(a, src, (size_t)n * sizeof(int64_t));
}
/* Grow a zero-filled int64 array (symbolic phase counts) to hold `need` elements. */
static int tessel_grow_i64(void* arrp, int64_t* cap, int64_t need) {
  int64_t** a = (int64_t**)arrp;
  if (need <= *cap) return 0;
  int64_t n = *cap > 0 ? *cap : 1024;
  while (n < need) n *= 2;
  int64_t* b = (int64_t*)realloc(*a, (size_t)n * sizeof(int64_t));
  if (!b) return 1;
  memset(b + *cap, 0, (size_t)(n - *cap) * sizeof(int64_t));
  *a = b;
  *cap = n;
  return 0;
}
/* Large arrays are 2 MB-aligned and asked to be backed by huge pages: filling a fresh
   output otherwise takes one page fault per 4 KB. Still released with free(). */
/* Tests set TESSEL_POISON: arrays the kernel must fill start as NaN / -1, so an entry
   it never writes is caught (fresh pages would read as zero). */
static int tessel_poisoning(void) {
  static int poison = -1;
  if (poison < 0) poison = getenv("TESSEL_POISON") != NULL;
  return poison;
}
/* The host's memory limit (TESSEL_MAX_MEMORY), set by the runtime after loading: an
   array over it (a workspace or temporary sized by the input) is refused like a failed
   malloc, and its size left here for the runtime's message. */
__attribute__((visibility("default"), used)) int64_t tessel_memory_limit = INT64_MAX;
__attribute__((visibility("default"), used)) int64_t tessel_refused_bytes = 0;
static void* tessel_alloc(int64_t n, size_t size, int zero) {
  if (n < 0 || (uint64_t)n > SIZE_MAX / size) return NULL;
  if (n == 0) n = 1;
  size_t bytes = (size_t)n * size, huge = (size_t)2 << 20;
  if (bytes > (uint64_t)tessel_memory_limit) {
    __atomic_store_n(&tessel_refused_bytes, (int64_t)bytes, __ATOMIC_RELAXED);
    return NULL;
  }
  void* p = NULL;
  if (bytes >= 4 * huge) {
    size_t rounded = (bytes + huge - 1) & ~(huge - 1);
    if (posix_memalign(&p, huge, rounded) == 0) {
      madvise(p, rounded, MADV_HUGEPAGE);
      if (zero) memset(p, 0, bytes);
    } else {
      p = NULL;
    }
  }
  if (!p) p = zero ? calloc((size_t)n, size) : malloc(bytes);
  if (p && !zero && tessel_poisoning()) memset(p, 0xFF, bytes);
  return p;
}
/* Whether malloc'd array p (or NULL) holds n elements of `size` bytes. */
static int tessel_has_room(void* p, int64_t n, size_t size) {
  return p && malloc_usable_size(p) >= (size_t)(n > 0 ? n : 1) * size;
}
/* An output's array for n elements, in *slot: the array already there when it is large
   enough (an output computed again keeps its memory; fresh pages would page-fault on
   every run), else a new one, the old freed. Zeroed, or poisoned, as tessel_alloc's;
   zero == 2 keeps the values there (+= in place; a new array is zeroed). */
static void* tessel_take(void** slot, int64_t n, size_t size, int zero) {
  if (n < 0 || (uint64_t)n > SIZE_MAX / size) return NULL;
  size_t bytes = (size_t)(n > 0 ? n : 1) * size;
  if (tessel_has_room(*slot, n, size)) {
    if (zero == 1) memset(*slot, 0, bytes);
    else if (zero == 0 && tessel_poisoning()) memset(*slot, 0xFF, bytes);
    return *slot;
  }
  free(*slot);
  *slot = tessel_alloc(n, size, zero != 0);
  return *slot;
}
/* Grow an output's crd and vals arrays together to hold at least `need` entries
   (doubling), keeping their contents; *cap is updated. Nonzero when memory runs out.
   Arrays kept from an earlier run may already have the room. Otherwise new arrays come
   from tessel_alloc (huge pages for large ones; realloc would keep small pages) and
   always move, so under TESSEL_POISON a stale pointer shows. Not `owned`: the arrays
   lie inside a block owned elsewhere (a thread's region, tessel_thread_arrays); they are
   left in place, and stay the caller's arrays when memory runs out. */
static void* tessel_regrow(void* p, size_t size, int64_t old, int64_t n, int owned) {
  void* q = tessel_alloc(n, size, 0);
  if (!q) return NULL;
  memcpy(q, p, (size_t)old * size);
  if (!owned) return q;
  if (tessel_poisoning()) memset(p, 0xFF, (size_t)old * size);
  free(p);
  return q;
}
static int tessel_grow_arrays(void** crd, size_t cs, void** vals, size_t vs, int64_t* cap, int64_t need,
                              int owned) {
  int64_t c = *cap > 0 ? *cap : 1;
  while (c < need) {
    if (c > INT64_MAX / 2) return 1;
    c *= 2;
  }
  if (owned && tessel_has_room(*crd, c, cs) && tessel_has_room(*vals, c, vs)) {
    if (tessel_poisoning()) { /* room kept from an earlier run */
      memset((char*)*crd + *cap * cs, 0xFF, (size_t)(c - *cap) * cs);
      memset((char*)*vals + *cap * vs, 0xFF, (size_t)(c - *cap) * vs);
    }
    *cap = c;
    return 0;
  }
  void* nc = tessel_regrow(*crd, cs, *cap, c, owned);
  if (!nc) return 1;
  void* nv = tessel_regrow(*vals, vs, *cap, c, owned);
  if (!nv && !owned) {
    free(nc);
    return 1;
  }
  *crd = nc;
  if (!nv) return 1;
  *vals = nv;
  *cap = c;
  return 0;
}
static int tessel_grow_pair(void** crd, size_t cs, void** vals, size_t vs, int64_t* cap, int64_t need) {
  return tessel_grow_arrays(crd, cs, vals, vs, cap, need, 1);
}
/* The first of n items in share t of m (shares differ by at most one). */
static inline int64_t tessel_share(int64_t n, int64_t m, int64_t t) { return n / m * t + n % m * t / m; }
/* Growing workspace rows in parallel. An output computed again keeps one block per
   array (plain blocks: the kernel gets no offsets); thread t of nt fills region t of it,
   the block's capacity cut evenly, so the threads write pages the last run faulted in
   (fresh ones fault in on every run: on a VM that cost more than the rows). */
static int64_t tessel_block_cap(void* c, void* v, size_t cs, size_t vs) {
  if (!c || !v) return 0;
  int64_t a = (int64_t)(malloc_usable_size(c) / cs), b = (int64_t)(malloc_usable_size(v) / vs);
  return a < b ? a : b;
}
/* Whether p lies inside the block b of cap elements of `size` bytes. */
static int tessel_in_block(const void* p, const void* b, int64_t cap, size_t size) {
  uintptr_t x = (uintptr_t)p, lo = (uintptr_t)b;
  return b && x >= lo && x < lo + (uintptr_t)cap * size;
}
/* Thread t's arrays: its region of the output's blocks (perhaps empty), else
   (no blocks, a first run) new arrays with a quarter more than its share of `guess`
   (the last run's entry count). Sets *crd, *vals and *cap; nonzero when memory ran
   out (then no arrays). The blocks stay in their slots. */
static int tessel_thread_arrays(int64_t t, int64_t nt, void** out_crd, void** out_vals, size_t cs, size_t vs,
                                int64_t guess, void** crd, void** vals, int64_t* cap) {
  int64_t room = tessel_block_cap(*out_crd, *out_vals, cs, vs);
  if (room > 0) {
    int64_t lo = tessel_share(room, nt, t);
    *cap = tessel_share(room, nt, t + 1) - lo;
    *crd = (char*)*out_crd + lo * cs;
    *vals = (char*)*out_vals + lo * vs;
    if (tessel_poisoning()) {
      memset(*crd, 0xFF, (size_t)*cap * cs);
      memset(*vals, 0xFF, (size_t)*cap * vs);
    }
    return 0;
  }
  int64_t share = guess / nt;
  *cap = share + share / 4 + 1;
  *crd = tessel_alloc(*cap, cs, 0);
  *vals = tessel_alloc(*cap, vs, 0);
  if (*crd && *vals) return 0;
  free(*crd);
  free(*vals);
  *crd = *vals = NULL;
  *cap = 0;
  return 1;
}
/* Grows a thread's arrays (tessel_thread_arrays) to hold `need` entries: a region of the
   output's blocks bc / bv moves to new arrays, the thread's own arrays grow in place
   when they can (tessel_grow_arrays). Nonzero when memory ran out. */
static int tessel_grow_thread(void** crd, size_t cs, void** vals, size_t vs, int64_t* cap, int64_t need,
                              void* bc, void* bv) {
  int owned = !tessel_in_block(*crd, bc, tessel_block_cap(bc, bv, cs, vs), cs);
  return tessel_grow_arrays(crd, cs, vals, vs, cap, need, owned);
}
/* Moves len elements of `size` bytes from a + src down to a + dst (dst <= src) on all
   threads: in steps of at most src - dst elements, so that no step's source and
   destination overlap. A gap too small for 64 steps to cover the run is one memmove. */
static void tessel_move_down(char* a, size_t size, int64_t dst, int64_t src, int64_t len) {
  int64_t gap = src - dst;
  if (gap <= 0 || len <= 0) return;
  if (gap < len / 64) {
    memmove(a + dst * size, a + src * size, (size_t)len * size);
    return;
  }
  int64_t step = gap < len ? gap : len, nt = omp_get_max_threads();
  for (int64_t s = 0; s < len; s += step) {
    int64_t m = len - s < step ? len - s : step;
    #pragma omp parallel for schedule(static, 1)
    for (int64_t p = 0; p < nt; p++) {
      int64_t lo = s + tessel_share(m, nt, p), hi = s + tessel_share(m, nt, p + 1);
      memcpy(a + (dst + lo) * size, a + (src + lo) * size, (size_t)(hi - lo) * size);
    }
  }
}
/* Whether thread t's entries (n[t + 1] - n[t] from crd / vals) sit at the start of its
   region of the blocks (room elements), where the join can move them down in place. */
static int tessel_in_region(int64_t t, int64_t nt, const int64_t* n, const char* crd, const char* vals,
                            const char* bc, const char* bv, int64_t room, size_t cs, size_t vs) {
  int64_t lo = tessel_share(room, nt, t), len = n[t + 1] - n[t];
  return len == 0 || (crd == bc + lo * cs && vals == bv + lo * vs && len <= tessel_share(room, nt, t + 1) - lo);
}
/* Growing workspace rows in parallel, after the loop: thread t appended its range of
   rows to crd[t] / vals[t] (n[t + 1] entries, n[0] = 0; tessel_thread_arrays). When
   every thread stayed in its region of the output's blocks, the entries move down in
   place to follow on. Otherwise new blocks take them all (with room for each thread's
   region to hold the largest thread's entries next time, up to twice the total, and a
   quarter more) and the old ones are freed. Threads' own arrays are freed. Returns the
   entry count; -2 when memory ran out (failed), the output then without arrays. */
static int64_t tessel_join_threads(int64_t nt, int64_t* crd, int64_t* vals, int64_t* n, size_t cs, size_t vs,
                                   void** out_crd, void** out_vals, int64_t failed) {
  int64_t most = 0;
  for (int64_t t = 0; t < nt; t++) {
    most = n[t + 1] > most ? n[t + 1] : most;
    n[t + 1] += n[t];
  }
  char* bc = (char*)*out_crd;
  char* bv = (char*)*out_vals;
  int64_t room = tessel_block_cap(bc, bv, cs, vs);
  int in_place = !failed && room > 0;
  for (int64_t t = 0; in_place && t < nt; t++)
    in_place = tessel_in_region(t, nt, n, (char*)(intptr_t)crd[t], (char*)(intptr_t)vals[t], bc, bv, room, cs, vs);
  char* c = bc;
  char* v = bv;
  int ok = !failed;
  if (in_place) {
    for (int64_t t = 1; t < nt; t++) {
      int64_t from = tessel_share(room, nt, t);
      tessel_move_down(c, cs, n[t], from, n[t + 1] - n[t]);
      tessel_move_down(v, vs, n[t], from, n[t + 1] - n[t]);
    }
  } else if (ok) {
    int64_t want = nt * most < 2 * n[nt] ? nt * most : 2 * n[nt];
    want = (want > n[nt] ? want : n[nt]) + want / 4 + 1;
    c = (char*)tessel_alloc(want, cs, 0);
    v = (char*)tessel_alloc(want, vs, 0);
    ok = c && v;
    #pragma omp parallel for schedule(static, 1)
    for (int64_t t = 0; t < nt; t++) {
      if (!ok || n[t + 1] == n[t]) continue;
      memcpy(c + n[t] * cs, (char*)(intptr_t)crd[t], (size_t)(n[t + 1] - n[t]) * cs);
      memcpy(v + n[t] * vs, (char*)(intptr_t)vals[t], (size_t)(n[t + 1] - n[t]) * vs);
    }
  }
  for (int64_t t = 0; t < nt; t++) {
    if (!tessel_in_block((void*)(intptr_t)crd[t], bc, room, cs)) free((void*)(intptr_t)crd[t]);
    if (!tessel_in_block((void*)(intptr_t)vals[t], bv, room, vs)) free((void*)(intptr_t)vals[t]);
  }
  if (!in_place) {
    free(bc);
    free(bv);
  }
  if (!ok) {
    if (c != bc) free(c);
    if (v != bv) free(v);
    c = v = NULL;
  }
  *out_crd = c;
  *out_vals = v;
  return ok ? n[nt] : -2;
}
/* One-pass parallel assembly. Each thread fills its range of rows within its window of
   the bound (the bound's offsets of its first row and of the next thread's). Threads
   pair up: an even thread t (with t + 1 < nthreads) fills downward, block of rows by
   block (tessel_settle_block), so its entries end where thread t + 1's window starts,
   and thread t + 1 fills upward from there: the pair's entries are contiguous. Two
   threads thus leave the whole output contiguous, starting inside the arrays. */
/* A downward thread, after a block of rows [r0, r1): they were appended from lo up to q
   (lo = hi minus the block's bound); moves them up to end at hi (just written, so the
   shift stays in cache) and returns the new hi, where the block before them ends. */
static int64_t tessel_settle_block(char* crd, size_t cs, char* vals, size_t vs, int64_t* row_from,
                                   int64_t r0, int64_t r1, int64_t lo, int64_t q, int64_t hi) {
  int64_t shift = hi - q;
  if (shift > 0) {
    memmove(crd + (lo + shift) * cs, crd + lo * cs, (size_t)(q - lo) * cs);
    memmove(vals + (lo + shift) * vs, vals + lo * vs, (size_t)(q - lo) * vs);
    for (int64_t r = r0; r < r1; r++) row_from[r] += shift;
  }
  return hi - (q - lo);
}
/* The output's array *data starts `offset` elements into its block. */
static void tessel_start_at(void** data, void** block, int64_t offset, size_t size) {
  if (offset == 0) return;
  if (!*block) *block = *data;
  *data = (char*)*data + offset * size;
}
/* After the loops: row_from[r] is where row r went and pos[r + 1] holds its count.
   The output starts at *offset = row_from[0] (where row 0 went; 0 when no loop visited
   it) and keeps its entries in row order from there. Turns the counts into offsets,
   then moves every run of rows that follow on to its place, in place, everything in
   parallel (nothing moves when all rows follow on, as with two threads). A long run
   (one thread's rows) is cut into pieces where that costs little: its rows move by a
   gap of at most a quarter piece, or lie past the output's end. First the part of each
   piece's source that later pieces' destinations cover is saved (little when few
   entries merge; a fresh exact-size copy would page-fault the whole output), then all
   pieces move at once. Returns the entry count, -1 when it exceeds a 32-bit pos, -2
   out of memory. */
#define TESSEL_POS(r) tessel_pos_at(pos, pos64, r)
static int64_t tessel_finish_rows(int64_t rows, const int64_t* row_from, void* pos, int pos64,
                                  char* crd, size_t cs, char* vals, size_t vs, int64_t* offset) {
  int64_t nt = omp_get_max_threads(), n = 1, total = 0, nr = 0;
  /* from here on, positions count from the output's start */
  int64_t off = rows > 0 ? row_from[0] : 0;
  *offset = off;
  crd += off * cs;
  vals += off * vs;
  int64_t* part = (int64_t*)calloc((size_t)nt + 1, sizeof(int64_t));
  int64_t* cut = (int64_t*)calloc((size_t)nt + 1, sizeof(int64_t));
  int64_t* head = (int64_t*)malloc((size_t)(rows + 1) * sizeof(int64_t));
  if (!part || !cut || !head) { free(part); free(cut); free(head); return -2; }
  #pragma omp parallel num_threads(nt)
  {
    int64_t t = omp_get_thread_num(), m = omp_get_num_threads();
    int64_t r0 = tessel_share(rows, m, t), r1 = tessel_share(rows, m, t + 1), sum = 0;
    int64_t before = r0 > 0 ? TESSEL_POS(r0) : 0; /* row r0 - 1's count, before it becomes an offset */
    for (int64_t r = r0; r < r1; r++) sum += TESSEL_POS(r + 1);
    part[t + 1] = sum;
    #pragma omp barrier
    #pragma omp single
    {
      n = m;
      for (int64_t u = 0; u < m; u++) part[u + 1] += part[u];
      total = part[m];
    }
    /* Offsets, and the heads of pieces among this thread's rows, listed from head[r0]. */
    int64_t k = 0;
    if (pos64 || total <= 2147483647) {
      int64_t piece = total / (4 * m), at = part[t], from = at;
      if (piece < 4096) piece = 4096;
      for (int64_t r = r0; r < r1; r++) {
        int64_t count = TESSEL_POS(r + 1);
        int is = r == 0 || row_from[r - 1] + before != row_from[r];
        if (!is && at - from >= piece) {
          int64_t gap = row_from[r] - off - at;
          is = 4 * gap <= piece || row_from[r] - off >= total;
        }
        if (is) { head[r0 + k++] = r; from = at; }
        at += count;
        before = count;
        if (pos64) ((int64_t*)pos)[r + 1] = at; else ((int32_t*)pos)[r + 1] = (int32_t)at;
      }
    }
    cut[t + 1] = k;
    #pragma omp barrier
    #pragma omp single
    for (int64_t u = 0; u < m; u++) {
      memmove(head + cut[u], head + tessel_share(rows, m, u), (size_t)(cut[u + 1]) * sizeof(int64_t));
      cut[u + 1] += cut[u];
    }
  }
  nr = cut[n];
  free(part); free(cut);
  if (!pos64 && total > 2147483647) { free(head); return -1; }
  head[nr] = rows;
  /* the saved part of piece b: source positions in [D(b+1), total) */
  int64_t* save = (int64_t*)malloc((size_t)(nr + 1) * sizeof(int64_t));
  if (!save) { free(head); return -2; }
  save[0] = 0;
  for (int64_t b = 0; b < nr; b++) {
    int64_t S = row_from[head[b]] - off, E = S + TESSEL_POS(head[b + 1]) - TESSEL_POS(head[b]), dn = TESSEL_POS(head[b + 1]);
    int64_t u0 = S > dn ? S : dn, u1 = E < total ? E : total;
    save[b + 1] = save[b] + (u1 > u0 ? u1 - u0 : 0);
  }
  char* tc = (char*)malloc((size_t)(save[nr] + 1) * cs);
  char* tv = (char*)malloc((size_t)(save[nr] + 1) * vs);
  if (!tc || !tv) { free(tc); free(tv); free(save); free(head); return -2; }
  #pragma omp parallel
  {
    #pragma omp for schedule(dynamic, 1)
    for (int64_t b = 0; b < nr; b++) {
      int64_t m = save[b + 1] - save[b], S = row_from[head[b]] - off, dn = TESSEL_POS(head[b + 1]);
      int64_t u0 = S > dn ? S : dn;
      if (m > 0) {
        memcpy(tc + save[b] * cs, crd + u0 * cs, (size_t)m * cs);
        memcpy(tv + save[b] * vs, vals + u0 * vs, (size_t)m * vs);
      }
    }
    #pragma omp for schedule(dynamic, 1)
    for (int64_t b = 0; b < nr; b++) {
      int64_t S = row_from[head[b]] - off, D = TESSEL_POS(head[b]), dn = TESSEL_POS(head[b + 1]);
      int64_t m = save[b + 1] - save[b], h = (S > dn ? S : dn) - S, rest = dn - D - h - m;
      if (S == D || dn == D) continue; /* in place, or empty */
      if (h > 0) { memmove(crd + D * cs, crd + S * cs, (size_t)h * cs); memmove(vals + D * vs, vals + S * vs, (size_t)h * vs); }
      if (m > 0) { memcpy(crd + (D + h) * cs, tc + save[b] * cs, (size_t)m * cs); memcpy(vals + (D + h) * vs, tv + save[b] * vs, (size_t)m * vs); }
      if (rest > 0) {
        memmove(crd + (D + h + m) * cs, crd + (S + h + m) * cs, (size_t)rest * cs);
        memmove(vals + (D + h + m) * vs, vals + (S + h + m) * vs, (size_t)rest * vs);
      }
    }
  }
  free(tc); free(tv); free(save); free(head);
  return total;
}
#undef TESSEL_POS

#endif
