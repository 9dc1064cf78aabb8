// Schedules: how the loops of an assignment run, without changing what it computes.
//
//   IndexVar i, j, i0, i1, f, fp, p0, p1;
//   Schedule s;
//   s.split(i, i0, i1, 32).parallelize(i0, CPUThread, NoRaces);        // rows in blocks
//   s.fuse(i, j, f).pos(f, fp, B(i, j)).split(fp, p0, p1, 4096)        // even split of
//    .parallelize(p0, CPUThread, Atomics);                              // B's non-zeros
//   auto k = Kernel::compile(a(i) = B(i,j) * c(j) ..., s);
//
// Each command is a rewrite of the concrete index notation (a forall nest); the
// lowerer checks every command and throws ScheduleError naming it and the reason.
// The same commands parse from text: "split(i,i0,i1,32),parallelize(i0,cpu_thread,no_races)".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessel/notation.h"

namespace tessel {

enum class ParallelUnit { CPUThread };
/// What a parallel loop does about iterations that write the same output location.
enum class OutputRace {
  NoRaces,      ///< proven absent (else ScheduleError)
  IgnoreRaces,  ///< the user asserts there are none; not checked
  Atomics,      ///< atomic updates of a dense output
  Temporary,    ///< thread-private copies of a dense output, summed after the loop
};
enum class BoundKind { MaxExact, UpperBound };

inline constexpr ParallelUnit CPUThread = ParallelUnit::CPUThread;
inline constexpr OutputRace NoRaces = OutputRace::NoRaces;
inline constexpr OutputRace IgnoreRaces = OutputRace::IgnoreRaces;
inline constexpr OutputRace Atomics = OutputRace::Atomics;
inline constexpr OutputRace Temporary = OutputRace::Temporary;

struct ScheduleCommand {
  enum class Kind { Split, Divide, Pos, Fuse, Reorder, Precompute, Parallelize, Unroll, Bound, LoopFuse };
  Kind kind;
  /// split/divide: i, outer, inner; pos: i, ip; fuse: i, j, f; reorder: the new order;
  /// precompute, parallelize, unroll, loopfuse: i; bound: i, ib.
  std::vector<IndexVar> vars;
  /// pos: the tensor whose stored positions are iterated; precompute of an expression
  /// and loopfuse: the temporary's name (loopfuse: empty for the default name).
  std::string tensor;
  IndexExpr expr;      ///< precompute of a sub-expression (no vars then)
  /// precompute of a sub-expression: store the temporary in the format of this factor of
  /// the sub-expression (its pattern: the product is zero where it has no entry) instead
  /// of dense; empty for dense.
  std::string storedLike;
  int64_t amount = 0;  ///< split: block size; divide: pieces; unroll: factor; bound: extent
  OutputRace race = OutputRace::NoRaces;
  BoundKind boundKind = BoundKind::MaxExact;
  /// "split(i,i0,i1,32)" -- how error messages name the command.
  std::string str() const;
};

/// Bounds on a schedule, whose commands may come from untrusted text: a command beyond
/// them throws ScheduleError. The C compiler's time and memory grow steeply with a loop
/// nest's depth (40 nested split loops: 12 s and 1.2 GB), and each split or divide adds
/// a loop; GCC refuses unroll factors above 65534.
inline constexpr size_t kMaxScheduleCommands = 256;
inline constexpr int kMaxScheduleSplits = 16;  ///< split and divide commands together
inline constexpr int64_t kMaxUnrollFactor = 1024;

class Schedule {
 public:
  /// i = outer * size + inner, inner in [0, size).
  Schedule& split(const IndexVar& i, const IndexVar& outer, const IndexVar& inner, int64_t size);
  /// i cut into `pieces` blocks of (nearly) equal extent: outer in [0, pieces).
  Schedule& divide(const IndexVar& i, const IndexVar& outer, const IndexVar& inner, int64_t pieces);
  /// Iterate the stored positions of `access`'s level at i (ip) instead of coordinates,
  /// so that splitting ip divides work evenly by non-zeros.
  Schedule& pos(const IndexVar& i, const IndexVar& ip, const Access& access);
  Schedule& pos(const IndexVar& i, const IndexVar& ip, const std::string& tensorName);
  /// Collapse the loop over j directly inside the loop over i into one loop f.
  Schedule& fuse(const IndexVar& i, const IndexVar& j, const IndexVar& f);
  /// New relative order of these loops (others keep their places).
  Schedule& reorder(const std::vector<IndexVar>& order);
  /// Gather the output's level of i in a dense workspace (COMET's workspace).
  Schedule& precompute(const IndexVar& i);
  /// Compute the sub-expression `e` of the right-hand side first, into a dense temporary
  /// named `temporary` over e's variables that are used outside e (in order of first
  /// appearance in e), and use it in e's place: `precompute(B(j,k) * x(k), "t")` turns
  /// y(i) = A(i,j) * B(j,k) * x(k) into t(j) = B(j,k) * x(k), then y(i) = A(i,j) * t(j).
  /// e is matched by its printed form, or as some of the factors of a product.
  Schedule& precompute(const IndexExpr& e, const std::string& temporary);
  /// precompute(e, temporary) into a temporary stored like `pattern`, a factor of the
  /// product e indexed by exactly the temporary's variables, in their order: SDDMM's
  /// T(i,j) = B(i,j) * C(i,k) * D(j,k) in B's sparse format, nnz(B) values instead of a
  /// dense m x n. Text: precompute(e,t,B) where B names a tensor, not an index variable.
  Schedule& precomputeLike(const IndexExpr& e, const std::string& temporary, const std::string& pattern);
  /// Compute `e` (some of the factors of the right-hand side's product) inside the loop
  /// over `at`, once per iteration of the loops down to it, into a dense temporary over
  /// e's variables that the loops below `at` bind and the rest uses (its variables used
  /// only in e are summed into it), in the same generated function: TACO's precompute
  /// at a loop. MTTKRP A(i,l) = B(i,j,k)*C(j,l)*D(k,l) with
  /// `precompute(B(i,j,k)*D(k,l), "t", j)` computes t(l) = sum_k B(i,j,k)*D(k,l) per (i,j),
  /// then A(i,l) += t(l)*C(j,l): one multiply per non-zero and column fewer.
  Schedule& precompute(const IndexExpr& e, const std::string& temporary, const IndexVar& at);
  /// SparseLNR's loop fusion: keep the loops down to and including `at` shared and, below
  /// it, distribute the product into a producer and a consumer nest that exchange a dense
  /// temporary. The consumer keeps the factors that use an output variable bound below
  /// `at`; the producer, every other tensor factor, is computed per iteration of `at`
  /// into the temporary over the variables both use below `at` (a scalar, a row), its own
  /// other variables summed into it. <SDDMM, SpMM> A(i,l) = B(i,j)*C(i,k)*D(j,k)*E(j,l)
  /// with `loopfuse(j)`: t = sum_k B(i,j)*C(i,k)*D(j,k) per (i,j), then A(i,l) += t*E(j,l).
  /// `temporary` names it (default "t_<at>"). Applied again (SparseLNR's recursion) it
  /// names a loop of an earlier fusion's producer or consumer and splits that nest the
  /// same way, its left-hand side (the output or the earlier temporary) taking the
  /// output's part: <SDDMM, SpMM, GEMM> A(i,m) = B(i,j)*C(i,k)*D(j,k)*E(j,l)*F(l,m) with
  /// `loopfuse(i),loopfuse(j)`. Fusions nest from the outside in. A loop that does not
  /// exist, a fusion that splits nothing (no factor, or every factor, uses the output's
  /// variables below `at`), that would break a sum (a variable only the producer uses
  /// runs outside `at`), at a loop enclosing an earlier fusion, or at a loop both sides
  /// of an earlier one run where both could split: ScheduleError. It is
  /// precompute(producer, temporary, at) with the producer chosen for you, and shares its
  /// rules. Commands before or after it (it is placed in the final nest) may split,
  /// divide, reorder and unroll loops below `at`: the producer and the consumer each run
  /// the loops of the variables their factors use, in the scheduled order, so a split of
  /// k that only the producer sums strip-mines the producer's loop, one of l that only
  /// the consumer uses the consumer's (`loopfuse(j),split(l,l0,l1,8),split(k,k0,k1,16)`),
  /// and one of a variable both use (the row t_i(l) of <SpMM, GEMM> at i) both nests'
  /// loops. pos(v, vp, B) below `at` iterates B's positions in the nest that has B, and
  /// v's coordinates in the other. Refused (ScheduleError): a block loop outside `at`
  /// over a variable bound below it (the split would cross the fusion point), fuse + pos
  /// blocks below `at`, a parallel loop below `at` (its iterations would race on the
  /// temporary: parallelize `at` or a loop outside it), a sparse output.
  /// At the outer loop of a split of the outermost loop (`split(i,i0,i1,R),loopfuse(i0)`)
  /// the temporary holds a block of rows; where it is indexed like a producer factor B
  /// stored as CSR (t(i,j), B(i,j) with format "ds"), it holds the block's entries at B's
  /// positions (from the block's first) and the consumer iterates B's pattern:
  /// <SDDMM, SpMM> at blocks runs the block's SDDMM, then its SpMM.
  /// In a distributed schedule (DistributedKernel, `tessel run -m`) it fuses the leaf
  /// kernel's loops: each rank runs the fused nest on its local boxes. `at` names a loop
  /// that runs in the leaf, written before or after distribute: named before, a loop that
  /// is then split or distributed is followed to its inner loop
  /// ("loopfuse(j),distribute({i},{io},{ii})", "distribute({i},{io},{ii}),loopfuse(ii)" and
  /// "loopfuse(i),distribute({i},{io},{ii})" fuse at the leaf's j, i and i). A schedule of
  /// loopfuse commands alone is added to the default distributed schedule. At a
  /// distributed loop, or a step loop (one a tensor is communicated at, or above, or a
  /// rotated loop): ScheduleError, it runs above the leaf. The leaf's own rules above then
  /// apply to the leaf's loops (a split loop's inner loop takes its variable's name there,
  /// and the error says so). A variable only the producer sums may be divided into steps
  /// above the leaf: each step's leaf sums its block into the temporary and the steps add
  /// up in the output.
  Schedule& loopfuse(const IndexVar& at, const std::string& temporary = "");
  Schedule& parallelize(const IndexVar& i, ParallelUnit unit = CPUThread, OutputRace race = NoRaces);
  Schedule& unroll(const IndexVar& i, int64_t factor);
  /// Promise: the extent of i is exactly (MaxExact) or at most (UpperBound) n; checked at run time.
  Schedule& bound(const IndexVar& i, const IndexVar& ib, int64_t n, BoundKind kind = BoundKind::MaxExact);

  const std::vector<ScheduleCommand>& commands() const { return commands_; }
  /// Appends a command as it is (used to pass on part of a schedule).
  Schedule& add(const ScheduleCommand& c);
  bool empty() const { return commands_.empty(); }
  /// "split(i,i0,i1,32),parallelize(i0,cpu_thread,no_races)".
  std::string str() const;

 private:
  std::vector<ScheduleCommand> commands_;
};

/// Parse a schedule. Names of `a`'s index variables refer to them; other names make new
/// variables (shared by later commands). Throws ScheduleError naming the command.
Schedule parseSchedule(const std::string& text, const Assignment& a);

/// The schedule used when the user gives none and asks for `threads` > 1: the outermost
/// loop over output rows, in blocks; or, for skewed rows of a sparse operand feeding a
/// dense output, an even split of that operand's non-zeros. A thread gets the host
/// tuning's blocks (CpuTuning::blocksPerThread, 16), up to 4x as many where the data
/// bound to the operands gives each block ample work. Empty when no parallel schedule
/// is safe (the kernel then runs on one thread).
Schedule defaultParallelSchedule(const Assignment& a, int threads);
/// As above with `blocksPerThread` instead of the host tuning's as the blocks a thread
/// starts from.
Schedule defaultParallelSchedule(const Assignment& a, int threads, int blocksPerThread);

/// Rows per block when `extent` rows run on `threads` threads in blocks: about
/// `blocksPerThread` blocks a thread, enough to even out uneven rows, few enough that
/// taking a block costs nothing next to its work (at least one row).
int64_t rowsPerParallelBlock(int64_t extent, int threads, int blocksPerThread);

/// Rows per block of a fusion at blocks of the outermost loop (split(i,i0,i1,R),
/// loopfuse(i0)) over `extent` rows on `threads` threads, a row of the temporary holding
/// `tempPerRow` entries: a dense temporary of about 2048 entries (16 KB, at most 256
/// rows), one at a sparse factor's positions of about 32768 (256 KB: its two phases
/// gather rows of different operands, and larger blocks keep more of each in L2); at
/// least 4 blocks a thread. Below 2 rows, fusion at blocks does not pay.
int64_t rowsPerFusedBlock(double tempPerRow, int64_t extent, int threads, bool atPositions = false);

/// Blocks a thread gets for `work` entries of work (stored entries times the extents of
/// the loops that do not index them; a fused nest's estimated multiplies) on `threads`
/// threads: `blocksPerThread`, doubled (twice at most) while each block keeps 16384.
int blocksPerThreadFor(double work, int threads, int blocksPerThread);

struct CpuTuning;  // tessel/tuning.h

/// The schedule tessel picks when the user gives none, and why.
struct ScheduleChoice {
  Schedule schedule;
  std::string reason;  ///< "" when the schedule is empty (the loops as they are)
  /// The threads to run it on: those asked for, or 1 where the choice found too little
  /// work to share. Every stage of the kernel then runs on these (separate kernels'
  /// producer stage has a parallel schedule whatever the choice decided).
  int threads = 1;
};
/// What `tessel run` and Python use without a schedule: a product of three or more
/// tensors (into a dense output, or a sparse one the plan can assemble) runs as the
/// perfect nest, a fused nest (loopfuse, applied up to three times) or separate kernels
/// (precompute of a producer, any two or more of the factors, into a temporary, stored
/// like its sparse factor where one has the temporary's variables), whichever a
/// cost model estimates least work for (each loop's trip count: a sparse level's average
/// fiber length from the bound tensor, a dense loop's extent, times the factors
/// multiplied there; a separate temporary's traffic and call), when that is at most 80%
/// of the perfect nest's; rows then run in parallel for threads > 1 (on one thread,
/// `threads` 1, where its work is too little or no parallel schedule lowers). Otherwise
/// defaultParallelSchedule. The reason says which ("fused at i, then j (loopfuse): ...",
/// "separate kernels: T = ... (stored like B, ...), then the rest; ...").
/// Kernel::compile with no schedule runs the loops as they are: pass this to it for the
/// same choice.
ScheduleChoice defaultSchedule(const Assignment& a, int threads);
/// The same for a given tuning (tessel/tuning.h) instead of the host's: its blocks a
/// thread, and the cost model's last-level cache (llc, beyond-llc).
ScheduleChoice defaultSchedule(const Assignment& a, int threads, const CpuTuning& tuning);

}  // namespace tessel
