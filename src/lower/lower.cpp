// Lower: every pass of the single-node pipeline, in order.
#include "lower/lower.h"

#include "lower/lower_loops.h"
#include "notation/concrete_notation.h"

namespace tessel::lower {

namespace {

/// The forall nest in loop order; a sparse output gathered in a workspace becomes
/// where(forall(j, A(..,j) = w(j)), forall(k, forall(j, w(j) += ...))).
ConcreteStmt concreteNotation(const Problem& p, const OutputPlan& plan) {
  const auto& order = p.order;
  if (plan.kind != OutputKind::Workspace) {
    ConcreteStmt s = concreteAssign(p.assignment.str());
    for (auto it = order.rbegin(); it != order.rend(); ++it) s = forall(*it, s);
    return s;
  }
  const IndexVar& j = p.output.levelVars[plan.workspaceLevel];
  std::string w = "w(" + j.name() + ")";
  ConcreteStmt producer = concreteAssign(w + " += " + p.assignment.rhs.str());
  for (int d = static_cast<int>(order.size()) - 1; d >= plan.workspaceDepth; d--)
    producer = forall(order[d], producer);
  std::string lhs = p.assignment.lhs.str();
  ConcreteStmt s = where(forall(j, concreteAssign(lhs + " = " + w)), producer);
  for (int d = plan.workspaceDepth - 1; d >= 0; d--) s = forall(order[d], s);
  return s;
}

std::string headerComment(const LoweredKernel& k) {
  std::string h = "tessel kernel for: " + k.problem.assignment.str() + "\n";
  for (size_t a = 0; a < k.problem.args.size(); a++) {
    const TensorArg& t = k.problem.args[a];
    h += "  tensors[" + std::to_string(a) + "] = " + t.tensor->name + " : " +
         datatypeName(t.tensor->type) + ", format " + (t.format.str().empty() ? "(scalar)" : t.format.str()) +
         (t.isOutput ? " (output)" : "") + (t.snapshotOfOutput ? " (output before +=)" : "") + "\n";
  }
  h += "concrete index notation: " + k.concrete + "\n";
  h += "output: " + k.plan.describe() + "\n";
  for (auto& n : k.problem.notes) h += "note: " + n + "\n";
  return h;
}

}  // namespace

LoweredKernel lower(const Assignment& a) {
  LoweredKernel k;
  k.problem = analyze(a);                          // 1. check, argument slots, loop order
  k.plan = planOutput(k.problem);                  // 2. how the output is assembled
  k.concrete = str(concreteNotation(k.problem, k.plan));  // 3. concrete index notation
  ir::Function assemble{"tessel_assemble", "Symbolic phase: allocate the output and build its pattern.",
                        lowerLoops(k.problem, k.plan, Phase::Symbolic)};  // 4. assemble
  ir::Function compute{"tessel_compute", "Numeric phase: compute the output's values.",
                       lowerLoops(k.problem, k.plan, Phase::Numeric)};    // 5. compute
  k.module.functions = {assemble, compute};
  k.module.headerComment = headerComment(k);
  return k;
}

}  // namespace tessel::lower
