// What the distributed examples check with: a gathered result as a dense array, and an
// entry-by-entry comparison against the example's own plain loops (not tessel's).
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tessel/coo.h"

namespace example {

/// Row-major dense copy of `t` (absent entries are 0).
inline std::vector<double> denseOf(const tessel::CooData& t) {
  int64_t n = 1;
  for (int64_t d : t.dims) n *= d;
  std::vector<double> out(static_cast<size_t>(n), 0.0);
  for (int64_t e = 0; e < t.nnz(); e++) {
    int64_t at = 0;
    for (size_t d = 0; d < t.dims.size(); d++) at = at * t.dims[d] + t.coords[static_cast<size_t>(e) * t.dims.size() + d];
    out[static_cast<size_t>(at)] = t.values[static_cast<size_t>(e)];
  }
  return out;
}

/// Equal to 1e-9 relative; else prints the first difference, naming `what`.
inline bool allClose(const std::vector<double>& have, const std::vector<double>& want, const std::string& what) {
  for (size_t e = 0; e < want.size(); e++)
    if (have.size() != want.size() || std::abs(have[e] - want[e]) > 1e-9 * (1 + std::abs(want[e]))) {
      std::printf("%s WRONG at entry %zu: %.17g, expected %.17g\n", what.c_str(), e, e < have.size() ? have[e] : 0.0,
                  want[e]);
      return false;
    }
  return true;
}

}  // namespace example
