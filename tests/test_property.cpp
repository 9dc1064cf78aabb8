// Property test: random expressions x random formats x random data shapes (empty
// tensors, empty rows, single entries, fully dense, duplicate input coordinates),
// each compiled and compared with the reference evaluator.
#include <gtest/gtest.h>

#include "support/test_support.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

struct Case {
  std::string expr;
  std::vector<Operand> inputs;
  Format out;
  std::string describe() const {
    std::string s = expr + "  out:" + out.str();
    for (auto& in : inputs) s += "  " + in.name + ":" + in.format.str();
    return s;
  }
};

class CaseGenerator {
 public:
  /// `bitmapChance`: how often a dense level becomes a bitmap (drawn from a separate
  /// generator, so the cases of a seed stay the same apart from those levels).
  explicit CaseGenerator(uint64_t seed, double bitmapChance = 0.2) : rng_(seed), bitmapRng_(seed + 1), bitmapChance_(bitmapChance) {}
  /// Also combine terms with element-wise functions (max, min, abs, comparisons), drawn
  /// from a separate generator so the other tests' cases stay the same.
  CaseGenerator& withElementwise() {
    elementwise_ = true;
    return *this;
  }

  Case next() {
    static const char* names[] = {"i", "j", "k", "l"};
    int nvars = pick(1, 4);
    std::vector<std::string> vars(names, names + nvars);
    std::vector<int64_t> ext;
    for (int v = 0; v < nvars; v++) ext.push_back(chance(0.08) ? pick(0, 1) : pick(2, 7));

    Case c;
    int nops = pick(1, 4);
    std::vector<std::string> used;
    std::vector<std::string> accesses;
    for (int o = 0; o < nops; o++) {
      std::string name(1, static_cast<char>('B' + o));
      std::vector<int> modes = subset(nvars, pick(1, std::min(3, nvars)));
      std::string acc = name + "(";
      std::vector<int64_t> dims;
      for (size_t m = 0; m < modes.size(); m++) {
        acc += (m ? "," : "") + vars[modes[m]];
        dims.push_back(ext[modes[m]]);
        used.push_back(vars[modes[m]]);
      }
      acc += ")";
      accesses.push_back(acc);
      double density = std::vector<double>{0.0, 0.05, 0.3, 0.6, 1.0}[pick(0, 4)];
      c.inputs.push_back({name, randomCoo(dims, density, rng_, chance(0.3)),
                          withBitmaps(randomFormat(static_cast<int>(dims.size())), false)});
    }
    std::string rhs = combine(accesses);
    // Output: a random ordered subset of the variables used on the right.
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    std::shuffle(used.begin(), used.end(), rng_);
    int outOrder = pick(0, std::min<int>(3, static_cast<int>(used.size())));
    std::string lhs = outOrder == 0 ? "a" : "A(";
    for (int m = 0; m < outOrder; m++) lhs += (m ? "," : "") + used[m];
    if (outOrder > 0) lhs += ")";
    c.expr = lhs + " = " + rhs;
    c.out = outOrder == 0 ? Format::parse("") : withBitmaps(randomFormat(outOrder), true);
    return c;
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

  std::vector<int> subset(int n, int k) {
    std::vector<int> all(n);
    for (int i = 0; i < n; i++) all[i] = i;
    std::shuffle(all.begin(), all.end(), rng_);
    all.resize(k);
    return all;
  }

  /// Some dense levels become bitmaps; an output's only when all its levels are dense
  /// (a bitmap output level is inserted into at random, below random-access levels only).
  Format withBitmaps(const Format& f, bool output) {
    if (output && !f.isAllDense()) return f;
    std::vector<LevelKind> levels = f.levels();
    for (auto& l : levels)
      if (l == LevelKind::Dense && std::uniform_real_distribution<double>(0, 1)(bitmapRng_) < bitmapChance_)
        l = LevelKind::Bitmap;
    return Format(levels, f.modeOrder());
  }

  Format randomFormat(int order) {
    std::vector<int> modes(order);
    for (int i = 0; i < order; i++) modes[i] = i;
    std::shuffle(modes.begin(), modes.end(), rng_);
    std::vector<LevelKind> levels;
    if (order >= 2 && chance(0.15)) {
      levels.push_back(LevelKind::CompressedNU);
      for (int k = 1; k < order; k++) levels.push_back(LevelKind::Singleton);
    } else {
      for (int k = 0; k < order; k++) levels.push_back(chance(0.5) ? LevelKind::Dense : LevelKind::Compressed);
    }
    return Format(levels, modes);
  }

  std::string combine(std::vector<std::string> terms) {
    std::shuffle(terms.begin(), terms.end(), rng_);
    while (terms.size() > 1) {
      std::string a = terms.back();
      terms.pop_back();
      std::string b = terms.back();
      terms.pop_back();
      const char* op = std::vector<const char*>{" + ", " - ", " * ", " * "}[pick(0, 3)];
      std::string t = "(" + a + op + b + ")";
      if (elementwise_ && std::uniform_real_distribution<double>(0, 1)(elementwiseRng_) < 0.6) {
        static const char* fns[] = {"max", "min", "abs", " < ", " <= ", " == ", " != ", " > "};
        std::string f = fns[std::uniform_int_distribution<int>(0, 7)(elementwiseRng_)];
        t = f == "abs" ? "(abs(" + a + ") * " + b + ")" : f[0] == ' ' ? "(" + a + f + b + ")" : f + "(" + a + ", " + b + ")";
      }
      if (chance(0.1)) t = "-" + t;
      if (chance(0.1)) t = "2 * " + t;
      terms.insert(terms.begin() + pick(0, static_cast<int>(terms.size())), t);
    }
    return terms[0];
  }

  std::mt19937_64 rng_;
  std::mt19937_64 bitmapRng_;
  double bitmapChance_;
  bool elementwise_ = false;
  std::mt19937_64 elementwiseRng_{99};
};

}  // namespace

/// Runs `total` cases of `gen` against the reference evaluator; a case whose formats
/// cannot be assembled must say so (FormatError "cannot assemble"). Returns how many ran.
static int runAgainstReference(CaseGenerator& gen, int total, const char* label) {
  int ran = 0, unsupported = 0;
  for (int n = 0; n < total; n++) {
    Case c = gen.next();
    SCOPED_TRACE("case " + std::to_string(n) + ": " + c.describe());
    try {
      EXPECT_TRUE(matchesReference(c.expr, c.inputs, c.out));
      ran++;
    } catch (const FormatError& e) {
      // Some format combinations cannot be assembled (a sparse output level inside
      // a reduction that is not the last level); the error must say so.
      EXPECT_NE(std::string(e.what()).find("cannot assemble"), std::string::npos) << e.what();
      unsupported++;
    }
  }
  std::printf("%s: %d cases ran, %d rejected with FormatError\n", label, ran, unsupported);
  return ran;
}

TEST(Property, RandomExpressionsFormatsAndShapes) {
  CaseGenerator gen(7);
  const int total = 300;
  EXPECT_GE(runAgainstReference(gen, total, "property"), total * 9 / 10);
}

// Bitmap levels (half of the dense levels) at 1, 2 and 4 threads, each thread count
// with the default parallel schedule.
TEST(Property, BitmapLevelsAtThreads) {
  CaseGenerator gen(11, 0.5);
  int ran = 0;
  const int total = 20;
  for (int n = 0; n < total; n++) {
    Case c = gen.next();
    SCOPED_TRACE("case " + std::to_string(n) + ": " + c.describe());
    for (int threads : {1, 2, 4}) {
      try {
        EXPECT_TRUE(matchesReferenceEachRound(c.expr, {c.inputs}, c.out, threads)) << threads << " threads";
        ran++;
      } catch (const FormatError& e) {
        EXPECT_NE(std::string(e.what()).find("cannot assemble"), std::string::npos) << e.what();
      } catch (const ScheduleError&) {
        // The default parallel schedule may not apply to this loop nest: run it serially.
      }
    }
  }
  std::printf("property (bitmap): %d runs\n", ran);
  EXPECT_GE(ran, total * 3 * 7 / 10);
}

// Element-wise functions mixed into random expressions (tests/test_elementwise.cpp has
// their hand-computed values): the compiled kernel against the reference evaluator.
TEST(Property, ElementwiseExpressions) {
  CaseGenerator gen(23);
  gen.withElementwise();
  const int total = 80;
  EXPECT_GE(runAgainstReference(gen, total, "property (element-wise)"), total * 8 / 10);
}
