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

/// CSR output and every bounding operand CSR over the same variables: row i of the
/// output fits at the sum of the operands' pos[i].
bool rowsHaveOffsets(const Problem& p, const OutputPlan& plan) {
  auto csr = [](const Format& f) {
    return f.order() == 2 && f.level(0) == LevelKind::Dense && f.level(1) == LevelKind::Compressed;
  };
  if (!csr(p.args[0].format)) return false;
  for (auto [a, level] : plan.boundBy)
    if (level != 1 || !csr(p.args[p.inputs[a].arg].format) || p.inputs[a].levelVars != p.output.levelVars)
      return false;
  return true;
}

/// precompute(j): gather the output's level of j in a dense workspace.
void forceWorkspace(const Problem& p, OutputPlan& plan, const LoopNest& nest) {
  const IndexVar& j = *nest.precompute;
  const Format& of = p.args[0].format;
  const auto& ov = p.output.levelVars;
  std::string cmd = "schedule command precompute(" + j.name() + "): ";
  int m = of.order();
  if (m == 0 || !(ov[m - 1] == j))
    throw ScheduleError(cmd + "a workspace holds the last level of the output, and " + j.name() +
                        " is not the variable of " + p.args[0].tensor->name + "'s last level");
  if (of.level(m - 1) != LevelKind::Compressed)
    throw ScheduleError(cmd + p.args[0].tensor->name + "'s last level is " +
                        (of.level(m - 1) == LevelKind::Dense ? "dense, which needs no workspace" : "not compressed"));
  if (plan.kind == OutputKind::Workspace) return;
  for (int k = 0; k < m - 1; k++)
    if (of.level(k) != LevelKind::Dense && p.depthOf(ov[k]) > p.depthOf(j))
      throw ScheduleError(cmd + "the output's upper levels must be iterated before " + j.name());
  int parentDepth = -1;
  for (int k = 0; k < m - 1; k++) parentDepth = std::max(parentDepth, p.depthOf(ov[k]));
  if (parentDepth > p.depthOf(j))
    throw ScheduleError(cmd + "the output's upper levels must be iterated before " + j.name());
  plan.kind = OutputKind::Workspace;
  plan.termLoops = sumTerms(p.assignment.rhs).size() > 1 && !plan.scatter;
  plan.singlePass = false;
  plan.patternSource = -1;
  plan.deferLastAppend = false;
  plan.workspaceLevel = m - 1;
  plan.workspaceDepth = parentDepth + 1;
  plan.symbolicDepth = static_cast<int>(p.order.size());
}

std::string headerComment(const LoweredKernel& k) {
  std::string h = "tessel kernel for: " + k.problem.assignment.str() + "\n";
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
  if (k.nest.precompute) forceWorkspace(k.problem, k.plan, k.nest);
  k.parallel = planParallel(k.problem, k.plan, k.nest);  // 4. races of the parallel loop
  if (k.parallel.loop >= 0 && k.plan.singlePass) {       // rows must find their own offsets
    k.plan.rowOffsets = rowsHaveOffsets(k.problem, k.plan);
    k.plan.singlePass = k.plan.rowOffsets;
  }
  k.concrete = concreteNotation(k.problem, k.plan, k.nest);  // 5. concrete index notation
  ir::Function assemble{"tessel_assemble", "Symbolic phase: allocate the output and build its pattern.",
                        lowerLoops(k.problem, k.plan, k.nest, k.parallel, Phase::Symbolic)};  // 6. assemble
  ir::Function compute{"tessel_compute", "Numeric phase: compute the output's values.",
                       lowerLoops(k.problem, k.plan, k.nest, k.parallel, Phase::Numeric)};    // 7. compute
  k.module.functions = {assemble, compute};
  k.module.headerComment = headerComment(k);
  return k;
}

}  // namespace tessel::lower
