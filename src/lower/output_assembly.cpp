// Output assembly: positions, appends, workspace rows, and the assemble function's
// allocation code.
#include "lower/output_assembly.h"
#include "lower/semiring_ir.h"

#include "format/level_format.h"
#include "tessel/error.h"
#include "tessel/runtime_abi.h"

namespace tessel::lower {

using namespace ir;

namespace {
Expr boolImm(bool b) { return intImm(b ? 1 : 0, scalar(Datatype::Bool)); }
Expr plus1(const Expr& e) { return add(e, intImm(1)); }
}  // namespace

OutputAssembly::OutputAssembly(const Problem& p, const OutputPlan& plan, Symbols& sym, const ParallelPlan& pp)
    : p_(p), plan_(plan), sym_(sym), pp_(pp) {
  const std::string& a = sym.tensorName(0);
  for (int k = 0; k < order(); k++) {
    std::string ks = std::to_string(k);
    cnt_.push_back(var(sym.fresh(a + ks + "_cnt"), ptr(Datatype::Int64)));
    cap_.push_back(var(sym.fresh(a + ks + "_cap"), i64()));
    n_.push_back(var(sym.fresh("n" + a + ks), i64()));
    q_.push_back(var(sym.fresh("q" + a + ks), i64()));
  }
  if (plan.kind == OutputKind::Workspace) {
    wVals_ = var(sym.fresh("w_vals"), ptr(sym.computeType()));
    wMark_ = var(sym.fresh("w_mark"), ptr(Datatype::Bool));
    wList_ = var(sym.fresh("w_list"), ptr(Datatype::Int64));
    wN_ = var(sym.fresh("w_n"), i64());
    wValsAll_ = var(sym.fresh("w_vals_all"), wVals_->type);
    wMarkAll_ = var(sym.fresh("w_mark_all"), wMark_->type);
    wListAll_ = var(sym.fresh("w_list_all"), wList_->type);
  }
  rowStart_ = var(sym.fresh("row_start"), i64());
  rowFrom_ = var(sym.fresh("row_from"), ptr(Datatype::Int64));
  capacity_ = var(sym.fresh("capacity"), i64());
  tCrd_ = var(sym.fresh("thread_crd"), ptr(Datatype::Int64));
  tVals_ = var(sym.fresh("thread_vals"), ptr(Datatype::Int64));
  tCount_ = var(sym.fresh("thread_n"), ptr(Datatype::Int64));
  failed_ = var(sym.fresh("failed"), i64());
}

int OutputAssembly::chainEnd(int k) const {
  int e = k;
  while (e + 1 < order() && !level(e + 1).ownsPositions()) e++;
  return e;
}

Expr OutputAssembly::parentPos(const Env& env, int k) const {
  return k == 0 ? intImm(0) : env.out.at(k - 1).pos;
}

bool OutputAssembly::denseAbove(int k) const {
  for (int j = 0; j < k; j++)
    if (!level(j).locatable()) return false;
  return true;
}

Stmt OutputAssembly::setField(const std::string& fieldName, int k, const Expr& value) const {
  return assign(sym_.tensorField(0, fieldName, k), value);
}

std::vector<Stmt> OutputAssembly::ensureCount(int k, const Expr& index) {
  if (denseAbove(k)) return {};
  Expr grow = call("tessel_grow_i64",
                   {cast(opaque(TypeKind::Void, true), addressOf(cnt_[k])), addressOf(cap_[k]), plus1(index)},
                   scalar(Datatype::Int32));
  return {ifThen(grow, returnCode(TESSEL_ERR_NOMEM))};
}

Stmt OutputAssembly::mulChecked(const Expr& into, const Expr& a, const Expr& b) const {
  // tessel_mul_overflow: a helper of the C prelude (kernel_helpers.h).
  return ifThen(call("tessel_mul_overflow", {a, b, addressOf(into)}, scalar(Datatype::Bool)),
                returnCode(TESSEL_ERR_OVERFLOW));
}

Stmt OutputAssembly::copyArray(const Expr& dst, const Expr& src, const Expr& count) const {
  Expr bytes = mul(cast(opaque(TypeKind::Size, false), count), elemSize(dst));
  return evaluate(call("memcpy", {dst, src, bytes}, opaque(TypeKind::Void, true)));
}

std::vector<Stmt> OutputAssembly::allocCrd(int level, const Expr& count, int copyFrom) {
  const Expr& c = sym_.arrays(0, level).crd;
  Expr crd = var(c->name, ptr(c->type.elem));
  std::vector<Stmt> s = {decl(crd), allocInto(crd, sym_.tensorField(0, "crd", level), count, AllocFill::None)};
  if (copyFrom >= 0)
    s.push_back(copyArray(crd, sym_.tensorField(copyFrom, "crd", level), count));
  s.push_back(setField("crd_size", level, count));
  return s;
}

std::vector<Stmt> OutputAssembly::allocVals(const Expr& count, bool zero) {
  Expr vals = var(sym_.vals(0)->name, ptr(sym_.outputType()));
  std::vector<Stmt> s = {decl(vals), allocInto(vals, sym_.tensorField(0, "vals", -1), count,
                                               zero && !needsZeroFill() ? AllocFill::Zero : AllocFill::None),
                         setField("vals_size", -1, count)};
  if (zero && needsZeroFill()) s.push_back(fillWithZero(vals, count));
  return s;
}

// ---- prologue / epilogue ------------------------------------------------------------

std::vector<Stmt> OutputAssembly::functionPrologue(Phase phase) {
  std::vector<Stmt> s;
  if (plan_.growRows) {
    if (phase == Phase::Symbolic) return assembleGrowable();
    int k = order() - 1;
    s.push_back(decl(q_[k], intImm(0)));  // (thread buffers: the joined count)
    if (!threadBuffers()) {
      s.push_back(decl(capacity_, sym_.tensorField(0, "vals_size")));
    } else {
      // Per thread: its arrays and entry count (slot t + 1), filled at the end of its range.
      Expr nt = plus1(maxThreads());
      for (const Expr& a : {tCrd_, tVals_, tCount_}) {
        s.push_back(decl(a));
        s.push_back(alloc(a, nt, true));
      }
      s.push_back(decl(failed_, intImm(0)));
    }
  }
  if (plan_.singlePass) {
    if (phase == Phase::Symbolic) return assembleBounded();
    if (plan_.rowOffsets) {
      // Zeroed: a row the loops never visit has no entries and must not read garbage.
      std::vector<Stmt> s;
      Expr rows = upperSize(s);
      s.push_back(decl(rowFrom_));
      s.push_back(alloc(rowFrom_, rows, true));
      return s;
    }
    // (rows redeclare row_start; a one-level output has a single row)
    return {decl(q_[order() - 1], intImm(0)), decl(rowStart_, intImm(0))};
  }
  if (phase == Phase::Symbolic) {
    if (plan_.kind == OutputKind::Dense) return assembleDense();
    if (plan_.kind == OutputKind::PatternCopy) return assemblePatternCopy();
    for (int k = 0; k < order(); k++) {
      if (level(k).locatable() || !level(k).ownsPositions()) continue;
      if (denseAbove(k)) {
        Expr size = intImm(1);
        for (int j = 0; j < k; j++) size = mul(size, sym_.arrays(0, j).dim);
        s.push_back(decl(cap_[k], plus1(size)));
        s.push_back(decl(cnt_[k]));
        s.push_back(alloc(cnt_[k], cap_[k], true));
      } else {
        s.push_back(decl(cnt_[k], intImm(0)));
        s.push_back(decl(cap_[k], intImm(0)));
      }
      s.push_back(decl(n_[k], intImm(0)));
    }
  } else if (order() > 0 && (plan_.kind == OutputKind::Append || plan_.kind == OutputKind::Workspace) &&
             !level(0).locatable() && plan_.workspaceLevel != 0) {
    s.push_back(decl(q_[0], intImm(0)));
  }
  if (plan_.kind == OutputKind::Workspace) {
    // One row per thread when the rows are filled in parallel.
    Expr size = sym_.arrays(0, plan_.workspaceLevel).dim;
    Expr total = size;
    if (pp_.privateWorkspace) {
      total = var(sym_.fresh("w_total"), i64());
      s.push_back(decl(total, mul(size, maxThreads())));
    }
    if (phase == Phase::Numeric) {
      s.push_back(decl(wValsAll_));
      s.push_back(alloc(wValsAll_, total, false));
    }
    s.push_back(decl(wMarkAll_));
    s.push_back(alloc(wMarkAll_, total, true));
    // Each list is followed by as many slots again: the radix sort's scratch.
    s.push_back(decl(wListAll_));
    s.push_back(alloc(wListAll_, mul(total, intImm(2)), false));
  }
  return s;
}

std::vector<Stmt> OutputAssembly::functionEpilogue(Phase phase) {
  std::vector<Stmt> s;
  if (plan_.singlePass) return phase == Phase::Numeric ? finishBounded() : s;
  if (plan_.growRows && phase == Phase::Symbolic) return s;  // assembly only allocated
  if (phase == Phase::Symbolic &&
      (plan_.kind == OutputKind::Append || plan_.kind == OutputKind::Workspace))
    s = assembleFromCounts();
  if (plan_.kind == OutputKind::Workspace) {
    if (phase == Phase::Numeric) s.push_back(freeArray(wValsAll_));
    s.push_back(freeArray(wMarkAll_));
    s.push_back(freeArray(wListAll_));
  }
  if (threadBuffers()) {
    // The threads' arrays, in row order, become the output's (tessel_join_threads).
    int k = order() - 1;
    Expr crd = sym_.arrays(0, k).crd, vals = sym_.vals(0);
    s.push_back(assign(q_[k], call("tessel_join_threads",
                                   {maxThreads(), tCrd_, tVals_, tCount_, elemSize(crd), elemSize(vals),
                                    addressOf(sym_.tensorField(0, "crd", k)), addressOf(sym_.tensorField(0, "vals")),
                                    failed_},
                                   i64())));
    for (const Expr& arr : {tCrd_, tVals_, tCount_}) s.push_back(freeArray(arr));
    s.push_back(ifThen(lt(q_[k], intImm(0)), returnCode(TESSEL_ERR_NOMEM)));
  }
  if (plan_.growRows)
    for (auto& st : finishBounded()) s.push_back(st);
  return s;
}

std::vector<Stmt> OutputAssembly::assembleDense() {
  std::vector<Stmt> s;
  Expr n = var(sym_.fresh("size"), i64());
  s.push_back(decl(n, intImm(1)));
  const bool flags = anyFlagLevel(p_.args[0].format);
  for (int k = 0; k < order(); k++) {
    s.push_back(mulChecked(n, n, sym_.arrays(0, k).dim));
    const LevelArrays& la = sym_.arrays(0, k);
    if (!la.flags) continue;
    // Presence flags (uint8 per slot, the crd slot): cleared each run, as are the values.
    Expr fl = var(la.flags->name, ptr(Datatype::Bool));
    s.push_back(decl(fl));
    s.push_back(allocInto(fl, sym_.tensorField(0, "crd", k), n, plan_.inPlace ? AllocFill::Keep : AllocFill::Zero));
    s.push_back(setField("crd_size", k, n));
  }
  // A dense output keeps its buffer from run to run: fresh memory would page-fault
  // inside the compute phase on every run. Zeroed here unless compute assigns every
  // entry (zeroing 16 MB costs about 1 ms, a tenth of a bandwidth-bound SpMV).
  Expr vals = var(sym_.vals(0)->name, ptr(sym_.outputType()));
  s.push_back(decl(vals));
  AllocFill fill = plan_.inPlace                            ? AllocFill::Keep
                   : (plan_.assignsAll || plan_.zeroSlices) && !flags ? AllocFill::None  // absent slots hold 0
                                                          : AllocFill::Zero;
  bool fillLoop = fill == AllocFill::Zero && needsZeroFill();
  s.push_back(allocInto(vals, sym_.tensorField(0, "vals", -1), n, fillLoop ? AllocFill::None : fill));
  s.push_back(setField("vals_size", -1, n));
  if (fillLoop) s.push_back(fillWithZero(vals, n));
  return s;
}

bool OutputAssembly::needsZeroFill() const { return semiring().zero() != 0; }

Stmt OutputAssembly::fillWithZero(const Expr& vals, const Expr& count) const {
  // Memory comes zeroed, not filled with another semiring's zero (+inf for min_plus).
  Expr x = var(sym_.fresh("z"), i64());
  return forRange(x, intImm(0), count, store(vals, x, zeroValue(semiring(), sym_.outputType())));
}

Stmt OutputAssembly::zeroSlice(const Expr& pos) const {
  // Levels below the first are dense: the slice is pos * size .. + size, size the
  // product of their dims (which assembly checked for overflow).
  Expr size = intImm(1);
  for (int k = 1; k < order(); k++) size = mul(size, sym_.arrays(0, k).dim);
  Expr x = var(sym_.fresh("z"), i64());
  return forRange(x, mul(pos, size), mul(plus1(pos), size), store(sym_.vals(0), x, zeroValue(semiring(), sym_.outputType())));
}

Expr OutputAssembly::upperSize(std::vector<Stmt>& s) {
  Expr n = var(sym_.fresh("rows"), i64());
  s.push_back(decl(n, intImm(1)));
  for (int k = 0; k + 1 < order(); k++) s.push_back(mulChecked(n, n, sym_.arrays(0, k).dim));
  return n;
}

std::vector<Stmt> OutputAssembly::assembleBounded() {
  std::vector<Stmt> s;
  // Each output entry of the last level comes from a stored entry of one of these.
  Expr bound = var(sym_.fresh("bound"), i64());
  s.push_back(decl(bound, intImm(0)));
  for (auto [a, level] : plan_.boundBy)
    s.push_back(assign(bound, add(bound, sym_.tensorField(p_.inputs[a].arg, "crd_size", level))));
  for (auto& st : allocLastLevel(bound)) s.push_back(st);
  return s;
}

std::vector<Stmt> OutputAssembly::assembleGrowable() {
  std::vector<Stmt> s;
  // First guess: four times the entries the sparse operands store (products of sparse
  // matrices usually hold a few times more), arrays doubling from there. Pages never
  // written are never faulted in, and the runtime trims a first result to its size.
  Expr guess = var(sym_.fresh("guess"), i64());
  s.push_back(decl(guess, intImm(1)));
  for (const AccessInfo& in : p_.inputs) {
    if (p_.args[in.arg].format.isAllDense()) continue;  // (stores no entries to count)
    Expr size = sym_.tensorField(in.arg, "vals_size");
    s.push_back(ifThen(binary(ExprOp::Lt, size, intImm(int64_t{1} << 58)), assign(guess, add(guess, mul(size, intImm(4))))));
  }
  for (auto& st : allocLastLevel(guess)) s.push_back(st);
  return s;
}

std::vector<Stmt> OutputAssembly::allocLastLevel(const Expr& capacity) {
  std::vector<Stmt> s;
  int k = order() - 1;
  Expr rows = upperSize(s);
  LevelArrays la = sym_.arrays(0, k);
  Expr pos = var(la.pos->name, ptr(la.pos->type.elem));
  s.push_back(decl(pos));
  s.push_back(allocInto(pos, sym_.tensorField(0, "pos", k), plus1(rows), AllocFill::Zero));
  s.push_back(setField("pos_size", k, plus1(rows)));
  for (auto& st : allocCrd(k, capacity, -1)) s.push_back(st);
  for (auto& st : allocVals(capacity, false)) s.push_back(st);
  return s;
}

Stmt OutputAssembly::ensureRoom(const Expr& q, const Expr& count) const {
  int k = order() - 1;
  Expr crd = sym_.arrays(0, k).crd, vals = sym_.vals(0);
  Expr outCrd = sym_.tensorField(0, "crd", k), outVals = sym_.tensorField(0, "vals");
  Expr needed = add(q, count), full = binary(ExprOp::Gt, needed, capacity_);
  auto voidPtrTo = [](const Expr& array) { return cast(opaque(TypeKind::Void, true, true), addressOf(array)); };
  if (threadBuffers()) {  // the thread's own arrays; a failure drops the row (see iterationPrologue)
    Expr grow = call("tessel_grow_thread",
                     {voidPtrTo(crd), elemSize(crd), voidPtrTo(vals), elemSize(vals), addressOf(capacity_), needed,
                      outCrd, outVals},
                     scalar(Datatype::Int32));
    return ifThen(land(full, grow), block({assign(failed_, intImm(1)), assign(count, intImm(0))}));
  }
  // The workspace is freed on failure; the runtime frees the output's arrays.
  Expr grow = call("tessel_grow_pair",
                   {addressOf(outCrd), elemSize(crd), addressOf(outVals), elemSize(vals), addressOf(capacity_), needed},
                   scalar(Datatype::Int32));
  Stmt fail = block({freeArray(wValsAll_), freeArray(wMarkAll_), freeArray(wListAll_), returnCode(TESSEL_ERR_NOMEM)});
  return ifThen(full, block({ifThen(grow, fail), assign(crd, field(sym_.tensor(0), "crd", crd->type, k)),
                             assign(vals, field(sym_.tensor(0), "vals", vals->type))}));
}

std::vector<Stmt> OutputAssembly::finishBounded() {
  if (plan_.rowOffsets) return compactRows();
  std::vector<Stmt> s;
  int k = order() - 1;
  Expr rows = upperSize(s);
  const Expr& q = q_[k];
  LevelArrays la = sym_.arrays(0, k);
  if (p_.args[0].format.posWidth() == IndexWidth::W32)
    s.push_back(ifThen(binary(ExprOp::Gt, q, intImm(INT32_MAX)), returnCode(TESSEL_ERR_OVERFLOW)));
  if (k == 0) s.push_back(store(la.pos, intImm(1), cast(scalar(la.pos->type.elem), q)));
  Expr t = var(sym_.fresh("t"), i64());
  s.push_back(forRange(t, intImm(0), rows, store(la.pos, plus1(t), load(la.pos, t), true)));
  for (auto& st : recordCount(q)) s.push_back(st);
  return s;
}

std::vector<Stmt> OutputAssembly::recordCount(const Expr& count) {
  // Only the sizes: the arrays keep their capacity (the runtime trims an output's first
  // result; one computed again keeps the room its kernel needs).
  int k = order() - 1;
  return {setField("crd_size", k, count), setField("vals_size", -1, count)};
}

std::vector<Stmt> OutputAssembly::compactRows() {
  std::vector<Stmt> s;
  const int k = 1;
  Expr rows = upperSize(s);
  LevelArrays la = sym_.arrays(0, k);
  // Counts -> offsets, and runs of rows moved into place within the bound-sized arrays,
  // in parallel (tessel_finish_rows).
  bool pos64 = p_.args[0].format.posWidth() == IndexWidth::W64;
  Expr total = var(sym_.fresh("total"), i64()), offset = var(sym_.fresh("offset"), i64());
  s.push_back(decl(offset, intImm(0)));
  std::vector<Expr> args = {rows, rowFrom_, la.pos, intImm(pos64 ? 1 : 0)};
  for (const Expr& e : lastLevelBytes()) args.push_back(e);
  args.push_back(addressOf(offset));
  s.push_back(decl(total, call("tessel_finish_rows", args, i64())));
  s.push_back(freeArray(rowFrom_));
  s.push_back(ifThen(eq(total, intImm(-1)), returnCode(TESSEL_ERR_OVERFLOW)));
  s.push_back(ifThen(lt(total, intImm(0)), returnCode(TESSEL_ERR_NOMEM)));
  // The entries may start inside the arrays (paired threads; see runtime_abi.h's crd_block).
  auto startAt = [&](const Expr& array, const Expr& block, const Expr& elems) {
    return evaluate(call("tessel_start_at", {addressOf(array), addressOf(block), offset, elemSize(elems)},
                         opaque(TypeKind::Void, false)));
  };
  s.push_back(startAt(sym_.tensorField(0, "crd", k), sym_.tensorField(0, "crd_block", k), la.crd));
  s.push_back(startAt(sym_.tensorField(0, "vals"), sym_.tensorField(0, "vals_block"), sym_.vals(0)));
  for (auto& st : recordCount(total)) s.push_back(st);
  return s;
}

std::vector<Stmt> OutputAssembly::assemblePatternCopy() {
  std::vector<Stmt> s;
  int src = p_.inputs[plan_.patternSource].arg;
  Expr prev = var(sym_.fresh("npos"), i64());
  s.push_back(decl(prev, intImm(1)));
  for (int k = 0; k < order(); k++) {
    const LevelFormat& lf = level(k);
    LevelArrays la = sym_.arrays(0, k);
    Expr next = var(sym_.fresh("npos"), i64());
    if (lf.hasPosArray() && plan_.denseRoot && k == 1) {
      for (auto& st : scatterRootSegments(prev, next)) s.push_back(st);
    } else if (lf.hasPosArray()) {
      Expr pos = var(la.pos->name, ptr(la.pos->type.elem));
      s.push_back(decl(pos));
      s.push_back(allocInto(pos, sym_.tensorField(0, "pos", k), plus1(prev), AllocFill::None));
      s.push_back(copyArray(pos, sym_.tensorField(src, "pos", k), plus1(prev)));
      s.push_back(setField("pos_size", k, plus1(prev)));
      s.push_back(decl(next, cast(i64(), load(pos, prev))));
    } else if (lf.locatable()) {
      s.push_back(decl(next));
      s.push_back(mulChecked(next, prev, la.dim));
    } else {
      s.push_back(decl(next, prev));
    }
    if (lf.hasCrdArray())
      for (auto& st : allocCrd(k, next, src)) s.push_back(st);
    prev = next;
  }
  // Zeroed unless the loops store every entry (a value the product never reaches is 0).
  for (auto& st : allocVals(prev, !plan_.coversSource || plan_.scatter)) s.push_back(st);
  return s;
}

std::vector<Stmt> OutputAssembly::scatterRootSegments(const Expr& rows, const Expr& next) {
  // pos[i + 1] = the size of the source's level-1 segment under coordinate i (zero for
  // rows it does not store), then a prefix sum: row i starts where its segment does.
  int src = p_.inputs[plan_.patternSource].arg;
  LevelArrays out = sym_.arrays(0, 1), root = sym_.arrays(src, 0), seg = sym_.arrays(src, 1);
  Expr pos = var(out.pos->name, ptr(out.pos->type.elem));
  Expr q = var(sym_.fresh("q"), i64()), r = var(sym_.fresh("r"), i64());
  Expr size = sub(cast(i64(), load(seg.pos, plus1(q))), cast(i64(), load(seg.pos, q)));
  Expr at = plus1(cast(i64(), load(root.crd, q)));
  std::vector<Stmt> s = {decl(pos), allocInto(pos, sym_.tensorField(0, "pos", 1), plus1(rows), AllocFill::Zero),
                         forRange(q, cast(i64(), load(root.pos, intImm(0))), cast(i64(), load(root.pos, intImm(1))),
                                  store(pos, at, cast(scalar(out.pos->type.elem), size))),
                         forRange(r, intImm(0), rows, store(pos, plus1(r), load(pos, r), true)),
                         setField("pos_size", 1, plus1(rows)),
                         decl(next, cast(i64(), load(pos, rows)))};
  return s;
}

std::vector<Stmt> OutputAssembly::assembleFromCounts() {
  std::vector<Stmt> s;
  Expr prev = var(sym_.fresh("npos"), i64());
  s.push_back(decl(prev, intImm(1)));
  const Format& f = p_.args[0].format;
  for (int k = 0; k < order(); k++) {
    const LevelFormat& lf = level(k);
    LevelArrays la = sym_.arrays(0, k);
    Expr next = var(sym_.fresh("npos"), i64());
    if (lf.locatable()) {
      s.push_back(decl(next));
      s.push_back(mulChecked(next, prev, la.dim));
    } else if (!lf.ownsPositions()) {
      s.push_back(decl(next, prev));  // singleton: allocated with its chain head
    } else {
      // counts -> prefix sums -> pos array of the format's width
      for (auto& st : ensureCount(k, prev)) s.push_back(st);
      Expr t = var(sym_.fresh("t"), i64());
      s.push_back(forRange(t, intImm(0), prev,
                           store(cnt_[k], plus1(t), load(cnt_[k], t), true)));
      s.push_back(decl(next, load(cnt_[k], prev)));
      // Copied into the output's pos array (kept from an earlier run when large enough).
      if (f.posWidth() == IndexWidth::W32)
        s.push_back(ifThen(binary(ExprOp::Gt, next, intImm(INT32_MAX)),
                           block({freeArray(cnt_[k]), returnCode(TESSEL_ERR_OVERFLOW)})));
      Expr pos = var(la.pos->name, ptr(la.pos->type.elem));
      Expr t2 = var(sym_.fresh("t"), i64());
      s.push_back(decl(pos));
      s.push_back(allocInto(pos, sym_.tensorField(0, "pos", k), plus1(prev), AllocFill::None));
      s.push_back(forRange(t2, intImm(0), plus1(prev), store(pos, t2, cast(scalar(la.pos->type.elem), load(cnt_[k], t2)))));
      s.push_back(freeArray(cnt_[k]));
      s.push_back(setField("pos_size", k, plus1(prev)));
      for (int l = k; l <= chainEnd(k); l++)
        for (auto& st : allocCrd(l, next, -1)) s.push_back(st);
    }
    prev = next;
  }
  // Entries of an appended last level all get their value; dense levels below an
  // appended one hold entries the kernel may never meet, which must read as zero.
  for (auto& st : allocVals(prev, order() == 0 || level(order() - 1).locatable())) s.push_back(st);
  return s;
}

// ---- inside the loop nest -------------------------------------------------------------

void OutputAssembly::resolve(Env& env, Phase phase, std::vector<Stmt>& s) {
  const auto& lv = p_.output.levelVars;
  const std::string& a = sym_.tensorName(0);
  while (static_cast<int>(env.out.size()) < order()) {
    int k = static_cast<int>(env.out.size());
    if (!env.bound.count(lv[k].id())) return;
    Expr parent = parentPos(env, k);
    const LevelFormat& lf = level(k);
    if (plan_.kind == OutputKind::PatternCopy && !(plan_.denseRoot && k == 0)) {
      const auto& st = env.in[plan_.patternSource];
      if (static_cast<int>(st.size()) <= k) return;
      env.out.push_back(st[k]);
      continue;
    }
    if (lf.locatable()) {
      Expr pos = var(sym_.fresh("p" + a + std::to_string(k)), i64());
      s.push_back(decl(pos, lf.locate(sym_.arrays(0, k), parent, env.bound.at(lv[k].id()))));
      env.out.push_back({pos, pos, plus1(pos)});
      if (k == 0 && phase == Phase::Numeric && plan_.zeroSlices) s.push_back(zeroSlice(pos));
    } else {
      if (plan_.kind == OutputKind::Workspace && k == plan_.workspaceLevel) return;
      int e = chainEnd(k);
      for (int l = k + 1; l <= e; l++)
        if (!env.bound.count(lv[l].id())) return;
      if (plan_.deferLastAppend && e == order() - 1) {
        env.pendingLevel = k;
        return;
      }
      append(env, phase, k, s);
    }
    // Entries below this position are appended from the start of its segment.
    int next = static_cast<int>(env.out.size());
    if (phase == Phase::Numeric && plan_.singlePass && next == order() - 1) {
      if (plan_.rowOffsets) {
        // The iteration's first row fixes its window: rows before it hold at most
        // that many entries, so no other iteration writes there.
        s.push_back(ifThen(lt(q_[next], intImm(0)), assign(q_[next], boundOffset(env.out.back().pos))));
        s.push_back(store(rowFrom_, env.out.back().pos, q_[next]));
      }
      s.push_back(decl(rowStart_, q_[next]));
    } else if (phase == Phase::Numeric && !plan_.singlePass && next < order() && !level(next).locatable() &&
               level(next).ownsPositions() &&
               !(plan_.kind == OutputKind::Workspace && next == plan_.workspaceLevel)) {
      s.push_back(decl(q_[next], cast(i64(), load(sym_.arrays(0, next).pos, env.out.back().pos))));
    }
  }
}

void OutputAssembly::append(Env& env, Phase phase, int k, std::vector<Stmt>& s) {
  const auto& lv = p_.output.levelVars;
  int e = chainEnd(k);
  Expr parent = parentPos(env, k);
  Expr pos = var(sym_.fresh("p" + sym_.tensorName(0) + std::to_string(k)), i64());
  if (phase == Phase::Symbolic) {
    // Only levels below need this entry's position; the last level's counts alone
    // (per parent, so parallel rows do not share them) make its pos array.
    if (e == order() - 1) {
      s.push_back(decl(pos, intImm(0)));
    } else {
      s.push_back(decl(pos, n_[k]));
      s.push_back(assign(n_[k], plus1(n_[k])));
    }
    for (auto& st : ensureCount(k, plus1(parent))) s.push_back(st);
    s.push_back(store(cnt_[k], plus1(parent), intImm(1), true));
  } else {
    s.push_back(decl(pos, q_[k]));
    s.push_back(assign(q_[k], plus1(q_[k])));
    for (int l = k; l <= e; l++) {
      const Expr& crd = sym_.arrays(0, l).crd;
      s.push_back(store(crd, pos, cast(scalar(crd->type.elem), env.bound.at(lv[l].id()))));
    }

  }
  for (int l = k; l <= e; l++) env.out.push_back({pos, pos, plus1(pos)});
}

Expr OutputAssembly::boundOffset(const Expr& row) const {
  Expr offset = intImm(0);
  for (auto [in, lvl] : plan_.boundBy)
    offset = add(offset, cast(i64(), load(sym_.arrays(p_.inputs[in].arg, lvl).pos, row)));
  return offset;
}

std::vector<Stmt> OutputAssembly::downwardBlockStart(const Expr& lo, const Expr& hi, const Expr& r0,
                                                     const Expr& r1) const {
  const Expr& q = q_[order() - 1];
  return {assign(q, sub(hi, sub(boundOffset(r1), boundOffset(r0)))), assign(lo, q)};
}

Stmt OutputAssembly::downwardBlockEnd(const Expr& lo, const Expr& hi, const Expr& r0, const Expr& r1) const {
  std::vector<Expr> args = lastLevelBytes();
  for (const Expr& e : {rowFrom_, r0, r1, lo, q_[order() - 1], hi}) args.push_back(e);
  return assign(hi, call("tessel_settle_block", args, i64()));
}

std::vector<Expr> OutputAssembly::lastLevelBytes() const {
  Expr crd = sym_.arrays(0, order() - 1).crd, vals = sym_.vals(0);
  Type bytes = opaque(TypeKind::Byte, true);
  return {cast(bytes, crd), elemSize(crd), cast(bytes, vals), elemSize(vals)};
}

Expr OutputAssembly::workBefore(const Expr& row) const {
  if (!threadBuffers()) return boundOffset(row);
  Expr offset = row;
  for (const AccessInfo& in : p_.inputs) {
    const Format& f = p_.args[in.arg].format;
    if (f.order() >= 2 && levelFormat(f, 0).full() && sym_.level(in.arg, 1).hasPosArray() &&
        in.levelVars[0] == p_.output.levelVars[0])
      offset = add(offset, cast(i64(), load(sym_.arrays(in.arg, 1).pos, row)));
  }
  return offset;
}

std::vector<Stmt> OutputAssembly::iterationPrologue(const Expr& thread) const {
  if (threadBuffers()) {
    // The thread's arrays (shadowing the output's): its region of the output's blocks.
    if (!thread) throw InternalError("thread arrays outside a range of rows per thread");
    int k = order() - 1;
    const LevelArrays& la = sym_.arrays(0, k);
    Expr crd = var(la.crd->name, ptr(la.crd->type.elem)), vals = var(sym_.vals(0)->name, ptr(sym_.outputType()));
    // No return inside the parallel loop: a failure is flagged, and the thread's rows
    // are dropped (the kernel then reports it).
    Type voidPtrPtr = opaque(TypeKind::Void, true, true);
    Expr take = call("tessel_thread_arrays",
                     {thread, maxThreads(), addressOf(sym_.tensorField(0, "crd", k)),
                      addressOf(sym_.tensorField(0, "vals")), elemSize(crd), elemSize(vals),
                      sym_.tensorField(0, "vals_size"), cast(voidPtrPtr, addressOf(crd)),
                      cast(voidPtrPtr, addressOf(vals)), addressOf(capacity_)},
                     i64());
    Expr null = cast(opaque(TypeKind::Void, true), intImm(0));  // NULL
    return {decl(q_[k], intImm(0)), decl(capacity_, intImm(0)), decl(crd, null), decl(vals, null),
            ifThen(binary(ExprOp::Ne, take, intImm(0)), assign(failed_, intImm(1)))};
  }
  if (!plan_.rowOffsets) return {};
  return {decl(q_[order() - 1], intImm(-1))};
}

std::vector<Stmt> OutputAssembly::rangeEpilogue(const Expr& t) const {
  if (!threadBuffers()) return {};
  int k = order() - 1;
  // The thread's arrays' addresses, kept as integers until tessel_join_threads.
  auto address = [](const Expr& array) { return cast(i64(), cast(opaque(TypeKind::IntPtr, false), array)); };
  return {store(tCrd_, t, address(sym_.arrays(0, k).crd)), store(tVals_, t, address(sym_.vals(0))),
          store(tCount_, plus1(t), q_[k])};
}

void OutputAssembly::appendPending(Env& env, Phase phase, std::vector<Stmt>& s) {
  int k = env.pendingLevel;
  env.pendingLevel = -1;
  append(env, phase, k, s);
}

void OutputAssembly::closeRow(const Env& before, const Env& after, Phase phase, std::vector<Stmt>& s) const {
  int last = order() - 1;
  if (!plan_.singlePass || phase != Phase::Numeric || last < 1) return;
  if (static_cast<int>(before.out.size()) >= last || static_cast<int>(after.out.size()) < last) return;
  const Expr& pos = sym_.arrays(0, last).pos;
  s.push_back(store(pos, plus1(after.out[last - 1].pos), cast(scalar(pos->type.elem), sub(q_[last], rowStart_))));
}

bool OutputAssembly::resolved(const Env& env) const {
  return static_cast<int>(env.out.size()) == order();
}

Stmt OutputAssembly::storeValue(const Env& env, const Expr& v) const {
  Expr pos = order() == 0 ? intImm(0) : env.out.back().pos;
  Expr value = cast(scalar(sym_.outputType()), v);
  Stmt st = pp_.atomics ? atomicAdd(sym_.vals(0), pos, value)
                        : store(sym_.vals(0), pos, value, plan_.scatter ? reduceOpOf(semiring()) : ReduceOp::None);
  std::vector<Stmt> marks;  // inserted into a level with presence flags: mark the slot
  for (int k = 0; k < order(); k++)
    if (const Expr& fl = sym_.arrays(0, k).flags) marks.push_back(store(fl, env.out[k].pos, boolImm(true)));
  if (marks.empty()) return st;
  marks.insert(marks.begin(), st);
  return block(marks);
}

Stmt OutputAssembly::workspaceRegion(const Env& env, Phase phase, const Stmt& inner) {
  int k = plan_.workspaceLevel;
  Expr parent = parentPos(env, k);
  Expr offset = intImm(0);
  if (pp_.privateWorkspace)
    offset = mul(threadNum(), sym_.arrays(0, k).dim);
  std::vector<Stmt> s;
  if (phase == Phase::Numeric) s.push_back(decl(wVals_, add(wValsAll_, offset)));
  s.push_back(decl(wMark_, add(wMarkAll_, offset)));
  s.push_back(decl(wList_, add(wListAll_, mul(offset, intImm(2)))));
  s.push_back(decl(wN_, intImm(0)));
  s.push_back(inner);
  Expr t = var(sym_.fresh("t"), i64());
  if (phase == Phase::Numeric) {
    // A row holding more than 1/kScanShare of the dimension is listed faster by
    // scanning the marks (already in order) than by sorting. The scan stores every
    // coordinate and advances past marked ones: a branch per mark mispredicted on every
    // change (a 200 x 200 SpGEMM with a tenth of each row set: 42 us with it, 26 without).
    Expr dim = sym_.arrays(0, k).dim, x = var(sym_.fresh("x"), i64());
    Stmt scan = block({assign(wN_, intImm(0)),
                       forRange(x, intImm(0), dim,
                                block({store(wList_, wN_, x), assign(wN_, add(wN_, cast(i64(), load(wMark_, x))))}))});
    constexpr int64_t kScanShare = 32;  // on the SpGEMM benchmark, 16 was slower and 64 no better
    s.push_back(ifThen(binary(ExprOp::Gt, mul(wN_, intImm(kScanShare)), dim), scan,
                       evaluate(call("tessel_sort_i64", {wList_, wN_, dim, add(wList_, dim)}, opaque(TypeKind::Void, false)))));
    Expr q = var(sym_.fresh("q" + sym_.tensorName(0) + std::to_string(k)), i64());
    Expr j = var(sym_.fresh("jw"), i64());
    const LevelArrays& la = sym_.arrays(0, k);
    if (plan_.growRows) {
      // Appended after the rows before; the row's count goes to pos (prefix-summed later).
      s.push_back(ensureRoom(q_[k], wN_));
      s.push_back(decl(q, q_[k]));
      s.push_back(store(la.pos, plus1(parent), cast(scalar(la.pos->type.elem), wN_)));
      s.push_back(assign(q_[k], add(q_[k], wN_)));
    } else {
      s.push_back(decl(q, cast(i64(), load(la.pos, parent))));
    }
    s.push_back(forRange(
        t, intImm(0), wN_,
        block({decl(j, load(wList_, t)),
               store(la.crd, add(q, t), cast(scalar(la.crd->type.elem), j)),
               store(sym_.vals(0), add(q, t), cast(scalar(sym_.outputType()), load(wVals_, j))),
               store(wMark_, j, boolImm(false))})));
  } else {
    s.push_back(forRange(t, intImm(0), wN_, store(wMark_, load(wList_, t), boolImm(false))));
    for (auto& st : ensureCount(k, plus1(parent))) s.push_back(st);
    s.push_back(store(cnt_[k], plus1(parent), wN_));
  }
  return block(s);
}

Stmt OutputAssembly::workspaceUpdate(const Env& env, Phase phase, const Expr& v) const {
  Expr j = env.bound.at(p_.output.levelVars[plan_.workspaceLevel].id());
  std::vector<Stmt> first = {store(wMark_, j, boolImm(true)), store(wList_, wN_, j),
                             assign(wN_, plus1(wN_))};
  if (phase == Phase::Symbolic)
    return ifThen(unary(ExprOp::Not, load(wMark_, j)), block(first));
  first.push_back(store(wVals_, j, v));
  return ifThen(unary(ExprOp::Not, load(wMark_, j)), block(first), store(wVals_, j, v, reduceOpOf(semiring())));
}

}  // namespace tessel::lower
