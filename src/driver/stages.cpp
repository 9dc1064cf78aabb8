// The stages of a kernel: see stages.h.
#include "driver/stages.h"

#include "runtime/kernel_stages.h"
#include "schedule/precompute_expr.h"

namespace tessel::driver {

namespace {

/// Temporaries for a run: one from the last run (`kept`, consumed in order) when it
/// fits, else a new one. For compiling (`kept` null): without arrays.
TensorBase temporaryLike(const std::vector<TensorBase>* kept, size_t k, const std::string& name, Datatype type,
                         const std::vector<int64_t>& dims, const Format& format) {
  if (!kept) return arraylessTensor(name, type, dims, format);
  if (k < kept->size()) {
    const TensorBase& t = (*kept)[k];
    if (t.name() == name && t.datatype() == type && t.dims() == dims && t.format() == format) return t;
  }
  return TensorBase(name, type, dims, format);
}

}  // namespace

Stages splitStages(const Assignment& a, const Schedule& schedule, const std::vector<TensorBase>* kept) {
  Stages st;
  Assignment rest = a;
  Schedule own;
  for (const ScheduleCommand& c : schedule.commands()) {
    if (!precomputesExpr(c)) {
      own.add(c);
      continue;
    }
    auto [producer, consumer] = splitPrecompute(rest, c, [&](const PrecomputeTemporary& p) {
      return temporaryLike(kept, st.temporaries.size(), p.name, p.type, p.dims,
                           DenseFormat(static_cast<int>(p.dims.size())));
    });
    TensorBase t(producer.lhsNode().tensor);
    st.assignments.push_back(producer);
    st.schedules.push_back(defaultParallelSchedule(producer, 2));
    st.what.push_back("the precomputed sub-expression, " + producer.str());
    st.temporaries.push_back(t);
    rest = consumer;
  }
  if (!accumulatesSum(rest)) {
    st.assignments.push_back(rest);
    st.schedules.push_back(own);
    st.what.push_back(rest.str());
    return st;
  }
  const ExprNode& lhs = rest.lhsNode();
  TensorBase out(lhs.tensor);
  // The temporary takes A's name: a schedule's error about the sum's output then names A.
  TensorBase partial = temporaryLike(kept, st.temporaries.size(), out.name(), out.datatype(), out.dims(), out.format());
  Assignment sum{Access(partial, lhs.vars), rest.rhs, false};
  Assignment add{Access(out, lhs.vars), Access(partial, lhs.vars), true};
  st.assignments.insert(st.assignments.end(), {sum, add});
  st.schedules.insert(st.schedules.end(), {own, defaultParallelSchedule(add, 2)});
  st.what.insert(st.what.end(), {"the sum into a temporary, " + sum.str(), "adding it in, " + rest.lhs.str() + " += (the sum)"});
  st.temporaries.push_back(partial);
  return st;
}

}  // namespace tessel::driver
