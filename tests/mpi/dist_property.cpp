// Property test of distributed dense kernels, run under mpirun at 1, 2, 3, 4, 6 and 8
// ranks (ctest MPI.property.npN). With a fixed seed every rank builds the same random
// cases: a dense expression from a list of shapes (GEMM, GEMV, TTV, TTM, MTTKRP, inner
// product, element-wise add, GEMM plus a term without the summed variable), small
// dimensions (1, and fewer than the ranks: ranks that own nothing), a machine grid that
// fits the ranks (1-D, 2-D, 3-D factorizations), a random valid distribution per tensor
// (partition, fix, broadcast, or none) and a random valid schedule (owner computes;
// distribute over any variables; divide/split of a variable with communicate at the
// step loop; rotate; substitute by BLAS for two-factor products), sometimes `+=`, run
// twice, 2 threads per rank, or followed by a second kernel that reads the output where
// it lies (Y = A * 2). Rank 0 compares the gathered output with a dense evaluation
// written here (plain loops over the global inputs, from the same fill function:
// independent of tessel's reference evaluator).
//
//   mpirun -np 4 dist_property [cases] [seed]
//
// Exit 0 when every case matches, 1 otherwise (every rank: rank 0 decides and the
// verdict is reduced over ranks). Only the public API (tessel/distributed.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tessel/distributed.h"

using namespace tessel;

namespace {

// ---------------------------------------------------------------------------------
// Shapes: the output access and the terms (products of accesses) of the right-hand side.

struct Access {
  std::string tensor;
  std::vector<std::string> vars;
};

struct Shape {
  std::string name;
  Access lhs;
  std::vector<std::vector<Access>> terms;  ///< added; each a product
  bool blasShaped = false;                 ///< one product of two tensors
};

std::vector<Shape> shapes() {
  return {
      {"GEMM", {"A", {"i", "j"}}, {{{"B", {"i", "k"}}, {"C", {"k", "j"}}}}, true},
      {"GEMV", {"a", {"i"}}, {{{"B", {"i", "j"}}, {"c", {"j"}}}}, true},
      {"TTV", {"A", {"i", "j"}}, {{{"B", {"i", "j", "k"}}, {"c", {"k"}}}}, true},
      {"TTM", {"A", {"i", "j", "l"}}, {{{"B", {"i", "j", "k"}}, {"C", {"k", "l"}}}}, true},
      {"MTTKRP", {"A", {"i", "l"}}, {{{"B", {"i", "j", "k"}}, {"C", {"j", "l"}}, {"D", {"k", "l"}}}}, false},
      {"INNER", {"a", {}}, {{{"B", {"i", "j"}}, {"C", {"i", "j"}}}}, true},
      {"ADD", {"A", {"i", "j"}}, {{{"B", {"i", "j"}}}, {{"C", {"i", "j"}}}}, false},
      {"GEMM+D", {"A", {"i", "j"}}, {{{"B", {"i", "k"}}, {"C", {"k", "j"}}}, {{"D", {"i", "j"}}}}, false},
  };
}

std::string accessText(const Access& a) {
  std::string s = a.tensor;
  if (a.vars.empty()) return s;
  s += "(";
  for (size_t k = 0; k < a.vars.size(); k++) s += (k ? "," : "") + a.vars[k];
  return s + ")";
}

std::string exprText(const Shape& sh, bool accumulate) {
  std::string s = accessText(sh.lhs) + (accumulate ? " += " : " = ");
  for (size_t t = 0; t < sh.terms.size(); t++) {
    if (t) s += " + ";
    for (size_t f = 0; f < sh.terms[t].size(); f++) s += (f ? " * " : "") + accessText(sh.terms[t][f]);
  }
  return s;
}

/// Index variables: the output's first, then the summed ones in order of appearance.
std::vector<std::string> varsOf(const Shape& sh) {
  std::vector<std::string> v = sh.lhs.vars;
  for (const auto& term : sh.terms)
    for (const Access& a : term)
      for (const std::string& x : a.vars)
        if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
  return v;
}

bool isSummed(const Shape& sh, const std::string& v) {
  return std::find(sh.lhs.vars.begin(), sh.lhs.vars.end(), v) == sh.lhs.vars.end();
}

/// Tensors: the output, then the inputs in order of first appearance.
std::vector<Access> tensorsOf(const Shape& sh) {
  std::vector<Access> out{sh.lhs};
  for (const auto& term : sh.terms)
    for (const Access& a : term)
      if (std::none_of(out.begin(), out.end(), [&](const Access& o) { return o.tensor == a.tensor; })) out.push_back(a);
  return out;
}

// ---------------------------------------------------------------------------------
// Values: a hash of the tensor, the global coordinates and the case.

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

double valueAt(const std::string& tensor, const std::vector<int64_t>& c, uint64_t caseSeed) {
  uint64_t h = mix(caseSeed);
  for (char ch : tensor) h = mix(h ^ static_cast<unsigned char>(ch));
  for (int64_t x : c) h = mix(h ^ static_cast<uint64_t>(x + 1));
  return static_cast<double>(static_cast<int64_t>(h % 2001) - 1000) / 1000.0;  // [-1, 1]
}

int64_t volumeOf(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

int64_t rowMajor(const std::vector<int64_t>& dims, const std::vector<int64_t>& c) {
  int64_t off = 0;
  for (size_t d = 0; d < dims.size(); d++) off = off * dims[d] + c[d];
  return off;
}

/// The oracle: plain loops over the global data. Each term runs over the output's
/// variables and its own (einsum: a term sums only over its own variables not on the
/// left, so D(i,j) in B(i,k)*C(k,j) + D(i,j) is added once per (i,j)).
std::vector<double> evaluateDense(const Shape& sh, const std::map<std::string, int64_t>& extent, uint64_t caseSeed) {
  std::vector<int64_t> outDims;
  for (const std::string& v : sh.lhs.vars) outDims.push_back(extent.at(v));
  std::vector<double> out(static_cast<size_t>(volumeOf(outDims)), 0.0);
  for (const auto& term : sh.terms) {
    std::vector<std::string> loop = sh.lhs.vars;
    for (const Access& a : term)
      for (const std::string& x : a.vars)
        if (std::find(loop.begin(), loop.end(), x) == loop.end()) loop.push_back(x);
    std::vector<int64_t> at(loop.size(), 0), bound;
    bool empty = false;
    for (const std::string& v : loop) {
      bound.push_back(extent.at(v));
      empty |= extent.at(v) == 0;
    }
    if (empty) continue;
    auto valueOf = [&](const std::string& v) {
      return at[static_cast<size_t>(std::find(loop.begin(), loop.end(), v) - loop.begin())];
    };
    for (;;) {
      double prod = 1;
      for (const Access& a : term) {
        std::vector<int64_t> c;
        for (const std::string& x : a.vars) c.push_back(valueOf(x));
        prod *= valueAt(a.tensor, c, caseSeed);
      }
      std::vector<int64_t> oc;
      for (const std::string& x : sh.lhs.vars) oc.push_back(valueOf(x));
      out[static_cast<size_t>(rowMajor(outDims, oc))] += prod;
      size_t d = loop.size();
      while (d-- > 0) {
        if (++at[d] < bound[d]) break;
        at[d] = 0;
      }
      if (d == static_cast<size_t>(-1)) break;
    }
  }
  return out;
}

/// The oracle checked against loops written out for one shape (GEMM + D), so that a
/// mistake in its einsum rule cannot hide behind a matching one in tessel.
bool oracleSelfCheck() {
  const Shape sh = shapes()[7];
  std::map<std::string, int64_t> ext{{"i", 3}, {"j", 2}, {"k", 4}};
  std::vector<double> got = evaluateDense(sh, ext, 99);
  for (int64_t i = 0; i < 3; i++)
    for (int64_t j = 0; j < 2; j++) {
      double want = valueAt("D", {i, j}, 99);
      for (int64_t k = 0; k < 4; k++) want += valueAt("B", {i, k}, 99) * valueAt("C", {k, j}, 99);
      if (std::abs(got[static_cast<size_t>(i * 2 + j)] - want) > 1e-12) return false;
    }
  return true;
}

// ---------------------------------------------------------------------------------
// Random cases.

struct Case {
  int index = 0;
  uint64_t seed = 0;
  Shape shape;
  bool accumulate = false;
  int runs = 1;
  /// A second kernel takes the output as it lies distributed: Y(...) = A(...) * 2.
  bool chain = false;
  std::string chainDist;
  std::map<std::string, int64_t> extent;
  Grid grid;
  int threads = 1;                          ///< threads inside each rank (hierarchical machine)
  std::map<std::string, std::string> dist;  ///< per tensor; "" none (on every rank)
  std::map<std::string, Grid> placedOn;     ///< the grid each distribution refers to
  std::string schedule;
  std::set<std::string> features;  ///< for the summary: default, divide, split, rotate, blas...
};

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <typename T>
  const T& among(const std::vector<T>& v) {
    return v[static_cast<size_t>(pick(0, static_cast<int>(v.size()) - 1))];
  }
  template <typename T>
  void shuffle(std::vector<T>& v) {
    std::shuffle(v.begin(), v.end(), rng_);
  }
  uint64_t word() { return rng_(); }

 private:
  std::mt19937_64 rng_;
};

/// Every grid of `order` dimensions with `ranks` ranks in all (factors may be 1).
void factorizations(int ranks, int order, std::vector<int>& cur, std::vector<std::vector<int>>& out) {
  if (order == 1) {
    cur.push_back(ranks);
    out.push_back(cur);
    cur.pop_back();
    return;
  }
  for (int f = 1; f <= ranks; f++)
    if (ranks % f == 0) {
      cur.push_back(f);
      factorizations(ranks / f, order - 1, cur, out);
      cur.pop_back();
    }
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

/// A valid distribution of a tensor of `order` on `grid`: one of partition (by an unused
/// tensor dimension), fix (a coordinate of the machine dimension) or broadcast per
/// machine dimension; or none (every rank holds it).
std::string randomDistribution(Gen& g, int order, const Grid& grid) {
  if (order == 0 || g.chance(0.12)) return "";
  const std::string letters = std::string("xyzw").substr(0, static_cast<size_t>(order));
  std::string unused = letters, y;
  for (int d = 0; d < grid.order(); d++) {
    int r = g.pick(0, 9);
    if (r < 6 && !unused.empty()) {  // partition
      size_t at = static_cast<size_t>(g.pick(0, static_cast<int>(unused.size()) - 1));
      y += unused[at];
      unused.erase(at, 1);
    } else if (r < 8) {  // fix (the notation has one character per machine dimension: 0-9)
      y += std::to_string(g.pick(0, std::min(grid.dim(d), 10) - 1));
    } else {
      y += "*";
    }
  }
  return letters + "->" + y;
}

/// A valid distributed schedule (see the file comment), or "" (owner computes).
std::string randomSchedule(Gen& g, const Shape& sh, const Grid& grid, std::set<std::string>& kind) {
  const std::vector<std::string> vars = varsOf(sh);
  const int G = grid.order();
  if (g.chance(0.2)) {
    kind.insert("owner-computes default");
    return "";
  }
  // The distributed variables, in machine order.
  std::vector<std::string> dv = vars;
  g.shuffle(dv);
  dv.resize(static_cast<size_t>(G));
  std::vector<std::string> outer, inner;
  for (const auto& v : dv) {
    outer.push_back(v + "o");
    inner.push_back(v + "i");
  }
  std::vector<std::string> cmds;
  const bool compound = g.chance(0.7);
  if (compound) {
    std::string c = "distribute({" + join(dv) + "},{" + join(outer) + "},{" + join(inner) + "}";
    if (g.chance(0.3)) {
      c += ",Grid(";
      for (int d = 0; d < G; d++) c += (d ? "," : "") + std::to_string(grid.dim(d));
      c += ")";
    }
    cmds.push_back(c + ")");
    kind.insert("distribute({..},{..},{..})");
  } else {
    for (int d = 0; d < G; d++)
      cmds.push_back("divide(" + dv[static_cast<size_t>(d)] + "," + outer[static_cast<size_t>(d)] + "," +
                     inner[static_cast<size_t>(d)] + "," + std::to_string(grid.dim(d)) + ")");
    kind.insert("divide+distribute(io)");
  }
  // The loops below the distributed ones: a distributed variable's inner loop, the others.
  std::vector<std::string> rest;
  for (const auto& v : vars) {
    auto at = std::find(dv.begin(), dv.end(), v);
    rest.push_back(at == dv.end() ? v : *at + "i");
  }
  // A step loop: divide or split one of them (mostly a summed variable), the outer part
  // right below the distributed loops.
  std::string step;
  if (g.chance(0.6)) {
    std::vector<std::string> summed, any = rest;
    for (size_t k = 0; k < vars.size(); k++)
      if (isSummed(sh, vars[k])) summed.push_back(rest[k]);
    const std::string base = !summed.empty() && g.chance(0.8) ? g.among(summed) : g.among(any);
    const bool divide = g.chance(0.5);
    const int amount = g.pick(1, 4);
    step = base + "s";
    const std::string in = base + "t";
    cmds.push_back(std::string(divide ? "divide(" : "split(") + base + "," + step + "," + in + "," +
                   std::to_string(amount) + ")");
    *std::find(rest.begin(), rest.end(), base) = in;
    kind.insert(divide ? "step divide" : "step split");
  }
  g.shuffle(rest);
  std::vector<std::string> order = outer;
  if (!step.empty()) order.push_back(step);
  order.insert(order.end(), rest.begin(), rest.end());
  if (order.size() >= 2) cmds.push_back("reorder(" + join(order) + ")");
  if (!compound)
    for (const auto& o : outer) cmds.push_back("distribute(" + o + ")");
  // Communicate each tensor: by default (at the last distributed loop), there
  // explicitly, or at the step loop. A rotated step loop must run above the leaf.
  std::vector<Access> tensors = tensorsOf(sh);
  std::map<std::string, std::vector<std::string>> at;  // loop -> tensors
  bool stepAbove = false;
  for (const Access& t : tensors) {
    int r = g.pick(0, 2);
    if (r == 1) at[outer.back()].push_back(t.tensor);
    if (r == 2 && !step.empty()) {
      at[step].push_back(t.tensor);
      stepAbove = true;
    }
  }
  if (!step.empty() && stepAbove && g.chance(0.4)) {
    std::vector<std::string> by;
    for (const auto& o : outer)
      if (g.chance(0.6)) by.push_back(o);
    if (by.empty()) by.push_back(g.among(outer));
    cmds.push_back("rotate(" + step + ",{" + join(by) + "}," + step + "r)");
    if (at.count(step)) {
      at[step + "r"] = at[step];
      at.erase(step);
    }
    kind.insert("rotate");
  }
  for (const auto& [loop, ts] : at)
    cmds.push_back("communicate(" + (ts.size() == 1 ? ts[0] : "{" + join(ts) + "}") + "," + loop + ")");
  if (!step.empty() && stepAbove) kind.insert("communicate at the step");
  // BLAS replaces the leaf: the loops below the last communicated one, no leaf splits.
  if (sh.blasShaped && (step.empty() || stepAbove) && g.chance(0.35)) {
    cmds.push_back("substitute({" + join(rest) + "},blas)");
    kind.insert("substitute blas");
  }
  return join(cmds);
}

/// `shared` draws what does not depend on the number of ranks (the expression, extents,
/// grid order, schedule, +=, runs), alike at every rank count, so the leaf kernels
/// compiled at one rank count are the JIT cache's hits at the next; `own` draws the grid,
/// the distributions and threads.
Case randomCase(Gen& shared, Gen& own, int ranks, int index) {
  static const std::vector<Shape> all = shapes();
  Case c;
  c.index = index;
  c.seed = shared.word();
  c.shape = shared.among(all);
  const std::vector<std::string> vars = varsOf(c.shape);
  // A grid: 1-D, 2-D or 3-D (no more dimensions than index variables).
  const int maxOrder = std::min<int>(3, static_cast<int>(vars.size()));
  std::vector<std::vector<int>> grids;
  std::vector<int> cur;
  factorizations(ranks, shared.pick(1, maxOrder), cur, grids);
  c.grid = Grid(own.among(grids));
  // Small extents: 1, fewer than the ranks, uneven.
  static const std::vector<int64_t> sizes{1, 1, 2, 3, 3, 4, 5, 5, 6, 7, 9};
  for (const auto& v : vars) c.extent[v] = shared.among(sizes);
  // Each tensor's distribution, mostly over the machine's grid, sometimes over another
  // grid of as many ranks (a data distribution unlike the computation's).
  for (const Access& t : tensorsOf(c.shape)) {
    Grid on = c.grid;
    if (own.chance(0.2)) {
      std::vector<std::vector<int>> other;
      factorizations(ranks, own.pick(1, 3), cur, other);
      on = Grid(own.among(other));
    }
    c.placedOn[t.tensor] = on;
    c.dist[t.tensor] = randomDistribution(own, static_cast<int>(t.vars.size()), on);
  }
  c.schedule = randomSchedule(shared, c.shape, c.grid, c.features);
  c.threads = ranks <= 2 && own.chance(0.1) ? 2 : 1;
  c.accumulate = shared.chance(0.1);
  c.runs = shared.chance(0.15) ? 2 : 1;
  if (static_cast<int>(c.shape.lhs.vars.size()) >= c.grid.order() && shared.chance(0.2)) {
    c.chain = true;
    c.chainDist = randomDistribution(own, static_cast<int>(c.shape.lhs.vars.size()), c.grid);
  }
  return c;
}

std::string describe(const Case& c) {
  std::string s = "case " + std::to_string(c.index) + ": " + exprText(c.shape, c.accumulate) + "  dims";
  for (const auto& [v, n] : c.extent) s += " " + v + "=" + std::to_string(n);
  s += "  machine " + c.grid.str() + (c.threads > 1 ? " x " + std::to_string(c.threads) + " threads" : "") +
       "  distributions";
  for (const Access& t : tensorsOf(c.shape)) {
    s += " " + t.tensor + ":" + (c.dist.at(t.tensor).empty() ? "none" : c.dist.at(t.tensor));
    if (!(c.placedOn.at(t.tensor) == c.grid)) s += " on " + c.placedOn.at(t.tensor).str();
  }
  s += "  schedule \"" + c.schedule + "\"";
  if (c.runs > 1) s += "  (run twice)";
  if (c.chain) s += "  then Y = " + c.shape.lhs.tensor + " * 2, Y:" + (c.chainDist.empty() ? "none" : c.chainDist);
  return s;
}

struct Tally {
  int cases = 0, failed = 0, emptyPiece = 0, noPiece = 0;
  int64_t broadcasts = 0, reductions = 0, messages = 0;  // the transfers the runs used
  std::map<std::string, int> kinds;
};

/// Rank 0: the gathered `got` against the dense `want` (1e-9 relative), or the first
/// mismatch printed with the case.
bool matches(const Case& c, const char* what, const CooData& got, const std::vector<double>& want,
             const std::vector<int64_t>& outDims) {
  if (got.dims != outDims) {
    std::printf("FAIL %s\n  gathered %s has other dimensions\n", describe(c).c_str(), what);
    return false;
  }
  std::vector<double> have(want.size(), 0.0);
  const int order = static_cast<int>(outDims.size());
  for (int64_t e = 0; e < got.nnz(); e++) {
    std::vector<int64_t> at(got.coords.begin() + e * order, got.coords.begin() + (e + 1) * order);
    have[static_cast<size_t>(rowMajor(outDims, at))] += got.values[static_cast<size_t>(e)];
  }
  for (size_t x = 0; x < want.size(); x++) {
    if (std::abs(have[x] - want[x]) <= 1e-9 * std::max(1.0, std::abs(want[x]))) continue;
    std::printf("FAIL %s\n  %s entry %zu (row-major): got %.17g, expected %.17g\n", describe(c).c_str(), what, x,
                have[x], want[x]);
    return false;
  }
  return true;
}

/// One case on every rank; rank 0 returns whether it matched (the others true).
bool runCase(const Case& c, Tally& tally) {
  const int me = worldRank();
  Machine m{c.grid, c.threads};
  std::vector<DistTensor> tensors;
  bool rankOwnsNothing = false, rankEmptyPiece = false;
  for (const Access& a : tensorsOf(c.shape)) {
    std::vector<int64_t> dims;
    for (const std::string& v : a.vars) dims.push_back(c.extent.at(v));
    DistTensor t(a.tensor, dims, c.dist.at(a.tensor), c.placedOn.at(a.tensor));
    const bool output = a.tensor == c.shape.lhs.tensor;
    if (!output || c.accumulate) {
      const std::string name = output ? "init:" + a.tensor : a.tensor;
      t.fill([&](const std::vector<int64_t>& at) { return valueAt(name, at, c.seed); });
    }
    if (!t.piece()) rankOwnsNothing = true;
    else if (t.localSize() == 0) rankEmptyPiece = true;
    tensors.push_back(t);
  }
  std::string error;
  CooData got, gotChain;
  std::vector<int64_t> outDims;
  for (const std::string& v : c.shape.lhs.vars) outDims.push_back(c.extent.at(v));
  try {
    auto k = DistributedKernel::compile(exprText(c.shape, c.accumulate), tensors, m, c.schedule);
    for (int r = 0; r < c.runs; r++) {
      DistRunStats st = k->run(tensors);
      for (const auto& pt : st.tensors) {
        tally.broadcasts += pt.broadcasts;
        tally.reductions += pt.reductions;
        tally.messages += pt.messages;
      }
    }
    got = tensors[0].gather();
    if (c.chain) {
      const Access y{"Y", c.shape.lhs.vars};
      DistTensor Y("Y", outDims, c.chainDist, c.grid);
      auto k2 = DistributedKernel::compile(accessText(y) + " = " + accessText(c.shape.lhs) + " * 2", {Y, tensors[0]}, m);
      k2->run({Y, tensors[0]});
      gotChain = Y.gather();
    }
  } catch (const std::exception& e) {
    // Compilation errors are raised alike on every rank; so would a run's be here.
    error = e.what();
  }
  tally.noPiece += reduceOverRanks(rankOwnsNothing, true) != 0;
  tally.emptyPiece += reduceOverRanks(rankEmptyPiece, true) != 0;
  if (me != 0) return true;
  if (!error.empty()) {
    std::printf("FAIL %s\n  error: %s\n", describe(c).c_str(), error.c_str());
    return false;
  }
  std::vector<double> want = evaluateDense(c.shape, c.extent, c.seed);
  if (c.accumulate) {
    // `+=` adds every run's sum to the output's initial values.
    std::vector<int64_t> at(outDims.size(), 0);
    for (size_t x = 0; x < want.size(); x++) {
      want[x] = valueAt("init:" + c.shape.lhs.tensor, at, c.seed) + c.runs * want[x];
      for (size_t d = at.size(); d-- > 0;) {
        if (++at[d] < outDims[d]) break;
        at[d] = 0;
      }
    }
  }
  if (!matches(c, "output", got, want, outDims)) return false;
  if (!c.chain) return true;
  for (double& w : want) w *= 2;
  return matches(c, "Y, the second kernel's output", gotChain, want, outDims);
}

}  // namespace

int main(int argc, char** argv) {
  const int cases = argc > 1 ? std::atoi(argv[1]) : 800;
  const uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 20240528;
  const int ranks = worldSize(), me = worldRank();
  int failed = 0;
  const bool oracleOk = me != 0 || oracleSelfCheck();
  if (!oracleOk) std::printf("FAIL the test's own dense evaluation disagrees with GEMM + D written out\n");
  Gen shared(seed), own(seed + 1000003 * static_cast<uint64_t>(ranks));
  Tally tally;
  for (int n = 0; n < cases; n++) {
    Case c = randomCase(shared, own, ranks, n);
    tally.cases++;
    for (const std::string& f : c.features) tally.kinds[f]++;
    tally.kinds["grid order " + std::to_string(c.grid.order())]++;
    if (c.threads > 1) tally.kinds["threads"]++;
    if (c.accumulate) tally.kinds["+="]++;
    if (c.chain) tally.kinds["a second kernel on the output"]++;
    for (const auto& [t, on] : c.placedOn)
      if (!(on == c.grid)) {
        tally.kinds["a tensor on another grid"]++;
        break;
      }
    if (!runCase(c, tally)) failed++;
  }
  if (me == 0) {
    std::printf("dist_property: %d ranks, seed %llu: %d of %d cases passed (%d with a rank holding no piece of some "
                "tensor, %d with an empty piece); cases with:",
                ranks, static_cast<unsigned long long>(seed), tally.cases - failed,
                tally.cases, tally.noPiece, tally.emptyPiece);
    for (const auto& [k, n] : tally.kinds) std::printf(" %s %d;", k.c_str(), n);
    std::printf("\ntransfers: %lld point-to-point messages, %lld broadcasts, %lld reductions\n",
                static_cast<long long>(tally.messages), static_cast<long long>(tally.broadcasts),
                static_cast<long long>(tally.reductions));
    std::fflush(stdout);
  }
  // From 3 ranks on, some cases must have taken the collective paths (a row broadcast,
  // a reduction into one owner): else the executor's collectives went untested.
  const char* coll = std::getenv("TESSEL_COLLECTIVES");
  const bool collectivesOn = !(coll && std::string(coll) == "0");
  bool uncovered = false;
  if (me == 0 && ranks >= 3 && cases >= 100 && collectivesOn && (tally.broadcasts == 0 || tally.reductions == 0)) {
    std::printf("FAIL no case used both broadcasts and reductions at %d ranks\n", ranks);
    uncovered = true;
  }
  const bool bad = reduceOverRanks(me == 0 && (failed || !oracleOk || uncovered) ? 1 : 0, true) != 0;
  finalizeDistributed();
  return bad ? 1 : 0;
}
