// tensorsClose: compares two tensors as dense functions (a missing entry is the
// semiring's zero).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "tessel/reference.h"

namespace tessel {

namespace {

using Coords = std::vector<int64_t>;

// Entries as a map (duplicate coordinates folded with the semiring's add).
std::map<Coords, double> entries(const CooData& c, const Semiring& s) {
  std::map<Coords, double> out;
  const int order = c.order();
  Coords key(order);
  for (int64_t e = 0; e < c.nnz(); e++) {
    for (int m = 0; m < order; m++) key[m] = c.coords[e * order + m];
    auto [it, inserted] = out.emplace(key, c.values[e]);
    if (!inserted) it->second = s.add.apply(it->second, c.values[e]);
  }
  return out;
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string tuple(const Coords& c) {
  std::string s = "(";
  for (size_t k = 0; k < c.size(); k++) s += (k ? ", " : "") + std::to_string(c[k]);
  return s + ")";
}

// actual x against expected y.
// The tolerance is atol + rtol * scale (scale >= |y|).
bool close(double x, double y, double rtol, double atol, double scale) {
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  if (std::isinf(x) || std::isinf(y)) return x == y;
  return std::fabs(x - y) <= atol + rtol * scale;
}

}  // namespace

bool tensorsClose(const CooData& expected, const CooData& actual, double rtol, double atol,
                  std::string* why, const Semiring& semiring) {
  return tensorsCloseScaled(expected, actual, nullptr, rtol, atol, why, semiring);
}

bool tensorsCloseScaled(const CooData& expected, const CooData& actual, const CooData* magnitude, double rtol,
                        double atol, std::string* why, const Semiring& semiring) {
  if (expected.dims != actual.dims) {
    if (why) *why = "dimensions differ: expected " + tuple(expected.dims) + " but got " + tuple(actual.dims);
    return false;
  }
  std::map<Coords, double> e = entries(expected, semiring), a = entries(actual, semiring);
  std::map<Coords, double> mag;
  if (magnitude) mag = entries(*magnitude, semiring);
  // Walk the union of coordinates in order; the first mismatch is reported.
  auto ei = e.begin(), ai = a.begin();
  while (ei != e.end() || ai != a.end()) {
    Coords c;
    double y = semiring.zero(), x = semiring.zero();  // a missing entry
    if (ai == a.end() || (ei != e.end() && ei->first < ai->first)) {
      c = ei->first;
      y = (ei++)->second;
    } else if (ei == e.end() || ai->first < ei->first) {
      c = ai->first;
      x = (ai++)->second;
    } else {
      c = ei->first;
      y = (ei++)->second;
      x = (ai++)->second;
    }
    // The scale: the larger of |expected| and the summands' magnitude at c.
    double scale = std::fabs(y);
    if (magnitude)
      if (auto m = mag.find(c); m != mag.end() && std::isfinite(m->second)) scale = std::max(scale, std::fabs(m->second));
    if (!close(x, y, rtol, atol, scale)) {
      if (why) {
        *why = "at " + tuple(c) + ": expected " + number(y) + " but got " + number(x);
        if (magnitude && std::isfinite(x) && std::isfinite(y))
          *why += " (difference " + number(std::fabs(x - y)) + ", tolerance " + number(atol + rtol * scale) +
                  " from the summands' magnitude " + number(scale) + ")";
      }
      return false;
    }
  }
  return true;
}

}  // namespace tessel
