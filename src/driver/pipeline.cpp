// The pipeline: every pass from an assignment and a schedule to a loaded kernel.
#include "driver/pipeline.h"

#include "codegen/backend.h"
#include "driver/stages.h"
#include "ir/print.h"
#include "lower/lower_loops.h"
#include "lower/semiring_ir.h"
#include "tessel/error.h"

namespace tessel::driver {

namespace {

// What each pass produced, printed for a PassObserver.

std::string problemText(const lower::Problem& p) {
  std::string s = p.assignment.str() + "\n";
  for (size_t a = 0; a < p.args.size(); a++) {
    const lower::TensorArg& t = p.args[a];
    s += "  tensors[" + std::to_string(a) + "] = " + t.tensor.name() + " : " + datatypeName(t.tensor.datatype()) +
         ", format " + (t.format.str().empty() ? "(scalar)" : t.format.str()) + (t.isOutput ? " (output)" : "") +
         (t.snapshotOfOutput ? " (output before +=)" : "") + "\n";
  }
  s += "loop order:";
  for (const IndexVar& v : p.order) s += " " + v.name();
  s += "\n";
  for (const std::string& n : p.notes) s += "note: " + n + "\n";
  return s;
}

std::string parallelText(const lower::ParallelPlan& pp, const lower::LoopNest& nest) {
  if (pp.loop < 0) return "no parallel loop\n";
  return "parallel loop: " + nest.loops[pp.loop].var.name() + (pp.atomics ? ", atomic updates" : "") +
         (pp.temporary ? ", a dense output copy per thread" : "") +
         (pp.privateWorkspace ? ", a workspace per thread" : "") + "\n";
}

std::string stagesText(const Stages& st) {
  std::string s;
  for (size_t k = 0; k < st.assignments.size(); k++)
    s += "stage " + std::to_string(k + 1) + ": " + st.what[k] +
         (st.schedules[k].empty() ? "" : "\n  schedule: " + st.schedules[k].str()) + "\n";
  return s;
}

}  // namespace

CompiledStages compilePipeline(const Assignment& a, const Schedule& schedule, const PipelineOptions& opt) {
  using Until = PipelineOptions::Until;
  std::string suffix;  // names the stage in pass names when there are several
  // `text` is only called (the program only printed) when someone observes.
  auto observe = [&](const std::string& pass, const auto& text) {
    if (opt.observe) opt.observe(pass + suffix, text());
  };

  // 0. stages: precomputed sub-expressions, `A += sum` as T = sum then A += T
  Stages st;
  if (opt.splitStages) {
    st = splitStages(a, schedule);
  } else {
    st.assignments = {a};
    st.schedules = {schedule};
    st.what = {a.str()};
  }
  observe("after splitStages", [&] { return stagesText(st); });

  CompiledStages out;
  size_t n = st.assignments.size();
  for (size_t k = 0; k < n; k++) {
    if (n > 1) suffix = " [stage " + std::to_string(k + 1) + " of " + std::to_string(n) + "]";
    const Schedule& sched = st.schedules[k];
    CompiledStage cs;
    lower::LoweredKernel& lk = cs.lowered;
    // 1. check, argument slots, loop order (iteration graph)
    lk.problem = lower::analyze(st.assignments[k]);
    observe("after analyze (loop order)", [&] { return problemText(lk.problem); });
    // 2. the schedule's rewrites of the loop nest
    lk.nest = lower::scheduleLoops(lk.problem, sched);
    observe("after schedule", [&] { return lower::str(lk.nest.stmt) + "\n"; });
    // 3. how the output is assembled
    lk.plan = lower::planScheduledOutput(lk.problem, sched);
    observe("after planOutput", [&] { return lk.plan.describe() + "\n"; });
    // 4. precompute(j): the output gathered in a workspace by hand
    lower::applyWorkspace(lk.problem, lk.plan, lk.nest);
    observe("after workspace", [&] { return lk.plan.describe() + "\n"; });
    // 5. races of the parallel loop
    lk.parallel = lower::planParallel(lk.problem, lk.plan, lk.nest);
    observe("after planParallel", [&] { return parallelText(lk.parallel, lk.nest); });
    // 6. a workspace output's row: a where in the concrete index notation
    lower::insertWorkspace(lk.problem, lk.plan, lk.nest);
    observe("after insertWorkspace", [&] { return lower::str(lk.nest.stmt) + "\n"; });
    // 7. IR: assemble (symbolic phase) and compute (numeric phase)
    ir::Function assemble{"tessel_assemble", "Symbolic phase: allocate the output and build its pattern.",
                          lower::lowerLoops(lk.problem, lk.plan, lk.nest, lk.parallel, lower::Phase::Symbolic)};
    observe("after lowerLoops (assemble)", [&] { return ir::print(assemble); });
    ir::Function compute{"tessel_compute", "Numeric phase: compute the output's values.",
                         lower::lowerLoops(lk.problem, lk.plan, lk.nest, lk.parallel, lower::Phase::Numeric)};
    observe("after lowerLoops (compute)", [&] { return ir::print(compute); });
    // 8. IR cleanups of compute
    auto printCompute = [&] { return ir::print(compute); };
    compute.body = ir::simplify(compute.body);
    observe("after simplify", printCompute);
    compute.body = ir::collapsePositionLoops(compute.body);  // one loop over fibers
    observe("after collapsePositionLoops", printCompute);
    compute.body = ir::unrollAndJam(compute.body);  // one row update per 4 terms
    observe("after unrollAndJam", printCompute);
    compute.body = ir::splitReductionChains(compute.body);  // latency-bound sums
    observe("after splitReductionChains", printCompute);
    compute.body = ir::unswitchLoopFlags(compute.body);  // no per-row flag tests
    observe("after unswitchLoopFlags", printCompute);
    compute.body = ir::simplify(compute.body);
    observe("after simplify (again)", printCompute);
    lk.module.functions = {assemble, compute};
    lk.module.headerComment = lower::headerComment(lk);
    lk.module.helpers = lower::customOpDefinitions(lk.problem.assignment);
    if (opt.until != Until::Lowered) {
      // 9. the C backend
      std::string head;
      if (n > 1)
        head = "/* ---- stage " + std::to_string(k + 1) + " of " + std::to_string(n) + ": " + st.what[k] + " */\n";
      cs.source = head + codegen::backendNamed("c").emit(lk.module);
      observe("C (backend)", [&] { return cs.source; });
      out.source += cs.source;
    }
    if (opt.until == Until::Loaded) {
      // 10. JIT: compile with the system compiler (or take from the cache) and load
      cs.module = jitCompile(cs.source, opt.jit);
      observe("after JIT compile", [&] {
        return cs.module->path() + (cs.module->cacheHit() ? " (from the cache)" : "") + "\n";
      });
      // 11. the entry points
      cs.assemble = reinterpret_cast<tessel_kernel_fn>(cs.module->symbol("tessel_assemble"));
      cs.compute = reinterpret_cast<tessel_kernel_fn>(cs.module->symbol("tessel_compute"));
      observe("after symbol lookup", [] { return std::string("tessel_assemble, tessel_compute\n"); });
    }
    out.stages.push_back(std::move(cs));
  }
  return out;
}

lower::LoweredKernel lowerAssignment(const Assignment& a, const Schedule& schedule) {
  PipelineOptions opt;
  opt.until = PipelineOptions::Until::Lowered;
  opt.splitStages = false;
  return std::move(compilePipeline(a, schedule, opt).stages.at(0).lowered);
}

bool lowers(const Assignment& a, const Schedule& schedule) {
  try {
    lowerAssignment(a, schedule);
    return true;
  } catch (const UserError&) {
    return false;
  }
}

bool lowersStaged(const Assignment& a, const Schedule& schedule) {
  PipelineOptions opt;
  opt.until = PipelineOptions::Until::Lowered;
  try {
    compilePipeline(a, schedule, opt);
    return true;
  } catch (const UserError&) {
    return false;
  }
}

}  // namespace tessel::driver
