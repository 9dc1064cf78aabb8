// The backend interface and the target-neutral IR: how CBackend prints each loop kind
// and strategy, that it rejects loop kinds it cannot print with a typed error, and that
// lowered kernels hold no C text (only comments carry text; names are identifiers).
#include <gtest/gtest.h>

#include <regex>

#include "codegen/backend.h"
#include "codegen/c_backend.h"
#include "codegen/c_prelude.h"
#include "ir/ir.h"
#include "ir/rewrite.h"
#include "driver/pipeline.h"
#include "lower/lower.h"
#include "support/test_support.h"
#include "tessel/schedule.h"

using namespace tessel;
using namespace tessel::ir;

namespace {

/// One function whose body is `body`, printed by the C backend.
std::string emitBody(const Stmt& body) {
  Module m;
  m.functions.push_back(Function{"f", "", body});
  return codegen::backendNamed("c").emit(m);
}

/// for i in [0, n): Y[i] = X[i], run as `loop` says.
Stmt copyLoop(LoopInfo loop, bool atomic = false) {
  Expr i = var("i", i64()), n = var("n", i64());
  Expr Y = var("Y", ptr(Datatype::Float64)), X = var("X", ptr(Datatype::Float64, true));
  Stmt st = atomic ? atomicAdd(Y, i, load(X, i)) : store(Y, i, load(X, i));
  return block({decl(n, intImm(8)), forRange(i, intImm(0), n, st, std::move(loop))});
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST(Backend, LookupByName) {
  const codegen::Backend& c = codegen::backendNamed("c");
  EXPECT_EQ(c.name(), "c");
  EXPECT_EQ(c.fileExtension(), ".c");
  EXPECT_FALSE(c.compilerFlags().empty());
  EXPECT_THROW(codegen::backendNamed("cuda"), InternalError);
}

TEST(Backend, CpuParallelStrategiesPrintTheirPragmas) {
  std::string guided = emitBody(copyLoop(cpuParallel(ParallelStrategy::Guided)));
  EXPECT_TRUE(contains(guided, "#pragma omp parallel for schedule(guided)\n  for (int64_t i = 0; i < n; i++) {"))
      << guided;
  EXPECT_TRUE(contains(emitBody(copyLoop(cpuParallel(ParallelStrategy::Static))),
                       "#pragma omp parallel for schedule(static)\n"));
  EXPECT_TRUE(contains(emitBody(copyLoop(cpuParallel(ParallelStrategy::StaticChunk1))),
                       "#pragma omp parallel for schedule(static, 1)\n"));
  // Own shares first: a parallel region over tessel_next_block, the unroll hint inside.
  std::string blocks = emitBody(copyLoop(cpuParallel(ParallelStrategy::OwnSharesFirst, 4)));
  EXPECT_TRUE(contains(blocks, "int i_nt = tessel_shares(i_shares, 0, n);")) << blocks;
  EXPECT_TRUE(contains(blocks, "#pragma omp parallel\n")) << blocks;
  EXPECT_TRUE(contains(blocks, "#pragma GCC unroll 4\n      while (tessel_next_block(i_shares, i_nt, i_start, &i_at, &i))"))
      << blocks;
  EXPECT_FALSE(contains(blocks.substr(blocks.find("int f(")), "for (int64_t i")) << blocks;
  // A serial loop with an unroll hint, and none without one.
  EXPECT_TRUE(contains(emitBody(copyLoop(serialLoop(8))), "  #pragma GCC unroll 8\n  for (int64_t i = 0;"));
  std::string plain = emitBody(copyLoop(serialLoop()));
  EXPECT_FALSE(contains(plain.substr(plain.find("int f(")), "#pragma")) << plain;
}

TEST(Backend, AtomicStoresAndVectorReductionsAreFields) {
  Stmt atomic = copyLoop(cpuParallel(ParallelStrategy::Guided), true);
  const Stmt& loop = atomic->body[1];
  EXPECT_TRUE(loop->body[0]->atomic);
  EXPECT_TRUE(loop->body[0]->text.empty());
  EXPECT_TRUE(contains(emitBody(atomic), "    #pragma omp atomic\n    Y[i] += X[i];\n"));

  Expr acc = var("acc", scalar(Datatype::Float64)), i = var("i", i64());
  Expr X = var("X", ptr(Datatype::Float64, true));
  Stmt sum = block({decl(acc, floatImm(0)), forRange(i, intImm(0), intImm(16), assign(acc, add(acc, load(X, i))),
                                                      vectorReduction(acc, ReduceOp::Add))});
  EXPECT_TRUE(contains(emitBody(sum), "#pragma omp simd reduction(+:acc)\n  for (int64_t i = 0; i < 16; i++)"));
  // The reduction pass marks affine sum loops with the field, not with text.
  Stmt plainSum = block({decl(acc, floatImm(0)), forRange(i, intImm(0), intImm(16), assign(acc, add(acc, load(X, i))))});
  bool marked = anyStmt(splitReductionChains(plainSum), [](const Stmt& s) {
    return s->op == StmtOp::For && s->loop.kind == LoopKind::Vectorized && s->loop.reductionVar &&
           s->loop.reductionVar->name == "acc" && s->loop.reduceOp == ReduceOp::Add;
  });
  EXPECT_TRUE(marked);
}

TEST(Backend, CRejectsLoopKindsItCannotPrint) {
  for (LoopKind k : {LoopKind::GpuThread, LoopKind::GpuBlock, LoopKind::Distributed}) {
    LoopInfo l;
    l.kind = k;
    try {
      emitBody(copyLoop(l));
      ADD_FAILURE() << "printed a " << loopKindName(k) << " loop";
    } catch (const codegen::UnsupportedLoopError& e) {
      EXPECT_EQ(e.kind(), k);
      EXPECT_TRUE(contains(e.what(), loopKindName(k))) << e.what();
      EXPECT_TRUE(contains(e.what(), "C backend")) << e.what();
    }
  }
  LoopInfo gpu;
  gpu.kind = LoopKind::GpuThread;
  EXPECT_THROW(emitBody(copyLoop(gpu)), InternalError);  // a typed tessel error
}

TEST(Backend, PreludeHoldsTheAbiOnceAndTheHelpers) {
  std::string p = codegen::cPrelude();
  size_t first = p.find("typedef struct tessel_tensor {");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(p.find("typedef struct tessel_tensor {", first + 1), std::string::npos);
  EXPECT_EQ(p.find("#define TESSEL_ERR_NOMEM"), p.rfind("#define TESSEL_ERR_NOMEM"));
  EXPECT_LT(first, p.find("static inline int64_t tessel_min("));  // ABI first, then the helpers
  EXPECT_TRUE(contains(p, "#define tessel_mul_overflow("));
}

namespace {

bool identifier(const std::string& s) { return std::regex_match(s, std::regex("[A-Za-z_][A-Za-z0-9_]*")); }

/// Every Var, Call and Field name is an identifier: no C text hides in names.
void checkNames(const Expr& e, const std::string& where) {
  if (!e) return;
  if (e->op == ExprOp::Var || e->op == ExprOp::Call || e->op == ExprOp::Field)
    EXPECT_TRUE(identifier(e->name)) << where << ": " << e->name;
  for (const Expr& a : e->args) checkNames(a, where);
}

}  // namespace

TEST(Backend, LoweredKernelsHoldNoCText) {
  std::mt19937_64 rng(3);
  auto T = [&](const std::string& n, std::vector<int64_t> dims, const std::string& f) {
    return tessel::testing::makeTensor(n, tessel::testing::randomCoo(dims, 0.3, rng), Format::parse(f));
  };
  IndexVar i("i"), j("j"), k("k");
  TensorBase A = T("A", {20, 20}, "ds"), B = T("B", {20, 20}, "ds"), C = T("C", {20, 20}, "ds");
  TensorBase x = T("x", {20}, "d"), y("y", Datatype::Float64, {20}, DenseFormat(1));
  TensorBase S("S", Datatype::Float64, {20, 20}, CSR()), P("P", Datatype::Float64, {20, 20}, CSR());
  y(i) = A(i, j) * x(j);
  S(i, j) = A(i, j) + B(i, j) + C(i, j);
  P(i, j) = A(i, k) * B(k, j);
  std::vector<std::pair<Assignment, Schedule>> kernels;
  for (const Assignment& a : {y.assignment(), S.assignment(), P.assignment()}) {
    kernels.push_back({a, Schedule{}});
    kernels.push_back({a, defaultParallelSchedule(a, 4)});
  }
  kernels.push_back({y.assignment(), parseSchedule("parallelize(i,cpu_thread,temporary)", y.assignment())});
  kernels.push_back({y.assignment(), parseSchedule("parallelize(i),unroll(j,4)", y.assignment())});
  int fors = 0, parallel = 0;
  for (const auto& [a, s] : kernels) {
    lower::LoweredKernel lk = driver::lowerAssignment(a, s);
    for (const Function& f : lk.module.functions) {
      std::string where = a.str() + " " + f.name;
      forEachStmt(f.body, [&](const Stmt& st) {
        if (st->op != StmtOp::Comment) EXPECT_TRUE(st->text.empty()) << where << ": " << st->text;
        for (const Expr& e : st->args) checkNames(e, where);
        fors += st->op == StmtOp::For;
        parallel += st->op == StmtOp::For && st->loop.kind == LoopKind::CpuParallel;
      });
    }
  }
  EXPECT_GT(fors, 0);
  EXPECT_GT(parallel, 0);
}
