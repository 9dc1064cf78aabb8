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

/// Body of the assemble (Symbolic) or compute (Numeric) function for the scheduled nest.
ir::Stmt lowerLoops(const Problem& p, const OutputPlan& plan, const LoopNest& nest, const ParallelPlan& pp,
                    Phase phase);

}  // namespace tessel::lower
