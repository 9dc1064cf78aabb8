// The stages of a kernel: see stages.h.
#include "driver/stages.h"

#include "schedule/precompute_expr.h"
#include "schedule/reduction_stages.h"

namespace tessel::driver {

namespace {

/// Temporaries for a run: one from the last run (`kept`, consumed in order) when it
/// fits, else a new one.
TensorVar temporaryLike(const std::vector<TensorVar>* kept, size_t k, const std::string& name, Datatype type,
                        const std::vector<int64_t>& dims, const Format& format) {
  if (kept && k < kept->size()) {
    const TensorVar& t = (*kept)[k];
    if (t.name() == name && t.datatype() == type && t.dims() == dims && t.format() == format) return t;
  }
  return TensorVar(name, type, dims, format);
}

}  // namespace

Stages splitStages(const Assignment& a, const Schedule& schedule, const std::vector<TensorVar>* kept,
                   StageSchedules pick) {
  Stages st;
  auto maker = [&](const PrecomputeTemporary& p) {  // temporaries in order of creation
    st.temporaries.push_back(temporaryLike(kept, st.temporaries.size(), p.name, p.type, p.dims, p.format));
    return st.temporaries.back();
  };
  // A stage the user's schedule does not apply to runs on blocks of rows (a parallel
  // schedule runs on any thread count).
  auto addStage = [&](const Assignment& x, Schedule s, const std::string& what) {
    st.assignments.push_back(x);
    st.schedules.push_back(std::move(s));
    st.what.push_back(what);
  };
  auto blocksOfRows = [&](const Assignment& x) {
    return pick == StageSchedules::Choose ? defaultParallelSchedule(x, 2) : Schedule();
  };
  Assignment rest = a;
  Schedule own;
  for (const ScheduleCommand& c : schedule.commands()) {
    if (!precomputesExpr(c)) {
      own.add(c);
      continue;
    }
    auto [producer, consumer] = splitPrecompute(rest, c, maker);
    for (const Assignment& x : splitReductions(producer, maker))
      addStage(x, blocksOfRows(x), "the precomputed sub-expression, " + x.str());
    rest = consumer;
  }
  // The einsum convention: sums inside the expression are computed first (temporaries).
  std::vector<Assignment> parts = splitReductions(rest, maker);
  size_t mine = scheduledStage(parts, rest, own);
  for (size_t k = 0; k + 1 < parts.size(); k++)
    addStage(parts[k], k == mine ? own : blocksOfRows(parts[k]), "an inner sum, " + parts[k].str());
  rest = parts.back();
  if (mine + 1 < parts.size()) own = Schedule();
  if (!accumulatesSum(rest)) {
    addStage(rest, own, rest.str());
    return st;
  }
  const ExprNode& lhs = rest.lhsNode();
  const TensorVar& out = lhs.tensor;
  // The temporary takes A's name: a schedule's error about the sum's output then names A.
  TensorVar partial = temporaryLike(kept, st.temporaries.size(), out.name(), out.datatype(), out.dims(), out.format());
  // Masked, the sum is computed only where the mask is true (T<M> = e), then added in
  // under the user's mask (merge or replace).
  Assignment sum{Access(partial, lhs.vars), rest.rhs, false, rest.semiring, rest.mask};
  sum.mask.replace = false;
  Assignment add{accessLike(lhs, lhs.vars), Access(partial, lhs.vars), true, rest.semiring, rest.mask};
  addStage(sum, own, "the sum into a temporary, " + sum.str());
  addStage(add, blocksOfRows(add), "adding it in, " + rest.lhs.str() + " += (the sum)");
  st.temporaries.push_back(partial);
  return st;
}

}  // namespace tessel::driver
