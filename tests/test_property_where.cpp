// Property tests of the concrete index notation's where: random products of 2-4
// operands (random formats, shapes and densities) with a random precompute at a loop of
// the loop order (some factors into a temporary), optionally a parallel outer loop, at 1,
// 2 and 4 threads; and random explicit sums placed around one term of a sum. Each result
// is compared with the reference evaluator, which implements reductions on its own;
// refused schedules and sums must be typed errors.
#include <gtest/gtest.h>

#include "support/test_support.h"
#include "tessel/error.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

const char* kVars[] = {"i", "j", "k", "l"};

struct Product {
  std::vector<std::string> factors;  ///< accesses, "B(i,k)"
  std::vector<Operand> inputs;
  std::vector<std::string> used;  ///< variables, each once
};

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  Product product(int nvars) {
    std::vector<int64_t> ext;
    for (int v = 0; v < nvars; v++) ext.push_back(chance(0.08) ? pick(0, 1) : pick(2, 7));
    Product p;
    int nops = pick(2, 4);
    for (int o = 0; o < nops; o++) {
      std::string name(1, static_cast<char>('B' + o));
      std::vector<int> modes = subset(nvars, pick(1, std::min(3, nvars)));
      std::string acc = name + "(";
      std::vector<int64_t> dims;
      for (size_t m = 0; m < modes.size(); m++) {
        acc += (m ? "," : "") + std::string(kVars[modes[m]]);
        dims.push_back(ext[modes[m]]);
        if (std::find(p.used.begin(), p.used.end(), kVars[modes[m]]) == p.used.end()) p.used.push_back(kVars[modes[m]]);
      }
      p.factors.push_back(acc + ")");
      double density = std::vector<double>{0.0, 0.1, 0.4, 0.8, 1.0}[pick(0, 4)];
      p.inputs.push_back({name, randomCoo(dims, density, rng_, chance(0.2)), randomFormat(static_cast<int>(dims.size()))});
    }
    return p;
  }

  /// The output's variables: a random ordered subset of `used`.
  std::vector<std::string> outputVars(std::vector<std::string> used) {
    std::shuffle(used.begin(), used.end(), rng_);
    used.resize(pick(0, std::min<int>(2, static_cast<int>(used.size()))));
    return used;
  }

  std::string lhs(const std::vector<std::string>& vars) {
    if (vars.empty()) return "a";
    std::string s = "A(";
    for (size_t m = 0; m < vars.size(); m++) s += (m ? "," : "") + vars[m];
    return s + ")";
  }

  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

  std::vector<int> subset(int n, int k) {
    std::vector<int> all(n);
    for (int i = 0; i < n; i++) all[i] = i;
    std::shuffle(all.begin(), all.end(), rng_);
    all.resize(k);
    return all;
  }

  Format randomFormat(int order) {
    std::vector<int> modes(order);
    for (int i = 0; i < order; i++) modes[i] = i;
    std::shuffle(modes.begin(), modes.end(), rng_);
    std::vector<LevelKind> levels;
    for (int k = 0; k < order; k++) levels.push_back(chance(0.5) ? LevelKind::Dense : LevelKind::Compressed);
    return Format(levels, modes);
  }

  std::mt19937_64 rng_;
};

std::string joined(const std::vector<std::string>& xs, const std::string& sep) {
  std::string s;
  for (size_t k = 0; k < xs.size(); k++) s += (k ? sep : "") + xs[k];
  return s;
}

}  // namespace

TEST(PropertyWhere, RandomPrecomputeAtALoop) {
  Generator gen(2026);
  int ran = 0, refused = 0;
  const int total = 50;
  for (int n = 0; n < total; n++) {
    Product p = gen.product(gen.pick(2, 4));
    std::vector<std::string> out = gen.outputVars(p.used);
    std::string expr = gen.lhs(out) + " = " + joined(p.factors, " * ");
    // e: a non-empty proper subset of the factors, in order.
    std::vector<int> pickE = gen.subset(static_cast<int>(p.factors.size()), gen.pick(1, static_cast<int>(p.factors.size()) - 1));
    std::sort(pickE.begin(), pickE.end());
    std::vector<std::string> e;
    for (int f : pickE) e.push_back(p.factors[f]);
    int atIndex = gen.pick(0, 3);
    bool parallel = gen.chance(0.5);
    auto schedule = [&](const std::vector<IndexVar>& order) {
      std::string s = "precompute(" + joined(e, "*") + ",t," + order[atIndex % order.size()].name() + ")";
      if (parallel) s += ",parallelize(" + order[0].name() + ")";
      return s;
    };
    for (int threads : {1, 2, 4}) {
      SCOPED_TRACE("case " + std::to_string(n) + ": " + expr + " on " + std::to_string(threads) + " threads");
      try {
        EXPECT_TRUE(matchesReferenceScheduled(expr, p.inputs, DenseFormat(static_cast<int>(out.size())), schedule, threads));
        ran++;
      } catch (const ScheduleError& err) {
        // Valid refusals name the command: a loop that does not enclose e's sum, a
        // parallel loop below the temporary, a race without a strategy.
        EXPECT_NE(std::string(err.what()).find("schedule"), std::string::npos) << err.what();
        refused++;
      }
    }
  }
  std::printf("property (precompute at a loop): %d runs, %d refused\n", ran, refused);
  EXPECT_GE(ran, total * 3 / 3);  // at least a third of the 3 * total runs
}

TEST(PropertyWhere, RandomExplicitSums) {
  // A(out) = sum(v, T1) + T2: the sum around one term of products; the einsum
  // convention sums each term's remaining variables on its own.
  Generator gen(77);
  int ran = 0, refused = 0;
  const int total = 40;
  for (int n = 0; n < total; n++) {
    Product p1 = gen.product(gen.pick(2, 3));
    std::vector<std::string> out = gen.outputVars(p1.used);
    std::vector<std::string> notOut;
    for (const std::string& v : p1.used)
      if (std::find(out.begin(), out.end(), v) == out.end()) notOut.push_back(v);
    std::string t1 = joined(p1.factors, " * ");
    if (!notOut.empty()) t1 = "sum(" + notOut[gen.pick(0, static_cast<int>(notOut.size()) - 1)] + ", " + t1 + ")";
    // A second term over the output's variables (a dense operand Z), so the sum stays
    // below a +.
    std::vector<Operand> in = p1.inputs;
    std::string expr = gen.lhs(out) + " = " + t1;
    if (!out.empty()) {
      std::vector<int64_t> dims;
      for (const std::string& v : out)
        for (size_t o = 0; o < p1.inputs.size(); o++) {
          const std::string& f = p1.factors[o];
          size_t at = f.find(v);
          if (at == std::string::npos) continue;
          int mode = 0;
          for (size_t c = f.find('(') + 1; c < at; c++) mode += f[c] == ',';
          dims.push_back(p1.inputs[o].data.dims[mode]);
          break;
        }
      in.push_back({"Z", randomCoo(dims, 0.5, gen.rng_), gen.randomFormat(static_cast<int>(dims.size()))});
      expr += " + Z(" + joined(out, ",") + ")";
    }
    for (int threads : {1, 2}) {
      SCOPED_TRACE("case " + std::to_string(n) + ": " + expr + " on " + std::to_string(threads) + " threads");
      try {
        EXPECT_TRUE(matchesReferenceScheduled(expr, in, DenseFormat(static_cast<int>(out.size())),
                                              [](const std::vector<IndexVar>&) { return std::string(); }, threads));
        ran++;
      } catch (const NotationError& err) {
        refused++;  // e.g. the summed variable is used outside its sum in the same term
        EXPECT_NE(std::string(err.what()).find("sum"), std::string::npos) << err.what();
      }
    }
  }
  std::printf("property (explicit sums): %d runs, %d refused\n", ran, refused);
  EXPECT_GE(ran, total);
}
