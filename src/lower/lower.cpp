// Lowering steps the driver calls between the passes of their own files: see lower.h.
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

}  // namespace

std::string concreteNotation(const Problem& p, const OutputPlan& plan, const LoopNest& nest) {
  if (!nest.schedule.empty() || plan.kind != OutputKind::Workspace) return nest.str(p.assignment.str());
  return str(workspaceNotation(p, plan));
}

std::string headerComment(const LoweredKernel& k) {
  std::string h = "tessel kernel for: " + k.problem.stated.str() + "\n";
  for (size_t a = 0; a < k.problem.args.size(); a++) {
    const TensorArg& t = k.problem.args[a];
    h += "  tensors[" + std::to_string(a) + "] = " + t.tensor.name() + " : " +
         datatypeName(t.tensor.datatype()) + ", format " + (t.format.str().empty() ? "(scalar)" : t.format.str()) +
         (t.isOutput ? " (output)" : "") + (t.snapshotOfOutput ? " (output before +=)" : "") + "\n";
  }
  if (!k.nest.schedule.empty()) h += "schedule: " + k.nest.schedule + "\n";
  h += "concrete index notation: " + k.concrete + "\n";
  h += "output: " + k.plan.describe() + "\n";
  for (auto& n : k.problem.notes) h += "note: " + n + "\n";
  return h;
}

OutputPlan planScheduledOutput(const Problem& p, const Schedule& schedule) {
  try {
    return planOutput(p);
  } catch (const FormatError& e) {
    if (schedule.empty()) throw;
    throw ScheduleError("schedule " + schedule.str() + ": " + e.what());
  }
}

void applyWorkspace(const Problem& p, OutputPlan& plan, const LoopNest& nest) {
  if (!nest.precompute) return;
  try {
    gatherInWorkspace(p, plan, *nest.precompute);
  } catch (const FormatError& e) {
    throw ScheduleError("schedule command precompute(" + nest.precompute->name() + "): " + e.what());
  }
}

}  // namespace tessel::lower
