// The distributed `tessel run`: every rank parses the same arguments, reads its byte range
// of each input file (entries then go to their owners), the kernel runs SPMD, every rank
// writes its piece of -o into one file; rank 0 gathers only to --check or print a scalar.
#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "expression_args.h"
#include "rank_phases.h"
#include "run_distributed.h"
#include "tessel/binary_format.h"
#include "tessel/distributed.h"

namespace tessel::cli {

bool wantsDistributed(const std::string& machine) { return !machine.empty() || worldSize() > 1; }

namespace {

/// -d NAME:DIST, else the first dimension in blocks over every rank.
std::pair<Distribution, Grid> placementOf(const std::string& name, int order, const Machine& m,
                                          const std::map<std::string, std::string>& given) {
  auto it = given.find(name);
  if (it != given.end()) {
    Distribution d = Distribution::parse(it->second);
    d.check(name, order, m.grid);
    return {d, m.grid};
  }
  if (order == 0) return {Distribution(), m.grid};  // a scalar lives on every rank
  std::string letters = std::string("abcdefghijklmnop").substr(0, static_cast<size_t>(order));
  return {Distribution::parse(letters + "->a"), Grid(m.grid.size())};
}

/// The format of an input's pieces when they are sparse (SpDISTAL): the -f format when it
/// has a sparse level; else, for a matrix or higher-order input that is sparse (fewer
/// entries than its volume) or distributed by non-zeros, the tool's default (dense rows,
/// compressed below: CSR for a matrix). Nothing: dense pieces (-f NAME:dd forces them).
std::optional<Format> sparseFormatOf(const TensorUse& u, const ExpressionArgs& args, const std::vector<int64_t>& dims,
                                     int64_t nnz, const Distribution& dist) {
  if (args.formats.count(u.name)) {
    const Format& f = args.formats.at(u.name);
    if (f.isAllDense()) return std::nullopt;
    return f;
  }
  if (u.order < 2) return std::nullopt;
  long double volume = 1;
  for (int64_t n : dims) volume *= static_cast<long double>(n);
  if (!dist.byNonZeros() && static_cast<long double>(nnz) >= volume) return std::nullopt;
  return Format::parse("d" + std::string(static_cast<size_t>(u.order - 1), 's'));
}

/// The largest block's non-zeros over the mean when the rows of `t` (its entries: this
/// rank's share of a file read in parallel, else all of them) are cut into equal blocks,
/// one per rank (1: balanced). Collective when `shared`.
double rowBlockImbalance(const CooData& t, int parts, bool shared) {
  if (parts < 2 || t.dims.empty() || t.dims[0] == 0) return 1.0;
  std::vector<int64_t> perBlock(static_cast<size_t>(parts), 0);
  const int64_t size = (t.dims[0] + parts - 1) / parts;  // as blockOf and divide() cut
  for (int64_t x = 0; x < t.nnz(); x++) perBlock[static_cast<size_t>(t.coords[static_cast<size_t>(x * t.order())] / size)]++;
  int64_t most = 0, all = 0;
  for (int64_t& n : perBlock) {
    if (shared) n = sumOverRanks(n);
    most = std::max(most, n);
    all += n;
  }
  return all == 0 ? 1.0 : static_cast<double>(most) * parts / static_cast<double>(all);
}


/// Equal row blocks this unbalanced make the tool's default a partition by non-zeros.
constexpr double kSkewedRows = 1.25;

/// `t`, partitioned by non-zeros (SpDISTAL's ~) instead of equal row blocks when those
/// would be unbalanced; said under --time. Collective.
DistTensor byNonZerosIfSkewed(const DistTensor& t, const std::map<std::string, TensorFilePart>& parts,
                              const std::map<std::string, CooData>& inputs, bool say) {
  const bool shared = parts.count(t.name()) > 0;
  const CooData& entries = shared ? parts.at(t.name()).entries : inputs.at(t.name());
  const double imbalance = rowBlockImbalance(entries, t.grid().size(), shared);
  if (imbalance <= kSkewedRows) return t;
  const std::string letters = std::string("abcdefghijklmnop").substr(0, t.dims().size());
  DistTensor skewed(t.name(), t.dims(), letters + "->~a", t.grid(), t.sparsePieceFormat());
  if (say && worldRank() == 0)
    std::fprintf(stderr, "distribution: %s %s (its rows are skewed: equal row blocks would give one rank %.1fx the "
                         "mean non-zeros)\n", t.name().c_str(), skewed.distribution().str().c_str(), imbalance);
  return skewed;
}

/// Wall times of the run's phases on rank 0, in milliseconds (the phases are collective,
/// so every rank leaves them together); a phase that did not happen is absent.
struct DistPhaseTimes {
  double read = -1, place = -1, compile = -1, write = -1, check = -1;
};

/// min, median, max of v.
std::array<double, 3> spread(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return {v.front(), n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v.back()};
}

/// --time (stderr) or --json (stdout): every phase, the machine and the schedule. The
/// runs' times are the slowest rank's, min / median / max over repetitions.
void reportTimes(const std::vector<DistRunStats>& runs, const std::string& schedule, const Machine& m,
                 const DistPhaseTimes& p, bool json, bool checked, std::optional<double> value) {
  std::vector<double> total, compute, comm;
  for (const DistRunStats& r : runs) {
    total.push_back(r.seconds * 1e3);
    compute.push_back(r.computeSeconds * 1e3);
    comm.push_back(r.commSeconds * 1e3);
  }
  const std::vector<std::pair<std::string, double>> once = {
      {"read", p.read}, {"place", p.place}, {"compile", p.compile}};
  const std::vector<std::pair<std::string, std::vector<double>>> repeated = {
      {"run", total}, {"compute", compute}, {"communication", comm}};
  const std::vector<std::pair<std::string, double>> after = {{"write", p.write}, {"check", p.check}};
  if (json) {
    nlohmann::ordered_json j;
    j["machine"] = m.grid.str();
    j["ranks"] = m.grid.size();
    j["threads"] = m.threads;
    j["schedule"] = schedule;
    nlohmann::ordered_json phases = nlohmann::ordered_json::object();
    auto single = [&](const std::string& name, double ms) {
      if (ms >= 0) phases[name] = {{"runs", 1}, {"min_ms", ms}, {"median_ms", ms}, {"max_ms", ms}};
    };
    for (const auto& [name, ms] : once) single(name, ms);
    for (const auto& [name, ms] : repeated) {
      auto [lo, mid, hi] = spread(ms);
      phases[name] = {{"runs", ms.size()}, {"min_ms", lo}, {"median_ms", mid}, {"max_ms", hi}};
    }
    for (const auto& [name, ms] : after) single(name, ms);
    j["phases"] = phases;
    j["bytes_sent_max_rank"] = runs.back().maxBytesSent;
    if (checked) j["check"] = "ok";
    if (value) j["value"] = *value;
    std::string text = j.dump(2) + "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  std::fprintf(stderr, "machine: %s (%d ranks x %d threads)\n", m.grid.str().c_str(), m.grid.size(), m.threads);
  std::fprintf(stderr, "schedule: %s\n", schedule.c_str());
  for (const auto& [name, ms] : once)
    if (ms >= 0) std::fprintf(stderr, "%s: %.3f ms\n", name.c_str(), ms);
  for (const auto& [name, ms] : repeated) {
    auto [lo, mid, hi] = spread(ms);
    if (ms.size() > 1)
      std::fprintf(stderr, "%s: %.3f ms (median of %zu runs; min %.3f, max %.3f), slowest rank\n", name.c_str(), mid,
                   ms.size(), lo, hi);
    else
      std::fprintf(stderr, "%s: %.3f ms, slowest rank\n", name.c_str(), mid);
  }
  for (const auto& [name, ms] : after)
    if (ms >= 0) std::fprintf(stderr, "%s: %.3f ms\n", name.c_str(), ms);
  std::fprintf(stderr, "bytes sent: %lld by the busiest rank\n", static_cast<long long>(runs.back().maxBytesSent));
}

void reportCommStats(const DistRunStats& s, const Machine& m) {
  std::fprintf(stderr, "communication per tensor (%d ranks; formula: the boxes a rank's iterations need, from the "
                       "schedule; received: what it did not own):\n", m.grid.size());
  for (const auto& t : s.tensors)
    std::fprintf(stderr,
                 "  %s: received %lld bytes (max over ranks), formula %lld bytes per rank, sent %lld bytes in all "
                 "(%lld messages, %lld broadcasts, %lld reductions)\n",
                 t.name.c_str(), static_cast<long long>(t.maxBytesReceived), static_cast<long long>(t.formulaBytes),
                 static_cast<long long>(t.totalBytesSent), static_cast<long long>(t.messages),
                 static_cast<long long>(t.broadcasts), static_cast<long long>(t.reductions));
}

/// --check on rank 0: the reference evaluator on the whole inputs.
void checkDistributed(const std::string& expr, const std::map<std::string, CooData>& inputs, const CooData& result) {
  std::map<std::string, TensorBase> tensors;
  for (const auto& [name, coo] : inputs) {
    long double volume = 1;
    for (int64_t n : coo.dims) volume *= static_cast<long double>(n);
    // Sparse inputs stay sparse for the reference (a dense copy of a large matrix is not).
    const bool sparse = coo.order() >= 2 && static_cast<long double>(coo.nnz()) < volume;
    TensorBase t(name, Datatype::Float64, coo.dims,
                 sparse ? Format::parse("d" + std::string(static_cast<size_t>(coo.order() - 1), 's'))
                        : DenseFormat(coo.order()));
    t.setFromCoo(coo);
    tensors.emplace(name, t);
  }
  std::string outName = scanTensors(expr).at(0).name;
  tensors.emplace(outName, TensorBase(outName, Datatype::Float64, result.dims, DenseFormat(result.order())));
  Assignment a = parseOver(expr, tensors, Semiring::plusTimes());
  CooData expected = referenceEvaluate(a);
  std::string why;
  if (!tensorsClose(expected, result, 1e-9, 1e-12, &why))
    throw CheckMismatch("the distributed result differs from the reference evaluator: " + why);
  std::fprintf(stderr, "check: OK (matches the reference evaluator)\n");
}


}  // namespace

int runDistributed(const DistributedRunOptions& opt) {
  Machine machine;
  std::vector<DistTensor> tensors;
  std::map<std::string, CooData> inputs;  // generated inputs (every rank), and on rank 0 the files for --check
  std::map<std::string, TensorFilePart> parts;  // this rank's share of each input file (read in parallel)
  std::shared_ptr<DistributedKernel> kernel;
  std::map<std::string, int64_t> binaryStored;  // .tsb inputs: values stored (read by ranges when placing)
  std::map<std::string, std::string> files;
  std::string skewCandidate;  // the first sparse input without -d: by non-zeros when its rows are skewed
  std::string outName, outPath;
  int outOrder = 0;
  DistPhaseTimes phase;
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  auto lap = [&t0] {
    const auto now = Clock::now();
    const double ms = millis(now - t0);
    t0 = now;
    return ms;
  };
  try {
    agreePhase([&] {
      machine = opt.machine.empty() ? Machine::world(opt.threads) : Machine::parse(opt.machine, opt.threads);
      machine.checkRanks();
      if (!opt.semiring.empty() && opt.semiring != "plus_times") throw UsageError("--semiring: distributed kernels compute over plus_times only");
      ExpressionArgs args = parseExpressionArgs(opt.expr, opt.formats, opt.types);
      for (const TensorUse& u : args.uses) {
        if (args.typeOf(u) != Datatype::Float64)
          throw UsageError("-t " + u.name + ": distributed tensors are float64 in this version");
      }
      std::map<std::string, std::string> dists;
      for (const std::string& d : opt.distributions) {
        auto [name, text] = splitNamed(d, "-d", "DIST");
        args.requireKnown(name, "-d");
        if (!dists.emplace(name, text).second) throw UsageError("-d gives tensor '" + name + "' twice");
      }
      const TensorUse& out = args.output();
      outName = out.name;
      outOrder = out.order;
      if (!opt.output.empty()) {
        auto [name, path] = splitNamed(opt.output, "-o", "FILE");
        if (name != out.name) throw UsageError("-o names tensor '" + name + "', but the output is '" + out.name + "'");
        if (!hasExtension(path, ".tns") && !hasExtension(path, ".mtx"))
          throw UsageError("-o file '" + path + "': distributed runs write .tns or .mtx");
        outPath = path;
      }
      std::map<std::string, std::string> specs;
      for (const auto& arg : opt.inputs) files.insert(splitNamed(arg, "-i", "FILE"));
      for (const auto& arg : opt.generated) specs.insert(splitNamed(arg, "-g", "KIND:ARGS"));
      uint64_t seed = opt.seed;
      std::map<std::string, TensorVar> vars;
      for (const TensorUse& u : args.uses) {
        if (u.isOutput) continue;
        CooData coo;
        if (files.count(u.name) && isBinaryTensorPath(files.at(u.name))) {
          // .tsb: the header now; each rank reads its piece's ranges when placing.
          const BinaryHeader h = readBinaryHeader(files.at(u.name));
          coo.dims = h.dims;
          binaryStored[u.name] = h.stored;
        } else if (files.count(u.name)) {  // collective: every rank reads its byte range (--check: below)
          coo.dims = (parts[u.name] = readTensorFilePart(files.at(u.name))).entries.dims;
        } else if (specs.count(u.name)) coo = generateFromSpec(specs.at(u.name), seed++);
        else throw UsageError("no input for tensor '" + u.name + "' (use -i " + u.name + ":FILE or -g " + u.name + ":KIND:ARGS)");
        if (coo.order() != u.order)
          throw DimensionError("the input for " + u.name + " has order " + std::to_string(coo.order()) + ", but " +
                               u.name + " has " + std::to_string(u.order) + " indices in the expression");
        if (auto d = opt.dims.find(u.name); d != opt.dims.end() && d->second != coo.dims) {
          if (binaryStored.count(u.name))
            throw UsageError("--dims does not apply to the binary file " + files.at(u.name) + " (it holds " + u.name +
                             " as " + showDims(coo.dims) + ")");
          if (parts.count(u.name)) {  // this rank's share of the file; every share is checked
            applyDims(parts.at(u.name).entries, u.name, d->second, files.at(u.name));
            coo.dims = d->second;
          } else {
            applyDims(coo, u.name, d->second, "generated " + specs.at(u.name));
          }
        }
        vars.emplace(u.name, TensorVar(u.name, Datatype::Float64, coo.dims, DenseFormat(u.order)));
        inputs.emplace(u.name, std::move(coo));
      }
      // Rank 0's whole copies for --check, after every collective read: a failure here is
      // rank 0's alone, and meets the others in this phase's agreement.
      if (opt.check && worldRank() == 0)
        for (const auto& [name, path] : files)
          if (inputs.count(name)) {
            inputs.at(name) = readTensorFile(path).data;
            if (opt.dims.count(name)) applyDims(inputs.at(name), name, opt.dims.at(name), path);
          }
      std::vector<int64_t> outDims = inferOutputDims(opt.expr, out, vars);
      for (const TensorUse& u : args.uses) {
        const std::vector<int64_t>& dims = u.isOutput ? outDims : inputs.at(u.name).dims;
        auto [dist, grid] = placementOf(u.name, u.order, machine, dists);
        const int64_t nnz = u.isOutput                 ? 0
                            : parts.count(u.name)        ? parts.at(u.name).totalEntries
                            : binaryStored.count(u.name) ? binaryStored.at(u.name)
                                                         : inputs.at(u.name).nnz();
        // An output is sparse when -f says so (each rank assembles its piece).
        std::optional<Format> sparse =
            u.isOutput ? (args.formats.count(u.name) && !args.formats.at(u.name).isAllDense()
                              ? std::optional<Format>(args.formats.at(u.name))
                              : std::nullopt)
                       : sparseFormatOf(u, args, dims, nnz, dist);
        if (sparse && !u.isOutput && !dists.count(u.name) && skewCandidate.empty() && u.order >= 2 &&
            !binaryStored.count(u.name))  // a .tsb's rows are not counted before its ranges are read
          skewCandidate = u.name;  // decided once its entries are counted (next phase)
        DistTensor t = sparse ? DistTensor(u.name, dims, dist.defined() ? dist.str() : "", grid, *sparse)
                              : DistTensor(u.name, dims, dist, grid);
        tensors.push_back(t);
      }
    });
    phase.read = lap();
    // Placing talks to the other ranks (entries go to their owners): a phase of its own,
    // after every rank made its tensors.
    agreePhase([&] {
      for (DistTensor& t : tensors)
        if (t.name() == skewCandidate) t = byNonZerosIfSkewed(t, parts, inputs, opt.timeReps > 0);
      for (DistTensor& t : tensors) {
        if (binaryStored.count(t.name())) t.read(files.at(t.name()));
        else if (parts.count(t.name())) t.setFromParts(parts.at(t.name()).entries);
        else if (inputs.count(t.name())) t.setFromCoo(inputs.at(t.name()));
      }
      parts.clear();
    });
    phase.place = lap();
    // Compiling talks to the other ranks (one rank of each node compiles the leaf while
    // the others wait for it), so it is a phase of its own: a rank that failed above (a
    // file it alone could not read) must meet the others in the agreement, not in
    // compile's collectives (mismatched collectives: MPI_ERR_TRUNCATE, or a hang).
    agreePhase([&] { kernel = DistributedKernel::compile(opt.expr, tensors, machine, opt.schedule); });
    phase.compile = lap();
    if (opt.emit) {
      if (worldRank() == 0) std::fputs(kernel->emit().c_str(), stdout);
      return 0;
    }
    std::vector<DistRunStats> runs;
    collectivePhase([&] {
      for (int r = 0; r < std::max(1, opt.timeReps); r++) runs.push_back(kernel->run(tensors));
    });
    CooData result;
    // -o is written by every rank in parallel; rank 0 gathers only to check or print.
    if (opt.check || outOrder == 0) collectivePhase([&] { result = tensors[0].gather(); });
    if (!outPath.empty()) {
      lap();
      agreePhase([&] { tensors[0].write(outPath); });
      phase.write = lap();
    }
    agreePhase([&] {
      if (worldRank() != 0) return;
      if (opt.check) {
        lap();
        checkDistributed(opt.expr, inputs, result);
        phase.check = lap();
      }
      std::optional<double> scalar;
      if (outOrder == 0) scalar = result.values.empty() ? 0.0 : result.values[0];
      if (opt.timeReps > 0 || opt.json) reportTimes(runs, kernel->schedule(), machine, phase, opt.json, opt.check, scalar);
      if (opt.commStats) reportCommStats(runs.back(), machine);
      if (scalar && !opt.json) std::printf("%.17g\n", *scalar);
    });
  } catch (const ExitCode& e) {
    return e.code;
  }
  return 0;
}

}  // namespace tessel::cli
