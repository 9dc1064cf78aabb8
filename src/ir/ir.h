// The imperative IR that lowering produces and code generators print.
//
// One header, Halide-style: immutable expression and statement nodes behind shared
// pointers, built with small factory functions. Statements are structured (for,
// while, if/else-if chains, blocks); there are no gotos, so every backend can print them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessel/format.h"

namespace tessel::ir {

/// What a type's values are: data of a Datatype (`elem`), or one of the few
/// Datatype-independent types the runtime ABI and helper calls need.
enum class TypeKind {
  Data,    ///< a Datatype (elem)
  Tensor,  ///< the runtime's tensor struct (tessel_tensor_t in C)
  Void,    ///< untyped memory (only behind a pointer)
  Byte,    ///< one byte (char in C)
  IntPtr,  ///< an integer that holds a pointer (intptr_t)
  Size,    ///< an object size (size_t)
};

/// A scalar or pointer type. Pointers point to `elem` (or to the kind's type).
struct Type {
  Datatype elem = Datatype::Int64;
  bool pointer = false;
  bool constData = false;  ///< pointer to const (inputs)
  TypeKind kind = TypeKind::Data;
  bool pointerToPointer = false;  ///< with `pointer`: a pointer to pointers (tensors, void**)
  bool operator==(const Type&) const = default;
};
inline Type scalar(Datatype t) { return {t, false, false}; }
inline Type ptr(Datatype t, bool isConst = false) { return {t, true, isConst}; }
inline Type indexType(IndexWidth w) { return scalar(w == IndexWidth::W32 ? Datatype::Int32 : Datatype::Int64); }
inline Type i64() { return scalar(Datatype::Int64); }
/// A Datatype-independent type: `kind`, a pointer to it, or a pointer to such pointers.
inline Type opaque(TypeKind kind, bool pointer, bool pointerToPointer = false) {
  Type t;
  t.kind = kind;
  t.pointer = pointer || pointerToPointer;
  t.pointerToPointer = pointerToPointer;
  return t;
}
/// A pointer to a tensor's runtime struct (an argument of a kernel).
inline Type tensorPtr() { return opaque(TypeKind::Tensor, true); }

enum class ExprOp {
  Var, IntImm, FloatImm, Load, Field, Cast, Call,
  Neg, Not,
  Add, Sub, Mul, Div, IDiv, Mod, Min, Max,
  Eq, Ne, Lt, Le, Gt, Ge, And, Or,
  Select,  ///< args {cond, a, b}: cond ? a : b, evaluating both arms (each must be safe to compute)
  AddressOf,  ///< args {lvalue}: the address of a variable, a Load's element or a Field
  ElemSize,   ///< args {array}: the size in bytes of one element of a pointer expression
};

struct ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

struct ExprNode {
  ExprOp op;
  Type type;
  std::string name;   ///< Var name, Field name, Call function
  int64_t ival = 0;   ///< IntImm; Field: element of an array member (-1: the member itself)
  double fval = 0;    ///< FloatImm
  std::vector<Expr> args;  ///< operands; Load: {array, index}; Field: {struct ptr}
};

// Expression factories.
Expr var(const std::string& name, Type t);
Expr intImm(int64_t v, Type t = i64());
Expr floatImm(double v, Type t = scalar(Datatype::Float64));
Expr zeroOf(Datatype t);
Expr load(Expr array, Expr index);
/// Member `name` of *structPtr; with level >= 0, element `level` of that array member
/// (`T->pos[1]`: field(T, "pos", t, 1)).
Expr field(Expr structPtr, const std::string& name, Type t, int64_t level = -1);
Expr cast(Type t, Expr e);
Expr call(const std::string& fn, std::vector<Expr> args, Type t);
Expr unary(ExprOp op, Expr a);
Expr binary(ExprOp op, Expr a, Expr b);
/// cond ? a : b (both evaluated; compilers make it a conditional move).
Expr select(Expr cond, Expr a, Expr b);
inline Expr add(Expr a, Expr b) { return binary(ExprOp::Add, std::move(a), std::move(b)); }
inline Expr sub(Expr a, Expr b) { return binary(ExprOp::Sub, std::move(a), std::move(b)); }
inline Expr mul(Expr a, Expr b) { return binary(ExprOp::Mul, std::move(a), std::move(b)); }
inline Expr lt(Expr a, Expr b) { return binary(ExprOp::Lt, std::move(a), std::move(b)); }
inline Expr eq(Expr a, Expr b) { return binary(ExprOp::Eq, std::move(a), std::move(b)); }
inline Expr land(Expr a, Expr b) { return binary(ExprOp::And, std::move(a), std::move(b)); }
inline Expr minOf(Expr a, Expr b) { return binary(ExprOp::Min, std::move(a), std::move(b)); }
/// The address of `lvalue` (a Var, Load or Field), typed as a pointer to it (an array
/// variable's address is a pointer to pointers).
Expr addressOf(Expr lvalue);
/// Bytes of one element of `array` (a pointer expression), as a size.
Expr elemSize(Expr array);

enum class StmtOp {
  Block, Decl, Assign, Store, For, While, If, Comment, Return, Alloc, Free, Break, Evaluate,
};

/// How a loop's iterations run. A backend prints the kinds it supports and rejects the
/// others (CBackend: Serial, CpuParallel, Vectorized; see codegen/backend.h).
enum class LoopKind { Serial, CpuParallel, Vectorized, GpuBlock, GpuThread, Distributed };
/// How a CpuParallel loop shares its iterations among threads.
enum class ParallelStrategy {
  None,          ///< not a CpuParallel loop
  Guided,        ///< coordinates, shrinking chunks taken on demand (uneven rows)
  Static,        ///< one even contiguous share per thread
  StaticChunk1,  ///< iteration t to thread t (a loop over thread ranges)
  OwnSharesFirst,  ///< blocks: each thread takes blocks of its own contiguous share first,
                   ///< then what is left of the others' (tessel_next_block in C)
};
/// The operator of a reduction, and of a Store that updates an element (None: the Store
/// assigns). Add is `+=`; Min and Max keep the smaller / larger; Or and And are logical
/// (1 or 0); Any keeps the new value unless it is 0 (a semiring's add).
enum class ReduceOp { None, Add, Min, Max, Or, And, Any };
/// `op(a, b)` as an expression (not None).
Expr reduceExpr(ReduceOp op, Expr a, Expr b);
/// The infix symbol of a binary operator that reads the same in C and in the IR
/// printer ("+", "==", "&&", ...); null for the others (IDiv, Min, Max, ...).
const char* infixSymbol(ExprOp op);
/// Name of a loop kind, for messages.
const char* loopKindName(LoopKind k);

/// The fields of a For loop beyond its range: how it runs, and hints.
struct LoopInfo {
  LoopKind kind = LoopKind::Serial;
  ParallelStrategy strategy = ParallelStrategy::None;  ///< CpuParallel only
  int unroll = 0;      ///< unroll hint (0 or 1: none)
  Expr reductionVar;   ///< Vectorized: the scalar the lanes reduce into (null: none)
  ReduceOp reduceOp = ReduceOp::Add;  ///< with reductionVar
  /// Serial, no hints: passes may restructure it freely.
  bool plain() const { return kind == LoopKind::Serial && unroll <= 1 && !reductionVar; }
};
/// A serial loop with an unroll hint (0: none).
inline LoopInfo serialLoop(int unroll = 0) { return {LoopKind::Serial, ParallelStrategy::None, unroll, nullptr}; }
/// A CPU-parallel loop sharing its iterations by `strategy`.
inline LoopInfo cpuParallel(ParallelStrategy strategy, int unroll = 0) {
  return {LoopKind::CpuParallel, strategy, unroll, nullptr};
}
/// A vectorized loop whose lanes reduce into `acc` with `op`.
inline LoopInfo vectorReduction(Expr acc, ReduceOp op) {
  return {LoopKind::Vectorized, ParallelStrategy::None, 0, std::move(acc), op};
}

/// What an allocated array starts with; the values are tessel_alloc's / tessel_take's
/// `zero` argument in the generated C.
enum class AllocFill {
  None = 0,  ///< as it comes (poisoned under TESSEL_POISON)
  Zero = 1,
  Keep = 2,  ///< into a slot: the values already there (zeroed if the array is new)
};

struct StmtNode;
using Stmt = std::shared_ptr<const StmtNode>;

struct StmtNode {
  StmtOp op;
  // Decl: var (args[0]) = value (args[1], may be null); persistent: an array of ival
  //   elements of var's element type, zeroed once, kept across calls. Assign: var = value.
  // Store: array[index] (=|+=) value.  For: var in [begin, end).  While/If: cond.
  // Alloc: var = calloc/malloc(count) of var's element type; returns TESSEL_ERR_NOMEM on failure.
  //   With args[2] (an output's array slot, e.g. A->crd[1]): the slot's array is reused
  //   when large enough, else freed and replaced; the slot holds the result.
  // Evaluate: args[0] for its effect (a call).
  std::vector<Expr> args;
  std::vector<Stmt> body;      ///< Block contents; For/While body (one Block); If: then
  std::vector<Stmt> elseBody;  ///< If: else (empty or one stmt)
  std::string text;            ///< Comment text (no other node holds text)
  LoopInfo loop;               ///< For: how it runs
  ReduceOp accumulate = ReduceOp::None;  ///< Store: array[index] = op(array[index], value)
  bool atomic = false;         ///< Store: one atomic update (with accumulate)
  bool persistent = false;     ///< Decl: keeps its value across calls (a function static, zeroed)
  AllocFill fill = AllocFill::None;  ///< Alloc: what the array starts with
  int64_t ival = 0;            ///< Return code; persistent Decl: element count
};

Stmt block(std::vector<Stmt> stmts);
Stmt decl(Expr v, Expr init = nullptr);
/// A zero-initialized array of `count` elements of v's element type that keeps its
/// values from call to call of the kernel (a C function static); v is a pointer variable.
Stmt persistentArray(Expr v, int64_t count);
Stmt assign(Expr v, Expr value);
Stmt store(Expr array, Expr index, Expr value, bool accumulate = false);
/// array[index] = op(array[index], value) (op None: array[index] = value).
Stmt store(Expr array, Expr index, Expr value, ReduceOp op);
/// array[index] += value as one atomic update.
Stmt atomicAdd(Expr array, Expr index, Expr value);
/// for v in [begin, end), run as `loop` says.
Stmt forRange(Expr v, Expr begin, Expr end, Stmt body, LoopInfo loop = {});
Stmt whileLoop(Expr cond, Stmt body);
Stmt ifThen(Expr cond, Stmt then, Stmt otherwise = nullptr);
Stmt comment(const std::string& text);
Stmt returnCode(int64_t code);
Stmt alloc(Expr v, Expr count, bool zero);
/// Alloc into an output's array `slot` (a Field such as A->crd[1]): the array already
/// there is reused when it holds `count` elements (a recomputed output keeps its memory).
Stmt allocInto(Expr v, Expr slot, Expr count, AllocFill fill);
Stmt freeArray(Expr v);
Stmt breakLoop();
/// A call made for its effect, e.g. a prefetch hint.
Stmt evaluate(Expr e);

/// A function `int name(tessel_tensor_t** tensors)` with a body.
struct Function {
  std::string name;
  std::string doc;  ///< comment printed above
  Stmt body;
};

/// What a code generator prints: functions plus a header comment.
struct Module {
  std::string headerComment;
  std::vector<Function> functions;
  /// C definitions the functions call, printed before them: user-declared operators
  /// (BinaryOp::custom), whose C text is so part of the kernel's source and cache key.
  std::vector<std::string> helpers;
};

/// Constant folding and identities (x*1, x+0, ...), block flattening, dead branches.
Stmt simplify(const Stmt& s);
Expr simplify(const Expr& e);
/// Floating-point sum loops (`acc = acc + v` only) sum in independent chains: vector
/// lanes where every load is affine in the loop, else two scalar chains (even and odd
/// iterations). Min/max loops (`acc = min(acc, v)`) get vector lanes where every load is
/// affine. Deterministic for given loop bounds; see reduction_chains.cpp.
Stmt splitReductionChains(const Stmt& s);
/// Loops whose body only adds into one row (`for j: Y[idx(j)] += v(p, j)`, idx free of p)
/// take four iterations at a time and update the row once; see unroll_jam.cpp.
Stmt unrollAndJam(const Stmt& s);
/// `for p: { pure decls; for q in [F(p), F(p + 1)): body }` with body free of p becomes
/// `for q in [F(begin), F(end)): body` (F: pos-array loads); see collapse_position_loops.cpp.
Stmt collapsePositionLoops(const Stmt& s);
/// A loop nest that tests flags set before it (`if (A1_streams)`) becomes one copy per
/// value of up to two such flags, the flags replaced by constants (simplify() then
/// drops the dead branches); see unswitch_flags.cpp.
Stmt unswitchLoopFlags(const Stmt& s);

}  // namespace tessel::ir
