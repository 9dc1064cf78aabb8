// `tessel run`: compile and run an expression on tensors read from files or generated.
//
//   tessel run "<expr>" [-f NAME:LEVELS[:ORDER]]... [-i NAME:FILE]... [-g NAME:KIND:ARGS]...
//                       [-o NAME:FILE] [-s SCHEDULE] [--threads N] [--emit-c] [--time[=REPS]]
//                       [--check] [--seed N] [--semiring NAME]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "expression_args.h"
#include "run_distributed.h"

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
  std::string semiring = "plus_times";  // --semiring
  std::string machine;                  // -m
  std::vector<std::string> distributions;  // -d NAME:DIST
  bool commStats = false;               // --comm-stats
};

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
  if (!hasExtension(path, ".tns") && !hasExtension(path, ".mtx") && !hasExtension(path, ".tsb"))
    throw UsageError("-o file '" + path + "' must end in .tns, .mtx or .tsb");
  if (hasExtension(path, ".mtx") && out.order != 2)
    throw UsageError("-o file '" + path + "': .mtx holds matrices, but " + out.name + " has order " +
                     std::to_string(out.order) + "; use .tns");
  auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir))
    throw FileError(path, "cannot write: directory " + dir.string() + " does not exist");
  return path;
}

std::map<std::string, TensorBase> loadInputs(const Options& opt, const ExpressionArgs& args,
                                             const Sources& src) {
  std::map<std::string, TensorBase> tensors;
  uint64_t seed = opt.seed;
  for (const auto& u : args.uses) {
    // An output is read only when given (parseSources allows that for += alone).
    if (u.isOutput && !src.files.count(u.name) && !src.specs.count(u.name)) continue;
    CooData coo;
    std::string origin;
    if (auto f = src.files.find(u.name); f != src.files.end() && hasExtension(f->second, ".tsb")) {
      // Binary tensors are mapped, not parsed, and keep their stored format unless -f says otherwise.
      TensorBase t = mapBinary(f->second, u.name);
      if (t.order() != u.order)
        throw DimensionError(f->second + " holds a tensor of order " + std::to_string(t.order()) + ", but " +
                             u.name + " has " + std::to_string(u.order) + " indices in the expression");
      if (args.formats.count(u.name) && !(args.formats.at(u.name) == t.format()))
        t = t.convert(withFittingWidths(args.formats.at(u.name), t.dims(), t.storedCount()), u.name);
      tensors.emplace(u.name, t);
      continue;
    }
    if (auto f = src.files.find(u.name); f != src.files.end()) {
      coo = readTensorFile(f->second).data;
      origin = f->second;
    } else if (auto g = src.specs.find(u.name); g != src.specs.end()) {
      coo = generateFromSpec(g->second, seed++);
      origin = "generated " + g->second;
    } else {
      throw UsageError("no input for tensor '" + u.name + "' (use -i " + u.name + ":FILE or -g " + u.name +
                       ":KIND:ARGS)");
    }
    if (coo.order() != u.order)
      throw DimensionError(origin + " holds a tensor of order " + std::to_string(coo.order()) + ", but " +
                           u.name + " has " + std::to_string(u.order) + " indices in the expression");
    TensorBase t(u.name, args.typeOf(u), coo.dims, withFittingWidths(args.formatOf(u), coo.dims, coo.nnz()));
    t.setFromCoo(coo);
    tensors.emplace(u.name, t);
  }
  return tensors;
}

double medianMs(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2] * 1e3;
}

/// Compile, run (REPS times with --time=REPS) and report times as medians.
/// `beforeLastRun` sees the tensors before the last run (a check of += needs them).
void compileAndRun(const Options& opt, const Assignment& a, const std::function<void()>& beforeLastRun) {
  auto t0 = std::chrono::steady_clock::now();
  Schedule schedule = chooseSchedule(opt.schedule, opt.threads, a);
  auto kernel = Kernel::compile(a, schedule);
  double compileMs = millis(std::chrono::steady_clock::now() - t0);
  int reps = std::max(1, opt.timeReps);
  std::vector<double> assemble, compute;
  for (int r = 0; r < reps; r++) {
    if (r == reps - 1) beforeLastRun();
    RunTimes t = kernel->run(a, opt.threads);
    assemble.push_back(t.assembleSeconds);
    compute.push_back(t.computeSeconds);
  }
  if (opt.timeReps > 0) {
    std::string over = reps > 1 ? " (median of " + std::to_string(reps) + " runs)" : "";
    if (!schedule.empty()) std::fprintf(stderr, "schedule: %s\n", schedule.str().c_str());
    std::fprintf(stderr, "compile: %.3f ms (%s)\n", compileMs, kernel->cacheHit() ? "cache hit" : "compiled");
    std::fprintf(stderr, "assemble: %.3f ms%s\n", medianMs(assemble), over.c_str());
    std::fprintf(stderr, "compute: %.3f ms%s\n", medianMs(compute), over.c_str());
  }
}

/// --check: compare with the reference evaluator's result for the last run (taken before
/// it: += reads the output); a mismatch is a tessel bug (exit 1).
void checkAgainstReference(const CooData& expected, const TensorBase& output, const Semiring& semiring) {
  std::string why;
  if (!tensorsClose(expected, output.toCoo(), 1e-9, 1e-12, &why, semiring))
    throw InternalError("check: the result differs from the reference evaluator: " + why);
  std::fprintf(stderr, "check: OK (matches the reference evaluator)\n");
}

int runCommand(const Options& opt) {
  if (wantsDistributed(opt.machine)) return runOnRanks(opt);
  if (!opt.distributions.empty() || opt.commStats)
    throw UsageError(std::string(opt.commStats ? "--comm-stats" : "-d") + " needs a machine: give -m (e.g. -m 2x2) and start with mpirun");
  Semiring semiring = semiringOption(opt.semiring);
  ExpressionArgs args = parseExpressionArgs(opt.expr, opt.formats, opt.types);
  Sources sources = parseSources(opt, args);
  std::optional<std::string> outPath = parseOutputPath(opt, args);
  if (opt.emitC) {
    std::string code = generatedCode(opt.expr, args, opt.schedule, opt.threads, {}, semiring);
    std::fwrite(code.data(), 1, code.size(), stdout);
    return 0;
  }
  const TensorUse& out = args.output();
  std::map<std::string, TensorBase> tensors = loadInputs(opt, args, sources);
  std::map<std::string, TensorVar> vars;
  for (const auto& [name, t] : tensors) vars.emplace(name, t.tensorVar());
  std::vector<int64_t> outDims = inferOutputDims(opt.expr, out, vars);
  TensorBase output(out.name, args.typeOf(out), outDims,
                    withFittingWidths(args.formatOf(out), outDims, dimsProduct(outDims)));
  if (auto start = tensors.find(out.name); start != tensors.end()) {  // += from given values
    if (start->second.dims() != outDims) {
      auto show = [](const std::vector<int64_t>& d) {
        std::string s;
        for (int64_t x : d) s += (s.empty() ? "" : "x") + std::to_string(x);
        return s;
      };
      throw DimensionError("the starting values given for " + out.name + " are " + show(start->second.dims()) +
                           ", but the expression makes " + out.name + " " + show(outDims));
    }
    output.setFromCoo(start->second.toCoo());
  }
  tensors.insert_or_assign(out.name, output);

  Assignment a = parseOver(opt.expr, tensors, semiring);
  CooData expected;
  compileAndRun(opt, a, [&] {
    if (opt.check) expected = referenceEvaluate(a);
  });
  if (opt.check) checkAgainstReference(expected, output, semiring);

  if (outPath && hasExtension(*outPath, ".tsb")) writeBinary(*outPath, output);  // in A's own format
  CooData result = output.toCoo();
  // Under another semiring 0 is a value like any other (absent is its zero, inf for
  // min_plus): a .tns then lists every entry the output holds.
  if (outPath && hasExtension(*outPath, ".tns") && !semiring.isPlusTimes())
    writeTns(*outPath, result, false);
  else if (outPath && !hasExtension(*outPath, ".tsb"))
    writeTensorFile(*outPath, result);
  if (out.order == 0) {
    double v = 0;
    for (double x : result.values) v += x;
    std::printf("%.17g\n", v);
  }
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
                "Print compile, assemble and compute times to stderr; --time=REPS runs REPS times "
                "and prints medians");
  run->add_flag("--check", opt->check, "Compare the result with the reference evaluator");
  run->add_option("--seed", opt->seed, "Seed for -g generators (default 1)");
  run->add_option("-s,--schedule", opt->schedule,
                  "Schedule commands, e.g. \"split(i,i0,i1,32),parallelize(i0,cpu_thread,no_races)\" "
                  "(split divide pos fuse reorder precompute parallelize unroll bound); precompute(j), precompute(expr,t) "
                  "before all loops, precompute(expr,t,j) inside the loop over j")
      ->type_name("COMMANDS");
  run->add_option("--semiring", opt->semiring, kSemiringHelp)->type_name("NAME");
  run->add_option("--threads", opt->threads,
                  "Threads for parallel loops (default 1). Without -s, more than one thread picks a "
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
  run->callback([&action, opt] { action = [opt] { return runCommand(*opt); }; });
}

}  // namespace tessel::cli
