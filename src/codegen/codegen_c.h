// C code generation from the IR: a self-contained C11 translation unit (the runtime
// ABI struct and small helpers are embedded), compiled by the JIT.
#pragma once

#include <string>

#include "ir/ir.h"

namespace tessel::codegen {

/// Print a module as C source. Each function is exported as
/// `int name(tessel_tensor_t** tensors)`.
std::string emitC(const ir::Module& m);

}  // namespace tessel::codegen
