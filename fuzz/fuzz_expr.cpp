// libFuzzer target: the compiler's front end on arbitrary expression text. The text is
// scanned, bound to small tensors (inputs dense-then-compressed, the output in a format
// picked by the first byte), checked, lowered and printed as C. A tessel::UserError is
// the expected outcome for bad input; anything else (an InternalError, another
// exception, a sanitizer report, a hang) is a bug.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tessel/kernel.h"
#include "tessel/parser.h"
#include "tessel/tensor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 512) return 0;
  const uint8_t outKind = data[0];
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    std::vector<tessel::TensorUse> uses = tessel::scanTensors(text);
    std::map<std::string, tessel::TensorBase> tensors;
    for (const auto& u : uses) {
      if (u.order > 6) return 0;  // 2^order dense positions; keep the fuzzer's memory small
      std::vector<tessel::LevelKind> levels;
      for (int k = 0; k < u.order; k++) {
        bool sparse = u.isOutput ? ((outKind >> (k % 8)) & 1) : k > 0;
        levels.push_back(sparse ? tessel::LevelKind::Compressed : tessel::LevelKind::Dense);
      }
      tensors.emplace(u.name, tessel::TensorBase(u.name, tessel::Datatype::Float64,
                                                 std::vector<int64_t>(u.order, 2), tessel::Format(levels)));
    }
    tessel::Assignment a = tessel::parseAssignment(text, tensors);
    tessel::checkAssignment(a);
    std::string code = tessel::Kernel::emitC(a);
    if (code.find("int tessel_compute(") == std::string::npos) __builtin_trap();
  } catch (const tessel::UserError&) {
  }
  return 0;
}
