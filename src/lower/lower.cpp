// Lower: every pass of the single-node pipeline, in order.
#include "lower/lower.h"

#include "lower/lower_loops.h"
#include "notation/concrete_notation.h"
#include "tessel/error.h"

namespace tessel::lower {

namespace {

/// A sparse output gathered in a workspace:
/// where(forall(j, A(..,j) = w(j)), forall(k, forall(j, w(j) += ...))).
ConcreteStmt workspaceNotation(const Problem& p, const OutputPlan& plan) {
  const auto& order = p.order;
  const IndexVar& j = p.output.levelVars[plan.workspaceLevel];
  std::string w = "w(" + j.name() + ")";
  auto loops = [&](const IndexExpr& e) {
    ConcreteStmt st = concreteAssign(w + " += " + e.str());
    for (int d = static_cast<int>(order.size()) - 1; d >= plan.workspaceDepth; d--) st = forall(order[d], st);
    return st;
  };
  ConcreteStmt producer = nullptr;
  for (const IndexExpr& t : plan.termLoops ? sumTerms(p.assignment.rhs) : std::vector<IndexExpr>{p.assignment.rhs})
    producer = producer ? sequence(producer, loops(t)) : loops(t);
  std::string lhs = p.assignment.lhs.str();
  ConcreteStmt s = where(forall(j, concreteAssign(lhs + " = " + w)), producer);
  for (int d = plan.workspaceDepth - 1; d >= 0; d--) s = forall(order[d], s);
  return s;
}

/// The forall nest of the scheduled loops (with `where` for an unscheduled workspace).
std::string concreteNotation(const Problem& p, const OutputPlan& plan, const LoopNest& nest) {
  if (!nest.schedule.empty() || plan.kind != OutputKind::Workspace) return nest.str(p.assignment.str());
  return str(workspaceNotation(p, plan));
}

std::string headerComment(const LoweredKernel& k) {
  std::string h = "tessel kernel for: " + k.problem.stated.str() + "\n";
  for (size_t a = 0; a < k.problem.args.size(); a++) {
    const TensorArg& t = k.problem.args[a];
    h += "  tensors[" + std::to_string(a) + "] = " + t.tensor->name + " : " +
         datatypeName(t.tensor->type) + ", format " + (t.format.str().empty() ? "(scalar)" : t.format.str()) +
         (t.isOutput ? " (output)" : "") + (t.snapshotOfOutput ? " (output before +=)" : "") + "\n";
  }
  if (!k.nest.schedule.empty()) h += "schedule: " + k.nest.schedule + "\n";
  h += "concrete index notation: " + k.concrete + "\n";
  h += "output: " + k.plan.describe() + "\n";
  for (auto& n : k.problem.notes) h += "note: " + n + "\n";
  return h;
}

}  // namespace

LoweredKernel lower(const Assignment& a, const Schedule& schedule) {
  LoweredKernel k;
  k.problem = analyze(a);                             // 1. check, argument slots, loop order
  k.nest = scheduleLoops(k.problem, schedule);        // 2. the schedule's rewrites of the nest
  try {
    k.plan = planOutput(k.problem);                   // 3. how the output is assembled
  } catch (const FormatError& e) {
    if (schedule.empty()) throw;
    throw ScheduleError("schedule " + schedule.str() + ": " + e.what());
  }
  if (k.nest.precompute) {                           //    precompute(j): a workspace by hand
    try {
      gatherInWorkspace(k.problem, k.plan, *k.nest.precompute);
    } catch (const FormatError& e) {
      throw ScheduleError("schedule command precompute(" + k.nest.precompute->name() + "): " + e.what());
    }
  }
  k.parallel = planParallel(k.problem, k.plan, k.nest);  // 4. races of the parallel loop
  k.concrete = concreteNotation(k.problem, k.plan, k.nest);  // 5. concrete index notation
  ir::Function assemble{"tessel_assemble", "Symbolic phase: allocate the output and build its pattern.",
                        lowerLoops(k.problem, k.plan, k.nest, k.parallel, Phase::Symbolic)};  // 6. assemble
  ir::Function compute{"tessel_compute", "Numeric phase: compute the output's values.",
                       lowerLoops(k.problem, k.plan, k.nest, k.parallel, Phase::Numeric)};    // 7. compute
  compute.body = ir::collapsePositionLoops(ir::simplify(compute.body));  // 8. one loop over fibers
  compute.body = ir::unrollAndJam(compute.body);                     // 9. one row update per 4 terms
  compute.body = ir::splitReductionChains(compute.body);             // 10. latency-bound sums
  compute.body = ir::simplify(ir::unswitchLoopFlags(compute.body));  // 11. no per-row flag tests
  k.module.functions = {assemble, compute};
  k.module.headerComment = headerComment(k);
  return k;
}

}  // namespace tessel::lower
