// Schedules: every command on the kernels users schedule (SpMV, SpMM, SDDMM, SpAdd3,
// SpGEMM, SpTTV, MTTKRP, GEMM) at 1, 2 and 4 threads against the reference evaluator,
// on uniform, skewed, empty and degenerate data.
#include <gtest/gtest.h>
#include <omp.h>

#include <random>

#include "support/test_support.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

Format fmt(const std::string& s) { return Format::parse(s); }

struct Data {
  std::string name;
  std::vector<Operand> inputs;
};

/// Matrices for y(i) = B(i,j) * x(j): uniform, one heavy row, empty rows, empty, 0 rows.
std::vector<Data> spmvData(const Format& bf) {
  std::mt19937_64 rng(11);
  std::vector<Data> out;
  auto add = [&](const std::string& n, const CooData& b, int64_t cols) {
    out.push_back({n, {{"B", b, bf}, {"x", randomCoo({cols}, 1.0, rng), DenseFormat(1)}}});
  };
  add("uniform", randomCoo({37, 29}, 0.2, rng), 29);
  CooData skew = randomCoo({40, 50}, 0.02, rng);
  for (int64_t j = 0; j < 50; j++) skew.add({3, j}, 1.0 + static_cast<double>(j));
  add("skewed", skew, 50);
  CooData holes;
  holes.dims = {30, 10};
  for (int64_t i = 0; i < 30; i += 7) holes.add({i, i % 10}, 2.0);
  add("empty rows", holes, 10);
  add("no entries", randomCoo({12, 9}, 0.0, rng), 9);
  add("zero rows", randomCoo({0, 9}, 0.5, rng), 9);
  return out;
}

using OrderFn = std::function<std::string(const std::vector<IndexVar>&)>;

}  // namespace

TEST(Schedule, SpMVEverySchedule) {
  const std::vector<std::string> schedules = {
      "",
      "split(i,i0,i1,7),parallelize(i0,cpu_thread,no_races)",
      "divide(i,i0,i1,3),parallelize(i0)",
      "parallelize(i)",
      "split(i,i0,i1,4),split(i1,i2,i3,2),parallelize(i0)",
      "fuse(i,j,f),pos(f,fp,B),split(fp,p0,p1,5),parallelize(p0,cpu_thread,atomics)",
      "fuse(i,j,f),pos(f,fp,B),divide(fp,p0,p1,4),parallelize(p0,cpu_thread,temporary)",
      "fuse(i,j,f),pos(f,fp,B),split(fp,p0,p1,3)",
      "pos(j,jp,B),split(jp,j0,j1,2),unroll(j1,4)",
      "split(j,j0,j1,4),parallelize(i)",
      "pos(j,jp,B),parallelize(jp,cpu_thread,atomics)",
      "parallelize(j,cpu_thread,temporary)",
      "unroll(j,4),parallelize(i)",
  };
  for (const Data& d : spmvData(CSR()))
    for (const std::string& s : schedules) {
      SCOPED_TRACE(d.name);
      expectAllThreads("y(i) = B(i,j) * x(j)", d.inputs, DenseFormat(1), s);
    }
}

TEST(Schedule, SpMVOtherFormats) {
  // DCSR: fuse+pos over a compressed upper level; COO: blocks of a non-unique level
  // cut runs of one row, so they accumulate.
  for (const Data& d : spmvData(DCSR())) {
    SCOPED_TRACE(d.name);
    expectAllThreads("y(i) = B(i,j) * x(j)", d.inputs, DenseFormat(1),
                     "fuse(i,j,f),pos(f,fp,B),split(fp,p0,p1,4),parallelize(p0,cpu_thread,atomics)");
    expectAllThreads("y(i) = B(i,j) * x(j)", d.inputs, DenseFormat(1),
                     "pos(i,ip,B),split(ip,p0,p1,3),parallelize(p0)");
  }
  for (const Data& d : spmvData(COO(2))) {
    SCOPED_TRACE(d.name);
    expectAllThreads("y(i) = B(i,j) * x(j)", d.inputs, DenseFormat(1),
                     "pos(i,ip,B),split(ip,p0,p1,3),parallelize(p0,cpu_thread,atomics)");
    expectAllThreads("y(i) = B(i,j) * x(j)", d.inputs, DenseFormat(1), "pos(i,ip,B),split(ip,p0,p1,2)");
  }
}

TEST(Schedule, BlockLoopsCoverEveryBlockOnAnyTeam) {
  // Each thread starts in its own share of the blocks and then takes from the others'
  // (tessel_next_block): teams larger than the number of blocks, odd teams, no blocks.
  std::mt19937_64 rng(17);
  for (int64_t rows : {0, 1, 3, 10, 37}) {
    std::vector<Operand> in = {{"B", randomCoo({rows, 9}, 0.5, rng), CSR()}, {"x", randomCoo({9}, 1.0, rng), DenseFormat(1)}};
    for (const char* schedule : {"split(i,i0,i1,1),parallelize(i0)", "split(i,i0,i1,4),parallelize(i0)",
                                 "fuse(i,j,f),pos(f,fp,B),split(fp,p0,p1,3),parallelize(p0,cpu_thread,atomics)"})
      for (int threads : {1, 3, 5, 8}) {
        SCOPED_TRACE(std::to_string(rows) + " rows, " + schedule + " on " + std::to_string(threads) + " threads");
        EXPECT_TRUE(matchesReferenceScheduled("y(i) = B(i,j) * x(j)", in, DenseFormat(1),
                                              [&](const std::vector<IndexVar>&) { return std::string(schedule); },
                                              threads));
      }
  }
}

TEST(Schedule, BlockLoopsCoverEveryBlockWhenTheTeamIsSmallerThanItsShares) {
  // The shares are cut for the team the region asks for (omp_get_max_threads); with
  // dynamic teams the region gets at most one thread a processor, so threads must also
  // run the shares of the threads that never came (steal=off: start, start + team, ...).
  if (omp_get_num_procs() >= 64) GTEST_SKIP() << "needs fewer than 64 processors for a smaller team";
  const int wasDynamic = omp_get_dynamic();
  omp_set_dynamic(1);
  std::mt19937_64 rng(23);
  std::vector<Operand> in = {{"B", randomCoo({301, 9}, 0.5, rng), CSR()}, {"x", randomCoo({9}, 1.0, rng), DenseFormat(1)}};
  for (const char* schedule : {"split(i,i0,i1,1),parallelize(i0)", "split(i,i0,i1,4),parallelize(i0)"}) {
    SCOPED_TRACE(schedule);
    EXPECT_TRUE(matchesReferenceScheduled("y(i) = B(i,j) * x(j)", in, DenseFormat(1),
                                          [&](const std::vector<IndexVar>&) { return std::string(schedule); }, 64));
  }
  omp_set_dynamic(wasDynamic);
}

TEST(Schedule, SparseOutputsInParallel) {
  std::mt19937_64 rng(5);
  for (double density : {0.0, 0.05, 0.3}) {
    SCOPED_TRACE("density " + std::to_string(density));
    std::vector<Operand> add3 = {{"B", randomCoo({23, 17}, density, rng), CSR()},
                                 {"C", randomCoo({23, 17}, density, rng), CSR()},
                                 {"D", randomCoo({23, 17}, density, rng), CSR()}};
    for (const std::string& s : {"parallelize(i)", "split(i,i0,i1,4),parallelize(i0)",
                                 "precompute(j),divide(i,i0,i1,5),parallelize(i0)"})
      expectAllThreads("A(i,j) = B(i,j) + C(i,j) + D(i,j)", add3, CSR(), s);

    std::vector<Operand> gemm = {{"B", randomCoo({19, 13}, density, rng), CSR()},
                                 {"C", randomCoo({13, 21}, density, rng), CSR()}};
    for (const std::string& s : {"parallelize(i)", "split(i,i0,i1,3),parallelize(i0)"})
      expectAllThreads("A(i,j) = B(i,k) * C(k,j)", gemm, CSR(), s);

    std::vector<Operand> sddmm = {{"B", randomCoo({15, 14}, density, rng), CSR()},
                                  {"C", randomCoo({15, 6}, 1.0, rng), DenseFormat(2)},
                                  {"D", randomCoo({14, 6}, 1.0, rng), DenseFormat(2)}};
    for (const std::string& s : {"parallelize(i)", "fuse(i,j,f),pos(f,fp,B),split(fp,p0,p1,4),parallelize(p0)",
                                 "split(k,k0,k1,4),parallelize(i)"})
      expectAllThreads("A(i,j) = B(i,j) * C(i,k) * D(j,k)", sddmm, CSR(), s);

    std::vector<Operand> ttv = {{"B", randomCoo({9, 8, 7}, density, rng), CSF(3)},
                                {"c", randomCoo({7}, 1.0, rng), DenseFormat(1)}};
    expectAllThreads("A(i,j) = B(i,j,k) * c(k)", ttv, Format::parse("ss"), "");
    expectAllThreads("A(i,j) = B(i,j,k) * c(k)", ttv, DenseFormat(2),
                     "fuse(i,j,f),pos(f,fp,B),split(fp,p0,p1,3),parallelize(p0)");

    std::vector<Operand> mttkrp = {{"B", randomCoo({9, 8, 7}, density, rng), CSF(3)},
                                   {"C", randomCoo({8, 5}, 1.0, rng), DenseFormat(2)},
                                   {"D", randomCoo({7, 5}, 1.0, rng), DenseFormat(2)}};
    for (const std::string& s : {"fuse(i,j,f),pos(f,fp,B),split(fp,p0,p1,3),parallelize(p0,cpu_thread,atomics)",
                                 "fuse(i,j,f),pos(f,fp,B),split(fp,p0,p1,2),parallelize(p0,cpu_thread,temporary)",
                                 "pos(i,ip,B),split(ip,i0,i1,2),parallelize(i0)"})
      expectAllThreads("A(i,l) = B(i,j,k) * C(j,l) * D(k,l)", mttkrp, DenseFormat(2), s);
  }
}

TEST(Schedule, OnePassParallelSumsCompactRunsOfRows) {
  // Each thread appends its rows (one contiguous range of blocks, cut by the bound) from
  // its first row's bound offset; runs of rows then move in place. Blocks of one row, of
  // several, larger than the matrix, and rows the loops never visit (a sparse factor
  // v(i)) must all land in place.
  std::mt19937_64 rng(23);
  CooData holes;
  holes.dims = {41, 30};
  for (int64_t i = 0; i < 41; i += 3)
    for (int64_t j = i % 5; j < 30; j += 4) holes.add({i, j}, 1.0 + static_cast<double>(i + j));
  // Rows move in place: few merged entries (runs overlap their own sources) and one
  // pattern three times (every entry merges; runs land far left of their sources).
  CooData dense30 = randomCoo({41, 30}, 0.6, rng);
  for (const auto& [b, same] : {std::pair{holes, false}, std::pair{randomCoo({41, 30}, 0.3, rng), false},
                                std::pair{randomCoo({41, 30}, 0.0, rng), false}, std::pair{dense30, true}}) {
    std::vector<Operand> sum = {{"B", b, CSR()},
                                {"C", same ? b : randomCoo({41, 30}, 0.1, rng), CSR()},
                                {"D", same ? b : randomCoo({41, 30}, 0.02, rng), CSR()}};
    for (const std::string& s : {"split(i,i0,i1,1),parallelize(i0)", "split(i,i0,i1,6),parallelize(i0)",
                                 "split(i,i0,i1,100),parallelize(i0)", "divide(i,i0,i1,9),parallelize(i0)"})
      expectAllThreads("A(i,j) = B(i,j) + C(i,j) + D(i,j)", sum, CSR(), s);
    std::vector<Operand> scaled = {{"v", randomCoo({41}, 0.3, rng), Format::parse("s")}, sum[0], sum[1]};
    for (const std::string& s : {"parallelize(i)", "split(i,i0,i1,4),parallelize(i0)"})
      expectAllThreads("A(i,j) = v(i) * (B(i,j) + C(i,j))", scaled, CSR(), s);
  }
  // Outputs large enough that a thread's run is cut into pieces moved in parallel: a
  // small gap (few merges), and one pattern three times (later threads' rows lie past
  // the output's end), with empty rows at both ends.
  CooData big = randomCoo({700, 500}, 0.15, rng);
  CooData padded;
  padded.dims = {720, 500};
  for (int64_t e = 0; e < big.nnz(); e++) padded.add({big.coords[2 * e] + 10, big.coords[2 * e + 1]}, big.values[e]);
  for (bool same : {false, true}) {
    std::vector<Operand> sum = {{"B", padded, CSR()},
                                {"C", same ? padded : randomCoo({720, 500}, 0.01, rng), CSR()},
                                {"D", same ? padded : randomCoo({720, 500}, 0.005, rng), CSR()}};
    for (const std::string& s : {"split(i,i0,i1,16),parallelize(i0)", "parallelize(i)"})
      expectAllThreads("A(i,j) = B(i,j) + C(i,j) + D(i,j)", sum, CSR(), s);
  }
}

TEST(Schedule, SpTTVIntoCSRCopiesTheFibersPattern) {
  // CSF (compressed first level) into CSR: the output's rows are the fibers' segments
  // scattered to dense rows, its entries the fibers in order (a pattern copy, so values
  // are computed in parallel without a symbolic pass). Rows the tensor does not store,
  // an empty tensor, a sparse vector (fibers it misses hold explicit zeros), and a
  // 4-tensor into dss.
  std::mt19937_64 rng(31);
  CooData holes;
  holes.dims = {40, 9, 7};
  for (int64_t i = 1; i < 40; i += 6)
    for (int64_t j = i % 3; j < 9; j += 2) holes.add({i, j, (i + j) % 7}, 1.0 + static_cast<double>(i));
  for (const CooData& t : {holes, randomCoo({25, 11, 6}, 0.2, rng), randomCoo({5, 4, 3}, 0.0, rng)}) {
    for (const Format& vf : {DenseFormat(1), fmt("s")}) {
      std::vector<Operand> ttv = {{"B", t, CSF(3)}, {"c", randomCoo({t.dims[2]}, 0.5, rng), vf}};
      for (const std::string& s : {"", "parallelize(i)", "split(i,i0,i1,4),parallelize(i0)",
                                   "pos(i,ip,B),split(ip,p0,p1,3),parallelize(p0)"})
        expectAllThreads("A(i,j) = B(i,j,k) * c(k)", ttv, CSR(), s);
    }
  }
  std::vector<Operand> four = {{"B", randomCoo({12, 5, 6, 4}, 0.1, rng), CSF(4)},
                               {"c", randomCoo({4}, 1.0, rng), DenseFormat(1)}};
  expectAllThreads("A(i,j,k) = B(i,j,k,l) * c(l)", four, fmt("dss"), "parallelize(i)");
  // The plan is the copy, and its entries are the fibers (one per stored (i, j)).
  TensorBase B = makeTensor("B", holes, CSF(3)), c = makeTensor("c", randomCoo({7}, 1.0, rng), DenseFormat(1));
  TensorBase A("A", Datatype::Float64, {40, 9}, CSR());
  IndexVar i("i"), j("j"), k("k");
  A(i, j) = B(i, j, k) * c(k);
  EXPECT_NE(Kernel::emitC(A.assignment(), {}).find("first level scattered to dense rows"), std::string::npos);
  Kernel::compile(A.assignment(), {})->run(A.assignment(), 2);
  EXPECT_EQ(A.raw().vals_size, B.raw().crd_size[1]);
}

TEST(Schedule, FiberLoopsCollapseAcrossRows) {
  // A loop over a level's positions that only runs its child positions becomes one loop
  // over the children (ir::collapsePositionLoops): SpTTV's fibers, a CSR scaled into a
  // copy of its pattern, a CSF's values, a full sum. Under position splits the single
  // loop keeps each block's window; rows and fibers the tensor lacks, and empty tensors.
  std::mt19937_64 rng(43);
  CooData holes;
  holes.dims = {30, 8, 6};
  for (int64_t i = 2; i < 30; i += 5)
    for (int64_t j = i % 4; j < 8; j += 3) holes.add({i, j, (i * j) % 6}, 0.5 + static_cast<double>(j));
  const std::vector<std::string> schedules = {"", "split(i,i0,i1,4),parallelize(i0)",
                                              "fuse(i,j,f),pos(f,fp,B),split(fp,p0,p1,3),parallelize(p0)",
                                              "fuse(i,j,f),pos(f,fp,B),divide(fp,p0,p1,5),parallelize(p0)",
                                              "fuse(i,j,f),pos(f,fp,B),split(fp,p0,p1,2)"};
  for (const CooData& t : {holes, randomCoo({21, 7, 5}, 0.25, rng), randomCoo({6, 3, 2}, 0.0, rng)}) {
    std::vector<Operand> ttv = {{"B", t, CSF(3)}, {"c", randomCoo({t.dims[2]}, 0.7, rng), DenseFormat(1)}};
    for (const std::string& s : schedules) expectAllThreads("A(i,j) = B(i,j,k) * c(k)", ttv, CSR(), s);
    expectAllThreads("A(i,j,k) = B(i,j,k) * 3", {{"B", t, CSF(3)}}, CSF(3), "parallelize(i)");
    expectAllThreads("A(i,j,k) = B(i,j,k) * 3", {{"B", t, fmt("dss")}}, fmt("dss"), "split(i,i0,i1,3),parallelize(i0)");
  }
  for (double density : {0.0, 0.05, 0.4}) {
    std::vector<Operand> m = {{"B", randomCoo({17, 13}, density, rng), CSR()}};
    for (const std::string& s : {std::string(""), std::string("fuse(i,j,f),pos(f,fp,B),split(fp,p0,p1,4),parallelize(p0)")})
      expectAllThreads("A(i,j) = B(i,j) * 2", m, CSR(), s);
    for (const std::string& s : {std::string(""), std::string("fuse(i,j,f),pos(f,fp,B),split(fp,p0,p1,4)"),
                                 std::string("fuse(i,j,f),pos(f,fp,B),split(fp,p0,p1,3),parallelize(p0,cpu_thread,atomics)")})
      expectAllThreads("a = B(i,j)", m, Format(), s);
    // The row's scale reads i: the row loop stays.
    m.push_back({"c", randomCoo({17}, 0.8, rng), DenseFormat(1)});
    expectAllThreads("A(i,j) = B(i,j) * c(i)", m, CSR(), "fuse(i,j,f),pos(f,fp,B),split(fp,p0,p1,4),parallelize(p0)");
    expectAllThreads("A(i,j) = B(i,j) * c(i)", m, CSR(), "");
  }
  // The kernels keep one loop over B's fibers: none over its rows.
  TensorBase B = makeTensor("B", holes, CSF(3)), c = makeTensor("c", randomCoo({6}, 1.0, rng), DenseFormat(1));
  TensorBase A("A", Datatype::Float64, {30, 8}, CSR());
  IndexVar i("i"), j("j"), k("k");
  A(i, j) = B(i, j, k) * c(k);
  std::string code = Kernel::emitC(A.assignment(), {});
  std::string compute = code.substr(code.find("int tessel_compute"));
  EXPECT_EQ(compute.find("for (int64_t pB0"), std::string::npos) << compute;
  EXPECT_NE(compute.find("for (int64_t pB1 = (int64_t)B1_pos[(int64_t)B0_pos[0]]; pB1 < (int64_t)B1_pos[(int64_t)B0_pos[1]];"),
            std::string::npos) << compute;
}

TEST(Schedule, ManySparseTermsUseAWorkspace) {
  // Eight CSR terms (a merge would need 255 cases): gathered in a workspace row, one
  // loop per term, sequentially and in parallel, with precompute for a short sum too.
  std::mt19937_64 rng(17);
  for (double density : {0.0, 0.1, 0.5}) {
    std::vector<Operand> in;
    std::string rhs;
    for (int t = 0; t < 8; t++) {
      std::string name = "B" + std::to_string(t);
      in.push_back({name, randomCoo({11, 13}, density, rng), CSR()});
      rhs += std::string(t == 0 ? "" : t % 3 == 0 ? " - " : " + ") + (t == 5 ? "2 * " : "") + name + "(i,j)";
    }
    for (const std::string& s : {"", "parallelize(i)", "split(i,i0,i1,3),parallelize(i0)"})
      expectAllThreads("A(i,j) = " + rhs, in, CSR(), s);
    std::vector<Operand> two(in.begin(), in.begin() + 2);
    expectAllThreads("A(i,j) = B0(i,j) - B1(i,j)", two, CSR(), "precompute(j),parallelize(i)");
  }
}

TEST(Schedule, SpGEMMLongRowsSortedOrScanned) {
  // Output rows of ~800 entries in 20000 columns are sorted; in 2000 columns the
  // workspace's marks are scanned instead. Both must give sorted rows.
  std::mt19937_64 rng(9);
  for (int64_t cols : {20000, 2000}) {
    std::vector<Operand> in = {{"B", randomCoo({3, 40}, 0.5, rng), CSR()},
                               {"C", randomCoo({40, cols}, 40.0 / static_cast<double>(cols), rng), CSR()}};
    expectAllThreads("A(i,j) = B(i,k) * C(k,j)", in, CSR(), "parallelize(i)");
  }
}

TEST(Schedule, WorkspaceRowsGrowTheOutput) {
  // A workspace row is appended as soon as it is gathered, into arrays that start at a
  // guess and double -- sequentially, or per thread over contiguous blocks of rows, then
  // joined: outputs many times larger than their operands, an empty one, a vector and a
  // 3-level output, and a sum gathered by precompute; each against the reference.
  std::mt19937_64 rng(41);
  std::vector<Operand> wide = {{"B", randomCoo({30, 12}, 0.5, rng), CSR()},
                               {"C", randomCoo({12, 300}, 0.3, rng), CSR()}};
  std::vector<Operand> none = {{"B", randomCoo({30, 12}, 0.0, rng), CSR()},
                               {"C", randomCoo({12, 300}, 0.3, rng), CSR()}};
  for (const auto* in : {&wide, &none})
    for (const std::string& s : {"", "split(i,i0,i1,7)", "split(i,i0,i1,1),parallelize(i0)",
                                 "divide(i,i0,i1,3),parallelize(i0)", "split(i,i0,i1,64),parallelize(i0)"})
      expectAllThreads("A(i,j) = B(i,k) * C(k,j)", *in, CSR(), s);
  std::vector<Operand> vec = {{"b", randomCoo({12}, 0.6, rng), fmt("s")},
                              {"C", randomCoo({12, 500}, 0.4, rng), CSR()}};
  expectAllThreads("a(j) = b(k) * C(k,j)", vec, fmt("s"), "");
  std::vector<Operand> three = {{"B", randomCoo({4, 5, 6}, 0.6, rng), fmt("dds")},
                                {"C", randomCoo({6, 90}, 0.5, rng), CSR()}};
  expectAllThreads("A(i,j,l) = B(i,j,k) * C(k,l)", three, fmt("dds"), "");
  std::vector<Operand> sum = {{"B", randomCoo({20, 400}, 0.3, rng), CSR()},
                              {"C", randomCoo({20, 400}, 0.3, rng), CSR()}};
  expectAllThreads("A(i,j) = B(i,j) - C(i,j)", sum, CSR(), "precompute(j)");
  expectAllThreads("A(i,j) = B(i,j) - C(i,j)", sum, CSR(), "precompute(j),split(i,i0,i1,3),parallelize(i0)");
  TensorBase B = makeTensor("B", wide[0].data, CSR()), C = makeTensor("C", wide[1].data, CSR());
  TensorBase A("A", Datatype::Float64, {30, 300}, CSR());
  IndexVar i("i"), j("j"), k("k");
  A(i, j) = B(i, k) * C(k, j);
  for (const std::string& s : {"", "split(i,i0,i1,4),parallelize(i0)"})
    EXPECT_NE(Kernel::emitC(A.assignment(), parseSchedule(s, A.assignment()))
                  .find("one-pass assembly (rows appended to growing arrays)"),
              std::string::npos)
        << s;
}

TEST(Schedule, ReorderedSumsRepeatOnEveryThreadCount) {
  // Sum chains and unroll-and-jam depend only on loop bounds: splitting output rows
  // between threads must give bit-identical values on 1, 2 and 4 threads, and without a
  // schedule. Rows of 0..40 entries, so every row shape (short, chained, jammed) occurs.
  std::mt19937_64 rng(43);
  std::uniform_real_distribution<double> val(-1, 1);
  CooData b;
  b.dims = {41, 50};
  for (int64_t r = 0; r < 41; r++)
    for (int64_t c = 0; c < r; c++) b.add({r, (c * 7 + r) % 50}, val(rng));
  TensorBase B = makeTensor("B", b, CSR()), x = makeTensor("x", randomCoo({50}, 1.0, rng), DenseFormat(1));
  TensorBase X = makeTensor("X", randomCoo({50, 9}, 1.0, rng), DenseFormat(2));
  TensorBase U = makeTensor("U", randomCoo({41, 9}, 1.0, rng), DenseFormat(2));
  TensorBase y("y", Datatype::Float64, {41}, DenseFormat(1)), Y("Y", Datatype::Float64, {41, 9}, DenseFormat(2));
  TensorBase S("S", Datatype::Float64, {41, 50}, CSR());
  IndexVar i("i"), j("j"), k("k");
  y(i) = B(i, j) * x(j);
  Y(i, k) = B(i, j) * X(j, k);
  S(i, j) = B(i, j) * U(i, k) * X(j, k);
  for (TensorBase* out : {&y, &Y, &S}) {
    SCOPED_TRACE(out->assignment().str());
    Kernel::compile(out->assignment())->run(out->assignment());
    CooData first = out->toCoo();
    for (int threads : {1, 2, 4}) {
      Kernel::compile(out->assignment(), parseSchedule("split(i,i0,i1,3),parallelize(i0)", out->assignment()))
          ->run(out->assignment(), threads);
      CooData again = out->toCoo();
      EXPECT_EQ(again.coords, first.coords) << threads << " threads";
      EXPECT_EQ(again.values, first.values) << threads << " threads";
    }
  }
}

TEST(Schedule, DenseTilingReorderAndBound) {
  std::mt19937_64 rng(3);
  std::vector<Operand> in = {{"B", randomCoo({13, 11}, 1.0, rng), DenseFormat(2)},
                             {"C", randomCoo({11, 9}, 1.0, rng), DenseFormat(2)}};
  for (const std::string& s :
       {"split(i,i0,i1,4),split(j,j0,j1,4),reorder(i0,j0,i1,j1),parallelize(i0)",
        "reorder(k,j),split(k,k0,k1,3),parallelize(i),unroll(j,4)",
        "reorder(k,i,j),parallelize(j)", "reorder(k,i,j),parallelize(k,cpu_thread,temporary)",
        "reorder(k,i,j),split(k,k0,k1,5),parallelize(k0,cpu_thread,atomics)",
        "bound(j,jb,9,max_exact),bound(k,kb,16,upper_bound),parallelize(i)", "reorder(i,j,k),fuse(i,j,f),parallelize(f)"})
    expectAllThreads("A(i,j) = B(i,k) * C(k,j)", in, DenseFormat(2), s);
  // SpMM with the dense loop reordered outside the sparse one.
  std::vector<Operand> spmm = {{"B", randomCoo({17, 12}, 0.2, rng), CSR()},
                               {"C", randomCoo({12, 8}, 1.0, rng), DenseFormat(2)}};
  for (const std::string& s : {"reorder(k,j),parallelize(i)", "split(i,i0,i1,5),parallelize(i0),unroll(k,8)"})
    expectAllThreads("A(i,k) = B(i,j) * C(j,k)", spmm, DenseFormat(2), s);
  // A scalar result reduced in parallel.
  std::vector<Operand> dot = {{"b", randomCoo({40}, 0.5, rng), Format::parse("s")},
                              {"c", randomCoo({40}, 1.0, rng), DenseFormat(1)}};
  for (const std::string& s : {"split(i,i0,i1,6),parallelize(i0,cpu_thread,atomics)",
                               "pos(i,ip,b),split(ip,p0,p1,3),parallelize(p0,cpu_thread,temporary)"})
    expectAllThreads("a = b(i) * c(i)", dot, Format::parse(""), s);
}

// ---- property test -------------------------------------------------------------------

namespace {

/// Random schedules over the default loop order: splits, pos+fuse over the first two
/// loops, reorders, unrolls and one parallel loop with a random strategy.
class ScheduleGenerator {
 public:
  explicit ScheduleGenerator(uint64_t seed) : rng_(seed) {}

  /// `sparseAt`: (tensor, variable) pairs where the tensor stores the variable in a
  /// compressed level, the candidates for pos.
  std::string next(const std::vector<IndexVar>& order,
                   const std::vector<std::pair<std::string, std::string>>& sparseAt) {
    std::vector<std::string> cmds;
    std::vector<std::string> loops;
    for (auto& v : order) loops.push_back(v.name());
    std::string parallel, inner = loops.empty() ? "" : loops.back();
    auto sparseFor = [&](const std::string& v) {
      std::vector<std::string> ts;
      for (auto& [t, var] : sparseAt)
        if (var == v) ts.push_back(t);
      return ts;
    };
    int shape = pick(0, 4);
    if (shape == 0 && loops.size() >= 2 && !sparseFor(loops[1]).empty()) {
      auto ts = sparseFor(loops[1]);
      cmds.push_back("fuse(" + loops[0] + "," + loops[1] + ",f)");
      cmds.push_back("pos(f,fp," + ts[pick(0, static_cast<int>(ts.size()) - 1)] + ")");
      cmds.push_back(std::string(chance(0.5) ? "split" : "divide") + "(fp,p0,p1," + std::to_string(pick(1, 5)) + ")");
      parallel = "p0";
      if (loops.size() == 2) inner = loops[1];
    } else if (shape == 1 && !loops.empty() && !sparseFor(loops[0]).empty()) {
      auto ts = sparseFor(loops[0]);
      cmds.push_back("pos(" + loops[0] + ",vp," + ts[pick(0, static_cast<int>(ts.size()) - 1)] + ")");
      cmds.push_back("split(vp,v0,v1," + std::to_string(pick(1, 4)) + ")");
      parallel = "v0";
      if (loops.size() == 1) inner = "v1";
    } else if (shape == 2 && loops.size() >= 2) {
      std::vector<std::string> r = loops;
      std::shuffle(r.begin(), r.end(), rng_);
      std::string s = "reorder(";
      for (size_t k = 0; k < r.size(); k++) s += (k ? "," : "") + r[k];
      cmds.push_back(s + ")");
      parallel = r[0];
      inner = r.back();
    } else if (!loops.empty()) {
      int which = pick(0, static_cast<int>(loops.size()) - 1);
      std::string v = loops[which];
      cmds.push_back(std::string(chance(0.5) ? "split" : "divide") + "(" + v + ",s0,s1," + std::to_string(pick(1, 4)) + ")");
      parallel = which == 0 || chance(0.3) ? "s0" : loops[0];
      if (v == inner) inner = "s1";
    }
    if (!inner.empty() && chance(0.3)) cmds.push_back("unroll(" + inner + "," + std::to_string(pick(2, 4)) + ")");
    if (!parallel.empty() && chance(0.85)) {
      const char* races[] = {"no_races", "atomics", "temporary", "no_races"};
      cmds.push_back("parallelize(" + parallel + ",cpu_thread," + races[pick(0, 3)] + ")");
    }
    std::string s;
    for (auto& c : cmds) s += (s.empty() ? "" : ",") + c;
    return s;
  }

  int threads() { return std::vector<int>{1, 2, 4}[pick(0, 2)]; }
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

struct KernelCase {
  std::string expr;
  std::vector<std::vector<int64_t>> dims;  ///< per input
  std::vector<std::string> names;
  std::vector<std::vector<std::string>> vars;  ///< per input, its index variables
  int outOrder;
};

}  // namespace

TEST(Schedule, PropertyRandomSchedulesExpressionsFormats) {
  const std::vector<KernelCase> kernels = {
      {"y(i) = B(i,j) * x(j)", {{9, 8}, {8}}, {"B", "x"}, {{"i", "j"}, {"j"}}, 1},
      {"A(i,k) = B(i,j) * C(j,k)", {{7, 6}, {6, 5}}, {"B", "C"}, {{"i", "j"}, {"j", "k"}}, 2},
      {"A(i,j) = B(i,j) * C(i,k) * D(j,k)", {{7, 6}, {7, 4}, {6, 4}}, {"B", "C", "D"}, {{"i", "j"}, {"i", "k"}, {"j", "k"}}, 2},
      {"A(i,j) = B(i,j) + C(i,j) - D(i,j)", {{8, 7}, {8, 7}, {8, 7}}, {"B", "C", "D"}, {{"i", "j"}, {"i", "j"}, {"i", "j"}}, 2},
      {"A(i,j) = B(i,k) * C(k,j)", {{6, 5}, {5, 7}}, {"B", "C"}, {{"i", "k"}, {"k", "j"}}, 2},
      {"A(i,j) = B(i,j,k) * c(k)", {{5, 6, 4}, {4}}, {"B", "c"}, {{"i", "j", "k"}, {"k"}}, 2},
      {"A(i,l) = B(i,j,k) * C(j,l) * D(k,l)", {{5, 4, 6}, {4, 3}, {6, 3}}, {"B", "C", "D"}, {{"i", "j", "k"}, {"j", "l"}, {"k", "l"}}, 2},
      {"a = B(i,j) * C(i,j)", {{7, 8}, {7, 8}}, {"B", "C"}, {{"i", "j"}, {"i", "j"}}, 0},
      {"y(i) = B(i,j) * (x(j) + z(j))", {{9, 8}, {8}, {8}}, {"B", "x", "z"}, {{"i", "j"}, {"j"}, {"j"}}, 1},
      {"y(i) = B(i,j) * C(j,k) * x(k)", {{9, 7}, {7, 6}, {6}}, {"B", "C", "x"}, {{"i", "j"}, {"j", "k"}, {"k"}}, 1},
  };
  ScheduleGenerator gen(2024);
  auto randomFormat = [&](int order, bool output = false) {
    std::vector<LevelKind> levels;
    if (output && order > 0 && gen.chance(0.75)) {
      // Parallel sparse outputs need a dense first level (CSR-like): favour it.
      levels.push_back(LevelKind::Dense);
      for (int k = 1; k < order; k++) levels.push_back(gen.chance(0.6) ? LevelKind::Compressed : LevelKind::Dense);
      return Format(levels);
    }
    if (order >= 2 && gen.chance(0.15)) {
      levels.push_back(LevelKind::CompressedNU);
      for (int k = 1; k < order; k++) levels.push_back(LevelKind::Singleton);
      return Format(levels);
    }
    for (int k = 0; k < order; k++) levels.push_back(gen.chance(0.6) ? LevelKind::Compressed : LevelKind::Dense);
    return Format(levels);
  };
  int ran = 0, rejected = 0, ranPrecomputed = 0;
  const int total = 300;
  for (int n = 0; n < total; n++) {
    const KernelCase& k = kernels[n % kernels.size()];
    std::vector<Operand> in;
    double density = std::vector<double>{0.0, 0.1, 0.4, 1.0}[gen.pick(0, 3)];
    for (size_t t = 0; t < k.dims.size(); t++) {
      bool empty = gen.chance(0.05);
      std::vector<int64_t> dims = k.dims[t];
      if (empty) dims[0] = 0;
      in.push_back({k.names[t], randomCoo(dims, density, gen.rng(), gen.chance(0.2)),
                    randomFormat(static_cast<int>(dims.size()))});
    }
    Format out = k.outOrder == 0 ? Format::parse("") : randomFormat(k.outOrder, true);
    std::vector<std::pair<std::string, std::string>> sparseAt;
    for (size_t t = 0; t < in.size(); t++)
      for (int l = 0; l < in[t].format.order(); l++)
        if (in[t].format.level(l) != LevelKind::Dense) sparseAt.push_back({k.names[t], k.vars[t][l]});
    std::string schedule;
    int threads = gen.threads();
    // Sometimes first a precompute of two factors of a product: the random commands then
    // schedule what is left (those naming a variable summed inside it are rejected).
    std::string pre;
    if (k.expr.find(" + ") == std::string::npos && k.expr.find(" - ") == std::string::npos && k.names.size() >= 3 &&
        gen.chance(0.3)) {
      size_t a = static_cast<size_t>(gen.pick(0, static_cast<int>(k.names.size()) - 1));
      size_t b = (a + 1 + static_cast<size_t>(gen.pick(0, static_cast<int>(k.names.size()) - 2))) % k.names.size();
      auto access = [&](size_t t) {
        std::string s = k.names[t] + "(";
        for (size_t v = 0; v < k.vars[t].size(); v++) s += (v ? "," : "") + k.vars[t][v];
        return s + ")";
      };
      pre = "precompute(" + access(a) + "*" + access(b) + ",w),";
    }
    OrderFn make = [&](const std::vector<IndexVar>& order) { return schedule = pre + gen.next(order, sparseAt); };
    SCOPED_TRACE("case " + std::to_string(n) + ": " + k.expr + " out " + out.str());
    try {
      EXPECT_TRUE(matchesReferenceScheduled(k.expr, in, out, make, threads)) << schedule;
      ran++;
      ranPrecomputed += !pre.empty();
    } catch (const ScheduleError& e) {
      EXPECT_NE(std::string(e.what()).find("schedule"), std::string::npos) << e.what();
      if (getenv("TESSEL_SHOW_REJECTED")) std::printf("rejected: %s\n", e.what());
      rejected++;
    } catch (const DimensionError&) {
      // a zeroed dimension disagreed with another operand's: not a schedule question
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find("cannot assemble"), std::string::npos) << e.what();
    }
  }
  std::printf("schedule property: %d ran (%d with a precompute), %d rejected with ScheduleError\n", ran,
              ranPrecomputed, rejected);
  EXPECT_GE(ran, total * 2 / 5);
  EXPECT_GE(ranPrecomputed, 5);
}
