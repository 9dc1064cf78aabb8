// The README's C++ example: y = B * c with B in CSR.
#include <cstdio>

#include "tessel/tessel.h"
using namespace tessel;

int main() {
  int64_t m = 4, n = 5;
  Tensor<double> B("B", {m, n}, CSR());
  Tensor<double> c("c", {n});  // dense
  Tensor<double> a("a", {m});
  B.insert({0, 3}, 1.5);  // any order; duplicates are summed
  B.pack();
  c.insert({3}, 2.0);
  c.pack();

  IndexVar i("i"), j("j");
  a(i) = B(i, j) * c(j);  // records the assignment
  a.evaluate();           // compile (JIT, cached), assemble, compute
  double a0 = a.at({0});  // 3.0
  std::printf("a(0) = %g\n", a0);
  return a0 == 3.0 ? 0 : 1;
}
