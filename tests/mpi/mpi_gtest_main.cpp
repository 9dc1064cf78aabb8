// main() of the MPI gtest programs that need no set-up of their own (test_dist_graph,
// test_dist_loopfuse): only rank 0 prints gtest's report, and every rank's verdict
// decides the exit code, so a test that fails on one rank alone fails the run.
#include <gtest/gtest.h>

#include <cstdio>

#include "tessel/distributed.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (tessel::worldRank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int rc = RUN_ALL_TESTS();
  const int worst = static_cast<int>(tessel::reduceOverRanks(rc, true));
  if (rc != 0) std::fprintf(stderr, "rank %d: failed\n", tessel::worldRank());
  tessel::finalizeDistributed();
  return worst;
}
