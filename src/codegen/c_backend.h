// The C11 + OpenMP backend: a self-contained translation unit (the runtime ABI struct
// and the kernel helpers are embedded, see c_prelude.h), compiled by the JIT.
#pragma once

#include "codegen/backend.h"

namespace tessel::codegen {

/// Prints Serial loops, CpuParallel loops as OpenMP (guided, static, static with chunk 1,
/// or a parallel region over tessel_next_block), Vectorized loops as `omp simd` with
/// their reduction, atomic stores as `omp atomic`; other loop kinds throw
/// UnsupportedLoopError.
class CBackend : public Backend {
 public:
  std::string name() const override { return "c"; }
  std::string emit(const ir::Module& m) const override;
  std::string fileExtension() const override { return ".c"; }
  std::vector<std::string> compilerFlags() const override;
};

}  // namespace tessel::codegen
