// libFuzzer target: the text front end without a size cap. The input is an expression,
// then (after the first newline) a schedule. The expression is scanned, bound to small
// tensors, parsed and checked, and its printed form must parse again to the same text
// (no lowering: long inputs stay cheap). The schedule is parsed against a fixed SpMM and
// lowered to C (Kernel::emitC, no compiler run). A tessel::UserError is the expected
// outcome for bad input; anything else (a crash, a sanitizer report, a stack overflow
// from deep nesting, a hang) is a bug.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "tessel/kernel.h"
#include "tessel/parser.h"
#include "tessel/schedule.h"
#include "tessel/tensor.h"

namespace {

std::map<std::string, tessel::TensorBase> smallTensors(const std::string& text) {
  std::map<std::string, tessel::TensorBase> tensors;
  for (const auto& u : tessel::scanTensors(text)) {
    if (u.order > 6) throw tessel::UserError("order above 6 (fuzzer memory)");
    std::vector<tessel::LevelKind> levels;
    for (int k = 0; k < u.order; k++) levels.push_back(k > 0 ? tessel::LevelKind::Compressed : tessel::LevelKind::Dense);
    tensors.emplace(u.name, tessel::TensorBase(u.name, tessel::Datatype::Float64, std::vector<int64_t>(u.order, 2),
                                               tessel::Format(levels)));
  }
  return tensors;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string all(reinterpret_cast<const char*>(data), size);
  size_t nl = all.find('\n');
  std::string expr = all.substr(0, nl), schedule = nl == std::string::npos ? "" : all.substr(nl + 1);
  try {
    auto tensors = smallTensors(expr);
    tessel::Assignment a = tessel::parseAssignment(expr, tensors);
    tessel::checkAssignment(a);
    std::string printed = a.str();
    tessel::Assignment again = tessel::parseAssignment(printed, tensors);
    if (again.str() != printed) __builtin_trap();  // printing is a fixed point
  } catch (const tessel::UserError&) {
  }
  if (schedule.size() > 4096) return 0;  // each command may add loops: keep lowering quick
  try {
    const std::string spmm = "C(i,j) = A(i,k) * B(k,j)";
    auto tensors = smallTensors(spmm);
    tessel::Assignment a = tessel::parseAssignment(spmm, tensors);
    tessel::Schedule s = tessel::parseSchedule(schedule, a);
    std::string code = tessel::Kernel::emitC(a, s);
    if (code.find("int tessel_compute(") == std::string::npos) __builtin_trap();
  } catch (const tessel::UserError&) {
  }
  return 0;
}
