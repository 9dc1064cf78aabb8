// What a DistTensor holds (shared by dist_tensor.cpp and the distributed file code).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessel/distributed.h"

namespace tessel {

struct DistTensor::Impl {
  std::string name;
  std::vector<int64_t> dims;
  Distribution distribution;
  Grid grid;
  std::optional<std::vector<Extent>> piece;
  std::vector<double> vals;
  std::optional<Format> format;  ///< sparse: the pieces' format
  TensorBase sparsePiece;
  std::vector<std::optional<std::vector<Extent>>> dataPieces;  ///< by non-zeros: every rank's box
};

}  // namespace tessel
