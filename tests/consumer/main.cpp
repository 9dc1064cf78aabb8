// A program outside tessel (tests/consumer/run.sh builds it against an installed tessel,
// through pkg-config, and with tessel added as a subproject): SpMV a(i) = B(i,j) * c(j)
// with B in CSR, compiled by the JIT at run time, checked against values by hand.
#include <cmath>
#include <cstdio>

#include "tessel/tessel.h"
using namespace tessel;

int main() {
  int64_t m = 4, n = 5;
  Tensor<double> B("B", {m, n}, CSR());
  Tensor<double> c("c", {n});
  Tensor<double> a("a", {m});
  // B = [[0 0 0 1.5 0], [2 0 0 0 -1], [0 0 0 0 0], [0 3 0.5 0 4]]
  B.insert({0, 3}, 1.5);
  B.insert({3, 4}, 4.0);
  B.insert({1, 0}, 2.0);
  B.insert({3, 1}, 3.0);
  B.insert({1, 4}, -1.0);
  B.insert({3, 2}, 0.5);
  B.pack();
  const double cv[5] = {1, 2, 3, 4, 5};
  for (int64_t j = 0; j < n; ++j) c.insert({j}, cv[j]);
  c.pack();

  IndexVar i("i"), j("j");
  a(i) = B(i, j) * c(j);
  a.evaluate();

  // 1.5*4; 2*1 - 1*5; 0; 3*2 + 0.5*3 + 4*5
  const double expect[4] = {6.0, -3.0, 0.0, 27.5};
  int bad = 0;
  for (int64_t r = 0; r < m; ++r) {
    double got = a.at({r});
    std::printf("a(%lld) = %g (expected %g)\n", static_cast<long long>(r), got, expect[r]);
    if (std::fabs(got - expect[r]) > 1e-12) bad = 1;
  }
  std::puts(bad ? "consumer: WRONG" : "consumer: ok");
  return bad;
}
