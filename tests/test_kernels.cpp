// Differential tests of the papers' kernels against the reference evaluator, over
// several formats of each operand and of the output.
#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>

#include "support/test_support.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

std::mt19937_64 rng(20261121);

CooData rnd(std::vector<int64_t> dims, double density, bool dups = false) {
  return randomCoo(dims, density, rng, dups);
}

Format F(const std::string& s) { return Format::parse(s); }

}  // namespace

TEST(Kernels, SpMV) {
  auto B = rnd({37, 23}, 0.15, true);
  auto c = rnd({23}, 1.0);
  auto cs = rnd({23}, 0.4);
  for (auto bf : {"ds", "ds:1,0", "ss", "ss:1,0", "uq", "uq:1,0", "dd", "sd", "db", "bs"})
    for (auto cf : {"d", "s"}) {
      SCOPED_TRACE(std::string("B:") + bf + " c:" + cf);
      EXPECT_TRUE(matchesReference("a(i) = B(i,j) * c(j)", {{"B", B, F(bf)}, {"c", cf == std::string("d") ? c : cs, F(cf)}}, F("d")));
    }
  EXPECT_TRUE(matchesReference("a(i) = B(i,j) * c(j)", {{"B", B, F("ds")}, {"c", c, F("d")}}, F("s")));
}

TEST(Kernels, SpMM) {
  auto B = rnd({19, 31}, 0.1, true);
  auto C = rnd({31, 8}, 1.0);
  for (auto bf : {"ds", "ds:1,0", "ss", "uq"})
    for (auto of : {"dd", "dd:1,0", "ds", "ss"}) {
      SCOPED_TRACE(std::string("B:") + bf + " A:" + of);
      EXPECT_TRUE(matchesReference("A(i,j) = B(i,k) * C(k,j)", {{"B", B, F(bf)}, {"C", C, F("dd")}}, F(of)));
    }
  EXPECT_TRUE(matchesReference("A(i,j) = B(i,k) * C(k,j)", {{"B", B, F("ds")}, {"C", C, F("dd:1,0")}}, F("dd")));
}

TEST(Kernels, SpAdd3) {
  auto B = rnd({21, 17}, 0.2), C = rnd({21, 17}, 0.2), D = rnd({21, 17}, 0.05);
  for (auto of : {"ds", "dd", "ss", "uq", "ds:1,0", "db"})
    for (auto inf : {"ds", "ss", "uq"}) {
      SCOPED_TRACE(std::string("in:") + inf + " out:" + of);
      EXPECT_TRUE(matchesReference("A(i,j) = B(i,j) + C(i,j) + D(i,j)",
                                   {{"B", B, F(inf)}, {"C", C, F(inf)}, {"D", D, F("ds")}}, F(of)));
    }
  EXPECT_TRUE(matchesReference("A(i,j) = B(i,j) - C(i,j) + D(i,j)",
                               {{"B", B, F("ds")}, {"C", C, F("ds")}, {"D", D, F("dd")}}, F("ds")));
}

TEST(Kernels, SDDMM) {
  auto B = rnd({25, 19}, 0.15), C = rnd({25, 6}, 1.0), D = rnd({6, 19}, 1.0);
  for (auto bf : {"ds", "ss", "uq"})
    for (auto of : {"ds", "dd", "ss", "uq"}) {
      SCOPED_TRACE(std::string("B:") + bf + " A:" + of);
      EXPECT_TRUE(matchesReference("A(i,j) = B(i,j) * C(i,k) * D(k,j)",
                                   {{"B", B, F(bf)}, {"C", C, F("dd")}, {"D", D, F("dd")}}, F(of)));
    }
  EXPECT_TRUE(matchesReference("A(i,j) = B(i,j) * C(i,k) * D(k,j)",
                               {{"B", B, F("ds")}, {"C", C, F("dd")}, {"D", D, F("dd:1,0")}}, F("ds")));
}

TEST(Kernels, SpTTV) {
  auto B = rnd({9, 11, 13}, 0.08, true), c = rnd({13}, 1.0), cs = rnd({13}, 0.5);
  for (auto bf : {"dss", "sss", "uqq", "dds", "dsd", "sss:1,0,2"})
    for (auto of : {"ds", "ss", "dd", "uq"}) {
      SCOPED_TRACE(std::string("B:") + bf + " A:" + of);
      EXPECT_TRUE(matchesReference("A(i,j) = B(i,j,k) * c(k)", {{"B", B, F(bf)}, {"c", c, F("d")}}, F(of)));
    }
  EXPECT_TRUE(matchesReference("A(i,j) = B(i,j,k) * c(k)", {{"B", B, F("dss")}, {"c", cs, F("s")}}, F("ds")));
}

TEST(Kernels, SpMTTKRP) {
  auto B = rnd({8, 9, 10}, 0.1), C = rnd({9, 5}, 1.0), D = rnd({10, 5}, 1.0);
  for (auto bf : {"dss", "sss", "uqq", "ddd"})
    for (auto of : {"dd", "ds"}) {
      SCOPED_TRACE(std::string("B:") + bf + " A:" + of);
      EXPECT_TRUE(matchesReference("A(i,l) = B(i,j,k) * C(j,l) * D(k,l)",
                                   {{"B", B, F(bf)}, {"C", C, F("dd")}, {"D", D, F("dd")}}, F(of)));
    }
}

TEST(Kernels, TTM) {
  auto B = rnd({7, 8, 9}, 0.1), C = rnd({9, 4}, 1.0);
  for (auto bf : {"dss", "sss", "ddd"})
    for (auto of : {"ddd", "dsd", "dds"}) {
      SCOPED_TRACE(std::string("B:") + bf + " A:" + of);
      EXPECT_TRUE(matchesReference("A(i,j,l) = B(i,j,k) * C(k,l)", {{"B", B, F(bf)}, {"C", C, F("dd")}}, F(of)));
    }
}

TEST(Kernels, InnerProductAndScalars) {
  auto B = rnd({13, 14}, 0.3), C = rnd({13, 14}, 0.3);
  for (auto bf : {"ds", "ss", "uq", "dd", "ds:1,0"})
    for (auto cf : {"ds", "dd", "ss"}) {
      SCOPED_TRACE(std::string("B:") + bf + " C:" + cf);
      EXPECT_TRUE(matchesReference("a = B(i,j) * C(i,j)", {{"B", B, F(bf)}, {"C", C, F(cf)}}, F("")));
    }
  EXPECT_TRUE(matchesReference("a = B(i,j)", {{"B", B, F("ds")}}, F("")));
  EXPECT_TRUE(matchesReference("a = 2 * B(i,j) + 1", {{"B", B, F("ds")}}, F("")));
}

TEST(Kernels, GEMM) {
  auto B = rnd({12, 10}, 1.0), C = rnd({10, 9}, 1.0);
  for (auto bf : {"dd", "dd:1,0"})
    for (auto cf : {"dd", "dd:1,0"}) {
      SCOPED_TRACE(std::string("B:") + bf + " C:" + cf);
      EXPECT_TRUE(matchesReference("A(i,j) = B(i,k) * C(k,j)", {{"B", B, F(bf)}, {"C", C, F(cf)}}, F("dd")));
    }
}

TEST(Kernels, SpGEMMSparseOutput) {
  auto B = rnd({23, 19}, 0.12), C = rnd({19, 27}, 0.12);
  for (auto bf : {"ds", "ss"})
    for (auto cf : {"ds", "ss"})
      for (auto of : {"ds", "ss", "dd"}) {
        SCOPED_TRACE(std::string("B:") + bf + " C:" + cf + " A:" + of);
        EXPECT_TRUE(matchesReference("A(i,j) = B(i,k) * C(k,j)", {{"B", B, F(bf)}, {"C", C, F(cf)}}, F(of)));
      }
  // A workspace row is listed by sorting its coordinates when it holds a small share of
  // the columns, by scanning its marks otherwise: wide products with short rows take
  // the first way, the small ones above the second. Both, mixed row by row here.
  auto Bw = rnd({40, 300}, 0.01), Cw = rnd({300, 600}, 0.01);
  for (int64_t k = 0; k < 300; k += 7) Cw.add({k, 599}, 1.0);  // plus some long rows
  for (int64_t j = 0; j < 600; j += 2) Cw.add({5, j}, 0.5);
  for (int threads : {1, 2})
    EXPECT_TRUE(matchesReferenceScheduled("A(i,j) = B(i,k) * C(k,j)", {{"B", Bw, F("ds")}, {"C", Cw, F("ds")}}, F("ds"),
                                          [&](const std::vector<IndexVar>&) {
                                            return threads == 1 ? std::string() : "split(i,i0,i1,4),parallelize(i0)";
                                          }, threads));
}

TEST(Kernels, NestedLatticeMixes) {
  auto B = rnd({15, 16}, 0.3), C = rnd({15, 16}, 0.3), D = rnd({15, 16}, 0.3), c = rnd({16}, 1.0);
  std::vector<Operand> ops = {{"B", B, F("ds")}, {"C", C, F("ss")}, {"D", D, F("uq")}, {"c", c, F("d")}};
  for (auto e : {"A(i,j) = B(i,j) * (C(i,j) + D(i,j))", "A(i,j) = (B(i,j) + C(i,j)) * (C(i,j) - D(i,j))",
                 "A(i,j) = B(i,j) + c(j)", "A(i,j) = -B(i,j) * c(j) + C(i,j)", "A(i,j) = B(i,j) / c(j)",
                 "A(i,j) = B(i,j) * c(j) / 3 - 2 * D(i,j)", "A(i,j) = c(j)", "a(i) = B(i,j) * (c(j) + C(i,j))"})
    for (auto of : {"dd", "ds", "ss"}) {
      auto text = std::string(e);
      SCOPED_TRACE(text + " A:" + of);
      std::string outFormat = text[0] == 'a' ? std::string(of).substr(0, 1) : of;
      EXPECT_TRUE(matchesReference(text, ops, F(outFormat)));
    }
}

TEST(Kernels, AccumulateAssign) {
  auto B = rnd({9, 8}, 0.3), c = rnd({8}, 1.0), A0 = rnd({9, 8}, 0.2);
  for (auto of : {"dd", "ds"}) {
    TensorBase A = makeTensor("A", A0, F(of));
    TensorBase Bt = makeTensor("B", B, F("ds")), ct = makeTensor("c", c, F("d"));
    IndexVar i("i"), j("j");
    A(i, j) += Bt(i, j) * ct(j);
    CooData expected = referenceEvaluate(A.assignment());
    A.evaluate();
    std::string why;
    EXPECT_TRUE(tensorsClose(expected, A.toCoo(), 1e-12, 1e-12, &why)) << of << ": " << why;
  }
  // Starting values inserted but not yet packed count too (the dense output adds in place).
  Tensor<double> a("a", {9}, DenseFormat(1));
  a.insert({2}, 5.0);
  TensorBase Bt = makeTensor("B", B, F("ds")), ct = makeTensor("c", c, F("d"));
  IndexVar i("i"), j("j");
  a(i) += Bt(i, j) * ct(j);
  CooData expected = referenceEvaluate(a.assignment());
  a.evaluate();
  std::string why;
  EXPECT_TRUE(tensorsClose(expected, a.toCoo(), 1e-12, 1e-12, &why)) << why;
  double row2 = 5.0;
  for (int64_t e = 0; e < B.nnz(); e++)
    if (B.coords[2 * e] == 2) row2 += B.values[e] * ct.at({B.coords[2 * e + 1]});
  EXPECT_NEAR(a.at({2}), row2, 1e-12);
}

/// `+=` with a sum on the right, into an output that already holds values: the old
/// values count once. (One loop nest once gave a(i) = 4 a_old(i) + sum: the old value
/// was added on every iteration of j.) Two runs in a row, each checked.
TEST(Kernels, AccumulateSum) {
  struct Case {
    std::string expr;
    CooData init;
    std::vector<const char*> outFormats;
    std::vector<Operand> inputs;
    std::vector<std::string> schedules;  // for 2 and 4 threads, besides the default parallel one
  };
  auto B = rnd({9, 8}, 0.3), C = rnd({8, 7}, 0.3), c = rnd({8}, 1.0), a0 = rnd({9}, 0.5), A0 = rnd({9, 7}, 0.2);
  CooData none, s0;
  none.dims = {9, 8};
  s0.add({}, 1.5);
  // Dense outputs add in place (one loop nest, stores accumulate), sparse ones in two
  // stages; nonzero splits over fused rows add partial sums with atomics or per-thread
  // copies on top of the old values.
  std::string nnzSplit = "fuse(i,j,f),pos(f,fp,B),split(fp,fp0,fp1,5),parallelize(fp0,cpu_thread,";
  std::vector<Case> cases = {
      {"a(i) += B(i,j) * c(j)", a0, {"d"}, {{"B", B, F("ds")}, {"c", c, F("d")}},
       {"split(i,i0,i1,2),parallelize(i0,cpu_thread,no_races)", nnzSplit + "atomics)", nnzSplit + "temporary)"}},
      {"a(i) += B(i,j) * c(j)", a0, {"s"}, {{"B", B, F("ds")}, {"c", c, F("d")}}, {}},
      {"a(i) += B(i,j) * c(j)", a0, {"d"}, {{"B", B, F("ss")}, {"c", c, F("d")}}, {}},
      {"a(i) += B(i,j) * c(j)", a0, {"d"}, {{"B", none, F("ds")}, {"c", c, F("d")}}, {}},
      {"a(i) += B(i,j)", a0, {"d", "s"}, {{"B", B, F("dd")}}, {}},
      {"a += B(i,j) * c(j)", s0, {""}, {{"B", B, F("ds")}, {"c", c, F("d")}}, {nnzSplit + "atomics)"}},
      {"A(i,j) += B(i,k) * C(k,j)", A0, {"dd", "dd:1,0", "ds"}, {{"B", B, F("ds")}, {"C", C, F("ds")}},
       {"split(i,i0,i1,3),parallelize(i0,cpu_thread,no_races)"}},
      {"A(i,j) += B(i,k) * C(k,j)", A0, {"ss"}, {{"B", B, F("ds")}, {"C", C, F("ss")}}, {}},
  };
  for (const Case& cs : cases)
    for (const char* of : cs.outFormats)
      for (int threads : {1, 2, 4})
        for (size_t own = 0; own <= cs.schedules.size(); own++) {
          if (own && threads == 1) continue;
          std::map<std::string, TensorBase> tensors;
          for (const Operand& in : cs.inputs) tensors[in.name] = makeTensor(in.name, in.data, in.format);
          std::string out = cs.expr.substr(0, 1);
          tensors[out] = makeTensor(out, cs.init, F(of));
          Assignment a = parseAssignment(cs.expr, tensors);
          Schedule s = own ? parseSchedule(cs.schedules[own - 1], a) : defaultParallelSchedule(a, threads);
          SCOPED_TRACE(cs.expr + " into " + of + ", " + std::to_string(threads) + " threads, schedule " + s.str());
          auto kernel = Kernel::compile(a, s);
          for (int run = 0; run < 2; run++) {
            CooData expected = referenceEvaluate(a);
            kernel->run(a, threads);
            std::string why;
            EXPECT_TRUE(tensorsClose(expected, tensors[out].toCoo(), 1e-12, 1e-12, &why)) << "run " << run << ": " << why;
          }
        }
}

TEST(Kernels, ReorderedSumsCoverEveryRowLength) {
  // Row r of B holds r entries (0..22): short rows summed in order, the two-chain sum's
  // pairs and its left-over odd position, empty rows; SDDMM's vector-lane sums over k of
  // every small length.
  CooData B;
  B.dims = {23, 23};
  std::uniform_real_distribution<double> val(-2, 2);
  for (int64_t r = 0; r < 23; r++)
    for (int64_t c = 0; c < r; c++) B.add({r, (c * 5 + r) % 23}, val(rng));
  auto c = rnd({23}, 1.0);
  for (auto bf : {"ds", "ss", "dd", "ds:1,0"}) {
    SCOPED_TRACE(bf);
    EXPECT_TRUE(matchesReference("a(i) = B(i,j) * c(j)", {{"B", B, F(bf)}, {"c", c, F("d")}}, F("d")));
    EXPECT_TRUE(matchesReference("a(i) = B(i,j) * c(j) * c(j)", {{"B", B, F(bf)}, {"c", c, F("d")}}, F("d")));
  }
  for (int64_t K : {0, 1, 2, 3, 5, 8, 67}) {
    SCOPED_TRACE("K=" + std::to_string(K));
    EXPECT_TRUE(matchesReference("A(i,j) = B(i,j) * C(i,k) * D(j,k)",
                                 {{"B", B, F("ds")}, {"C", rnd({23, K}, 1.0), F("dd")}, {"D", rnd({23, K}, 1.0), F("dd")}},
                                 F("ds")));
  }
  EXPECT_TRUE(matchesReference("a(i) = B(i,j) * c(j)", {{"B", B, F("ds"), Datatype::Float32}, {"c", c, F("d"), Datatype::Float32}},
                               F("d"), Datatype::Float32, 1e-5));
  // Unroll and jam: rows of 0..22 entries in groups of four and a remainder of up to three,
  // into dense and sparse outputs, with dense columns of several widths; MTTKRP's last
  // level likewise.
  for (int64_t K : {1, 3, 8}) {
    SCOPED_TRACE("SpMM K=" + std::to_string(K));
    auto C = rnd({23, K}, 1.0);
    for (auto of : {"dd", "ds", "dd:1,0"})
      EXPECT_TRUE(matchesReference("A(i,j) = B(i,k) * C(k,j)", {{"B", B, F("ds")}, {"C", C, F("dd")}}, F(of)));
    EXPECT_TRUE(matchesReference("A(i,j) = B(i,k) * C(k,j)", {{"B", B, F("ds"), Datatype::Int64}, {"C", C, F("dd"), Datatype::Int64}},
                                 F("dd"), Datatype::Int64));
  }
  CooData T;
  T.dims = {3, 23, 23};
  for (int64_t t = 0; t < 3; t++)
    for (int64_t e = 0; e < B.nnz(); e++) T.add({t, B.coords[2 * e], B.coords[2 * e + 1]}, B.values[e] * (t + 1));
  EXPECT_TRUE(matchesReference("A(i,l) = T(i,j,k) * C(j,l) * D(k,l)",
                               {{"T", T, F("sss")}, {"C", rnd({23, 5}, 1.0), F("dd")}, {"D", rnd({23, 5}, 1.0), F("dd")}},
                               F("dd")));
}

TEST(Kernels, GatherDotProductsCoverEveryTail) {
  // Rows of 0..40 entries average 20, over tessel_gather_dot_pays' 12: SpMV's and
  // SpTTV's rows sum with the AVX-512 gathers where the machine has them, eight (float64)
  // or sixteen (float32) entries a step and every masked tail length; columns spread so
  // that x is read all over. Also on 2 threads and over a split row loop.
  CooData B;
  B.dims = {41, 97};
  std::uniform_real_distribution<double> val(-2, 2);
  for (int64_t r = 0; r < 41; r++)
    for (int64_t c = 0; c < r; c++) B.add({r, (c * 7 + r * 3) % 97}, val(rng));
  auto c = rnd({97}, 1.0);
  for (auto bf : {"ds", "ss"}) {
    SCOPED_TRACE(bf);
    EXPECT_TRUE(matchesReference("a(i) = B(i,j) * c(j)", {{"B", B, F(bf)}, {"c", c, F("d")}}, F("d")));
    EXPECT_TRUE(matchesReference("a(i) = c(j) * B(i,j)", {{"B", B, F(bf)}, {"c", c, F("d")}}, F("d")));
    EXPECT_TRUE(matchesReference("a(i) = B(i,j) * c(j)", {{"B", B, F(bf), Datatype::Float32}, {"c", c, F("d"), Datatype::Float32}},
                                 F("d"), Datatype::Float32, 1e-5));
  }
  for (int t : {1, 2, 4})
    EXPECT_TRUE(matchesReferenceScheduled("a(i) = B(i,j) * c(j)", {{"B", B, F("ds")}, {"c", c, F("d")}}, F("d"),
                                          [](const std::vector<IndexVar>&) {
                                            return "split(i,i0,i1,5),parallelize(i0,cpu_thread,no_races)";
                                          },
                                          t));
  CooData T;
  T.dims = {3, 41, 97};
  for (int64_t t = 0; t < 3; t++)
    for (int64_t e = 0; e < B.nnz(); e++) T.add({t, B.coords[2 * e], B.coords[2 * e + 1]}, B.values[e] * (t + 1));
  EXPECT_TRUE(matchesReference("A(i,j) = T(i,j,k) * c(k)", {{"T", T, F("sss")}, {"c", c, F("d")}}, F("dd")));
  EXPECT_TRUE(matchesReference("A(i,j) = T(i,j,k) * c(k)", {{"T", T, F("dds")}, {"c", c, F("d")}}, F("ds")));
  // Rows of irregular lengths under 12 on average take the 4-entry (float32: 8-entry)
  // gathers: every tail, a full step, and several steps. Mean 3.8 (0..7, and two of 15)
  // and mean 8.4 (0..16, and two of 28).
  for (int64_t most : {8, 17}) {
    CooData S;
    S.dims = {66, 97};
    for (int64_t r = 0; r < 66; r++)
      for (int64_t c = 0; c < (r == 20 || r == 50 ? most + 3 + most / 2 : (r * 5) % most); c++)
        S.add({r, (c * 11 + r) % 97}, val(rng));
    SCOPED_TRACE("longest regular row " + std::to_string(most - 1));
    EXPECT_TRUE(matchesReference("a(i) = S(i,j) * c(j)", {{"S", S, F("ds")}, {"c", c, F("d")}}, F("d")));
    EXPECT_TRUE(matchesReference("a(i) = S(i,j) * c(j)",
                                 {{"S", S, F("ds"), Datatype::Float32}, {"c", c, F("d"), Datatype::Float32}}, F("d"),
                                 Datatype::Float32, 1e-5));
    for (int t : {2, 4}) {
      EXPECT_TRUE(matchesReferenceEachRound("a(i) = S(i,j) * c(j)", {{{"S", S, F("ds")}, {"c", c, F("d")}}}, F("d"), t));
      EXPECT_TRUE(matchesReferenceScheduled("a(i) = S(i,j) * c(j)", {{"S", S, F("ds")}, {"c", c, F("d")}}, F("d"),
                                            [](const std::vector<IndexVar>&) {
                                              return "split(i,i0,i1,5),parallelize(i0,cpu_thread,no_races)";
                                            },
                                            t));
    }
  }
}

/// A kernel keeps how it bound the last assignment's tensors (analyzing costs more than a
/// small kernel): every run must still read the tensors of the assignment it is given,
/// re-check what changed, and own none of them.
TEST(Kernels, EachRunBindsTheTensorsItIsGiven) {
  IndexVar i("i"), j("j");
  auto close = [](const Assignment& a) {
    std::string why;
    bool ok = tensorsClose(referenceEvaluate(a), TensorBase(a.lhsNode().binding).toCoo(), 1e-12, 1e-12, &why);
    return ok ? ::testing::AssertionSuccess() : ::testing::AssertionFailure() << a.str() << ": " << why;
  };
  TensorBase B1 = makeTensor("B", rnd({7, 5}, 0.4), F("ds")), c1 = makeTensor("c", rnd({5}, 1.0), F("d"));
  TensorBase B2 = makeTensor("B", rnd({4, 9}, 0.4), F("ds")), c2 = makeTensor("c", rnd({9}, 1.0), F("d"));
  TensorBase a1("a", Datatype::Float64, {7}, DenseFormat(1)), a2("a", Datatype::Float64, {4}, DenseFormat(1));
  Assignment first = makeAssignment(a1(i), B1(i, j) * c1(j)), second = makeAssignment(a2(i), B2(i, j) * c2(j));
  auto k = Kernel::compile(first);
  for (const Assignment* a : {&first, &second, &second, &first}) {
    k->run(*a, 1);
    EXPECT_TRUE(close(*a));
  }
  // Refilled inputs are read again.
  B1.setFromCoo(rnd({7, 5}, 0.6));
  k->run(first, 2);
  EXPECT_TRUE(close(first));
  // Same shape of expression, dimensions that do not fit: rejected, not served from before.
  TensorBase c3 = makeTensor("c", rnd({6}, 1.0), F("d"));
  EXPECT_THROW(k->run(makeAssignment(a1(i), B1(i, j) * c3(j)), 1), DimensionError);

  // One tensor in two accesses is one slot; two tensors are two. Same dimensions and
  // formats either way: only the tensors' identity tells the bindings apart.
  TensorBase D = makeTensor("D", rnd({7, 5}, 0.4), F("ds")), D2 = makeTensor("E", rnd({7, 5}, 0.4), F("ds"));
  Assignment shared = makeAssignment(a1(i), D(i, j) * c1(j) + D(i, j) * c1(j) * 2);
  Assignment distinct = makeAssignment(a1(i), D(i, j) * c1(j) + D2(i, j) * c1(j) * 2);
  auto ks = Kernel::compile(shared);
  ks->run(shared, 1);
  EXPECT_TRUE(close(shared));
  EXPECT_THROW(ks->run(distinct, 1), UserError);
  auto kd = Kernel::compile(distinct);
  kd->run(distinct, 1);
  EXPECT_TRUE(close(distinct));
  EXPECT_THROW(kd->run(shared, 1), UserError);

  // += into a sparse output reads a snapshot of it: twice in a row adds twice.
  CooData A0 = rnd({7, 5}, 0.3), Bv = rnd({7, 5}, 0.3);
  TensorBase A = makeTensor("A", A0, F("ds")), Bs = makeTensor("B", Bv, F("ds"));
  Assignment add = makeAssignment(A(i, j), Bs(i, j), true);
  auto ka = Kernel::compile(add);
  ka->run(add, 1);
  ka->run(add, 2);
  CooData twice = A0;
  for (int64_t e = 0; e < Bv.nnz(); e++) twice.add({Bv.coords[2 * e], Bv.coords[2 * e + 1]}, 2 * Bv.values[e]);
  std::string why;
  EXPECT_TRUE(tensorsClose(twice, A.toCoo(), 1e-12, 1e-12, &why)) << why;

  // The kernel does not keep the tensors of its runs alive.
  std::weak_ptr<TensorImpl> input;
  {
    TensorBase B = makeTensor("B", rnd({7, 5}, 0.4), F("ds")), c = makeTensor("c", rnd({5}, 1.0), F("d"));
    TensorBase a("a", Datatype::Float64, {7}, DenseFormat(1));
    Assignment run = makeAssignment(a(i), B(i, j) * c(j));
    k->run(run, 1);
    EXPECT_TRUE(close(run));
    input = B.impl();
  }
  EXPECT_TRUE(input.expired());
}

/// A sparse `+=` reads the output's old entries from its own arrays (moved aside, not
/// copied) and next time writes into the arrays it read. Across runs the added tensor
/// changes: a few entries, many more (the kept arrays are too small), none, a pattern
/// unlike the last. Two stages (a sum on the right) also keep their temporary; a second
/// output of other dimensions gets one of its own. Under TESSEL_POISON reused arrays
/// start as garbage, so every result must still match the reference.
TEST(Kernels, RepeatedSparseAccumulateReusesItsArrays) {
  IndexVar i("i"), j("j"), k("k");
  CooData none;
  none.dims = {40, 30};
  std::vector<CooData> adds = {rnd({40, 30}, 0.02), rnd({40, 30}, 0.6), none, rnd({40, 30}, 0.3)};
  auto check = [](const Assignment& a, const CooData& expected, const std::string& what) {
    std::string why;
    EXPECT_TRUE(tensorsClose(expected, TensorBase(a.lhsNode().binding).toCoo(), 1e-12, 1e-12, &why)) << what << ": " << why;
  };
  for (auto of : {"ds", "ss"}) {
    SCOPED_TRACE(of);
    TensorBase Y = makeTensor("Y", rnd({40, 30}, 0.05), F(of)), B = makeTensor("B", adds[0], F("ds"));
    Assignment a = makeAssignment(Y(i, j), B(i, j), true);
    auto kernel = Kernel::compile(a);
    for (size_t r = 0; r < 2 * adds.size(); r++) {
      B.setFromCoo(adds[r % adds.size()]);
      CooData expected = referenceEvaluate(a);
      kernel->run(a, r % 2 ? 2 : 1);
      check(a, expected, "run " + std::to_string(r));
    }
    // Same inputs again: the output's arrays alternate between two sets.
    ASSERT_TRUE(Y.impl()->storage.spare);
    std::vector<const void*> vals;
    for (int r = 0; r < 7; r++) {
      CooData expected = referenceEvaluate(a);
      kernel->run(a, 1);
      check(a, expected, "steady run " + std::to_string(r));
      vals.push_back(Y.raw().vals);
    }
    EXPECT_EQ(vals[6], vals[4]);
    EXPECT_NE(vals[6], vals[5]);
    const Storage& kept = *Y.impl()->storage.spare;  // what the last run read: the next one's arrays
    EXPECT_EQ(kept.raw.vals, vals[5]);
  }
  TensorBase C = makeTensor("C", rnd({30, 30}, 0.2), F("ds"));
  TensorBase Y = makeTensor("Y", rnd({40, 30}, 0.05), F("ds")), B = makeTensor("B", adds[0], F("ds"));
  TensorBase Y2 = makeTensor("Y", rnd({25, 30}, 0.1), F("ds")), B2 = makeTensor("B", rnd({25, 30}, 0.2), F("ds"));
  Assignment a = makeAssignment(Y(i, j), B(i, k) * C(k, j), true);
  Assignment a2 = makeAssignment(Y2(i, j), B2(i, k) * C(k, j), true);
  auto kernel = Kernel::compile(a);
  for (size_t r = 0; r < 2 * adds.size(); r++) {
    B.setFromCoo(adds[r % adds.size()]);
    const Assignment& run = r % 3 == 2 ? a2 : a;
    CooData expected = referenceEvaluate(run);
    kernel->run(run, r % 2 ? 2 : 1);
    check(run, expected, "two stages, run " + std::to_string(r));
  }
}

/// A sparse output is appended level by level, so the loops must reach its levels in
/// storage order even when an operand prefers another (found by checking the outputs'
/// arrays, not just their entries: both gave the right entries in an invalid layout).
TEST(Kernels, OutputsAreAppendedInTheirLevelOrder) {
  // A compressed first level above a dense one: j must run outside k, although B (ss)
  // stores k first. It used to append each j once per k (repeated coordinates).
  auto B = rnd({6, 7}, 0.4), c = rnd({6}, 0.6), d = rnd({6}, 0.6);
  for (auto bf : {"ss", "ds", "ss:1,0"})
    EXPECT_TRUE(matchesReference("A(j,k) = D(k) * C(k) - B(k,j)",
                                 {{"B", B, F(bf)}, {"C", c, F("s")}, {"D", d, F("s")}}, F("sd")))
        << bf;
  // Dense rows (i, k) above a compressed j, visited k first: one pass with a single
  // counter put entries in visiting order under pos counts in storage order.
  auto D3 = rnd({5, 4}, 1.0), B3 = rnd({6, 5}, 1.0), C3 = rnd({6, 5, 4}, 0.3);
  EXPECT_TRUE(matchesReference("A(k,j,i) = 2 * D(j,k) * B(i,j) * C(i,j,k)",
                               {{"D", D3, F("dd:1,0")}, {"B", B3, F("dd:1,0")}, {"C", C3, F("uqq:1,0,2")}},
                               F("dds:2,0,1")));
  EXPECT_TRUE(matchesReference("A(i,j,k) = B(i,k,j)", {{"B", rnd({4, 5, 6}, 0.3), F("sss:1,0,2")}}, F("sdd")));
  // The same through a workspace row (a sum before j): rows appended to growing arrays
  // need them in storage order too.
  EXPECT_TRUE(matchesReference("A(i,k,j) = B(k,i,l) * C(l,j)",
                               {{"B", rnd({4, 5, 6}, 0.3), F("sss")}, {"C", rnd({6, 7}, 0.4), F("ds")}}, F("dds")));
}

// Workspace rows too long for insertion sort and too sparse for the scan of the marks
// are radix-sorted by bytes: two passes over 20000 columns, three (an odd count: the
// result is copied back from the scratch half) over 100000; rows of 100-300 entries.
TEST(Kernels, WorkspaceRowsRadixSortTheirCoordinates) {
  std::mt19937_64 r(5);
  for (int64_t cols : {20000, 100000})
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::to_string(cols) + " columns on " + std::to_string(threads) + " threads");
      CooData B = randomCoo({40, 50}, 0.2, r), C = randomCoo({50, cols}, 20.0 / cols, r);
      EXPECT_TRUE(matchesReferenceScheduled("A(i,j) = B(i,k) * C(k,j)", {{"B", B, F("ds")}, {"C", C, F("ds")}}, F("ds"),
                                            [](const std::vector<IndexVar>&) { return std::string(); }, threads));
    }
}

// Parallel workspace rows: thread t fills region t of the output's kept arrays, and the
// join moves the threads' entries down to follow on. Round 0 leaves one entry (arrays
// trimmed to fewer entries than threads: empty regions); round 1 outgrows them (the
// threads' rows go to new arrays and then to new blocks); rounds 2 and 3 are smaller and
// must stay in round 1's blocks; their moves run on all threads, in steps whose source
// and destination do not overlap.
TEST(Kernels, ThreadsFillRegionsOfTheKeptArrays) {
  std::mt19937_64 r(11);
  CooData B = randomCoo({200, 10}, 1.0, r), B1{{200, 10}, {}, {}}, C1{{10, 600}, {}, {}};
  B1.add({7, 3}, 2.0);
  C1.add({3, 500}, -1.5);
  std::vector<std::vector<Operand>> rounds = {{{"B", B1, F("ds")}, {"C", C1, F("ds")}},
                                              {{"B", B, F("ds")}, {"C", randomCoo({10, 600}, 0.5, r), F("ds")}},
                                              {{"B", B, F("ds")}, {"C", randomCoo({10, 600}, 0.12, r), F("ds")}}};
  rounds.push_back(rounds.back());
  for (int threads : {2, 4}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    std::vector<const void*> blocks;
    auto after = [&](size_t round, const TensorBase& out) {
      const tessel_tensor_t& t = out.raw();
      EXPECT_EQ(t.crd_block[1], nullptr);
      EXPECT_EQ(t.vals_block, nullptr);
      if (round == 1) blocks = {t.crd[1], t.vals};
      if (round >= 2) EXPECT_EQ(blocks, (std::vector<const void*>{t.crd[1], t.vals})) << "round " << round;
    };
    EXPECT_TRUE(matchesReferenceEachRound("A(i,j) = B(i,k) * C(k,j)", rounds, F("ds"), threads, after));
  }
}

TEST(Kernels, EmptyAndDegenerate) {
  std::vector<std::vector<int64_t>> shapes = {{0, 5}, {5, 0}, {1, 1}, {6, 6}};
  for (auto& s : shapes)
    for (double density : {0.0, 1.0}) {
      auto B = rnd(s, density), C = rnd(s, density);
      auto c = rnd({s[1]}, density);
      for (auto f : {"ds", "ss", "uq", "dd"}) {
        SCOPED_TRACE(std::string(f) + " " + std::to_string(s[0]) + "x" + std::to_string(s[1]));
        EXPECT_TRUE(matchesReference("a(i) = B(i,j) * c(j)", {{"B", B, F(f)}, {"c", c, F("s")}}, F("d")));
        EXPECT_TRUE(matchesReference("A(i,j) = B(i,j) + C(i,j)", {{"B", B, F(f)}, {"C", C, F("ds")}}, F(f)));
        EXPECT_TRUE(matchesReference("A(i,j) = B(i,k) * C(k,j)", {{"B", B, F(f)}, {"C", rnd({s[1], s[1]}, density), F("ds")}}, F("ds")));
      }
    }
}

TEST(Kernels, IntegerAndFloatTypes) {
  auto B = randomCoo({10, 12}, 0.3, rng, false, true), c = randomCoo({12}, 1.0, rng, false, true);
  for (auto t : {Datatype::Int32, Datatype::Int64, Datatype::Float32}) {
    SCOPED_TRACE(datatypeName(t));
    EXPECT_TRUE(matchesReference("a(i) = B(i,j) * c(j)", {{"B", B, F("ds"), t}, {"c", c, F("d"), t}}, F("d"), t, 1e-5));
    EXPECT_TRUE(matchesReference("A(i,j) = B(i,j) / c(j)", {{"B", B, F("ds"), t}, {"c", c, F("d"), t}}, F("ds"), t, 1e-5));
  }
}

TEST(Kernels, HigherOrder) {
  auto B = rnd({3, 4, 3, 5, 2}, 0.2), C = rnd({3, 4, 3, 5, 2}, 0.2);
  for (auto bf : {"ddsss", "sssss", "uqqqq", "dsdsd"})
    for (auto of : {"ddddd", "sssss", "ddsss"}) {
      SCOPED_TRACE(std::string(bf) + " -> " + of);
      EXPECT_TRUE(matchesReference("A(i,j,k,l,m) = B(i,j,k,l,m) + C(i,j,k,l,m)", {{"B", B, F(bf)}, {"C", C, F("sssss")}}, F(of)));
      EXPECT_TRUE(matchesReference("A(i,j,k,l,m) = B(i,j,k,l,m) * C(i,j,k,l,m)", {{"B", B, F(bf)}, {"C", C, F("sssss")}}, F(of)));
    }
  EXPECT_TRUE(matchesReference("a(m) = B(i,j,k,l,m) * C(i,j,k,l,m)", {{"B", B, F("sssss:4,0,1,2,3")}, {"C", C, F("ddddd")}}, F("d")));
}

TEST(Kernels, ScalarInputs) {
  auto B = rnd({9, 7}, 0.3), c = rnd({7}, 1.0);
  CooData s;
  s.dims = {};
  s.add({}, 2.5);
  EXPECT_TRUE(matchesReference("A(i,j) = s * B(i,j)", {{"s", s, F("")}, {"B", B, F("ds")}}, F("ds")));
  EXPECT_TRUE(matchesReference("a(i) = B(i,j) * c(j) + s", {{"s", s, F("")}, {"B", B, F("ss")}, {"c", c, F("d")}}, F("d")));
  EXPECT_TRUE(matchesReference("t = s * s + B(i,j)", {{"s", s, F("")}, {"B", B, F("ds")}}, F("")));
}

// An output computed again keeps its arrays: no allocation and no page faults when the
// inputs stay the same size. Across rounds the inputs grow (the arrays are replaced),
// shrink and repeat (the arrays are reused); under TESSEL_POISON reused arrays are
// filled with garbage first, so every result must still match the reference. The first
// result is trimmed to its size (the sizes are large enough for the bound's slack to
// exceed a page).
// Two threads fill a CSR union from both sides of the point where their windows meet,
// so the output ends up contiguous but starting inside its arrays (crd_block /
// vals_block) instead of being moved to their start. Checks the results, the trim of a
// first result that leaves most of its arrays unused, that later kernels (the same one
// again, and a different one on one thread) take the arrays back, and reading the
// entries out of a binary file written from the offset arrays.
TEST(Kernels, PairedThreadsLeaveTheOutputInsideItsArrays) {
  CooData Bd = rnd({300, 200}, 0.1), same = Bd;
  for (double& v : same.values) v = 3.0 - v;  // B's pattern: every entry merges
  TensorBase A("A", Datatype::Float64, {300, 200}, F("ds"));
  TensorBase B = makeTensor("B", Bd, F("ds")), C = makeTensor("C", same, F("ds")), D = makeTensor("D", same, F("ds"));
  IndexVar i("i"), j("j");
  A(i, j) = B(i, j) + C(i, j) + D(i, j);
  Assignment sum = A.assignment();
  auto kernel = Kernel::compile(sum, defaultParallelSchedule(sum, 2));
  auto check = [&](const Assignment& a, const std::string& what) {
    std::string why;
    EXPECT_TRUE(tensorsClose(referenceEvaluate(a), A.toCoo(), 1e-12, 1e-12, &why)) << what << ": " << why;
  };
  const tessel_tensor_t& raw = A.raw();
  kernel->run(sum, 2);
  check(sum, "first run");
  // A third of the bound holds entries: the first result is copied to exact-size arrays.
  EXPECT_EQ(raw.crd_block[1], nullptr);
  EXPECT_EQ(raw.vals_block, nullptr);
  kernel->run(sum, 2);
  check(sum, "second run");
  ASSERT_NE(raw.crd_block[1], nullptr);
  ASSERT_NE(raw.vals_block, nullptr);
  // The first thread's rows merged two thirds of their bound away: the output starts past them.
  EXPECT_GT(static_cast<const int32_t*>(raw.crd[1]) - static_cast<const int32_t*>(raw.crd_block[1]), Bd.nnz() / 4);
  EXPECT_EQ(static_cast<const double*>(raw.vals) - static_cast<const double*>(raw.vals_block),
            static_cast<const int32_t*>(raw.crd[1]) - static_cast<const int32_t*>(raw.crd_block[1]));

  std::filesystem::path dir = makeScratchDir("tessel-paired");
  writeBinary((dir / "A.tsb").string(), A);  // written from the arrays as they are
  std::string why;
  EXPECT_TRUE(tensorsClose(A.toCoo(), readBinary((dir / "A.tsb").string()).toCoo(), 0, 0, &why)) << why;
  removeScratchDir(dir);

  B.setFromCoo(rnd({300, 200}, 0.2));  // other data: little merges, a small offset
  kernel->run(sum, 2);
  check(sum, "new inputs");
  A(i, j) = B(i, j) * C(i, j);  // another kernel, one thread: a plain array again
  Assignment product = A.assignment();
  Kernel::compile(product)->run(product, 1);
  check(product, "product");
  EXPECT_EQ(raw.crd_block[1], nullptr);
  EXPECT_EQ(raw.vals_block, nullptr);
}

TEST(Kernels, RecomputedOutputsReuseTheirArrays) {
  struct Case {
    std::string expr;
    std::vector<std::pair<std::string, std::vector<int64_t>>> inputs;  // name, dims
    std::vector<std::string> formats;
    Format out;
  };
  Format csr64 = F("ds").withWidths(IndexWidth::W64, IndexWidth::W32);
  std::vector<Case> cases = {
      {"A(i,j) = B(i,j) + C(i,j) + D(i,j)", {{"B", {200, 300}}, {"C", {200, 300}}, {"D", {200, 300}}}, {"ds", "ds", "ds"}, F("ds")},
      {"A(i,j) = B(i,j) + C(i,j) + D(i,j)", {{"B", {200, 300}}, {"C", {200, 300}}, {"D", {200, 300}}}, {"ds", "ss", "ds"}, F("ss")},
      {"A(i,j) = B(i,j) + C(i,j)", {{"B", {200, 300}}, {"C", {200, 300}}}, {"ss", "ds"}, csr64},
      {"A(i,j) = B(i,j) + C(i,j)", {{"B", {200, 300}}, {"C", {200, 300}}}, {"uq", "ds"}, F("uq")},
      {"A(i,j) = B(i,j) + C(i,j)", {{"B", {200, 300}}, {"C", {200, 300}}}, {"ds", "ds"}, F("dd")},
      {"A(i,j) = B(i,k) * C(k,j)", {{"B", {200, 60}}, {"C", {60, 300}}}, {"ds", "ds"}, F("ds")},
      {"A(i,j) = B(i,j) * C(i,k) * D(k,j)", {{"B", {200, 300}}, {"C", {200, 5}}, {"D", {5, 300}}}, {"ds", "dd", "dd"}, F("ds")},
      {"A(i,j) = B(i,j) * C(i,k) * D(k,j)", {{"B", {200, 300}}, {"C", {200, 5}}, {"D", {5, 300}}}, {"ss", "dd", "dd"}, F("ds")},
      {"a(i) = B(i,j) * c(j)", {{"B", {200, 300}}, {"c", {300}}}, {"ds", "d"}, F("d")},
  };
  // Densities per round: round 1 grows past round 0, rounds 2 and 3 are smaller and equal.
  const std::vector<double> density = {0.1, 0.3, 0.05, 0.05};
  // Parallel workspace rows (the product): each thread appends to its region of the
  // output's own arrays, which round 1 outgrows (the threads move to new arrays, the join
  // to new blocks); rounds 2 and 3 fit and are moved into place.
  for (const Case& c : cases)
    for (int threads : {1, 2, 4}) {
      std::vector<std::vector<Operand>> rounds;
      for (size_t r = 0; r < density.size(); r++) {
        if (r == 3) {
          rounds.push_back(rounds.back());
          continue;
        }
        std::vector<Operand> ops;
        for (size_t n = 0; n < c.inputs.size(); n++) {
          bool dense = c.formats[n].find('s') == std::string::npos && c.formats[n].find('u') == std::string::npos;
          ops.push_back({c.inputs[n].first, rnd(c.inputs[n].second, dense ? 1.0 : density[r]), F(c.formats[n])});
        }
        rounds.push_back(ops);
      }
      std::vector<const void*> kept;
      struct Array {
        const void* block;  // the malloc'd block
        size_t bytes;       // bytes in use (upper bound)
        bool offset;        // the array starts inside its block
      };
      auto arrays = [](const tessel_tensor_t& t) {
        std::vector<Array> a;
        for (int k = 0; k < t.order; k++) {
          if (t.pos[k]) a.push_back({t.pos[k], static_cast<size_t>(t.pos_size[k]) * 8, false});
          if (t.crd[k])
            a.push_back({t.crd_block[k] ? t.crd_block[k] : t.crd[k], static_cast<size_t>(t.crd_size[k]) * 8,
                         t.crd_block[k] != nullptr});
        }
        a.push_back({t.vals_block ? t.vals_block : t.vals, static_cast<size_t>(t.vals_size) * 8, t.vals_block != nullptr});
        return a;
      };
      auto after = [&](size_t r, const TensorBase& out) {
        // Trimmed: no more than a page beyond the sizes; an array starting inside its
        // block (two threads met there) keeps it while at least half of it is in use.
        if (r == 0)
          for (const Array& a : arrays(out.raw()))
            EXPECT_LT(malloc_usable_size(const_cast<void*>(a.block)), (a.offset ? 2 : 1) * std::max<size_t>(a.bytes, 8) + 4096)
                << "round 0";
        if (r == 2)
          for (const Array& a : arrays(out.raw())) kept.push_back(a.block);
        if (r == 3) {
          std::vector<const void*> now;
          for (const Array& a : arrays(out.raw())) now.push_back(a.block);
          EXPECT_EQ(now, kept) << "round 3 moved the output's arrays";
        }
      };
      SCOPED_TRACE(c.expr + " into " + c.out.str() + " on " + std::to_string(threads) + " threads");
      EXPECT_TRUE(matchesReferenceEachRound(c.expr, rounds, c.out, threads, after));
    }
}

TEST(Kernels, PatternCopyFromASparseRootUnderTwoDenseLevels) {
  // A (dds:1,2,0) copies D's pattern (D transposed to sds:1,0,2): D's root level j is
  // compressed, A's dense, and A's next level is dense too. A root that is not full
  // (rows of j missing, or D empty) once made assembly copy D's level-2 pos array as if
  // it were (a read past its end: a crash or an "inconsistent pos array").
  std::mt19937_64 rng(41);
  for (int64_t k : {0, 1, 3})
    for (double density : {0.0, 0.2, 1.0}) {
      SCOPED_TRACE("k " + std::to_string(k) + " density " + std::to_string(density));
      std::vector<Operand> in = {{"B", randomCoo({4, 3}, 0.5, rng), Format::parse("ss")},
                                 {"C", randomCoo({3, 4}, 1.0, rng), Format::parse("dd")},
                                 {"D", randomCoo({3, 4, k}, density, rng), Format::parse("sds:2,0,1")}};
      EXPECT_TRUE(matchesReference("A(k,j,i) = B(j,i) * C(i,j) * D(i,j,k)", in, Format::parse("dds:1,2,0")));
    }
}
