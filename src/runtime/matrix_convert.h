// Converting a matrix between Dense-over-Compressed formats (CSR, CSC, either index
// width) without pack()'s general sort; used by TensorBase::convert.
#pragma once

#include "tessel/tensor.h"

namespace tessel {

/// Whether both formats are order 2, a dense level over a compressed one (in any mode
/// order): the pairs convertDenseCompressed handles.
bool isDenseCompressedPair(const Format& from, const Format& to);

/// `t`'s stored entries (explicit zeros kept) in arrays of format `to`: the rows copied
/// when `to` keeps t's mode order, else transposed by a counting sort on the new row
/// coordinate. O(nnz + rows); pack() sorts 64-bit keys in several radix passes (a 2M x 2M
/// CSR with 16M entries took 3.3 s to become CSC). Throws OverflowError when the entry
/// count does not fit `to`'s pos width, FormatError when t's arrays are inconsistent.
tessel_tensor_t convertDenseCompressed(const TensorImpl& t, const Format& to);

}  // namespace tessel
