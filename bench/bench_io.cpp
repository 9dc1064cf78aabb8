// File I/O throughput: Matrix Market and FROSTT text (read and write) and, when built with
// the binary format, .tsb (write, read = copy, map = mmap), against memcpy bandwidth.
//
// Generates a ~200 MB random matrix (generateUniformMatrix), writes it in each format to a
// private temporary directory (removed at the end) and times each operation: the median of
// 3 runs, one thread. The files are read right after being written, so they come from the
// page cache, not the disk: the figures are parsing (text) or copying (binary) speed.
// MB/s counts the file's size in 10^6 bytes, over wall time and over this thread's CPU time
// (user + system; the fair figure on a shared, loaded machine). Output: one line per
// operation on stdout and, with -o FILE, a CSV
// (operation,format,file_bytes,wall_s,wall_MBps,cpu_s,cpu_MBps,nnz).
//
// Usage: bench_io [-o CSV] [-d TMPDIR] [--nnz N]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessel/generate.h"
#include "tessel/io.h"
#if __has_include("tessel/binary_format.h")
#include "tessel/binary_format.h"
#include "tessel/tensor.h"
#define TESSEL_BENCH_BINARY 1
#endif

namespace fs = std::filesystem;
using namespace tessel;

namespace {

double cpuNow() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// Wall and CPU (this thread, user + system) seconds.
struct Time {
  double wall, cpu;
};

Time measure(const std::function<void()>& f) {
  auto t0 = std::chrono::steady_clock::now();
  double c0 = cpuNow();
  f();
  double c1 = cpuNow();
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), c1 - c0};
}

/// Medians of 3 runs (wall and CPU separately).
Time median3(const std::function<void()>& f) {
  std::vector<double> w, c;
  for (int r = 0; r < 3; ++r) {
    Time t = measure(f);
    w.push_back(t.wall);
    c.push_back(t.cpu);
  }
  std::sort(w.begin(), w.end());
  std::sort(c.begin(), c.end());
  return {w[1], c[1]};
}

struct Row {
  std::string op, format;
  int64_t bytes;
  Time t;
  int64_t nnz;
};

}  // namespace

int main(int argc, char** argv) {
  std::string csv, base;
  int64_t nnz = 5'500'000;  // about 200 MB of .mtx text
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-o" && i + 1 < argc)
      csv = argv[++i];
    else if (a == "-d" && i + 1 < argc)
      base = argv[++i];
    else if (a == "--nnz" && i + 1 < argc)
      nnz = std::atoll(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [-o CSV] [-d TMPDIR] [--nnz N]\n", argv[0]);
      return 2;
    }
  }
  if (base.empty()) base = fs::temp_directory_path().string();
  std::string tmpl = base + "/tessel-bench-io-XXXXXX";
  if (!::mkdtemp(tmpl.data())) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::string dir = tmpl;
  struct Cleanup {
    std::string d;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(d, ec);
    }
  } cleanup{dir};
  ::setenv("TESSEL_PROGRESS", "0", 1);  // timings without the progress line

  const int64_t rows = 2'000'000;
  CooData data = generateUniformMatrix(rows, rows, static_cast<double>(nnz) / rows, 42);
  std::vector<Row> out;
  auto report = [&](const std::string& op, const std::string& fmt, int64_t bytes, Time t) {
    out.push_back({op, fmt, bytes, t, data.nnz()});
    std::printf("%-6s %-24s %7.1f MB  wall %7.3f s %8.1f MB/s  cpu %7.3f s %8.1f MB/s\n", op.c_str(),
                fmt.c_str(), bytes / 1e6, t.wall, bytes / 1e6 / t.wall, t.cpu, bytes / 1e6 / t.cpu);
    std::fflush(stdout);
  };
  auto size = [](const std::string& p) { return static_cast<int64_t>(fs::file_size(p)); };
  const int64_t n = data.nnz();

  // Text formats.
  const std::string mtx = dir + "/a.mtx", tns = dir + "/a.tns";
  Time w = median3([&] { writeMtx(mtx, data); });
  report("write", "mtx", size(mtx), w);
  Time r = median3([&] {
    if (readMtx(mtx).data.nnz() != n) std::abort();
  });
  report("read", "mtx", size(mtx), r);
  fs::remove(mtx);
  w = median3([&] { writeTns(tns, data); });
  report("write", "tns", size(tns), w);
  r = median3([&] {
    if (readTns(tns).data.nnz() != n) std::abort();
  });
  report("read", "tns", size(tns), r);
  fs::remove(tns);

#ifdef TESSEL_BENCH_BINARY
  {
    const std::string tsb = dir + "/a.tsb";
    Format f = withFittingWidths(defaultBinaryFormat(2), data.dims, n);
    TensorBase t("A", Datatype::Float64, data.dims, f);
    t.setFromCoo(data);
    w = median3([&] { writeBinary(tsb, t); });
    report("write", "tsb", size(tsb), w);
    r = median3([&] { TensorBase x = readBinary(tsb); });
    report("read", "tsb (copy)", size(tsb), r);
    r = median3([&] { TensorBase x = mapBinary(tsb, "", true); });
    report("map", "tsb (mmap)", size(tsb), r);
    r = median3([&] { TensorBase x = mapBinary(tsb, "", false); });
    report("map", "tsb (mmap; no checksum)", size(tsb), r);
    // memcpy of the same number of bytes, fresh destination pages each time as for a read.
    const size_t bytes = static_cast<size_t>(size(tsb));
    std::unique_ptr<char[]> src(new char[bytes]);
    std::memset(src.get(), 1, bytes);
    Time c = median3([&] {
      std::unique_ptr<char[]> dst(new char[bytes]);
      std::memcpy(dst.get(), src.get(), bytes);
      if (dst[bytes / 2] != 1) std::abort();
    });
    report("memcpy", "new buffer", static_cast<int64_t>(bytes), c);
    std::unique_ptr<char[]> dst(new char[bytes]);
    std::memset(dst.get(), 0, bytes);
    c = median3([&] {
      std::memcpy(dst.get(), src.get(), bytes);
      if (dst[bytes / 2] != 1) std::abort();
    });
    report("memcpy", "warm buffer", static_cast<int64_t>(bytes), c);
    fs::remove(tsb);
  }
#endif

  if (!csv.empty()) {
    FILE* f = std::fopen(csv.c_str(), "w");
    if (!f) {
      std::perror(csv.c_str());
      return 1;
    }
    std::fprintf(f, "operation,format,file_bytes,wall_s,wall_MBps,cpu_s,cpu_MBps,nnz\n");
    for (const Row& row : out)
      std::fprintf(f, "%s,%s,%lld,%.6f,%.1f,%.6f,%.1f,%lld\n", row.op.c_str(), row.format.c_str(),
                   static_cast<long long>(row.bytes), row.t.wall, row.bytes / 1e6 / row.t.wall, row.t.cpu,
                   row.bytes / 1e6 / row.t.cpu, static_cast<long long>(row.nnz));
    std::fclose(f);
  }
  return 0;
}
