// A compiled stage's argument slots as the runtime sees them: `tensors[i]` of the
// generated code. The driver fills them from the compiler's analysis (lower::TensorArg);
// the runtime binds a run's tensors to them without knowing the compiler.
#pragma once

#include <memory>
#include <vector>

#include "tessel/format.h"
#include "tessel/notation.h"

namespace tessel {

/// One argument slot of a compiled stage.
struct KernelSlot {
  TensorVar tensor;  ///< the slot's variable (a run binds it to storage by variable, RunBindings)
  Format format;     ///< the format the kernel reads (may differ from the tensor's: transposed)
  bool isOutput = false;
  bool snapshotOfOutput = false;  ///< `+=`: the output's entries before the kernel runs
};

using KernelSlots = std::vector<KernelSlot>;

}  // namespace tessel
