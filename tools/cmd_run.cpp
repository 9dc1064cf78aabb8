// `tessel run`: compile and run an expression on tensors read from files or generated.
//
//   tessel run "<expr>" [-f NAME:LEVELS[:ORDER]]... [-i NAME:FILE]... [-g NAME:KIND:ARGS]...
//                       [-o NAME:FILE] [-s SCHEDULE] [--threads N] [--emit-c] [--time[=REPS]]
//                       [--check] [--seed N] [--semiring NAME] [--dims NAME:D1,D2,...] [--json]
//                       [--mask FILE|NAME [--mask-format LEVELS[:ORDER]] [--mask-values] [--complement]
//                        [--replace] [--mask-form auto|pull|push]]
//
// --check exits 4 when the result differs from the reference evaluator.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "expression_args.h"
#include "run_distributed.h"

#include <nlohmann/json.hpp>

namespace tessel::cli {

namespace {

struct Options {
  std::string expr;
  std::vector<std::string> formats;     // NAME:LEVELS[:ORDER]
  std::vector<std::string> types;       // NAME:TYPE
  std::vector<std::string> inputs;      // NAME:FILE
  std::vector<std::string> generated;   // NAME:KIND:ARGS
  std::string output;                   // NAME:FILE
  bool emitC = false;
  int timeReps = 0;                     // --time[=REPS]
  bool check = false;
  uint64_t seed = 1;
  std::string schedule;                 // -s
  int threads = 1;                      // --threads
  std::string semiring;  // --semiring; empty: not given (plus_times, or the expression's @(...))
  std::string machine;                  // -m
  std::vector<std::string> distributions;  // -d NAME:DIST
  bool commStats = false;               // --comm-stats
  std::vector<std::string> dims;        // --dims NAME:D1,D2,...
  bool json = false;                    // --json
  std::string mask;                     // --mask FILE, or the name of an input tensor
  std::string maskFormat;               // --mask-format LEVELS[:ORDER]
  bool maskValues = false;              // --mask-values
  bool complement = false;              // --complement
  bool replace = false;                 // --replace
  std::string maskForm;                 // --mask-form auto|pull|push
};

/// The mask options without --mask: a usage error naming the first one given.
void checkMaskOptions(const Options& opt) {
  if (!opt.mask.empty()) return;
  const char* given = opt.complement ? "--complement" : opt.maskValues ? "--mask-values" : opt.replace ? "--replace"
                      : !opt.maskFormat.empty() ? "--mask-format" : !opt.maskForm.empty() ? "--mask-form" : nullptr;
  if (given) throw UsageError(std::string(given) + " needs --mask FILE (or --mask NAME of an input tensor)");
}



/// What --time and --json report: each phase's times in milliseconds (one per run for
/// assemble and compute, one for the others; empty: the phase did not happen).
struct PhaseTimes {
  /// In the order they happen (fixed: references into it stay valid).
  std::vector<std::pair<std::string, std::vector<double>>> phases{
      {"read", {}}, {"pack", {}}, {"compile", {}}, {"assemble", {}}, {"compute", {}}, {"write", {}}, {"check", {}}};
  std::string schedule;
  std::string tuning;  ///< the host CPU's tuning the kernel was compiled with (tessel/tuning.h)
  int threads = 1;
  bool cacheHit = false;
  std::vector<double>& at(const std::string& name) {
    for (auto& [n, v] : phases)
      if (n == name) return v;
    throw std::logic_error("no phase " + name);
  }
  void add(const std::string& name, double ms) { at(name).push_back(ms); }
};

double medianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

/// --time: one line per phase on stderr (min / median / max when repeated).
void printTimes(const PhaseTimes& t) {
  std::fprintf(stderr, "threads: %d\n", t.threads);
  std::fprintf(stderr, "schedule: %s\n", t.schedule.c_str());
  if (!t.tuning.empty()) std::fprintf(stderr, "tuning: %s\n", t.tuning.c_str());
  for (const auto& [name, ms] : t.phases) {
    if (ms.empty()) continue;
    auto [lo, hi] = std::minmax_element(ms.begin(), ms.end());
    std::string extra = name == "compile" ? (t.cacheHit ? " (cache hit)" : " (compiled)") : "";
    if (ms.size() > 1)
      std::fprintf(stderr, "%s: %.3f ms (median of %zu runs; min %.3f, max %.3f)\n", name.c_str(), medianOf(ms),
                   ms.size(), *lo, *hi);
    else
      std::fprintf(stderr, "%s: %.3f ms%s\n", name.c_str(), ms[0], extra.c_str());
  }
}

/// --json: the same as one object on stdout (and a scalar result as "value").
void printJson(const PhaseTimes& t, const std::optional<double>& value, bool checked) {
  nlohmann::ordered_json j;
  j["threads"] = t.threads;
  j["schedule"] = t.schedule;
  if (!t.tuning.empty()) j["tuning"] = t.tuning;
  j["compile_cache_hit"] = t.cacheHit;
  nlohmann::ordered_json phases = nlohmann::ordered_json::object();
  for (const auto& [name, ms] : t.phases) {
    if (ms.empty()) continue;
    auto [lo, hi] = std::minmax_element(ms.begin(), ms.end());
    phases[name] = {{"runs", ms.size()}, {"min_ms", *lo}, {"median_ms", medianOf(ms)}, {"max_ms", *hi}};
  }
  j["phases"] = phases;
  if (checked) j["check"] = "ok";
  if (value) j["value"] = *value;
  std::string text = j.dump(2) + "\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
}

/// --dims NAME:D1,D2,...
std::map<std::string, std::vector<int64_t>> parseDims(const Options& opt, const ExpressionArgs& args) {
  std::map<std::string, std::vector<int64_t>> out;
  for (const auto& arg : opt.dims) {
    auto [name, list] = splitNamed(arg, "--dims", "D1,D2,...");
    args.requireKnown(name, "--dims");
    std::vector<int64_t> ds;
    size_t at = 0;
    while (at <= list.size()) {
      size_t comma = list.find(',', at);
      std::string tok = list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      char* end = nullptr;
      long long v = tok.empty() ? -1 : std::strtoll(tok.c_str(), &end, 10);
      if (tok.empty() || *end != '\0' || v < 0)
        throw UsageError("malformed --dims argument '" + arg + "': expected NAME:D1,D2,... with non-negative sizes");
      ds.push_back(v);
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    const TensorUse& u = args.byName.at(name);
    if (static_cast<int>(ds.size()) != u.order)
      throw UsageError("--dims gives " + std::to_string(ds.size()) + " dimensions for " + name + ", which has " +
                       std::to_string(u.order) + " indices in the expression");
    if (!out.emplace(name, ds).second) throw UsageError("--dims is given twice for tensor '" + name + "'");
  }
  return out;
}

/// An n x 1 or 1 x n matrix read for a tensor used with one index: the vector of its entries.
void matrixAsVector(CooData& coo, const TensorUse& u) {
  if (u.order != 1 || coo.order() != 2 || (coo.dims[0] != 1 && coo.dims[1] != 1)) return;
  const int keep = coo.dims[1] == 1 ? 0 : 1;
  CooData v;
  v.dims = {coo.dims[static_cast<size_t>(keep)]};
  v.values = coo.values;
  v.coords.reserve(coo.values.size());
  for (int64_t e = 0; e < coo.nnz(); e++) v.coords.push_back(coo.coords[static_cast<size_t>(2 * e + keep)]);
  coo = std::move(v);
}

int runOnRanks(const Options& opt) {
  DistributedRunOptions d;
  d.expr = opt.expr;
  d.formats = opt.formats;
  d.types = opt.types;
  d.inputs = opt.inputs;
  d.generated = opt.generated;
  d.distributions = opt.distributions;
  d.output = opt.output;
  d.schedule = opt.schedule;
  d.machine = opt.machine;
  d.semiring = opt.semiring;
  d.threads = opt.threads;
  d.timeReps = opt.timeReps;
  d.check = opt.check;
  d.commStats = opt.commStats;
  d.emit = opt.emitC;
  d.seed = opt.seed;
  d.json = opt.json;
  d.dims = parseDims(opt, parseExpressionArgs(opt.expr, opt.formats, opt.types));
  if (!opt.mask.empty()) throw UsageError("--mask is not supported with -m yet (a single-node kernel only)");
  return runDistributed(d);
}

/// Where each input comes from: a file or a generator spec.
struct Sources {
  std::map<std::string, std::string> files, specs;
};

Sources parseSources(const Options& opt, const ExpressionArgs& args) {
  Sources s;
  auto add = [&](const std::string& arg, const char* option, const char* what,
                 std::map<std::string, std::string>& into) {
    auto [name, value] = splitNamed(arg, option, what);
    args.requireKnown(name, option);
    const TensorUse& use = args.byName.at(name);
    if (use.isOutput && !use.accumulated)
      throw UsageError(std::string(option) + " names the output tensor '" + name +
                       "'; give inputs only (an output's starting values are read only for +=)");
    if (s.files.count(name) || s.specs.count(name))
      throw UsageError("tensor '" + name + "' is given more than one source (-i/-g)");
    into.emplace(name, value);
  };
  for (const auto& arg : opt.inputs) add(arg, "-i", "FILE", s.files);
  for (const auto& arg : opt.generated) add(arg, "-g", "KIND:ARGS", s.specs);
  return s;
}

std::optional<std::string> parseOutputPath(const Options& opt, const ExpressionArgs& args) {
  if (opt.output.empty()) return std::nullopt;
  const TensorUse& out = args.output();
  auto [name, path] = splitNamed(opt.output, "-o", "FILE");
  args.requireKnown(name, "-o");
  if (!args.byName.at(name).isOutput)
    throw UsageError("-o names tensor '" + name + "', but the output is '" + out.name + "'");
  const std::string ext = textExtension(path);
  if ((ext != ".tns" && ext != ".mtx" && !hasExtension(path, ".tsb")) || (hasExtension(path, ".gz") && ext == ".tsb"))
    throw UsageError("-o file '" + path + "' must end in .tns, .mtx, .tns.gz, .mtx.gz or .tsb");
  if (ext == ".mtx" && out.order != 2 && out.order != 1)
    throw UsageError("-o file '" + path + "': .mtx holds matrices (and vectors, as n x 1), but " + out.name +
                     " has order " + std::to_string(out.order) + "; use .tns");
  auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir))
    throw FileError(path, "cannot write: directory " + dir.string() + " does not exist");
  return path;
}

std::map<std::string, TensorBase> loadInputs(const Options& opt, const ExpressionArgs& args,
                                             const Sources& src, PhaseTimes& times) {
  using Clock = std::chrono::steady_clock;
  const auto dimsOf = parseDims(opt, args);
  double readMs = 0, packMs = 0;
  std::map<std::string, TensorBase> tensors;
  uint64_t seed = opt.seed;
  for (const auto& u : args.uses) {
    // An output is read only when given (parseSources allows that for += alone).
    if (u.isOutput && !src.files.count(u.name) && !src.specs.count(u.name)) continue;
    CooData coo;
    std::string origin;
    if (auto f = src.files.find(u.name); f != src.files.end() && hasExtension(f->second, ".tsb")) {
      // Binary tensors are mapped, not parsed, and keep their stored format unless -f says otherwise.
      auto t0 = Clock::now();
      TensorBase t = mapBinary(f->second, u.name);
      readMs += millis(Clock::now() - t0);
      if (dimsOf.count(u.name) && dimsOf.at(u.name) != t.dims())
        throw UsageError("--dims does not apply to the binary file " + f->second + " (it holds " + u.name + " as " +
                         showDims(t.dims()) + ")");
      if (t.order() != u.order)
        throw DimensionError(f->second + " holds a tensor of order " + std::to_string(t.order()) + ", but " +
                             u.name + " has " + std::to_string(u.order) + " indices in the expression");
      t0 = Clock::now();
      if (args.formats.count(u.name) && !(args.formats.at(u.name) == t.format()))
        t = t.convert(withFittingWidths(args.formats.at(u.name), t.dims(), t.storedCount()), u.name);
      packMs += millis(Clock::now() - t0);
      tensors.emplace(u.name, t);
      continue;
    }
    auto t0 = Clock::now();
    if (auto f = src.files.find(u.name); f != src.files.end()) {
      coo = readTensorFile(f->second).data;
      origin = f->second;
      matrixAsVector(coo, u);
    } else if (auto g = src.specs.find(u.name); g != src.specs.end()) {
      coo = generateFromSpec(g->second, seed++);
      origin = "generated " + g->second;
    } else {
      throw UsageError("no input for tensor '" + u.name + "' (use -i " + u.name + ":FILE or -g " + u.name +
                       ":KIND:ARGS)");
    }
    readMs += millis(Clock::now() - t0);
    if (coo.order() != u.order)
      throw DimensionError(origin + " holds a tensor of order " + std::to_string(coo.order()) + ", but " +
                           u.name + " has " + std::to_string(u.order) + " indices in the expression" +
                           (coo.order() == 2 && u.order == 1 ? " (a matrix is read as a vector only when it is n x 1 or 1 x n)" : ""));
    if (auto d = dimsOf.find(u.name); d != dimsOf.end()) applyDims(coo, u.name, d->second, origin);
    t0 = Clock::now();
    TensorBase t(u.name, args.typeOf(u), coo.dims, withFittingWidths(args.formatOf(u), coo.dims, coo.nnz()));
    t.setFromCoo(coo);
    packMs += millis(Clock::now() - t0);
    tensors.emplace(u.name, t);
  }
  times.add("read", readMs);
  times.add("pack", packMs);
  return tensors;
}

/// --mask-format, else the mask's default: an input tensor's own format, or the input
/// default (dense, then compressed) of the output's order.
Format maskFormatOf(const Options& opt, const ExpressionArgs& args) {
  const TensorUse& out = args.output();
  if (opt.maskFormat.empty()) {
    auto in = args.byName.find(opt.mask);
    return in != args.byName.end() && !in->second.isOutput ? args.formatOf(in->second) : defaultFormat(out.order, false);
  }
  Format f = Format::parse(opt.maskFormat);
  if (f.order() != out.order)
    throw FormatError("--mask-format '" + opt.maskFormat + "' has " + std::to_string(f.order()) +
                      " levels but the output " + out.name + " has order " + std::to_string(out.order));
  return f;
}

/// --mask: an input tensor of the expression by name, or a file read as float64 in the
/// mask's format; it must have the output's shape.
TensorBase loadMask(const Options& opt, const ExpressionArgs& args, const std::map<std::string, TensorBase>& tensors,
                    const std::vector<int64_t>& outDims, PhaseTimes& times) {
  const TensorUse& out = args.output();
  Format format = maskFormatOf(opt, args);
  if (auto in = args.byName.find(opt.mask); in != args.byName.end()) {
    if (in->second.isOutput) throw UsageError("--mask " + opt.mask + ": the output cannot be its own mask");
    const TensorBase& t = tensors.at(opt.mask);
    if (t.dims() != outDims)
      throw DimensionError("--mask " + opt.mask + " is " + showDims(t.dims()) + " but the output " + out.name + " is " +
                           showDims(outDims) + ": a mask has the output's shape");
    return t.format() == format ? t : t.convert(withFittingWidths(format, t.dims(), t.storedCount()), opt.mask);
  }
  auto t0 = std::chrono::steady_clock::now();
  CooData coo = readTensorFile(opt.mask).data;
  matrixAsVector(coo, out);
  if (coo.dims != outDims)
    throw DimensionError("--mask " + opt.mask + " holds a " + showDims(coo.dims) + " tensor but the output " +
                         out.name + " is " + showDims(outDims) + ": a mask has the output's shape");
  TensorBase m(maskName(args), Datatype::Float64, coo.dims, withFittingWidths(format, coo.dims, coo.nnz()));
  m.setFromCoo(coo);
  times.add("read", millis(std::chrono::steady_clock::now() - t0));
  return m;
}

/// A kernel's bound() check failed: name the bound and the variable's actual extent
/// (from the dims of the tensors it indexes).
void explainBrokenBound(const ScheduleError& e, const Schedule& schedule, const Assignment& a) {
  if (std::string(e.what()).find("bound()") == std::string::npos) return;
  std::vector<const ExprNode*> accesses = rhsAccesses(a);
  for (const ScheduleCommand& c : schedule.commands()) {
    if (c.kind != ScheduleCommand::Kind::Bound || c.vars.empty()) continue;
    int64_t extent = -1;
    for (const ExprNode* n : accesses)
      for (size_t m = 0; m < n->vars.size(); m++)
        if (n->vars[m] == c.vars[0] && m < n->tensor.dims().size()) extent = n->tensor.dims()[m];
    if (extent < 0) continue;
    bool broken = c.boundKind == BoundKind::MaxExact ? extent != c.amount : extent > c.amount;
    if (broken)
      throw ScheduleError("schedule command " + c.str() + ": the bound() does not hold: " + c.vars[0].name() + " has extent " +
                          std::to_string(extent) + " here, but the bound promises " +
                          (c.boundKind == BoundKind::MaxExact ? "exactly " : "at most ") + std::to_string(c.amount));
  }
}

/// Compile, run (REPS times with --time=REPS), recording each phase's time.
/// `beforeLastRun` sees the tensors before the last run (a check of += needs them).
void compileAndRun(const Options& opt, const Assignment& a, const std::function<void()>& beforeLastRun,
                   PhaseTimes& times) {
  auto t0 = std::chrono::steady_clock::now();
  const ScheduleChoice choice = chooseSchedule(opt.schedule, opt.threads, a);
  const Schedule& schedule = choice.schedule;
  auto kernel = Kernel::compile(a, schedule);
  // After compiling: a schedule error stays the one line on stderr.
  // The choice may keep a small kernel on one thread: every stage then runs on one.
  warnAboutThreads(opt.schedule.empty() ? schedule.str() : opt.schedule, choice.threads);
  times.add("compile", millis(std::chrono::steady_clock::now() - t0));
  times.cacheHit = kernel->cacheHit();
  times.tuning = hostTuning().str();
  times.threads = choice.threads;
  times.schedule = schedule.empty() ? "none (loops in the expression's index order, serial)"
                   : opt.schedule.empty() ? schedule.str() + " (" + choice.reason + ")"
                                          : schedule.str();
  int reps = std::max(1, opt.timeReps);
  std::vector<double>& assemble = times.at("assemble");
  std::vector<double>& compute = times.at("compute");
  for (int r = 0; r < reps; r++) {
    if (r == reps - 1) beforeLastRun();
    RunTimes t;
    try {
      t = kernel->run(a, choice.threads);
    } catch (const ScheduleError& e) {
      explainBrokenBound(e, schedule, a);
      throw;
    }
    assemble.push_back(t.assembleSeconds * 1e3);
    compute.push_back(t.computeSeconds * 1e3);
  }
}

/// The expression with binary and unary minus made plus: over the inputs' absolute
/// values it gives the magnitude of the summands at each coordinate ("1e-3" kept).
std::string withoutMinus(const std::string& expr) {
  std::string s = expr;
  for (size_t k = 0; k < s.size(); k++)
    if (s[k] == '-' && !(k >= 2 && (s[k - 1] == 'e' || s[k - 1] == 'E') && std::isdigit(static_cast<unsigned char>(s[k - 2]))))
      s[k] = '+';
  return s;
}

/// The magnitude of the summands of each entry of the result: the expression (minus made
/// plus) over copies of the tensors holding absolute values. Empty when that expression
/// does not parse (then the check scales by the result alone).
std::optional<CooData> summandMagnitude(const std::string& expr, const std::map<std::string, TensorBase>& tensors,
                                        const Semiring& semiring) {
  if (!semiring.isPlusTimes()) return std::nullopt;
  std::map<std::string, TensorBase> copies;
  for (const auto& [name, t] : tensors) {
    CooData c = t.toCoo();
    for (double& v : c.values) v = std::fabs(v);
    TensorBase a(name, t.datatype(), t.dims(), t.format());
    a.setFromCoo(c);
    copies.emplace(name, a);
  }
  try {
    return referenceEvaluate(parseOver(withoutMinus(expr), copies, semiring));
  } catch (const UserError&) {
    return std::nullopt;
  }
}

/// --check: compare with the reference evaluator's result for the last run (taken before
/// it: += reads the output), with a tolerance scaled by the magnitude of the summands
/// (relative `rtol`); a mismatch exits 4.
/// An integer output stores a semiring's infinities (min_plus's +inf, max_plus's -inf)
/// as its type's extremes, INT64_MAX for +inf in an int64 (src/lower/semiring_ir.h); read
/// back, those are the infinities the reference evaluator writes.
CooData withIntegerInfinities(CooData c, Datatype type, const Semiring& semiring) {
  const double zero = semiring.zero();
  if (!std::isinf(zero) || (type != Datatype::Int32 && type != Datatype::Int64)) return c;
  const double extreme = type == Datatype::Int32 ? (zero > 0 ? 2147483647.0 : -2147483648.0)
                                                 : (zero > 0 ? 9223372036854775807.0 : -9223372036854775808.0);
  for (double& v : c.values)
    if (v == extreme) v = zero;
  return c;
}

void checkAgainstReference(const CooData& expected, const std::optional<CooData>& magnitude, const TensorBase& output,
                           const Semiring& semiring, double rtol) {
  std::string why;
  const Datatype type = output.datatype();
  if (!tensorsCloseScaled(withIntegerInfinities(expected, type, semiring),
                          withIntegerInfinities(output.toCoo(), type, semiring), magnitude ? &*magnitude : nullptr,
                          rtol, 1e-12, &why, semiring))
    throw CheckMismatch("the result differs from the reference evaluator " + why);
  std::fprintf(stderr, "check: OK (matches the reference evaluator)\n");
}

int runCommand(const Options& opt) {
  if (wantsDistributed(opt.machine)) return runOnRanks(opt);
  if (!opt.distributions.empty() || opt.commStats)
    throw UsageError(std::string(opt.commStats ? "--comm-stats" : "-d") + " needs a machine: give -m (e.g. -m 2x2) and start with mpirun");
  Semiring semiring = semiringOption(opt.semiring);
  checkMaskOptions(opt);
  maskFormOption(opt.maskForm);
  ExpressionArgs args = parseExpressionArgs(opt.expr, opt.formats, opt.types);
  Sources sources = parseSources(opt, args);
  std::optional<std::string> outPath = parseOutputPath(opt, args);
  if (opt.emitC) {
    MaskSpec spec{!opt.mask.empty(), opt.maskValues, opt.complement, opt.replace, maskFormOption(opt.maskForm),
                  maskFormatOf(opt, args)};
    std::string code =
        generatedCode(opt.expr, args, opt.schedule, opt.threads, {}, semiring, spec, !opt.semiring.empty());
    std::fwrite(code.data(), 1, code.size(), stdout);
    return 0;
  }
  const TensorUse& out = args.output();
  PhaseTimes times;
  std::map<std::string, TensorBase> tensors = loadInputs(opt, args, sources, times);
  std::map<std::string, TensorVar> vars;
  for (const auto& [name, t] : tensors) vars.emplace(name, t.tensorVar());
  std::vector<int64_t> outDims = inferOutputDims(opt.expr, out, vars);
  TensorBase output(out.name, args.typeOf(out), outDims,
                    withFittingWidths(args.formatOf(out), outDims, dimsProduct(outDims)));
  if (auto start = tensors.find(out.name); start != tensors.end()) {  // += from given values
    if (start->second.dims() != outDims)
      throw DimensionError("the starting values given for " + out.name + " are " + showDims(start->second.dims()) +
                           ", but the expression makes " + out.name + " " + showDims(outDims));
    output.setFromCoo(start->second.toCoo());
  }
  tensors.insert_or_assign(out.name, output);

  Assignment a = parseOver(opt.expr, tensors, semiring, !opt.semiring.empty());
  semiring = a.semiring;  // an @(add,mul) in the text names it
  if (!opt.mask.empty()) {
    a.mask = outputMask(Access(loadMask(opt, args, tensors, outDims, times), a.lhsNode().vars), opt.maskValues,
                        opt.complement, opt.replace);
    a.mask.form = maskFormOption(opt.maskForm);
    checkAssignment(a);
  }
  CooData expected;
  std::optional<CooData> magnitude;
  double referenceMs = 0;
  compileAndRun(opt, a, [&] {
    if (!opt.check) return;
    auto t0 = std::chrono::steady_clock::now();
    expected = referenceEvaluate(a);
    magnitude = summandMagnitude(opt.expr, tensors, semiring);
    referenceMs = millis(std::chrono::steady_clock::now() - t0);
  }, times);
  if (opt.check) {
    auto t0 = std::chrono::steady_clock::now();
    // float32 anywhere: the kernel rounds to ~1e-7 where the reference keeps doubles.
    bool single = false;
    for (const auto& [name, t] : tensors) single = single || t.datatype() == Datatype::Float32;
    checkAgainstReference(expected, magnitude, output, semiring, single ? 1e-5 : 1e-9);
    times.add("check", referenceMs + millis(std::chrono::steady_clock::now() - t0));
  }

  auto t0 = std::chrono::steady_clock::now();
  if (outPath && hasExtension(*outPath, ".tsb")) writeBinary(*outPath, output);  // in A's own format
  // An integer output holds the semiring's infinities as its type's extremes (INT64_MAX
  // for min_plus's +inf): written, and printed, as inf, the way a float output's are.
  CooData result = withIntegerInfinities(output.toCoo(), output.datatype(), semiring);
  if (outPath && out.order == 1 && textExtension(*outPath) == ".mtx") {  // a vector as an n x 1 matrix
    CooData m;
    m.dims = {result.dims[0], 1};
    m.values = result.values;
    for (int64_t c : result.coords) m.coords.insert(m.coords.end(), {c, 0});
    result = std::move(m);
  }
  // Under another semiring 0 is a value like any other (absent is its zero, inf for
  // min_plus): a .tns then lists every entry the output holds.
  if (outPath && textExtension(*outPath) == ".tns" && !semiring.isPlusTimes())
    writeTns(*outPath, result, false);
  else if (outPath && !hasExtension(*outPath, ".tsb"))
    writeTensorFile(*outPath, result);
  if (outPath) times.add("write", millis(std::chrono::steady_clock::now() - t0));
  std::optional<double> value;
  if (out.order == 0) {
    double v = 0;
    for (double x : result.values) v += x;
    value = v;
  }
  if (opt.timeReps > 0 && !opt.json) printTimes(times);
  if (opt.json)
    printJson(times, value, opt.check);
  else if (value)
    std::printf("%.17g\n", *value);
  return 0;
}

}  // namespace

void registerRun(CLI::App& app, Action& action) {
  auto opt = std::make_shared<Options>();
  CLI::App* run = app.add_subcommand(
      "run",
      "Compile and run a tensor-index-notation expression, e.g.\n"
      "  tessel run \"a(i) = B(i,j) * c(j)\" -f B:ds -i B:B.mtx -i c:c.tns -o a:a.tns\n"
      "  tessel run \"a(i) = B(i,j) * c(j)\" -g B:uniform:10000,10000,8 -g c:dense:10000 --time=10 --check");
  run->add_option("expr", opt->expr, "The expression, e.g. \"A(i,j) = B(i,k) * C(k,j) + D(i,j)\" (each term sums over its own variables not on the left; sum(j, e) places a sum explicitly)")->required();
  run->add_option("-f,--format", opt->formats,
                  "Format of a tensor: level letters (d dense, s compressed, u compressed "
                  "non-unique, q singleton, b bitmap), optional mode order: B:ds is CSR, B:ds:1,0 is CSC. "
                  "Default: inputs d then s for lower levels, output dense")
      ->type_name("NAME:LEVELS[:ORDER]")
      ->allow_extra_args(false);
  run->add_option("-t,--type", opt->types, kTypeHelp)->type_name("NAME:TYPE")->allow_extra_args(false);
  run->add_option("-i,--input", opt->inputs,
                  "Input tensor file: .mtx, .tns (or gzip of either), or binary .tsb (mapped, keeps its format)")
      ->type_name("NAME:FILE")
      ->allow_extra_args(false);
  run->add_option("-g,--generate", opt->generated,
                  "Generate an input instead of reading it (kinds as for `tessel generate`), e.g. "
                  "B:uniform:1000,1000,8 or c:dense:1000")
      ->type_name("NAME:KIND:ARGS")
      ->allow_extra_args(false);
  run->add_option("-o,--output", opt->output,
                  "Write the output tensor: .tns (1-based, zeros omitted under plus_times; inf written as inf), "
                  ".mtx, or .tsb (binary, in its format)")
      ->type_name("NAME:FILE");
  run->add_flag("--emit-c", opt->emitC, "Print the generated C code and exit (no inputs needed)");
  run->add_flag("--time{1}", opt->timeReps,
                "Print the thread count, the schedule and each phase's time to stderr (read, pack, compile, "
                "assemble, compute, write, check); --time=REPS runs the kernel REPS times and prints the "
                "median, min and max");
  run->add_flag("--check", opt->check,
                "Compare the result with the reference evaluator, with a tolerance scaled by the magnitude of "
                "the summands at each entry; a mismatch exits with status 4");
  run->add_option("--dims", opt->dims,
                  "Dimensions of an input, e.g. B:5,7 (its entries must fit): trailing empty rows or columns a "
                  "file does not show. A .tns written by tessel records its dims in a '# tessel dims:' comment")
      ->type_name("NAME:D1,D2,...")
      ->allow_extra_args(false);
  run->add_flag("--json", opt->json,
                "Print the --time report (every phase, min/median/max, threads, schedule; a scalar result as "
                "\"value\") as one JSON object on stdout");
  run->add_option("--seed", opt->seed, "Seed for -g generators (default 1)");
  run->add_option("-s,--schedule", opt->schedule,
                  "Schedule commands, e.g. \"split(i,i0,i1,32),parallelize(i0,cpu_thread,no_races)\" "
                  "(split divide pos fuse reorder precompute parallelize unroll bound); precompute(j), precompute(expr,t) "
                  "before all loops, precompute(expr,t,j) inside the loop over j")
      ->type_name("COMMANDS");
  run->add_option("--semiring", opt->semiring, kSemiringHelp)->type_name("NAME");
  run->add_option("--mask", opt->mask,
                  "Output mask (GraphBLAS's C<M>): the output is written only where M stores an entry. FILE "
                  "(.mtx/.tns, the output's shape) or the NAME of an input tensor of the expression. With =, the "
                  "output is absent (dense: the semiring's zero) where the mask is false; with +=, it keeps its old "
                  "values there (see --replace)")
      ->type_name("FILE|NAME");
  run->add_option("--mask-format", opt->maskFormat, "Format of a --mask FILE (default: d then s, e.g. ds)")
      ->type_name("LEVELS[:ORDER]");
  run->add_flag("--mask-values", opt->maskValues, "The mask is true where M stores a nonzero (valued), not wherever it stores an entry");
  run->add_flag("--complement", opt->complement, "Complement the mask (C<!M>): write only where the mask is false");
  run->add_flag("--replace", opt->replace, "With +=: remove the output's entries where the mask is false (= always does)");
  run->add_option("--mask-form", opt->maskForm,
                  "A masked product's form: pull (a dot product per mask entry), push (Gustavson's rows, kept "
                  "where the mask allows) or auto (default: from the operands' and the mask's non-zeros)")
      ->type_name("auto|pull|push");
  CLI::Option* threads = run->add_option("--threads", opt->threads,
                  "Threads for parallel loops (default: OMP_NUM_THREADS, else 1). Without -s, more than one thread picks a "
                  "parallel schedule: blocks of output rows, or an even split of non-zeros for skewed rows")
      ->check(CLI::Range(1, 4096));
  run->add_option("-m,--machine", opt->machine,
                  "Run distributed on a grid of MPI ranks: 4, 2x2, 2x2x2 (start with mpirun -np <ranks>); "
                  "--threads then sets the threads inside each rank")
      ->type_name("GRID");
  run->add_option("-d,--distribution", opt->distributions,
                  "Distribution of a tensor over the machine (DISTAL notation): A:xy->xy (blocks), B:xy->x (rows), "
                  "A:xy->xy0 (fixed), c:x->* (replicated). Default: the first dimension in blocks over all ranks")
      ->type_name("NAME:DIST")
      ->allow_extra_args(false);
  run->add_flag("--comm-stats", opt->commStats,
                "Distributed: bytes each tensor moved, next to the schedule's formula");
  run->callback([&action, opt, threads] {
    action = [opt, given = threads->count() > 0] {
      if (!given) opt->threads = defaultThreads();
      return runCommand(*opt);
    };
  });
}

}  // namespace tessel::cli
