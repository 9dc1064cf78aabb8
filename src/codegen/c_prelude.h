// The C text that starts every generated kernel: include/tessel/runtime_abi.h (the one
// definition of tessel_tensor_t and the TESSEL_ERR_* codes) followed by
// src/runtime/kernel_helpers.h, embedded at build time by cmake/embed_prelude.cmake.
#pragma once

namespace tessel::codegen {

/// The runtime ABI and the helper functions generated loops call, as C11 source.
const char* cPrelude();

}  // namespace tessel::codegen
