// defaultSchedule: the schedule tessel picks when the user gives none (the tool, Python).
// A product of several tensors lowers to one perfect nest whose work is the product of
// all its loops' trip counts; SparseLNR's loopfuse at a loop v runs the shared loops once
// and below v the producer's and the consumer's loops one after the other. The cost
// model counts the multiplies of each (innermost iterations times the factors multiplied
// there; a loop over a sparse level runs its average fiber length, read from the bound
// tensor; a dense loop its extent; a temporary costs its length to zero) and fuses at the
// cheapest valid loop when that does at most 80% of the perfect nest's work. Then, for threads > 1, the outermost loop runs in parallel
// (rows in blocks), else the parallel default of defaultParallelSchedule.
#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "driver/pipeline.h"
#include "format/level_format.h"
#include "lower/loop_nest.h"
#include "lower/problem.h"
#include "lower/symbols.h"
#include "notation/products.h"
#include "runtime/tensor_stats.h"
#include "tessel/error.h"
#include "tessel/schedule.h"

namespace tessel {

namespace {

/// Estimated trips of each loop of p.order per iteration of the loops above it.
std::vector<double> tripCounts(const lower::Problem& p, const Assignment& a) {
  std::vector<double> trips;
  for (size_t d = 0; d < p.order.size(); d++) {
    const IndexVar& v = p.order[d];
    double trip = static_cast<double>(extentOf(a, v));
    for (const lower::AccessInfo& in : p.inputs) {
      const Format& f = p.args[static_cast<size_t>(in.arg)].format;
      for (size_t k = 0; k < in.levelVars.size(); k++) {
        if (!(in.levelVars[k] == v)) continue;
        if (levelFormat(f, static_cast<int>(k)).full()) continue;  // a dense loop: its extent
        std::vector<int64_t> pos = boundLevelPositions(*in.node);
        if (pos.size() <= k) continue;  // unbound: no better guess than the extent
        const double above = k == 0 ? 1.0 : static_cast<double>(std::max<int64_t>(pos[k - 1], 1));
        trip = std::min(trip, static_cast<double>(pos[k]) / above);  // a co-iteration's intersection is at most this
      }
    }
    trips.push_back(std::max(trip, 1.0));
  }
  return trips;
}

std::string number(double x) {
  std::ostringstream o;
  o.precision(3);
  o << x;
  return o.str();
}

}  // namespace

ScheduleChoice defaultSchedule(const Assignment& a, int threads) {
  ScheduleChoice choice;
  std::vector<IndexExpr> factors;
  factorsOf(a.rhs, factors);
  std::optional<lower::Problem> p;
  if (a.rhs.defined() && !a.accumulate && !a.mask.defined() && factors.size() >= 3 &&
      a.lhsNode().tensor.format().isAllDense()) {
    try {
      p = lower::analyze(a);
    } catch (const UserError&) {
      p.reset();
    }
  }
  if (p && p->order.size() >= 3) {
    const std::vector<double> trips = tripCounts(*p, a);
    // Work per innermost iteration: one multiply per factor (the perfect nest multiplies
    // all of them there; the producer its own, the consumer its own and t).
    double perfect = static_cast<double>(factors.size());
    for (double t : trips) perfect *= t;
    double best = perfect;
    int at = -1;
    for (int d = 0; d + 1 < static_cast<int>(p->order.size()); d++) {
      const std::vector<bool> mine = lower::fusionProducers(*p, p->order, d);
      std::vector<const ExprNode*> producer, consumer;
      for (size_t f = 0; f < factors.size(); f++)
        for (const ExprNode* n : lower::accessesIn(factors[f])) (mine[f] ? producer : consumer).push_back(n);
      if (producer.empty() || consumer.empty()) continue;
      auto uses = [](const std::vector<const ExprNode*>& side, const IndexVar& v) {
        for (const ExprNode* n : side)
          for (const IndexVar& x : n->vars)
            if (x == v) return true;
        return false;
      };
      double shared = 1, made = 1, used = 1, temp = 1;
      for (int e = 0; e <= d; e++) shared *= trips[static_cast<size_t>(e)];
      for (size_t e = static_cast<size_t>(d) + 1; e < p->order.size(); e++) {
        const IndexVar& v = p->order[e];
        const bool byProducer = uses(producer, v), byConsumer = uses(consumer, v);
        if (byProducer) made *= trips[e];
        if (byConsumer) used *= trips[e];
        if (byProducer && byConsumer) temp *= static_cast<double>(extentOf(a, v));
      }
      const double fused = shared * (made * static_cast<double>(producer.size()) +
                                     used * static_cast<double>(consumer.size() + 1) + temp);
      if (fused < best) {
        Schedule s;
        s.loopfuse(p->order[static_cast<size_t>(d)]);
        if (driver::lowers(a, s)) best = fused, at = d;
      }
    }
    if (at >= 0 && best * 1.25 <= perfect) {
      const IndexVar& v = p->order[static_cast<size_t>(at)];
      Schedule s;
      s.loopfuse(v);
      std::string why = "fused at " + v.name() + " (loopfuse): the cost model's estimate is " + number(best) +
                        " multiplies against the perfect nest's " + number(perfect);
      if (threads > 1) {
        Schedule par = s;
        par.parallelize(p->order[0], CPUThread, NoRaces);
        if (driver::lowers(a, par)) {
          s = par;
          why += "; rows in parallel";
        }
      }
      choice.schedule = s;
      choice.reason = why;
      return choice;
    }
  }
  choice.schedule = defaultParallelSchedule(a, threads);
  if (threads > 1 && !choice.schedule.empty()) choice.reason = "default for " + std::to_string(threads) + " threads";
  return choice;
}

}  // namespace tessel
