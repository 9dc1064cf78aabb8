// Shared helpers for tests: random data, tensors from coordinates, and the
// differential check of a compiled kernel against the reference evaluator.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tessel/tessel.h"

namespace tessel::testing {

/// Entries with probability `density` per coordinate (or exactly `nnz` when >= 0),
/// values in [-2, 2) (integers when `integers`), optionally with duplicated coordinates.
CooData randomCoo(const std::vector<int64_t>& dims, double density, std::mt19937_64& rng,
                  bool duplicates = false, bool integers = false);

/// Coordinates and values as a CooData (explicit zeros kept: they are stored entries).
CooData entries(const std::vector<int64_t>& dims, const std::vector<std::pair<std::vector<int64_t>, double>>& es);

/// c as a row-major dense array (duplicates summed): for oracles written by hand.
std::vector<double> denseArray(const CooData& c);

/// A pos or crd array of `n` elements of width `w`, as int64.
std::vector<int64_t> indexArray(const void* a, int64_t n, IndexWidth w);

/// A tensor of datatype `type` and format `f` holding `data`.
TensorBase makeTensor(const std::string& name, const CooData& data, const Format& f,
                      Datatype type = Datatype::Float64);

struct Operand {
  std::string name;
  CooData data;
  Format format;
  Datatype type = Datatype::Float64;
};

/// Parses `expr`, binds the inputs and an output of `outFormat` (dims from the
/// index variables), compiles and runs it, and compares with the reference evaluator.
::testing::AssertionResult matchesReference(const std::string& expr, const std::vector<Operand>& inputs,
                                            const Format& outFormat,
                                            Datatype outType = Datatype::Float64,
                                            double tol = 1e-9);
/// The same with a schedule (text, parsed against the assignment; may be a function of
/// the default loop order) on `threads` threads. ScheduleError propagates.
::testing::AssertionResult matchesReferenceScheduled(
    const std::string& expr, const std::vector<Operand>& inputs, const Format& outFormat,
    const std::function<std::string(const std::vector<IndexVar>& order)>& schedule, int threads,
    double tol = 1e-9);

/// matchesReferenceScheduled with the fixed `schedule` at 1, 2 and 4 threads, each an
/// EXPECT (traced with the expression, schedule and thread count).
void expectAllThreads(const std::string& expr, const std::vector<Operand>& in, const Format& out,
                      const std::string& schedule);

/// Compiles `expr` once (the default parallel schedule when `threads` > 1) and runs it
/// into the same output tensor once per round, the inputs refilled with that round's
/// data (same names and formats as round 0), comparing every result with the reference
/// evaluator. `after` sees the output after each round (round number, output).
::testing::AssertionResult matchesReferenceEachRound(
    const std::string& expr, const std::vector<std::vector<Operand>>& rounds, const Format& outFormat, int threads,
    const std::function<void(size_t, const TensorBase&)>& after = {});
/// What is wrong with t's arrays ("" if nothing): pos sizes and order, coordinates in
/// range, sorted (and unique, for Compressed) within each segment, sizes that agree.
std::string storageProblem(const TensorBase& t);
/// A fresh private directory under the system temp dir ("<prefix>-XXXXXX"); throws on failure.
std::filesystem::path makeScratchDir(const std::string& prefix);
/// Remove a scratch directory and everything in it (errors ignored).
void removeScratchDir(const std::filesystem::path& dir);

/// A valid gzip file (one stored, uncompressed deflate block, data under 64 KiB) with its
/// CRC-32 and length trailer: tests cut or corrupt it byte by byte.
std::string gzipStored(const std::string& data);

/// A fixture with a fresh scratch directory per test (makeScratchDir), removed after it.
class ScratchDirTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = makeScratchDir("tessel-test"); }
  void TearDown() override { removeScratchDir(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  /// Writes `bytes` to the file `name` in the directory; its path.
  std::string file(const std::string& name, const std::string& bytes) const;
  std::filesystem::path dir_;
};

/// lhs = rhs (or += when acc) without recording it in the output tensor.
Assignment makeAssignment(const IndexExpr& lhs, const IndexExpr& rhs, bool acc = false);

/// Parses `expr` over `tensors` and `schedule` against it; the C emission must throw a
/// ScheduleError whose message holds every one of `parts` (a failure otherwise).
void expectScheduleRejected(const std::map<std::string, TensorBase>& tensors, const std::string& expr,
                            const std::string& schedule, const std::vector<std::string>& parts);

/// The shared data directory (../shared/data), or "" if missing.
std::string dataDir();

/// Products of 3 or 4 factors over i, j, k, l (and one 3-tensor), for the loop-fusion
/// property tests: each fused at every loop, with random formats and splits.
const std::vector<std::string>& productChains();

}  // namespace tessel::testing
