// IR -> C source printer: the C11 + OpenMP backend.
#include "codegen/c_backend.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "codegen/c_prelude.h"
#include "codegen/c_type.h"
#include "tessel/error.h"
#include "tessel/jit.h"

namespace tessel::codegen {

using namespace ir;

namespace {

class Printer {
 public:
  std::string expr(const Expr& e, bool top = true) {
    switch (e->op) {
      case ExprOp::Var: return e->name;
      case ExprOp::IntImm: {
        std::string s = std::to_string(e->ival);
        if (e->ival > INT32_MAX || e->ival < INT32_MIN) s += "LL";
        return s;
      }
      case ExprOp::FloatImm: return floatLiteral(e);
      case ExprOp::Load: return expr(e->args[0], false) + "[" + expr(e->args[1]) + "]";
      case ExprOp::Field: {
        std::string s = expr(e->args[0], false) + "->" + e->name;
        return e->ival < 0 ? s : s + "[" + std::to_string(e->ival) + "]";
      }
      case ExprOp::Cast: return prefixed("(", cType(e->type)) + ")" + expr(e->args[0], false);
      case ExprOp::Call: {
        std::string s = e->name + "(";
        for (size_t i = 0; i < e->args.size(); i++) s += (i ? ", " : "") + expr(e->args[i]);
        return s + ")";
      }
      case ExprOp::Neg: return prefixed("(-", expr(e->args[0], false)) + ")";  // never "--x"
      case ExprOp::Not: return prefixed("!", expr(e->args[0], false));
      case ExprOp::Select: return selectCall(e);
      case ExprOp::Min:
      case ExprOp::Max: return minMax(e);
      case ExprOp::IDiv: return "tessel_idiv(" + expr(e->args[0]) + ", " + expr(e->args[1]) + ")";
      case ExprOp::AddressOf: return prefixed("&", expr(e->args[0], false));
      case ExprOp::ElemSize: return prefixed("sizeof(*", expr(e->args[0], false)) + ")";
      default: break;
    }
    std::string s = expr(e->args[0], false) + " " + opText(e->op) + " " + expr(e->args[1], false);
    return top ? s : "(" + s + ")";
  }

  /// A parallel loop over blocks (ParallelStrategy::OwnSharesFirst): each thread takes
  /// blocks of its own share first (tessel_next_block). An unroll hint goes before the
  /// while loop.
  void blocksLoop(const Stmt& s, int ind) {
    std::string pad(2 * ind, ' '), in(2 * ind + 2, ' '), v = s->args[0]->name;
    out_ << pad << "{\n"
         << in << "tessel_share_t " << v << "_shares[TESSEL_MAX_TEAM];\n"
         << in << "int " << v << "_nt = tessel_shares(" << v << "_shares, " << expr(s->args[1]) << ", "
         << expr(s->args[2]) << ");\n"
         << in << "#pragma omp parallel\n"
         << in << "{\n"
         << in << "  int " << v << "_start = omp_get_thread_num() % " << v << "_nt, " << v << "_at = " << v
         << "_start;\n"
         << in << "  int64_t " << v << ";\n";
    if (s->loop.unroll > 1) out_ << in << "  #pragma GCC unroll " << s->loop.unroll << "\n";
    out_ << in << "  while (tessel_next_block(" << v << "_shares, " << v << "_nt, " << v << "_start, &" << v
         << "_at, &" << v << ")) {\n";
    parallelDepth_++;
    stmt(s->body[0], ind + 3);
    parallelDepth_--;
    out_ << in << "  }\n" << in << "}\n" << pad << "}\n";
  }

  void stmt(const Stmt& s, int ind) {
    std::string pad(2 * ind, ' ');
    switch (s->op) {
      case StmtOp::Block:
        for (auto& c : s->body) stmt(c, ind);
        return;
      case StmtOp::Decl:
        if (s->persistent) {  // zeroed once, kept across calls
          out_ << pad << "static " << cTypeName(s->args[0]->type.elem) << " " << s->args[0]->name << "[" << s->ival
               << "];\n";
          return;
        }
        out_ << pad << cType(s->args[0]->type) << " " << s->args[0]->name;
        if (s->args[1]) out_ << " = " << expr(s->args[1]);
        out_ << ";\n";
        return;
      case StmtOp::Assign:
        out_ << pad << expr(s->args[0]) << " = " << expr(s->args[1]) << ";\n";
        return;
      case StmtOp::Store:
        if (s->atomic) out_ << pad << "#pragma omp atomic\n";
        if (s->accumulate != ReduceOp::None && s->accumulate != ReduceOp::Add) {
          if (s->atomic) throw InternalError("codegen: an atomic store adds (+=) only");
          Expr element = load(s->args[0], s->args[1]);
          out_ << pad << expr(element) << " = " << expr(reduceExpr(s->accumulate, element, s->args[2])) << ";\n";
          return;
        }
        out_ << pad << expr(s->args[0], false) << "[" << expr(s->args[1]) << "] "
             << (s->accumulate == ReduceOp::Add ? "+=" : "=") << " " << expr(s->args[2]) << ";\n";
        return;
      case StmtOp::For: {
        std::string v = s->args[0]->name;
        const LoopInfo& l = s->loop;
        if (l.kind == LoopKind::CpuParallel && l.strategy == ParallelStrategy::OwnSharesFirst) {
          if (cType(s->args[0]->type) != "int64_t") throw InternalError("a parallel block loop over " + v + " is not int64_t");
          return blocksLoop(s, ind);
        }
        pragmas(l, pad);
        bool parallel = l.kind == LoopKind::CpuParallel;
        parallelDepth_ += parallel;
        out_ << pad << "for (" << cType(s->args[0]->type) << " " << v << " = " << expr(s->args[1])
             << "; " << v << " < " << expr(s->args[2]) << "; " << v << "++) {\n";
        stmt(s->body[0], ind + 1);
        parallelDepth_ -= parallel;
        out_ << pad << "}\n";
        return;
      }
      case StmtOp::While:
        out_ << pad << "while (" << expr(s->args[0]) << ") {\n";
        stmt(s->body[0], ind + 1);
        out_ << pad << "}\n";
        return;
      case StmtOp::If: {
        out_ << pad << "if (" << expr(s->args[0]) << ") {\n";
        stmt(s->body[0], ind + 1);
        const StmtNode* cur = s.get();
        // print else-if chains flat
        while (!cur->elseBody.empty() && cur->elseBody[0]->op == StmtOp::If) {
          cur = cur->elseBody[0].get();
          out_ << pad << "} else if (" << expr(cur->args[0]) << ") {\n";
          stmt(cur->body[0], ind + 1);
        }
        if (!cur->elseBody.empty()) {
          out_ << pad << "} else {\n";
          stmt(cur->elseBody[0], ind + 1);
        }
        out_ << pad << "}\n";
        return;
      }
      case StmtOp::Comment:
        out_ << pad << "// " << s->text << "\n";
        return;
      case StmtOp::Return:
        // OpenMP forbids leaving a parallel region; lowering never places one there.
        if (parallelDepth_ > 0) throw InternalError("return inside a parallel loop");
        out_ << pad << "return " << s->ival << ";\n";
        return;
      case StmtOp::Alloc: {
        const Expr& v = s->args[0];
        std::string elem = cTypeName(v->type.elem);
        if (s->args.size() > 2)
          out_ << pad << v->name << " = (" << elem << "*)tessel_take(&" << expr(s->args[2], false) << ", "
               << expr(s->args[1]) << ", sizeof(" << elem << "), " << static_cast<int>(s->fill) << ");\n";
        else
          out_ << pad << v->name << " = (" << elem << "*)tessel_alloc(" << expr(s->args[1]) << ", sizeof(" << elem
               << "), " << (s->fill == AllocFill::Zero ? 1 : 0) << ");\n";
        out_ << pad << "if (!" << v->name << ") return TESSEL_ERR_NOMEM;\n";
        return;
      }
      case StmtOp::Free:
        out_ << pad << "free(" << expr(s->args[0]) << ");\n";
        return;
      case StmtOp::Evaluate:
        out_ << pad << expr(s->args[0]) << ";\n";
        return;
      case StmtOp::Break:
        out_ << pad << "break;\n";
        return;
    }
  }

  /// The pragmas before a loop: how it runs, then an unroll hint.
  void pragmas(const LoopInfo& l, const std::string& pad) {
    switch (l.kind) {
      case LoopKind::Serial: break;
      case LoopKind::CpuParallel:
        out_ << pad << "#pragma omp parallel for schedule(" << scheduleClause(l.strategy) << ")\n";
        break;
      case LoopKind::Vectorized:
        out_ << pad << "#pragma omp simd";
        if (l.reductionVar) out_ << " reduction(" << reduceOpText(l.reduceOp) << ":" << l.reductionVar->name << ")";
        out_ << "\n";
        break;
      default: throw UnsupportedLoopError("C", l.kind);
    }
    if (l.unroll > 1) out_ << pad << "#pragma GCC unroll " << l.unroll << "\n";
  }

  std::string str() const { return out_.str(); }

  /// prefix + s, built by appending (GCC 12 warns falsely on "lit" + std::string&&).
  static std::string prefixed(const char* prefix, const std::string& s) {
    std::string r = prefix;
    r += s;
    return r;
  }
  std::ostringstream& out() { return out_; }

 private:
  static const char* scheduleClause(ParallelStrategy s) {
    switch (s) {
      case ParallelStrategy::Guided: return "guided";
      case ParallelStrategy::Static: return "static";
      case ParallelStrategy::StaticChunk1: return "static, 1";
      default: throw InternalError("codegen: no OpenMP schedule for this parallel strategy");
    }
  }
  static const char* reduceOpText(ReduceOp op) {
    switch (op) {
      case ReduceOp::Add: return "+";
      case ReduceOp::Min: return "min";
      case ReduceOp::Max: return "max";
      case ReduceOp::Or: return "||";
      case ReduceOp::And: return "&&";
      case ReduceOp::Any:
      case ReduceOp::None: break;
    }
    throw InternalError("codegen: unknown reduction operator");
  }
  static const char* opText(ExprOp op) {
    if (const char* s = infixSymbol(op)) return s;
    throw InternalError("codegen: not a binary operator");
  }
  /// A call, so that both arms are evaluated before choosing (see tessel_sel_f64).
  std::string selectCall(const Expr& e) {
    const char* fn = e->type.elem == Datatype::Float64   ? "tessel_sel_f64("
                     : e->type.elem == Datatype::Float32 ? "tessel_sel_f32("
                                                          : "tessel_sel_i64(";
    std::string call = fn + expr(e->args[0]) + ", " + expr(e->args[1]) + ", " + expr(e->args[2]) + ")";
    if (e->type.elem == Datatype::Float64 || e->type.elem == Datatype::Float32) return call;
    return prefixed("(", cType(e->type)) + ")" + call;
  }

  /// tessel_min/max (int64 helpers) for indices; an inline comparison for floating
  /// values (a semiring's add), whose operands are pure expressions.
  std::string minMax(const Expr& e) {
    std::string a = expr(e->args[0]), b = expr(e->args[1]);
    bool isMin = e->op == ExprOp::Min;
    bool fp = e->type.kind == TypeKind::Data && !e->type.pointer &&
              (e->type.elem == Datatype::Float64 || e->type.elem == Datatype::Float32);
    if (!fp) return std::string(isMin ? "tessel_min(" : "tessel_max(") + a + ", " + b + ")";
    return "(" + a + (isMin ? " < " : " > ") + b + " ? " + a + " : " + b + ")";
  }
  static std::string floatLiteral(const Expr& e) {
    double v = e->fval;
    if (std::isnan(v)) return "NAN";
    if (std::isinf(v)) return v > 0 ? "INFINITY" : "-INFINITY";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    std::string s = buf;
    if (s.find_first_of(".eE") == std::string::npos) s += ".0";
    if (e->type.elem == Datatype::Float32) s += "f";
    return s;
  }
  std::ostringstream out_;
  int parallelDepth_ = 0;  ///< enclosing OpenMP parallel loops
};

}  // namespace

std::string CBackend::emit(const Module& m) const {
  Printer p;
  auto& o = p.out();
  o << "/* Generated by tessel. */\n";
  std::istringstream hc(m.headerComment);
  for (std::string line; std::getline(hc, line);) o << "// " << line << "\n";
  o << cPrelude();
  for (const std::string& h : m.helpers) o << h;
  for (auto& f : m.functions) {
    o << "\n";
    std::istringstream doc(f.doc);
    for (std::string line; std::getline(doc, line);) o << "// " << line << "\n";
    o << "int " << f.name << "(tessel_tensor_t** tensors) {\n";
    p.stmt(simplify(f.body), 1);
    o << "  return 0;\n}\n";
  }
  return p.str();
}

std::vector<std::string> CBackend::compilerFlags() const { return jitDefaultFlags(); }

const Backend& backendNamed(const std::string& name) {
  static const CBackend c;
  if (name == c.name()) return c;
  throw InternalError("no code generator named '" + name + "'");
}

}  // namespace tessel::codegen
