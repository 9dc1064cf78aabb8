// The iteration graph: which index variable must be iterated before which.
//
// A level without random access (Compressed, Singleton) can only be iterated once all
// levels above it are, so its variable must come after theirs (hard edges). Dense
// levels can be located in any order; their storage order is only a preference for
// locality (soft edges). Sparse outputs prefer their variables before reductions, so
// that entries can be appended in order.
#include <algorithm>
#include <map>
#include <set>

#include "lower/problem.h"
#include "tessel/error.h"

namespace tessel::lower {

namespace {

struct Edge {
  IndexVar from, to;
  int access;  ///< -1: output, else index into inputs
};

void levelEdges(const std::vector<IndexVar>& vs, const Format& f, int access,
                std::vector<Edge>& hard, std::vector<Edge>& soft) {
  for (int k = 0; k < f.order(); k++) {
    bool randomAccess = f.level(k) == LevelKind::Dense;
    if (randomAccess) {
      if (k > 0) soft.push_back({vs[k - 1], vs[k], access});
      continue;
    }
    for (int j = 0; j < k; j++) hard.push_back({vs[j], vs[k], access});
  }
}

std::vector<IndexVar> varsOf(const ExprNode& n, const Format& f) {
  std::vector<IndexVar> vs;
  for (int k = 0; k < f.order(); k++) vs.push_back(n.vars[f.modeOfLevel(k)]);
  return vs;
}

/// Topological order with hard edges; among ready variables, the one with the fewest
/// unsatisfied soft edges, then the earliest in `all`. Empty result: a cycle.
std::vector<IndexVar> topoOrder(const std::vector<IndexVar>& all, const std::vector<Edge>& hard,
                                const std::vector<Edge>& soft, std::set<IndexVar>* unplaced = nullptr) {
  std::vector<IndexVar> order;
  std::set<IndexVar> placed;
  while (order.size() < all.size()) {
    int best = -1, bestSoft = 0;
    for (size_t c = 0; c < all.size(); c++) {
      const IndexVar& v = all[c];
      if (placed.count(v)) continue;
      bool ready = std::all_of(hard.begin(), hard.end(), [&](const Edge& e) {
        return !(e.to == v) || e.from == v || placed.count(e.from);
      });
      if (!ready) continue;
      int unsatisfied = 0;
      for (auto& e : soft)
        if (e.to == v && !(e.from == v) && !placed.count(e.from)) unsatisfied++;
      if (best < 0 || unsatisfied < bestSoft) best = static_cast<int>(c), bestSoft = unsatisfied;
    }
    if (best < 0) {
      if (unplaced)
        for (auto& v : all)
          if (!placed.count(v)) unplaced->insert(v);
      return {};
    }
    order.push_back(all[best]);
    placed.insert(all[best]);
  }
  return order;
}

std::string describeNeeds(const Problem& p, int access, const std::vector<Edge>& hard,
                          const std::set<IndexVar>& stuck) {
  const ExprNode* n = access < 0 ? p.output.node : p.inputs[access].node;
  const Format& f = p.args[access < 0 ? 0 : p.inputs[access].arg].format;
  std::string s = n->tensor->name + " (" + f.str() + ") needs";
  bool first = true;
  for (auto& e : hard)
    if (e.access == access && stuck.count(e.from) && stuck.count(e.to)) {
      s += std::string(first ? " " : ", ") + e.from.name() + " before " + e.to.name();
      first = false;
    }
  return s;
}

}  // namespace

std::vector<IndexVar> chooseLoopOrder(Problem& p, bool allowTranspose) {
  std::vector<IndexVar> all = freeVars(p.assignment);
  for (auto& v : reductionVars(p.assignment)) all.push_back(v);

  auto build = [&](int skipAccess, std::vector<Edge>& hard, std::vector<Edge>& soft) {
    hard.clear();
    soft.clear();
    levelEdges(varsOf(*p.output.node, p.args[0].format), p.args[0].format, -1, hard, soft);
    for (size_t a = 0; a < p.inputs.size(); a++) {
      if (static_cast<int>(a) == skipAccess) continue;
      const Format& f = p.args[p.inputs[a].arg].format;
      levelEdges(varsOf(*p.inputs[a].node, f), f, static_cast<int>(a), hard, soft);
    }
    if (!p.args[0].format.isAllDense()) {
      auto reds = reductionVars(p.assignment);
      for (auto& o : p.output.node->vars)
        for (auto& r : reds) soft.push_back({o, r, -1});
    }
  };

  std::vector<Edge> hard, soft;
  build(-2, hard, soft);
  std::set<IndexVar> stuck;
  std::vector<IndexVar> order = topoOrder(all, hard, soft, &stuck);
  if (!order.empty() || all.empty()) return order;

  // The formats conflict: name the tensors whose needs form the cycle.
  std::string msg = "no loop order is consistent with the formats of the operands:";
  std::set<int> involved;
  for (auto& e : hard)
    if (stuck.count(e.from) && stuck.count(e.to)) involved.insert(e.access);
  bool firstLine = true;
  for (int a : involved) {
    msg += std::string(firstLine ? " " : "; ") + describeNeeds(p, a, hard, stuck);
    firstLine = false;
  }

  if (allowTranspose) {
    // Transposing one input (last first) may make the graph acyclic.
    for (int a = static_cast<int>(p.inputs.size()) - 1; a >= 0; a--) {
      std::vector<Edge> h2, s2;
      build(a, h2, s2);
      std::vector<IndexVar> o2 = topoOrder(all, h2, s2);
      if (o2.empty()) continue;
      AccessInfo& in = p.inputs[a];
      const TensorArg& old = p.args[in.arg];
      std::vector<int> modes(in.node->vars.size());
      for (size_t m = 0; m < modes.size(); m++) modes[m] = static_cast<int>(m);
      auto depth = [&](int m) {
        return std::find(o2.begin(), o2.end(), in.node->vars[m]) - o2.begin();
      };
      std::stable_sort(modes.begin(), modes.end(), [&](int x, int y) { return depth(x) < depth(y); });
      TensorArg t = old;
      t.format = Format(old.format.levels(), modes, old.format.posWidth(), old.format.crdWidth());
      t.cname = old.cname + "_t";
      p.args.push_back(t);
      in.arg = static_cast<int>(p.args.size()) - 1;
      p.notes.push_back(msg + ". tessel transposes " + old.tensor->name + " from " +
                        old.format.str() + " to " + t.format.str() + " before each run.");
      return o2;
    }
  }
  throw FormatError(msg);
}

}  // namespace tessel::lower
