// The interface every code generator implements: IR module in, source text out, plus
// what the JIT needs to compile that text. The rest of tessel reaches codegen only
// through it, so a new target is a new implementation, not a change to the pipeline.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"
#include "tessel/error.h"

namespace tessel::codegen {

/// A target's printer. Implementations: CBackend (C11 + OpenMP, c_backend.h). Planned:
///  - a CUDA backend prints a kernel per outermost GpuBlock loop: GpuBlock loops become
///    blockIdx.{x,y,z} (the loop's range is the grid), GpuThread loops threadIdx.{x,y,z}
///    (the block), each with a guard `if (v < end)`; CpuParallel/Vectorized loops inside
///    a device kernel are errors, atomic Stores become atomicAdd, and the host function
///    allocates, copies and launches;
///  - an MPI-SPMD backend prints a Distributed loop as this rank's iteration only
///    (`v = rank coordinate in the grid`, from the communicator the runtime sets up),
///    the communication statements around it as runtime calls, and everything inside
///    as the C backend does (CpuParallel loops stay OpenMP inside a rank).
/// A backend that meets a loop kind it cannot print throws UnsupportedLoopError.
class Backend {
 public:
  virtual ~Backend() = default;
  /// Short name used to look it up: "c".
  virtual std::string name() const = 0;
  /// The whole translation unit for `m`: helpers first, then one exported function per
  /// module function, `int name(tessel_tensor_t** tensors)`.
  virtual std::string emit(const ir::Module& m) const = 0;
  /// Extension of the emitted source file, with the dot: ".c".
  virtual std::string fileExtension() const = 0;
  /// Compiler flags the emitted source needs (before "-shared -fPIC -o OUT").
  virtual std::vector<std::string> compilerFlags() const = 0;
};

/// A loop of a kind this backend does not print (a GPU loop given to the C backend).
class UnsupportedLoopError : public InternalError {
 public:
  UnsupportedLoopError(const std::string& backend, ir::LoopKind kind)
      : InternalError("the " + backend + " backend cannot print a " + ir::loopKindName(kind) + " loop"),
        kind_(kind) {}
  ir::LoopKind kind() const { return kind_; }

 private:
  ir::LoopKind kind_;
};

/// The backend called `name` ("c"); throws InternalError for an unknown name.
const Backend& backendNamed(const std::string& name);

}  // namespace tessel::codegen
