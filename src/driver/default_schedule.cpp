// The parallel schedule used when the user asks for threads but gives no schedule.
#include <algorithm>
#include <cmath>

#include "driver/pipeline.h"
#include "format/level_format.h"
#include "lower/output_plan.h"
#include "lower/problem.h"
#include "runtime/tensor_stats.h"
#include "schedule/reduction_stages.h"
#include "tessel/error.h"
#include "tessel/schedule.h"
#include "tessel/tuning.h"

namespace tessel {

int64_t rowsPerParallelBlock(int64_t extent, int threads, int blocksPerThread) {
  const int64_t blocks = static_cast<int64_t>(std::max(threads, 1)) * std::max(blocksPerThread, 1);
  return std::max<int64_t>(1, (extent + blocks - 1) / blocks);
}

int64_t rowsPerFusedBlock(double tempPerRow, int64_t extent, int threads, bool atPositions) {
  double rows = (atPositions ? 32768.0 : 2048.0) / std::max(tempPerRow, 1.0);
  if (!atPositions) rows = std::min(rows, 256.0);
  if (threads > 1) rows = std::min(rows, std::floor(static_cast<double>(extent) / (4.0 * threads)));
  return static_cast<int64_t>(std::max(rows, 0.0));
}

int blocksPerThreadFor(double work, int threads, int blocksPerThread) {
  // Ample work is cut into up to 4x the blocks, each keeping kBlockWork: on the 16-core
  // Xeon at 16 threads, 64 blocks a thread ran SpMM and SDDMM on rmat-17 1.2-1.3x and
  // uniform-300K 1.05-1.2x faster than 16 (skewed rows even out), where on small
  // matrices (bayer10, ca-AstroPh SpMV: a few hundred entries a block) they ran 2x slower.
  constexpr double kBlockWork = 16384;
  int perThread = std::max(blocksPerThread, 1);
  threads = std::max(threads, 1);
  for (int k = 0; k < 2 && work / (2.0 * threads * perThread) >= kBlockWork; k++) perThread *= 2;
  return perThread;
}

namespace {

/// Entries of work the nest does: the least over the inputs bound to data of the
/// positions its storage holds times the extents of the loops that do not index it
/// (SpMM: A's non-zeros times X's columns; X's entries times A's rows is the dense
/// bound, not the work); 0 when no input is bound.
double workOf(const Assignment& a, const lower::Problem& p) {
  double least = -1;
  for (const auto& in : p.inputs) {
    const std::vector<int64_t> positions = boundLevelPositions(*in.node);
    if (positions.empty()) continue;
    double w = static_cast<double>(positions.back());
    for (const IndexVar& v : p.order)
      if (std::find(in.levelVars.begin(), in.levelVars.end(), v) == in.levelVars.end())
        w *= static_cast<double>(extentOf(a, v));
    least = least < 0 ? w : std::min(least, w);
  }
  return std::max(least, 0.0);
}

}  // namespace

Schedule defaultParallelSchedule(const Assignment& user, int threads) {
  return defaultParallelSchedule(user, threads, hostTuning().blocksPerThread);
}

Schedule defaultParallelSchedule(const Assignment& user, int threads, int blocksPerThread) {
  if (threads <= 1) return {};
  // Sums inside the expression run first as their own stages (with their own schedules):
  // this schedules the last stage, the one writing the output.
  Assignment given = splitReductions(user, [](const PrecomputeTemporary& t) {
                       return TensorVar(t.name, t.type, t.dims, t.format);
                     }).back();
  // `A += sum` runs its sum as a plain assignment first: schedule that one.
  Assignment a = given;
  if (accumulatesSum(given)) a.accumulate = false;
  const lower::Problem p = lower::analyze(a);
  const lower::OutputPlan plan = lower::planOutput(p);
  if (p.order.empty()) return {};
  const IndexVar& outer = p.order[0];
  int64_t extent = extentOf(a, outer);
  const int perThread = blocksPerThreadFor(workOf(a, p), threads, blocksPerThread);
  int64_t blocks = static_cast<int64_t>(threads) * perThread;
  IndexVar o0(outer.name() + "_block"), o1(outer.name() + "_in");

  // Skewed rows feeding a dense vector: split the operand's non-zeros evenly. Rows
  // cut between blocks are added atomically, once per row and block; a wider output
  // (SpMM) would pay that per column, so it keeps row blocks.
  if (p.order.size() >= 2 && plan.kind == lower::OutputKind::Dense && p.output.levelVars.size() == 1) {
    for (const auto& in : p.inputs) {
      const auto& lv = in.levelVars;
      if (lv.size() < 2 || !(lv[0] == outer) || !(lv[1] == p.order[1])) continue;
      // The data decides (the runtime measures the bound tensor; a bare variable: 0).
      if (boundRowSkew(*in.node) < 0.5 / static_cast<double>(blocks)) continue;
      const std::string& name = in.node->tensor.name();
      IndexVar f("fused"), fp("fused_pos");
      Schedule s;
      s.fuse(outer, p.order[1], f).pos(f, fp, name).divide(fp, o0, o1, blocks)
          .parallelize(o0, CPUThread, Atomics);
      if (driver::lowers(a, s)) return s;
    }
  }
  // A sparse output filled in one pass: threads get ranges cut by work anyway, so blocks
  // of single rows cost nothing, and they let a thread that fills downward (paired
  // threads, see tessel_finish_rows) shift each few rows' entries while still in cache.
  int64_t rows = plan.singlePass && plan.kind != lower::OutputKind::Dense
                     ? 1
                     : rowsPerParallelBlock(extent, threads, perThread);
  Schedule s;
  s.split(outer, o0, o1, rows).parallelize(o0, CPUThread, NoRaces);
  if (driver::lowers(a, s)) return s;
  return {};
}

}  // namespace tessel
