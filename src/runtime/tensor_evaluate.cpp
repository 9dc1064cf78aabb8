// TensorBase's compiler entry points (the rest of TensorBase is storage).
#include "tessel/kernel.h"
#include "tessel/tensor.h"

namespace tessel {

void TensorBase::evaluate() {
  const Assignment& a = assignment();
  auto k = Kernel::compile(a);
  k->run(a);
}

std::string TensorBase::emitC() const { return Kernel::emitC(assignment()); }

}  // namespace tessel
