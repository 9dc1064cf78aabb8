// Lowering steps the driver calls between the passes of their own files: see lower.h.
#include "lower/lower.h"

#include "format/level_format.h"
#include "lower/lower_loops.h"
#include "tessel/error.h"

namespace tessel::lower {

namespace {

/// `body`'s forall chain with its assignment replaced by `leaf`.
IndexStmt withLeaf(const IndexStmt& body, const IndexStmt& leaf) {
  if (body->kind != IndexStmtNode::Kind::Forall) return leaf;
  return forallStmt(body->loop, body->depth, withLeaf(body->body, leaf));
}

/// A temporary at a loop (precompute(e, t, at), loopfuse) runs its producer and consumer
/// once per iteration of the loops down to it, so a sparse output level must be made by
/// those loops (its pattern copied or appended there; dense levels below are located):
/// else, or for an output gathered in a workspace row, ScheduleError naming the command.
void checkOutputAboveTemporaries(const Problem& p, const OutputPlan& plan, const LoopNest& nest) {
  if (plan.kind == OutputKind::Dense) return;
  const Format& of = p.args[0].format;
  for (const IndexStmtNode* w : nest.localWheres()) {
    const LocalTemporary& t = *w->temporary;
    const std::string at = "schedule command " + t.command + ": ";
    // The producer and the consumer run once per iteration of the shared loops, so an
    // entry the output stores must be found (copied pattern) or appended there; below,
    // the consumer only locates its dense levels. A workspace row would be gathered
    // across the two nests.
    if (plan.kind == OutputKind::Workspace || plan.deferLastAppend)
      throw ScheduleError(at + "the output " + p.args[0].tensor.name() + " (" + of.str() +
                          ") is gathered in a workspace row; a temporary at a loop needs its entries made by the "
                          "loops it shares (a dense output, or sparse levels over those loops)");
    for (int k = 0; k < of.order(); k++) {
      if (levelFormat(of, k).locatable()) continue;
      const IndexVar& v = p.output.levelVars[static_cast<size_t>(k)];
      const int d = nest.firstTouching(v);
      if (d < 0 || d > t.depth)
        throw ScheduleError(at + "the output " + p.args[0].tensor.name() + " (" + of.str() + ") stores level " +
                            std::to_string(k) + " (" + v.name() + ") sparse, which the loops below " + t.at.name() +
                            " would have to find or append; fuse at " + v.name() +
                            " or below, or make that level dense");
    }
  }
}

}  // namespace

void insertWorkspace(const Problem& p, const OutputPlan& plan, LoopNest& nest) {
  checkOutputAboveTemporaries(p, plan, nest);
  if (plan.kind != OutputKind::Workspace) return;
  // The row starts at the first loop over (or restricting) a variable from the
  // workspace's depth on: every loop inside it fills one row.
  int at = static_cast<int>(nest.loops.size());
  for (size_t d = plan.workspaceDepth; d < p.order.size(); d++) at = std::min(at, nest.firstTouching(p.order[d]));
  std::vector<const IndexStmtNode*> chain = forallChain(nest.stmt);
  TESSEL_CHECK(at < static_cast<int>(chain.size()), "the workspace's loops are not a forall chain");
  const IndexVar& j = p.output.levelVars[plan.workspaceLevel];
  IndexExpr w = denseTemporary("w", p.outputType(), {j}, p.assignment);
  IndexStmt loops = at == 0 ? nest.stmt : chain[at - 1]->body;
  std::vector<IndexStmt> terms;
  for (const IndexExpr& t : plan.termLoops ? sumTerms(p.assignment.rhs) : std::vector<IndexExpr>{p.assignment.rhs})
    terms.push_back(withLeaf(loops, assignStmt(w, t, true)));
  Loop gather;
  gather.var = gather.of = j;
  IndexStmt consumer = forallStmt(gather, -1, assignStmt(p.assignment.lhs, w, false));
  IndexStmt s = whereStmt(consumer, terms.size() == 1 ? terms[0] : sequenceStmt(terms), nullptr, w, nullptr);
  for (int d = at - 1; d >= 0; d--) s = forallStmt(chain[d]->loop, chain[d]->depth, s);
  nest.stmt = s;
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
  h += "concrete index notation: " + str(k.nest.stmt) + "\n";
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
