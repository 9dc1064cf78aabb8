// Distributed kernels (issue 28): one kernel, one size, one rank count per call; prints one
// JSON line on rank 0 with the median of the slowest rank's times. bench/distributed.sh
// runs it interleaved with ScaLAPACK's pdgemm (bench/peers/peer_pdgemm.cpp) per rank count.
//
//   mpirun -np 16 bench_distributed --kernel gemm --m 8192 --n 8192 --k 8192 [--algo summa|cannon|johnson]
//   mpirun -np 16 bench_distributed --kernel ttv|ttm|mttkrp --n 600 [--l 64]
//   mpirun -np 4 bench_distributed --kernel spmv [--matrix B.mtx | --rmat 18] [--dist rows|nz|fused]
//   mpirun -np 4 bench_distributed --kernel spmm|spadd3|spgemm|sddmm [--matrix B.mtx | --rmat 16] [--dist ..] [--cols 64]
//   mpirun -np 4 bench_distributed --kernel load --matrix B.mtx|B.tsb [--dist rows|nz|fused]
//   mpirun -np 4 bench_distributed --kernel spttv|spmttkrp [--n 200] [--nnz 4000000] [--dist nz|rows] [--cols 32]
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "sparse_inputs.h"
#include "tessel/distributed.h"
#include "tessel/generate.h"
#include "tessel/io.h"
#include "tessel/error.h"

using namespace tessel;

namespace {

std::map<std::string, std::string> parseArgs(int argc, char** argv) {
  std::map<std::string, std::string> a;
  for (int k = 1; k + 1 < argc; k += 2) {
    if (std::strncmp(argv[k], "--", 2) != 0) throw UserError(std::string("unexpected argument ") + argv[k]);
    a[argv[k] + 2] = argv[k + 1];
  }
  return a;
}

/// The most square 2-D grid of p ranks (rows <= cols).
Grid grid2(int p) {
  int r = static_cast<int>(std::sqrt(static_cast<double>(p)));
  while (p % r) r--;
  return Grid(r, p / r);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rc = 0;
  try {
    auto args = parseArgs(argc, argv);
    auto num = [&](const char* k, int64_t d) { return args.count(k) ? std::stoll(args.at(k)) : d; };
    const std::string kernel = args.count("kernel") ? args.at("kernel") : "gemm";
    const int reps = static_cast<int>(num("reps", 5));
    const int p = worldSize();
    std::string expr, schedule, algo = args.count("algo") ? args.at("algo") : "";
    if (kernel == "load") {  // parallel reading (issue 29): DistTensor::read of a file, in MB/s
      const std::string path = args.at("matrix"), dist = args.count("dist") ? args.at("dist") : "rows";
      std::vector<int64_t> dims;
      {
        TensorFilePart probe = readTensorFilePart(path);  // every rank: dims (and a first, warm read)
        dims = probe.entries.dims;
      }
      std::vector<double> secs;
      for (int r = 0; r < reps; r++) {
        DistTensor B("B", dims, dist == "rows" ? "xy->x" : dist == "nz" ? "xy->~x" : "(xy)->~f", Grid(p),
                     Format::parse("ds"));
        auto t0 = std::chrono::steady_clock::now();
        B.read(path);
        double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        secs.push_back(static_cast<double>(reduceOverRanks(static_cast<int64_t>(t * 1e9), true)) / 1e9);
      }
      struct stat st {};
      ::stat(path.c_str(), &st);
      if (worldRank() == 0)
        std::printf("{\"system\":\"tessel\",\"kernel\":\"load\",\"file\":\"%s\",\"dist\":\"%s\",\"ranks\":%d,"
                    "\"bytes\":%lld,\"median_s\":%.6f,\"mb_per_s\":%.1f}\n",
                    path.c_str(), dist.c_str(), p, static_cast<long long>(st.st_size), median(secs),
                    static_cast<double>(st.st_size) / median(secs) / 1e6);
      finalizeDistributed();
      return 0;
    }
    Machine m;
    std::vector<DistTensor> ts;
    double flops = 0, bytes = 0;
    if (kernel == "gemm") {
      const int64_t M = num("m", 4096), N = num("n", 4096), K = num("k", 4096);
      if (algo.empty()) algo = "summa";
      expr = "A(i,j) = B(i,k) * C(k,j)";
      if (algo == "johnson") {
        int c = static_cast<int>(std::round(std::cbrt(p)));
        if (c * c * c != p) throw UserError("johnson needs a cube number of ranks");
        m.grid = Grid(c, c, c);
        ts = {DistTensor("A", {M, N}, "xy->xy0", m.grid), DistTensor("B", {M, K}, "xz->x0z", m.grid),
              DistTensor("C", {K, N}, "zy->0yz", m.grid)};
        schedule = "distribute({i,j,k},{io,jo,ko},{ii,ji,ki}),communicate({A,B,C},ko),substitute({ii,ji,ki},blas)";
      } else {
        m.grid = grid2(p);
        // SUMMA's k panel: one owner's block of columns by default (contiguous, no packing).
        const int64_t kb = num("kb", std::max<int64_t>(256, (K + m.grid.dim(1) - 1) / m.grid.dim(1)));
        ts = {DistTensor("A", {M, N}, "xy->xy", m.grid), DistTensor("B", {M, K}, "xy->xy", m.grid),
              DistTensor("C", {K, N}, "xy->xy", m.grid)};
        if (algo == "summa")
          schedule = "distribute({i,j},{io,jo},{ii,ji}),split(k,ko,ki," + std::to_string(kb) +
                     "),reorder(ko,ii,ji,ki),communicate(A,jo),communicate({B,C},ko),substitute({ii,ji,ki},blas)";
        else if (algo == "cannon")
          schedule = "distribute({i,j},{io,jo},{ii,ji}),divide(k,ko,ki," + std::to_string(m.grid.dim(1)) +
                     "),reorder(ko,ii,ji,ki),rotate(ko,{io,jo},kos),communicate(A,jo),communicate({B,C},kos),"
                     "substitute({ii,ji,ki},blas)";
        else
          throw UserError("unknown --algo " + algo);
      }
      flops = 2.0 * M * N * K;
    } else if (kernel == "spmm" || kernel == "spadd3" || kernel == "spgemm" || kernel == "sddmm") {
      // SpDISTAL's other kernels on CSR pieces (issue 29); inputs as bench_petsc_sparse's.
      CooData b = bench::sparseInput(args.count("matrix") ? args.at("matrix") : "", static_cast<int>(num("rmat", 16)));
      m.grid = Grid(p);
      const std::string dist = args.count("dist") ? args.at("dist") : "rows";
      const std::string P = std::to_string(p), rowsDist = dist == "rows" ? "xy->x" : "xy->~x";
      const Format csr = Format::parse("ds");
      const int64_t I = b.dims[0], J = b.dims[1], K = num("cols", 64);
      auto rows = [&](const std::string& names) {
        return "divide(i,io,ii," + P + "),distribute(io),communicate(" + names + ",io)";
      };
      DistTensor B("B", b.dims, dist == "fused" ? "(xy)->~f" : rowsDist, m.grid, csr);
      B.setFromCoo(b);
      if (kernel == "spmm") {
        expr = "A(i,k) = B(i,j) * C(j,k)";
        ts = {DistTensor("A", {I, K}, "xy->x", m.grid), B, DistTensor("C", {J, K}, "", m.grid)};
        schedule = dist == "fused" ? "reorder(i,j,k),fuse(i,j,f),pos(f,fp,B),divide(fp,fo,fi," + P +
                                         "),distribute(fo),communicate({A,B,C},fo)"
                                   : rows("{A,B,C}");
        flops = 2.0 * static_cast<double>(b.nnz()) * K;
      } else if (kernel == "spadd3") {  // rows: the three operands' blocks agree
        if (dist != "rows") throw UserError("spadd3 runs by rows (--dist rows)");
        DistTensor C("C", b.dims, "xy->x", m.grid, csr), D("D", b.dims, "xy->x", m.grid, csr);
        C.setFromCoo(bench::shiftedColumns(b, 1));
        D.setFromCoo(bench::shiftedColumns(b, 3));
        expr = "A(i,j) = B(i,j) + C(i,j) + D(i,j)";
        ts = {DistTensor("A", b.dims, "xy->x", m.grid, csr), B, C, D};
        schedule = rows("{A,B,C,D}");
        flops = 3.0 * static_cast<double>(b.nnz());
      } else if (kernel == "spgemm") {  // the right operand's rows a rank needs are fetched
        if (dist == "fused") throw UserError("spgemm runs by rows (--dist rows or nz)");
        CooData e = bench::gemmRight(b);
        DistTensor E("E", e.dims, "xy->x", m.grid, csr);
        E.setFromCoo(e);
        expr = "A(i,j) = B(i,k) * E(k,j)";
        ts = {DistTensor("A", {I, e.dims[1]}, rowsDist, m.grid, csr), B, E};
        schedule = rows("{A,B,E}");
      } else {  // sddmm
        expr = "A(i,j) = B(i,j) * C(i,k) * D(j,k)";
        ts = {DistTensor("A", b.dims, dist == "fused" ? "(xy)->~f" : rowsDist, m.grid, csr), B,
              DistTensor("C", {I, K}, "", m.grid), DistTensor("D", {J, K}, "", m.grid)};
        schedule = dist == "fused" ? "fuse(i,j,f),pos(f,fp,B),divide(fp,fo,fi," + P +
                                         "),distribute(fo),communicate({A,B,C,D},fo)"
                                   : rows("{A,B,C,D}");
        flops = 3.0 * static_cast<double>(b.nnz()) * K;
      }
      algo = dist;
    } else if (kernel == "spttv" || kernel == "spmttkrp") {
      // SpDISTAL's sparse 3-tensor kernels: B in CSF, its slices split by non-zeros (or
      // rows), the dense factors replicated; Zipf-skewed slices.
      const int64_t n = num("n", 200), nnz = num("nnz", 4000000), L = num("cols", 32);
      m.grid = Grid(p);
      const std::string dist = args.count("dist") ? args.at("dist") : "nz";
      DistTensor B("B", {n, n, n}, dist == "rows" ? "xyz->x" : "xyz->~x", m.grid, Format::parse("sss"));
      B.setFromCoo(generateSkewedTensor({n, n, n}, nnz, 1.0, 1));
      const std::string P = std::to_string(p);
      if (kernel == "spttv") {
        expr = "A(i,j) = B(i,j,k) * c(k)";
        ts = {DistTensor("A", {n, n}, "xy->x", m.grid), B, DistTensor("c", {n}, "", m.grid)};
        schedule = "divide(i,io,ii," + P + "),distribute(io),communicate({A,B,c},io)";
        flops = 2.0 * static_cast<double>(nnz);
      } else {
        expr = "A(i,l) = B(i,j,k) * C(j,l) * D(k,l)";
        ts = {DistTensor("A", {n, L}, "xy->x", m.grid), B, DistTensor("C", {n, L}, "", m.grid),
              DistTensor("D", {n, L}, "", m.grid)};
        schedule = "divide(i,io,ii," + P + "),distribute(io),communicate({A,B,C,D},io)";
        flops = 3.0 * static_cast<double>(nnz) * L;
      }
      algo = dist;
    } else if (kernel == "spmv") {  // SpDISTAL's SpMV on sparse pieces (issue 29)
      CooData b = bench::sparseInput(args.count("matrix") ? args.at("matrix") : "", static_cast<int>(num("rmat", 18)));
      m.grid = Grid(p);
      const std::string dist = args.count("dist") ? args.at("dist") : "rows";
      const std::string P = std::to_string(p);
      expr = "a(i) = B(i,j) * c(j)";
      DistTensor B("B", b.dims, dist == "rows" ? "xy->x" : dist == "nz" ? "xy->~x" : "(xy)->~f", m.grid,
                   Format::parse("ds"));
      B.setFromCoo(b);
      // --c rows: c lives in row blocks and every run gathers it, as PETSc's MatMult
      // scatters x's ghost entries in each call; by default it is replicated (`c:x->*`).
      const bool cRows = args.count("c") && args.at("c") == "rows";
      ts = {DistTensor("a", {b.dims[0]}, "x->x", m.grid), B, DistTensor("c", {b.dims[1]}, cRows ? "x->x" : "", m.grid)};
      schedule = dist == "fused" ? "fuse(i,j,f),pos(f,fp,B),divide(fp,fo,fi," + P + "),distribute(fo),communicate({a,B,c},fo)"
                                 : "divide(i,io,ii," + P + "),distribute(io),communicate({a,B,c},io)";
      flops = 2.0 * static_cast<double>(b.nnz());
      bytes = 12.0 * static_cast<double>(b.nnz()) + 8.0 * static_cast<double>(b.dims[0] * 2 + b.dims[1]);
      algo = dist + (cRows ? "+c-rows" : "");
      ts[2].fill([](const std::vector<int64_t>& c) { return bench::fillValue(c, 2); });
    } else {
      const int64_t n = num("n", 600), l = num("l", 64);
      m.grid = Grid(p);
      if (kernel == "ttv") {
        expr = "A(i,j) = B(i,j,k) * c(k)";
        ts = {DistTensor("A", {n, n}, "xy->x", m.grid), DistTensor("B", {n, n, n}, "xyz->x", m.grid),
              DistTensor("c", {n}, "", m.grid)};
        flops = 2.0 * n * n * n;
        bytes = 8.0 * n * n * n;
      } else if (kernel == "ttm") {
        expr = "A(i,j,l) = B(i,j,k) * C(k,l)";
        ts = {DistTensor("A", {n, n, l}, "xyz->x", m.grid), DistTensor("B", {n, n, n}, "xyz->x", m.grid),
              DistTensor("C", {n, l}, "", m.grid)};
        schedule = "distribute({i},{io},{ii}),substitute({ii,j,k,l},blas)";
        flops = 2.0 * n * n * n * l;
      } else if (kernel == "mttkrp") {
        expr = "A(i,l) = B(i,j,k) * C(j,l) * D(k,l)";
        ts = {DistTensor("A", {n, l}, "xy->x", m.grid), DistTensor("B", {n, n, n}, "xyz->x", m.grid),
              DistTensor("C", {n, l}, "", m.grid), DistTensor("D", {n, l}, "", m.grid)};
        flops = 3.0 * n * n * n * l;
      } else {
        throw UserError("unknown --kernel " + kernel);
      }
      algo = "owner";
    }
    for (size_t t = 1; t < ts.size(); t++)
      if (!ts[t].sparse()) ts[t].fill([t](const std::vector<int64_t>& c) { return bench::fillValue(c, static_cast<int>(t)); });
    auto k = DistributedKernel::compile(expr, ts, m, schedule);
    k->run(ts);  // warm-up: page faults, JIT, MPI connections
    std::vector<double> total, compute, comm;
    DistRunStats last;
    std::vector<double> wall;  // the whole run() call, slowest rank: what a caller waits
    for (int r = 0; r < reps; r++) {
      auto w0 = std::chrono::steady_clock::now();
      last = k->run(ts);
      double w = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
      wall.push_back(static_cast<double>(reduceOverRanks(static_cast<int64_t>(w * 1e9), true)) / 1e9);
      total.push_back(last.seconds);
      compute.push_back(last.computeSeconds);
      comm.push_back(last.commSeconds);
    }
    // The output's norm, to compare with the peer's on the same input (sparse kernels).
    double norm = -1;
    if (kernel.rfind("sp", 0) == 0 || kernel == "sddmm") {
      CooData out = ts[0].gather();
      norm = 0;
      for (double v : out.values) norm += v * v;
      norm = std::sqrt(norm);
    }
    if (worldRank() == 0) {
      const double t = median(total);
      if (norm >= 0) std::printf("{\"check_norm\":%.10g,", norm);
      else std::printf("{");
      std::printf("\"system\":\"tessel\",\"kernel\":\"%s\",\"algo\":\"%s\",\"ranks\":%d,\"grid\":\"%s\",\"expr\":\"%s\","
                  "\"median_s\":%.6f,\"compute_s\":%.6f,\"comm_s\":%.6f,\"gflops\":%.2f,\"gbps\":%.2f,"
                  "\"max_bytes_sent\":%lld,\"run_wall_s\":%.6f",
                  kernel.c_str(), algo.c_str(), p, m.grid.str().c_str(), expr.c_str(), t, median(compute), median(comm),
                  flops / t / 1e9, bytes / t / 1e9, static_cast<long long>(last.maxBytesSent), median(wall));
      for (const auto& pt : last.tensors)
        std::printf(",\"%s_recv_max\":%lld,\"%s_formula\":%lld", pt.name.c_str(), static_cast<long long>(pt.maxBytesReceived),
                    pt.name.c_str(), static_cast<long long>(pt.formulaBytes));
      std::printf("}\n");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_distributed: rank %d: %s\n", worldRank(), e.what());
    abortAllRanks(2, "bench_distributed failed");
  }
  finalizeDistributed();
  return rc;
}
