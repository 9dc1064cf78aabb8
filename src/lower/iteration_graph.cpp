// The iteration graph: which index variable must be iterated before which.
//
// A level without random access (Compressed, Singleton) can only be iterated once all
// levels above it are, so its variable must come after theirs (hard edges). Dense
// levels can be located in any order; their storage order is only a preference for
// locality (soft edges). Sparse outputs prefer their appended levels' variables before
// reductions, so that entries can be appended in order.
#include <algorithm>
#include <map>
#include <set>

#include "format/level_format.h"
#include "lower/problem.h"
#include "tessel/error.h"

namespace tessel::lower {

namespace {

struct Edge {
  IndexVar from, to;
  int access;  ///< -1: output, else index into inputs
};

/// A level without random access (Compressed, Singleton) needs every level above it
/// bound first (hard edges); a dense level only prefers its storage order (soft edge).
/// The output (access -1) is appended in order, so below its first level without random
/// access its dense levels need the levels above bound first too: their positions hang
/// off the appended position above.
void levelEdges(const std::vector<IndexVar>& vs, const Format& f, int access,
                std::vector<Edge>& hard, std::vector<Edge>& soft) {
  bool appended = false;
  for (int k = 0; k < f.order(); k++) {
    // Inputs are located, the output inserted into (Dense, Bitmap); others go in order.
    const tessel::LevelFormat& lf = levelFormat(f, k);
    bool randomAccess = access < 0 ? lf.supportsInsert() : lf.locatable();
    appended = appended || (!randomAccess && access < 0);
    if (randomAccess && !appended) {
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
  std::string s = n->tensor.name() + " (" + f.str() + ") needs";
  bool first = true;
  for (auto& e : hard)
    if (e.access == access && stuck.count(e.from) && stuck.count(e.to)) {
      s += std::string(first ? " " : ", ") + e.from.name() + " before " + e.to.name();
      first = false;
    }
  return s;
}

}  // namespace

namespace {

/// Mode order that makes access `in` iterable in loop order `order`.
std::vector<int> modesInLoopOrder(const AccessInfo& in, const std::vector<IndexVar>& order) {
  std::vector<int> modes(in.node->vars.size());
  for (size_t m = 0; m < modes.size(); m++) modes[m] = static_cast<int>(m);
  auto depth = [&](int m) { return std::find(order.begin(), order.end(), in.node->vars[m]) - order.begin(); };
  std::stable_sort(modes.begin(), modes.end(), [&](int x, int y) { return depth(x) < depth(y); });
  return modes;
}

/// True if loop order `o` satisfies every hard edge of input access `a`.
bool respects(const std::vector<Edge>& hard, int a, const std::vector<IndexVar>& o) {
  auto at = [&](const IndexVar& v) { return std::find(o.begin(), o.end(), v) - o.begin(); };
  for (auto& e : hard)
    if (e.access == a && at(e.from) > at(e.to)) return false;
  return true;
}

}  // namespace

std::vector<IndexVar> chooseLoopOrder(Problem& p, bool allowTranspose, bool outputVarsFirst) {
  std::vector<IndexVar> all = freeVars(p.assignment);
  auto reds = reductionVars(p.assignment);
  for (auto& v : reds) all.push_back(v);

  // skip: -2 keeps every input's edges, -1 drops all inputs' hard edges, a >= 0 drops input a's.
  auto build = [&](int skip, std::vector<Edge>& hard, std::vector<Edge>& soft) {
    hard.clear();
    soft.clear();
    levelEdges(varsOf(*p.output.node, p.args[0].format), p.args[0].format, -1, hard, soft);
    for (size_t a = 0; a < p.inputs.size(); a++) {
      // A complemented mask, or one read by row, is tested once its variables are
      // bound, never iterated.
      if (p.inputs[a].node->mask.complement || p.maskByRow(static_cast<int>(a))) continue;
      const Format& f = p.args[p.inputs[a].arg].format;
      std::vector<Edge> h;
      levelEdges(varsOf(*p.inputs[a].node, f), f, static_cast<int>(a), h, soft);
      if (skip == -2 || (skip >= 0 && skip != static_cast<int>(a))) hard.insert(hard.end(), h.begin(), h.end());
    }
    const auto& ovars = p.output.node->vars;
    if (p.maskForm == MaskForm::Pull) {  // a masked reduction by dot products
      for (auto& o : ovars)
        for (auto& r : reds) hard.push_back({o, r, -1});
    } else if (p.maskForm == MaskForm::Push && !ovars.empty()) {
      // Gustavson: the output's last level after the reductions, its others before.
      std::vector<IndexVar> lv = varsOf(*p.output.node, p.args[0].format);
      for (auto& r : reds) {
        hard.push_back({r, lv.back(), -1});
        for (size_t o = 0; o + 1 < lv.size(); o++) hard.push_back({lv[o], r, -1});
      }
    } else if (!allLevelsInsert(p.args[0].format)) {
      // Dense levels below the last appended one are located from its position, so
      // their variables may follow the reductions (A(i,j,m) = B(i,j,k) * C(k,m) into
      // A ssd: i, j, k, m reads C's rows in order, where i, j, m, k reads its columns).
      const Format& of = p.args[0].format;
      std::vector<IndexVar> lv = varsOf(*p.output.node, of);
      size_t appendedLevels = lv.size();
      while (appendedLevels > 0 && levelFormat(of, static_cast<int>(appendedLevels) - 1).supportsInsert() &&
             levelFormat(of, static_cast<int>(appendedLevels) - 1).full())
        appendedLevels--;
      for (size_t k = 0; k < appendedLevels; k++)
        for (auto& r : reds) (outputVarsFirst ? hard : soft).push_back({lv[k], r, -1});
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
  if (!allowTranspose) throw FormatError(msg);

  std::vector<Edge> allHard = hard;
  auto transpose = [&](int a, const std::vector<IndexVar>& o) {
    AccessInfo& in = p.inputs[a];
    TensorArg t = p.args[in.arg];
    Format old = t.format;
    t.format = Format(old.levels(), modesInLoopOrder(in, o), old.posWidth(), old.crdWidth());
    t.cname = t.cname + "_t";
    p.args.push_back(t);
    in.arg = static_cast<int>(p.args.size()) - 1;
    p.notes.push_back(msg + ". tessel transposes " + t.tensor.name() + " from " + old.str() + " to " +
                      t.format.str() + " before each run.");
  };
  // First try transposing a single input (the last first), then every conflicting one.
  for (int a = static_cast<int>(p.inputs.size()) - 1; a >= 0; a--) {
    build(a, hard, soft);
    std::vector<IndexVar> o = topoOrder(all, hard, soft);
    if (o.empty()) continue;
    transpose(a, o);
    return o;
  }
  build(-1, hard, soft);
  std::vector<IndexVar> o = topoOrder(all, hard, soft);
  if (o.empty()) throw FormatError(msg);
  for (int a = 0; a < static_cast<int>(p.inputs.size()); a++)
    if (!respects(allHard, a, o)) transpose(a, o);
  return o;
}

}  // namespace tessel::lower
