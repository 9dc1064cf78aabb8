/* Compiles the kernel prelude as the JIT sees it (runtime ABI first, then the helpers),
 * so that an error in kernel_helpers.h fails the tessel build. Not linked anywhere. */
#include "tessel/runtime_abi.h"
#include "runtime/kernel_helpers.h"
