// Expression scanning and -f parsing shared by `run` and `emit`.
#include "expression_args.h"

namespace tessel::cli {

void ExpressionArgs::requireKnown(const std::string& name, const char* option) const {
  if (!byName.count(name))
    throw UsageError(std::string(option) + " names tensor '" + name + "', which is not in the expression");
}

Format ExpressionArgs::formatOf(const TensorUse& u) const {
  auto it = formats.find(u.name);
  return it != formats.end() ? it->second : defaultFormat(u.order, u.isOutput);
}

ExpressionArgs parseExpressionArgs(const std::string& expr, const std::vector<std::string>& formatArgs) {
  ExpressionArgs a;
  a.uses = scanTensors(expr);
  for (const auto& u : a.uses) a.byName[u.name] = u;
  for (const auto& arg : formatArgs) {
    auto [name, text] = splitNamed(arg, "-f", "LEVELS[:ORDER]");
    a.requireKnown(name, "-f");
    if (a.formats.count(name)) throw UsageError("-f given twice for tensor '" + name + "'");
    Format f = Format::parse(text);
    if (f.order() != a.byName[name].order)
      throw FormatError("format '" + text + "' has " + std::to_string(f.order()) + " levels but tensor " +
                        name + " has order " + std::to_string(a.byName[name].order));
    a.formats.emplace(name, f);
  }
  return a;
}

Schedule chooseSchedule(const std::string& text, int threads, const Assignment& a) {
  if (!text.empty()) return parseSchedule(text, a);
  return defaultParallelSchedule(a, threads);
}

std::string generatedCode(const std::string& expr, const ExpressionArgs& args, const std::string& schedule,
                          int threads, const PassObserver& afterEachPass) {
  std::map<std::string, TensorBase> tensors;
  for (const auto& u : args.uses)
    tensors.emplace(u.name, TensorBase(u.name, Datatype::Float64, std::vector<int64_t>(u.order, 1),
                                       args.formatOf(u)));
  Assignment a = parseAssignment(expr, tensors);
  checkAssignment(a);
  std::string code = Kernel::emitC(a, chooseSchedule(schedule, threads, a), afterEachPass);
  if (!code.empty() && code.back() != '\n') code += '\n';
  return code;
}

}  // namespace tessel::cli
