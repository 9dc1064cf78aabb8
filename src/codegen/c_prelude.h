// The C text that starts every generated kernel (c_prelude.cpp).
#pragma once

namespace tessel::codegen {

/// The runtime ABI struct and the helper functions generated loops call, as C11 source.
const char* cPrelude();

}  // namespace tessel::codegen
