// Expression scanning and -f parsing shared by `run` and `emit`.
#include "expression_args.h"

#include <cctype>

namespace tessel::cli {

void ExpressionArgs::requireKnown(const std::string& name, const char* option) const {
  if (!byName.count(name))
    throw UsageError(std::string(option) + " names tensor '" + name + "', which is not in the expression");
}

Format ExpressionArgs::formatOf(const TensorUse& u) const {
  auto it = formats.find(u.name);
  return it != formats.end() ? it->second : defaultFormat(u.order, u.isOutput);
}

Datatype ExpressionArgs::typeOf(const TensorUse& u) const {
  auto it = types.find(u.name);
  return it != types.end() ? it->second : Datatype::Float64;
}

const char* const kTypeHelp =
    "Element type of a tensor: bool, int32, int64, float32 (float) or float64 (double, the default). "
    "Values read from files convert to it (nonzero is true for bool); the output's is the type the kernel "
    "computes in when all operands agree";

ExpressionArgs parseExpressionArgs(const std::string& expr, const std::vector<std::string>& formatArgs,
                                   const std::vector<std::string>& typeArgs) {
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
  for (const auto& arg : typeArgs) {
    auto [name, text] = splitNamed(arg, "-t", "TYPE");
    a.requireKnown(name, "-t");
    if (a.types.count(name)) throw UsageError("-t given twice for tensor '" + name + "'");
    static const std::map<std::string, Datatype> known = {
        {"bool", Datatype::Bool},       {"int32", Datatype::Int32},     {"int64", Datatype::Int64},
        {"float32", Datatype::Float32}, {"float", Datatype::Float32},   {"float64", Datatype::Float64},
        {"double", Datatype::Float64}};
    auto t = known.find(text);
    if (t == known.end())
      throw UsageError("-t " + arg + ": unknown type '" + text + "' (bool, int32, int64, float32, float64)");
    a.types.emplace(name, t->second);
  }
  return a;
}

ScheduleChoice chooseSchedule(const std::string& text, int threads, const Assignment& a) {
  if (!text.empty()) return {parseSchedule(text, a), "given with -s", threads};
  return defaultSchedule(a, threads);
}

const char* const kSemiringHelp =
    "Semiring of the expression: plus_times (default), min_plus (* is +, + and sums are min; absent "
    "entries are +inf, so y(i) = A(i,j) * x(j) is min over stored j of A(i,j) + x(j), inf for empty rows) "
    "or max_times (+ and sums are max, absent entries -inf); also max_plus, min_times, or_and, and_or, "
    "plus_pair, any_pair, min_first, min_second, max_first, max_second, plus_min (ADD_MUL, as GraphBLAS). "
    "Only plus_times has '-' and '/'";

Semiring semiringOption(const std::string& name) {
  if (name.empty()) return Semiring::plusTimes();
  try {
    return Semiring::byName(name);
  } catch (const NotationError& e) {
    throw UsageError(std::string("--semiring: ") + e.what());
  }
}

Assignment parseOver(const std::string& expr, const std::map<std::string, TensorBase>& tensors,
                     const Semiring& semiring, bool given) {
  if (!semiring.isPlusTimes()) {
    // Name the column of the first operator the semiring lacks (the right-hand side's
    // '-' or '/'; a '-' after an exponent's 'e' belongs to a number).
    size_t eq = expr.find('=');
    for (size_t k = eq == std::string::npos ? 0 : eq + 1; k < expr.size(); k++) {
      char c = expr[k];
      bool exponent = c == '-' && k >= 2 && (expr[k - 1] == 'e' || expr[k - 1] == 'E') &&
                      std::isdigit(static_cast<unsigned char>(expr[k - 2]));
      if ((c == '-' && !exponent) || c == '/')
        throw ParseError("semiring " + semiring.name + " has no '" + std::string(1, c) + "'", expr,
                         static_cast<int>(k) + 1);
    }
  }
  Assignment a = parseAssignment(expr, tensors);
  // `X @(add,mul) Y` writes the semiring in the text (the parser set it): --semiring
  // may only repeat it.
  if (expr.find('@') == std::string::npos)
    a.semiring = semiring;
  else if ((given || !semiring.isPlusTimes()) && !(semiring == a.semiring))
    throw UsageError("--semiring " + semiring.name + " disagrees with the expression's @(" + a.semiring.add.name +
                     "," + a.semiring.mul.name + ") (semiring " + a.semiring.name + ")");
  checkAssignment(a);
  return a;
}

MaskForm maskFormOption(const std::string& text) {
  if (text.empty() || text == "auto") return MaskForm::Auto;
  if (text == "pull") return MaskForm::Pull;
  if (text == "push") return MaskForm::Push;
  throw UsageError("--mask-form " + text + ": expected auto, pull or push");
}

MaskSpec maskSpecOf(bool on, const std::string& format, bool valued, bool complement, bool replace,
                    const std::string& form, const ExpressionArgs& args) {
  if (!on) {
    const char* given = complement ? "--complement" : valued ? "--mask-values" : replace ? "--replace"
                        : !format.empty() ? "--mask-format" : !form.empty() ? "--mask-form" : nullptr;
    if (given) throw UsageError(std::string(given) + " needs --mask");
    return {};
  }
  const TensorUse& out = args.output();
  Format f = format.empty() ? defaultFormat(out.order, false) : Format::parse(format);
  if (f.order() != out.order)
    throw FormatError("--mask-format '" + format + "' has " + std::to_string(f.order()) + " levels but the output " +
                      out.name + " has order " + std::to_string(out.order));
  return MaskSpec{true, valued, complement, replace, maskFormOption(form), f};
}

std::string maskName(const ExpressionArgs& args) {
  for (std::string name : {"M", "mask", "M_mask"})
    if (!args.byName.count(name)) return name;
  return "the_mask";
}

std::string generatedCode(const std::string& expr, const ExpressionArgs& args, const std::string& schedule,
                          int threads, const PassObserver& afterEachPass, const Semiring& semiring,
                          const MaskSpec& mask, bool semiringGiven) {
  std::map<std::string, TensorBase> tensors;
  for (const auto& u : args.uses)
    tensors.emplace(u.name, TensorBase(u.name, args.typeOf(u), std::vector<int64_t>(u.order, 1),
                                       args.formatOf(u)));
  Assignment a = parseOver(expr, tensors, semiring, semiringGiven);
  if (mask.on) {
    TensorBase m(maskName(args), Datatype::Float64, std::vector<int64_t>(args.output().order, 1), mask.format);
    a.mask = outputMask(Access(m, a.lhsNode().vars), mask.valued, mask.complement, mask.replace);
    a.mask.form = mask.form;
    checkAssignment(a);
  }
  std::string code = Kernel::emitC(a, chooseSchedule(schedule, threads, a).schedule, afterEachPass);
  if (!code.empty() && code.back() != '\n') code += '\n';
  return code;
}

std::vector<int64_t> inferOutputDims(const std::string& expr, const TensorUse& out,
                                     std::map<std::string, TensorVar> inputs) {
  std::vector<int64_t> dims(static_cast<size_t>(out.order), 1);
  inputs.emplace(out.name, TensorVar(out.name, Datatype::Float64, dims, defaultFormat(out.order, true)));
  Assignment a = parseAssignment(expr, inputs);
  const auto& lhsVars = a.lhsNode().vars;
  auto accesses = rhsAccesses(a);
  for (int m = 0; m < out.order; m++) {
    bool found = false;
    for (const auto* acc : accesses)
      for (size_t k = 0; k < acc->vars.size() && !found; k++)
        if (acc->vars[k] == lhsVars.at(static_cast<size_t>(m)) && acc->tensor.name() != out.name) {
          dims[static_cast<size_t>(m)] = acc->tensor.dims().at(k);
          found = true;
        }
    if (!found) throw NotationError("cannot infer the extent of index variable " + lhsVars.at(static_cast<size_t>(m)).name());
  }
  return dims;
}

}  // namespace tessel::cli
