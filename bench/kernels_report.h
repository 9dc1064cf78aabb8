// The bench_kernels report: one measured cell per (kernel, input, threads, system),
// written as CSV, a markdown table for docs/performance.md, and an SVG chart.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace bench {

/// One measured (kernel, input, threads, system) cell.
struct Cell {
  std::string kernel, input;
  int64_t rows = 0, cols = 0, nnz = 0;
  int threads = 1;
  std::string system;
  double median = NAN, wall = NAN, min = NAN;  // seconds
  std::string status;               // ok, MISMATCH, n/a, skipped: ..., error: ...
  std::string note;
  double bytes = 0;  // minimum traffic (SpMV, SpMM), 0 if not reported
};

/// Seconds as milliseconds with three decimals.
std::string fmtTime(double s);

/// Peers in report column order.
extern const std::vector<std::string> kPeers;

void writeCsv(const std::string& path, const std::vector<Cell>& cells, const std::map<int, double>& triad);
/// `machine`: the CPU and the flags of every system, printed above the table.
void writeMd(const std::string& path, const std::vector<Cell>& cells, const std::map<int, double>& triad,
             const std::string& machine);
/// Grouped bars of peer time over tessel time at `t` threads.
void writeSvg(const std::string& path, const std::vector<Cell>& cells, int t);

}  // namespace bench
