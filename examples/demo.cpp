// The main demo: the papers' kernels (SpMV, SpMM, SpAdd3, SDDMM, SpTTV, SpMTTKRP) on
// generated data, each checked against the reference evaluator, with timings.
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

#include "tessel/tessel.h"

using namespace tessel;

namespace {

TensorBase make(const std::string& name, const CooData& data, const Format& f) {
  TensorBase t(name, Datatype::Float64, data.dims, f);
  t.setFromCoo(data);
  return t;
}

double ms(double seconds) { return seconds * 1e3; }

/// Compile, run and check one kernel; returns false if the result is wrong.
bool runKernel(const std::string& title, TensorBase out) {
  const Assignment& a = out.assignment();
  auto k = Kernel::compile(a);
  RunTimes t = k->run(a);
  auto t0 = std::chrono::steady_clock::now();
  CooData expected = referenceEvaluate(a);
  double refSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string why;
  bool ok = tensorsClose(expected, out.toCoo(), 1e-9, 1e-9, &why);
  std::printf("%-9s %-40s out %-4s  compile %7.1f ms%s  assemble %7.2f ms  compute %8.2f ms  reference %8.1f ms  %s\n",
              title.c_str(), a.str().c_str(), out.format().str().c_str(), ms(k->compileSeconds()),
              k->cacheHit() ? " (cached)" : "         ", ms(t.assembleSeconds), ms(t.computeSeconds),
              ms(refSeconds), ok ? "OK" : ("MISMATCH: " + why).c_str());
  return ok;
}

}  // namespace

int main() {
  try {
    std::printf("tessel demo: each kernel is compiled to C, JIT-loaded, run, and checked against the reference evaluator\n");
    std::printf("JIT cache: %s\n\n", jitCacheDirectory().c_str());
    IndexVar i("i"), j("j"), k("k"), l("l");
    bool ok = true;
    const int64_t n = 50000;

    TensorBase B = make("B", generateUniformMatrix(n, n, 10, 1), CSR());
    TensorBase c = make("c", generateDense({n}, 2), DenseFormat(1));
    TensorBase a("a", Datatype::Float64, {n}, DenseFormat(1));
    a(i) = B(i, j) * c(j);
    ok &= runKernel("SpMV", a);

    const int64_t m = 5000, r = 16;
    TensorBase Bs = make("B", generateUniformMatrix(m, m, 8, 3), CSR());
    TensorBase Cd = make("C", generateDense({m, r}, 4), DenseFormat(2));
    TensorBase A("A", Datatype::Float64, {m, r}, DenseFormat(2));
    A(i, j) = Bs(i, k) * Cd(k, j);
    ok &= runKernel("SpMM", A);

    TensorBase C2 = make("C", generateUniformMatrix(n, n, 5, 5), CSR());
    TensorBase D2 = make("D", generateUniformMatrix(n, n, 5, 6), CSR());
    TensorBase S("A", Datatype::Float64, {n, n}, CSR());
    S(i, j) = B(i, j) + C2(i, j) + D2(i, j);
    ok &= runKernel("SpAdd3", S);

    TensorBase Cl = make("C", generateDense({m, r}, 7), DenseFormat(2));
    TensorBase Dl = make("D", generateDense({r, m}, 8), DenseFormat(2));
    TensorBase Sd("A", Datatype::Float64, {m, m}, CSR());
    Sd(i, j) = Bs(i, j) * Cl(i, k) * Dl(k, j);
    ok &= runKernel("SDDMM", Sd);

    const int64_t t3 = 200;
    TensorBase T = make("B", generateUniformTensor({t3, t3, t3}, 200000, 9), CSF(3));
    TensorBase v = make("c", generateDense({t3}, 10), DenseFormat(1));
    TensorBase Y("A", Datatype::Float64, {t3, t3}, DCSR());
    Y(i, j) = T(i, j, k) * v(k);
    ok &= runKernel("SpTTV", Y);

    TensorBase Cm = make("C", generateDense({t3, r}, 11), DenseFormat(2));
    TensorBase Dm = make("D", generateDense({t3, r}, 12), DenseFormat(2));
    TensorBase M("A", Datatype::Float64, {t3, r}, DenseFormat(2));
    M(i, l) = T(i, j, k) * Cm(j, l) * Dm(k, l);
    ok &= runKernel("SpMTTKRP", M);

    std::printf("\n%s\n", ok ? "all kernels match the reference evaluator" : "SOME KERNELS DO NOT MATCH");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessel-demo: %s\n", e.what());
    return 1;
  }
}
