// Writing the bench_kernels report (see kernels_report.h).
#include "kernels_report.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>

namespace bench {

const std::vector<std::string> kPeers = {"eigen", "graphblas", "petsc", "hand", "hand-O3", "hand-fastmath"};

std::string fmtTime(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", s * 1e3);
  return b;
}

namespace {
// ---------------------------------------------------------------------------------
// Output

const Cell* find(const std::vector<Cell>& cells, const std::string& k, const std::string& in, int t,
                 const std::string& sys) {
  for (auto& c : cells)
    if (c.kernel == k && c.input == in && c.threads == t && c.system == sys) return &c;
  return nullptr;
}

bool usable(const Cell* c) { return c && (c->status == "ok" || c->status == "MISMATCH") && std::isfinite(c->median); }

/// A peer's median when it ran and matched tessel's result, else NaN.
double peerMedian(const std::vector<Cell>& cells, const std::string& k, const std::string& in, int t,
                  const std::string& sys) {
  const Cell* p = find(cells, k, in, t, sys);
  return usable(p) && p->status == "ok" ? p->median : NAN;
}

/// The fastest peer's median (hand C included); INFINITY when none ran and matched.
double fastestPeer(const std::vector<Cell>& cells, const std::string& k, const std::string& in, int t) {
  double best = INFINITY;
  for (auto& s : kPeers) {
    double m = peerMedian(cells, k, in, t, s);
    if (std::isfinite(m)) best = std::min(best, m);
  }
  return best;
}

/// SpAdd3's target is against the peers' two pairwise additions (GraphBLAS, PETSc): per
/// thread count, the geometric mean, the smallest ratio and how many inputs reach 2x.
void writePairwiseTarget(std::FILE* f, const std::vector<Cell>& cells,
                         const std::vector<std::tuple<std::string, std::string, int>>& keys) {
  std::string rows;
  for (const char* peer : {"graphblas", "petsc"})
    for (int t : {1, 2}) {
      double logSum = 0, lo = INFINITY;
      int n = 0, met = 0;
      for (auto& [k, in, t2] : keys) {
        if (k != "spadd3" || t2 != t) continue;
        const Cell* tc = find(cells, k, in, t, "tessel");
        double m = peerMedian(cells, k, in, t, peer);
        if (!usable(tc) || !std::isfinite(m)) continue;
        double r = m / tc->median;
        logSum += std::log(r), lo = std::min(lo, r), n++, met += r >= 2.0;
      }
      if (!n) continue;
      char b[160];
      std::snprintf(b, sizeof b, "| %s | %d | %.2f | %.2f | %d of %d |\n", peer, t, std::exp(logSum / n), lo, met, n);
      rows += b;
    }
  if (rows.empty()) return;
  std::fprintf(f, "\nSpAdd3 against two pairwise additions (target: 2x; PETSc is single-threaded, so its "
                  "2-thread row uses its 1-thread time):\n\n");
  std::fprintf(f, "| peer | threads | peer / tessel (geomean) | smallest | inputs at 2x or more |\n");
  std::fprintf(f, "|---|---:|---:|---:|---:|\n");
  std::fputs(rows.c_str(), f);
}

}  // namespace

void writeCsv(const std::string& path, const std::vector<Cell>& cells, const std::map<int, double>& triad) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::perror(path.c_str());
    return;
  }
  std::fprintf(f,
               "kernel,input,rows,cols,nnz,threads,system,median_s,min_s,wall_s,tessel_over_system,GBps,of_triad,"
               "tessel_speedup_vs_fastest_peer,speedup_2t_over_1t,status,note\n");
  for (auto& c : cells) {
    const Cell* tc = find(cells, c.kernel, c.input, c.threads, "tessel");
    double ratio = usable(&c) && usable(tc) ? tc->median / c.median : NAN;
    double gbps = c.bytes > 0 && usable(&c) ? c.bytes / c.median / 1e9 : NAN;
    double frac = std::isfinite(gbps) && triad.count(c.threads) ? gbps * 1e9 / triad.at(c.threads) : NAN;
    double vsBest = NAN, sp = NAN;
    if (c.system == "tessel" && usable(&c)) {
      double best = fastestPeer(cells, c.kernel, c.input, c.threads);
      if (std::isfinite(best)) vsBest = best / c.median;
      const Cell* one = find(cells, c.kernel, c.input, 1, "tessel");
      if (usable(one)) sp = one->median / c.median;
    }
    std::string note = c.note;
    std::replace(note.begin(), note.end(), ',', ';');
    std::string status = c.status, system = c.system;  // a variant's name lists settings with commas
    std::replace(status.begin(), status.end(), ',', ';');
    std::replace(system.begin(), system.end(), ',', ';');
    std::fprintf(f, "%s,%s,%ld,%ld,%ld,%d,%s,%.6g,%.6g,%.6g,%.4g,%.4g,%.4g,%.4g,%.4g,%s,%s\n", c.kernel.c_str(),
                 c.input.c_str(), (long)c.rows, (long)c.cols, (long)c.nnz, c.threads, system.c_str(), c.median,
                 c.min, c.wall, ratio, gbps, frac, vsBest, sp, status.c_str(), note.c_str());
  }
  std::fclose(f);
}

/// Markdown table: one row per (kernel, input, threads).
void writeMd(const std::string& path, const std::vector<Cell>& cells, const std::map<int, double>& triad,
             const std::string& machine) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::perror(path.c_str());
    return;
  }
  std::fprintf(f, "%s\n\n", machine.c_str());
  std::fprintf(f,
               "| kernel | input | nnz | threads | tessel (ms) | tessel run() wall (ms) | Eigen (ms) | GraphBLAS (ms) | "
               "PETSc (ms) | hand C (ms) | hand -O3 (ms) | hand -O3 -ffast-math (ms) | fastest peer / tessel | tessel GB/s | "
               "of triad | tessel 2t/1t |\n");
  std::fprintf(f, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  std::vector<std::tuple<std::string, std::string, int>> keys;
  for (auto& c : cells)
    if (c.system == "tessel") keys.emplace_back(c.kernel, c.input, c.threads);
  for (auto& [k, in, t] : keys) {
    const Cell* tc = find(cells, k, in, t, "tessel");
    auto cellStr = [&](const Cell* c) -> std::string {
      if (!c) return "";
      if (c->status == "n/a") return "n/a";
      if (c->status.rfind("skipped: not in", 0) == 0) return "not selected";
      if (c->status.rfind("skipped", 0) == 0) return "skipped (not installed)";
      if (c->status.rfind("error", 0) == 0) return "error";
      if (!std::isfinite(c->median)) return "-";
      std::string s = fmtTime(c->median);
      if (c->status == "MISMATCH") s += " **MISMATCH**";
      if (c->system != "tessel" && c->note.rfind("single-threaded", 0) == 0 && t > 1) s += " (1t)";
      return s;
    };
    std::fprintf(f, "| %s | %s | %ld | %d | %s | %s |", k.c_str(), in.c_str(), (long)tc->nnz, t, cellStr(tc).c_str(),
                 usable(tc) ? fmtTime(tc->wall).c_str() : "");
    for (auto& s : kPeers) std::fprintf(f, " %s |", cellStr(find(cells, k, in, t, s)).c_str());
    double best = fastestPeer(cells, k, in, t);
    char b[64] = "";
    if (usable(tc) && std::isfinite(best)) std::snprintf(b, sizeof b, "%.2f", best / tc->median);
    std::fprintf(f, " %s |", b);
    if (usable(tc) && tc->bytes > 0 && triad.count(t)) {
      double gbps = tc->bytes / tc->median / 1e9;
      std::fprintf(f, " %.2f | %.2f |", gbps, gbps * 1e9 / triad.at(t));
    } else {
      std::fprintf(f, " | |");
    }
    const Cell* one = find(cells, k, in, 1, "tessel");
    if (t > 1 && usable(one) && usable(tc))
      std::fprintf(f, " %.2f |\n", one->median / tc->median);
    else
      std::fprintf(f, " |\n");
  }
  // Summary: geometric means over the inputs of each kernel.
  std::fprintf(f, "\nGeometric means over the inputs (ratios above 1: tessel faster, or faster on 2 threads):\n\n");
  std::fprintf(f, "| kernel | threads | inputs | fastest peer / tessel | hand C / tessel | tessel 2t/1t |\n");
  std::fprintf(f, "|---|---:|---:|---:|---:|---:|\n");
  std::vector<std::pair<std::string, int>> kt;
  for (auto& [k, in, t] : keys)
    if (std::find(kt.begin(), kt.end(), std::pair{k, t}) == kt.end()) kt.emplace_back(k, t);
  for (auto& [k, t] : kt) {
    double lb = 0, lh = 0, ls = 0;
    int nb = 0, nh = 0, ns = 0, n = 0;
    for (auto& [k2, in, t2] : keys) {
      if (k2 != k || t2 != t) continue;
      n++;
      const Cell* tc = find(cells, k, in, t, "tessel");
      if (!usable(tc)) continue;
      double best = fastestPeer(cells, k, in, t);
      if (std::isfinite(best)) lb += std::log(best / tc->median), nb++;
      const Cell* h = find(cells, k, in, t, "hand");
      if (usable(h)) lh += std::log(h->median / tc->median), nh++;
      const Cell* one = find(cells, k, in, 1, "tessel");
      if (t > 1 && usable(one)) ls += std::log(one->median / tc->median), ns++;
    }
    auto g = [](double s, int c) {
      char b[32] = "";
      if (c) std::snprintf(b, sizeof b, "%.2f", std::exp(s / c));
      return std::string(b);
    };
    std::fprintf(f, "| %s | %d | %d | %s | %s | %s |\n", k.c_str(), t, n, g(lb, nb).c_str(), g(lh, nh).c_str(),
                 g(ls, ns).c_str());
  }
  writePairwiseTarget(f, cells, keys);
  std::fclose(f);
}

namespace {

std::string xmlEscape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '&') o += "&amp;";
    else if (ch == '<') o += "&lt;";
    else if (ch == '>') o += "&gt;";
    else o += ch;
  }
  return o;
}

/// Horizontal grouped bars: per kernel x input (at the largest thread count), each peer's
/// time over tessel's time on a log axis (right of 1: tessel faster).
}  // namespace

void writeSvg(const std::string& path, const std::vector<Cell>& cells, int t) {
  std::vector<std::pair<std::string, std::string>> groups;
  for (auto& c : cells)
    if (c.system == "tessel" && c.threads == t && usable(&c)) groups.emplace_back(c.kernel, c.input);
  const char* colors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1"};
  const int barH = 7, gap = 8, left = 230, plotW = 560, top = 50;
  const double lo = std::log10(0.05), hi = std::log10(50.0);
  auto X = [&](double v) {
    double l = std::clamp(std::log10(v), lo, hi);
    return left + (l - lo) / (hi - lo) * plotW;
  };
  int groupH = int(kPeers.size()) * barH + gap;
  int height = top + int(groups.size()) * groupH + 50;
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + plotW + 150 << "\" height=\"" << height
    << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s << "<text x=\"" << left << "\" y=\"18\" font-size=\"13\" font-weight=\"bold\">Peer time / tessel time, " << t
    << " thread" << (t > 1 ? "s" : "") << " (log scale; &gt; 1: tessel faster)</text>\n";
  for (double v : {0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0}) {
    double x = X(v);
    s << "<line x1=\"" << x << "\" y1=\"" << top - 8 << "\" x2=\"" << x << "\" y2=\"" << height - 40
      << "\" stroke=\"" << (v == 1.0 ? "#000" : "#ddd") << "\"/>\n";
    s << "<text x=\"" << x << "\" y=\"" << height - 26 << "\" text-anchor=\"middle\">" << v << "</text>\n";
  }
  for (size_t g = 0; g < groups.size(); g++) {
    auto& [k, in] = groups[g];
    const Cell* tc = find(cells, k, in, t, "tessel");
    int y0 = top + int(g) * groupH;
    s << "<text x=\"" << left - 6 << "\" y=\"" << y0 + kPeers.size() * barH / 2 + 4 << "\" text-anchor=\"end\">"
      << xmlEscape(k + " " + in) << "</text>\n";
    for (size_t p = 0; p < kPeers.size(); p++) {
      const Cell* c = find(cells, k, in, t, kPeers[p]);
      if (!usable(c)) continue;
      double r = c->median / tc->median;
      double x1 = X(1.0), x2 = X(r);
      s << "<rect x=\"" << std::min(x1, x2) << "\" y=\"" << y0 + p * barH << "\" width=\""
        << std::max(1.0, std::fabs(x2 - x1)) << "\" height=\"" << barH - 1 << "\" fill=\"" << colors[p] << "\"><title>"
        << kPeers[p] << ": " << r << "</title></rect>\n";
    }
  }
  for (size_t p = 0; p < kPeers.size(); p++) {
    int y = top + int(p) * 16;
    s << "<rect x=\"" << left + plotW + 15 << "\" y=\"" << y << "\" width=\"12\" height=\"10\" fill=\"" << colors[p]
      << "\"/><text x=\"" << left + plotW + 32 << "\" y=\"" << y + 9 << "\">" << kPeers[p] << "</text>\n";
  }
  s << "</svg>\n";
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::perror(path.c_str());
    return;
  }
  std::fputs(s.str().c_str(), f);
  std::fclose(f);
}

}  // namespace bench
