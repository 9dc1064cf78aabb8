// Race analysis of the parallel loop (see parallel_plan.h).
#include "lower/parallel_plan.h"

#include <algorithm>

#include "format/level_format.h"
#include "tessel/error.h"

namespace tessel::lower {

namespace {

bool anyReduction(const Problem& p, const std::vector<IndexVar>& vs) {
  for (const IndexVar& v : vs)
    if (!p.isOutputVar(v)) return true;
  return false;
}

/// CSR output and every bounding operand CSR over the same variables: row i of the
/// output fits at the sum of the operands' pos[i].
bool rowsHaveOffsets(const Problem& p, const OutputPlan& plan) {
  auto csr = [](const Format& f) {
    return f.order() == 2 && isDenseOverCompressed(f);
  };
  if (!csr(p.args[0].format)) return false;
  for (auto [a, level] : plan.boundBy)
    if (level != 1 || !csr(p.args[p.inputs[a].arg].format) || p.inputs[a].levelVars != p.output.levelVars)
      return false;
  return true;
}

/// A dense output whose every entry the loops assign once: nothing accumulates (no
/// reduction loop, split or parallel, encloses its variables -- this includes position
/// blocks of fused rows, which would skip empty rows), and each of its variables runs
/// over its whole extent: every operand indexed by it is dense there.
bool assignsEveryEntry(const Problem& p, const OutputPlan& plan) {
  // A tested mask (valued, complemented) skips entries: they must hold the zero.
  return plan.kind == OutputKind::Dense && !plan.scatter && !sparseAtOutputVars(p) && !p.anyMaskTested();
}

/// See OutputPlan::zeroSlices. Only blocks of the first level's variable v enclose the
/// loop binding v (no reduction or other output variable revisits a slice; a reduction
/// split with per-thread copies runs inside, and its copies are added in afterwards),
/// and that loop meets every coordinate of v (no operand stores v sparsely).
bool zeroesSlicesInCompute(const Problem& p, const OutputPlan& plan, const LoopNest& nest) {
  const auto& ov = p.output.levelVars;
  if (plan.kind != OutputKind::Dense || plan.inPlace || plan.assignsAll || ov.empty()) return false;
  if (p.anyMaskTested()) return false;  // a slice is zeroed inside the mask's test: skipped ones never
  const int first = nest.coordLoopOf(ov[0]);
  if (first < 0) return false;
  for (int d = 0; d < first; d++)
    for (const IndexVar& v : nest.loops[d].touches())
      if (!(v == ov[0])) return false;
  return !sparseAt(p, ov[0]);
}

ParallelPlan planRaces(const Problem& p, OutputPlan& plan, const LoopNest& nest) {
  ParallelPlan pp;
  const std::string& out = p.args[0].tensor.name();
  const Format& of = p.args[0].format;
  // A loop over (part of) a reduction placed outside the output's last variable
  // revisits output entries: values accumulate. Coordinate loops were accounted for by
  // planOutput (plan.scatter); blocks of a split are new here.
  int lastOut = -1, lastParent = -1;
  const auto& ov = p.output.levelVars;
  for (size_t k = 0; k < ov.size(); k++) {
    lastOut = std::max(lastOut, nest.coordLoopOf(ov[k]));
    if (k + 1 < ov.size()) lastParent = std::max(lastParent, nest.coordLoopOf(ov[k]));
  }
  bool appends = plan.kind == OutputKind::Append || plan.kind == OutputKind::Workspace;
  int limit = plan.kind == OutputKind::Workspace ? lastParent : lastOut;
  bool accumulate = false;
  for (int d = 0; d < limit; d++) {
    const Loop& l = nest.loops[d];
    if (l.kind == Loop::Kind::Chunk && (anyReduction(p, l.touches()) || l.splitsRuns)) accumulate = true;
  }
  if (accumulate && appends)
    throw ScheduleError("schedule " + nest.schedule + ": a block loop over the reduction runs outside " +
                        out + "'s variables, so entries of " + out + " (" + of.str() +
                        ") would be appended more than once; keep reductions inside, or make " + out + " dense");
  plan.scatter = plan.scatter || accumulate;

  pp.loop = nest.parallelLoop();
  if (pp.loop < 0) {
    plan.growRows = plan.kind == OutputKind::Workspace && upperLevelsDense(of) &&
                    plan.workspaceLevel == of.order() - 1 && rowsInStorageOrder(p);
    return pp;
  }
  const Loop& l = nest.loops[pp.loop];
  auto fail = [&](const std::string& why) { throw ScheduleError("schedule command " + l.parallelCommand + ": " + why); };
  std::vector<IndexVar> t = l.touches();
  bool reduction = anyReduction(p, t) || l.splitsRuns;
  if (appends) {
    int sparseChains = 0;
    for (int k = 0; k < of.order(); k++)
      sparseChains += levelFormat(of, k).hasPosArray();
    bool overFirst = of.order() > 0 && levelFormat(of, 0).full() && levelFormat(of, 0).locatable() && t.size() == 1 &&
                     t[0] == p.output.levelVars[0];
    if (!overFirst || sparseChains > 1)
      fail(out + " (" + of.str() + ") is assembled by appending entries in order; a parallel loop "
           "must run over its first level, which must be dense (variable " +
           (of.order() ? p.output.levelVars[0].name() : std::string("-")) +
           "), with one compressed level below (e.g. CSR)");
    pp.privateWorkspace = plan.kind == OutputKind::Workspace;
    // Workspace rows in one pass: each thread appends its contiguous range of blocks to
    // its own growing arrays, joined in order after the loop (CSR, a block loop).
    plan.growRows = plan.kind == OutputKind::Workspace && of.order() == 2 && plan.workspaceLevel == 1 &&
                    l.kind == Loop::Kind::Chunk && !l.overPositions && rowsInStorageOrder(p);
    // One pass needs a global append counter, unless rows find their own offsets.
    plan.rowOffsets = plan.singlePass && rowsHaveOffsets(p, plan);
    plan.singlePass = plan.rowOffsets;
    return pp;
  }
  if (!reduction) return pp;  // distinct iterations write distinct output entries
  std::string reds;
  for (const IndexVar& v : t)
    if (!p.isOutputVar(v)) reds += (reds.empty() ? "" : ", ") + v.name();
  if (reds.empty()) reds = t[0].name() + " (blocks of positions cut runs of equal coordinates)";
  switch (l.race) {
    case OutputRace::NoRaces:
      fail("its iterations split the reduction over " + reds + ", so they would race on " + out +
           "; use atomics or temporary (or ignore_races)");
    case OutputRace::IgnoreRaces: break;
    case OutputRace::Atomics:
    case OutputRace::Temporary:
      if (plan.kind != OutputKind::Dense)
        fail(std::string(l.race == OutputRace::Atomics ? "atomics" : "temporary") + " need a dense output, and " +
             out + " is " + of.str());
      // An atomic update is `+=`; other semirings' adds combine per-thread copies instead.
      if (l.race == OutputRace::Atomics && !p.assignment.semiring.isPlusTimes())
        fail("atomics update " + out + " with +=, but semiring " + p.assignment.semiring.name + " adds with " +
             p.assignment.semiring.add.name + "; use temporary");
      pp.atomics = l.race == OutputRace::Atomics;
      pp.temporary = l.race == OutputRace::Temporary;
      break;
  }
  plan.scatter = true;  // several iterations add into one entry
  return pp;
}

}  // namespace

ParallelPlan planParallel(const Problem& p, OutputPlan& plan, const LoopNest& nest) {
  ParallelPlan pp = planRaces(p, plan, nest);
  plan.assignsAll = assignsEveryEntry(p, plan);
  plan.zeroSlices = zeroesSlicesInCompute(p, plan, nest);
  return pp;
}

}  // namespace tessel::lower
