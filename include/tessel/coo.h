// CooData: a tensor as a list of coordinates and values, independent of any format.
// It is what file readers produce, what writers and the reference evaluator consume,
// and the interchange form for packing and conversion.
#pragma once

#include <cstdint>
#include <vector>

namespace tessel {

struct CooData {
  std::vector<int64_t> dims;    ///< one extent per mode
  std::vector<int64_t> coords;  ///< nnz * order, row-major: entry e, mode m at [e*order+m]; 0-based
  std::vector<double> values;   ///< one per entry (int tensors: exact up to 2^53)

  int order() const { return static_cast<int>(dims.size()); }
  int64_t nnz() const { return static_cast<int64_t>(values.size()); }
  /// Append one entry (coords in mode order).
  void add(const std::vector<int64_t>& c, double v) {
    coords.insert(coords.end(), c.begin(), c.end());
    values.push_back(v);
  }
};

}  // namespace tessel
