// What python/bindings.cpp and python/bindings_distributed.cpp share (the module _tessel).
#pragma once

#include <pybind11/pybind11.h>

#include "tessel/tessel.h"

namespace tessel::python {

/// (coords int64 (nnz, order), values float64 (nnz,)) of a CooData, as NumPy arrays.
pybind11::tuple cooArrays(const CooData& c);

/// The distributed machine, tensors and kernels (bindings_distributed.cpp).
void registerDistributed(pybind11::module_& m);

}  // namespace tessel::python
