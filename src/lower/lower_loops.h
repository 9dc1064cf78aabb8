// Lowering concrete index notation (a forall nest in the problem's loop order) to IR
// loops: co-iteration from merge lattices, position resolution per level, and the
// output actions of the symbolic (assemble) or numeric (compute) phase.
#pragma once

#include "ir/ir.h"
#include "lower/loop_nest.h"
#include "lower/output_plan.h"
#include "lower/parallel_plan.h"
#include "lower/problem.h"

namespace tessel::lower {

enum class Phase { Symbolic, Numeric };

/// omp_get_max_threads() and omp_get_thread_num(), as int64 expressions.
inline ir::Expr maxThreads() {
  return ir::cast(ir::i64(), ir::call("omp_get_max_threads", {}, ir::scalar(Datatype::Int32)));
}
inline ir::Expr threadNum() {
  return ir::cast(ir::i64(), ir::call("omp_get_thread_num", {}, ir::scalar(Datatype::Int32)));
}

/// Body of the assemble (Symbolic) or compute (Numeric) function for the scheduled nest.
ir::Stmt lowerLoops(const Problem& p, const OutputPlan& plan, const LoopNest& nest, const ParallelPlan& pp,
                    Phase phase);

}  // namespace tessel::lower
