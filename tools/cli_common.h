// Shared plumbing of the `tessel` tool's subcommands: usage errors, one-line
// messages, default formats, and the exit-code contract (0 ok, 2 bad usage or input,
// 3 the environment failed, 4 --check found a mismatch, 1 a bug).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "tessel/tessel.h"

namespace tessel::cli {

/// Bad command-line usage detected by the tool itself (exit 2).
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& msg) : std::runtime_error(msg) {}
};

/// `--check` found the result differs from the reference evaluator (exit 4).
class CheckMismatch : public std::runtime_error {
 public:
  explicit CheckMismatch(const std::string& msg) : std::runtime_error(msg) {}
};
/// Exit status of a --check mismatch.
constexpr int kCheckMismatchExit = 4;

/// Split "NAME:REST" at the first ':'; both parts must be non-empty.
std::pair<std::string, std::string> splitNamed(const std::string& arg, const char* option, const char* what);
/// Turn any message into one line.
std::string oneLine(const std::string& s);
/// One-line message for a UserError (a ParseError keeps its column).
std::string userMessage(const UserError& e);
/// Default format: inputs dense in the first level and compressed below; outputs dense.
Format defaultFormat(int order, bool isOutput);
bool hasExtension(const std::string& path, const std::string& ext);
/// The extension with a trailing .gz removed: ".tns" for B.tns.gz.
std::string textExtension(const std::string& path);
/// Threads for --threads when not given: OMP_NUM_THREADS if set to a positive number, else 1.
int defaultThreads();
/// Warnings (stderr) for a thread count: a parallel schedule on one thread, more threads than cores.
void warnAboutThreads(const std::string& schedule, int threads);
/// Saturating product of the dims (an upper bound on a result's non-zeros).
int64_t dimsProduct(const std::vector<int64_t>& dims);
/// Dims as text: 5x7.
std::string showDims(const std::vector<int64_t>& d);
/// --dims NAME:D1,D2,... for one input read from `origin`: every entry must fit (a
/// DimensionError naming the first that does not); then coo's dims are `dims`.
void applyDims(CooData& coo, const std::string& name, const std::vector<int64_t>& dims, const std::string& origin);
double millis(std::chrono::steady_clock::duration d);

/// Flushes and checks standard output after a command (`tessel ... > /dev/full`): a
/// failed write prints one line and turns exit status 0 into 1.
int finishStdout(int rc);
/// Runs the selected subcommand's action with the exit-code contract.
int runGuarded(const std::function<int()>& action);

/// Each subcommand registers itself and, when selected, stores what to run in `action`.
using Action = std::function<int()>;
void registerRun(CLI::App& app, Action& action);       // cmd_run.cpp
void registerEmit(CLI::App& app, Action& action);      // cmd_emit.cpp
void registerConvert(CLI::App& app, Action& action);   // cmd_convert.cpp
void registerInfo(CLI::App& app, Action& action);      // cmd_info.cpp
void registerGenerate(CLI::App& app, Action& action);  // cmd_generate.cpp
void registerPlot(CLI::App& app, Action& action);      // cmd_plot.cpp
void registerExplain(CLI::App& app, Action& action);   // cmd_emit.cpp
void registerGraph(CLI::App& app, Action& action);     // cmd_graph.cpp
void registerTune(CLI::App& app, Action& action);      // cmd_tune.cpp

}  // namespace tessel::cli
