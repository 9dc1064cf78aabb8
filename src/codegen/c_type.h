// C spellings of IR types, shared by the C backend and the backends that print C
// (MPI-SPMD later). Kept out of the IR: the IR names types, backends spell them.
#pragma once

#include <string>

#include "ir/ir.h"

namespace tessel::codegen {

/// C spelling of t: "double", "const int32_t* restrict", "tessel_tensor_t*", "void**".
/// Pointers to data are restrict (arrays of one kernel never alias); others are not.
std::string cType(const ir::Type& t);

}  // namespace tessel::codegen
