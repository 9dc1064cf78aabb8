// The IR pseudo-code printer: see print.h.
#include "ir/print.h"

#include <sstream>

namespace tessel::ir {

namespace {

const char* opText(ExprOp op) {
  if (op == ExprOp::IDiv) return "//";
  const char* s = infixSymbol(op);
  return s ? s : "?";
}

std::string typeName(const Type& t) {
  std::string s = datatypeName(t.elem);
  if (t.pointer) s = (t.constData ? "const " : "") + s + "*";
  return s;
}

/// c + s, appended (GCC 12's -Wrestrict misfires on `"-" + std::string&&`).
std::string prefixed(char c, const std::string& s) {
  std::string out(1, c);
  out += s;
  return out;
}

std::string expr(const Expr& e, bool top) {
  if (!e) return "<null>";
  auto list = [](const std::vector<Expr>& args) {
    std::string s;
    for (size_t i = 0; i < args.size(); i++) s += (i ? ", " : "") + expr(args[i], true);
    return s;
  };
  switch (e->op) {
    case ExprOp::Var: return e->name;
    case ExprOp::IntImm: return std::to_string(e->ival);
    case ExprOp::FloatImm: {
      std::ostringstream o;
      o.precision(17);
      o << e->fval;
      return o.str();
    }
    case ExprOp::Load: return expr(e->args[0], false) + "[" + expr(e->args[1], true) + "]";
    case ExprOp::Field: return expr(e->args[0], false) + "." + e->name;
    case ExprOp::Cast: return typeName(e->type) + "(" + expr(e->args[0], true) + ")";
    case ExprOp::Call: return e->name + "(" + list(e->args) + ")";
    case ExprOp::Neg: return prefixed('-', expr(e->args[0], false));
    case ExprOp::Not: return prefixed('!', expr(e->args[0], false));
    case ExprOp::Min: return "min(" + list(e->args) + ")";
    case ExprOp::Max: return "max(" + list(e->args) + ")";
    case ExprOp::Select: return "select(" + list(e->args) + ")";
    case ExprOp::AddressOf: return prefixed('&', expr(e->args[0], false));
    case ExprOp::ElemSize: return "elemsize(" + list(e->args) + ")";
    default: break;
  }
  std::string s = expr(e->args[0], false) + " " + opText(e->op) + " " + expr(e->args[1], false);
  return top ? s : "(" + s + ")";
}

/// "  // cpu_parallel (strategy 2), unroll 4" for anything but a plain serial loop.
std::string loopNote(const LoopInfo& l) {
  if (l.plain()) return "";
  std::string s = std::string("  // ") + loopKindName(l.kind);
  if (l.strategy != ParallelStrategy::None) s += " (strategy " + std::to_string(static_cast<int>(l.strategy)) + ")";
  if (l.unroll > 1) s += ", unroll " + std::to_string(l.unroll);
  if (l.reductionVar) s += ", reduces into " + l.reductionVar->name;
  return s;
}

void stmt(std::ostringstream& out, const Stmt& s, int ind) {
  std::string pad(2 * ind, ' ');
  if (!s) return;
  auto nested = [&](const std::vector<Stmt>& body) {
    for (const Stmt& c : body) stmt(out, c, ind + 1);
  };
  switch (s->op) {
    case StmtOp::Block:
      for (const Stmt& c : s->body) stmt(out, c, ind);
      return;
    case StmtOp::Decl:
      out << pad << (s->persistent ? "static " : "let ") << s->args[0]->name << ": " << typeName(s->args[0]->type);
      if (s->persistent) out << " x " << s->ival;
      if (s->args[1]) out << " = " << expr(s->args[1], true);
      out << "\n";
      return;
    case StmtOp::Assign:
      out << pad << expr(s->args[0], true) << " = " << expr(s->args[1], true) << "\n";
      return;
    case StmtOp::Store:
      out << pad << expr(s->args[0], false) << "[" << expr(s->args[1], true) << "] "
          << (s->accumulate == ReduceOp::None  ? "="
              : s->accumulate == ReduceOp::Add ? "+="
              : s->accumulate == ReduceOp::Min ? "min="
              : s->accumulate == ReduceOp::Max ? "max="
              : s->accumulate == ReduceOp::Or  ? "or="
              : s->accumulate == ReduceOp::And ? "and="
                                               : "any=")
          << " " << expr(s->args[2], true)
          << (s->atomic ? "  // atomic" : "") << "\n";
      return;
    case StmtOp::For:
      out << pad << "for " << s->args[0]->name << " in [" << expr(s->args[1], true) << ", "
          << expr(s->args[2], true) << ")" << loopNote(s->loop) << "\n";
      nested(s->body);
      return;
    case StmtOp::While:
      out << pad << "while " << expr(s->args[0], true) << "\n";
      nested(s->body);
      return;
    case StmtOp::If:
      out << pad << "if " << expr(s->args[0], true) << "\n";
      nested(s->body);
      if (!s->elseBody.empty()) {
        out << pad << "else\n";
        nested(s->elseBody);
      }
      return;
    case StmtOp::Comment: out << pad << "// " << s->text << "\n"; return;
    case StmtOp::Return: out << pad << "return " << s->ival << "\n"; return;
    case StmtOp::Alloc:
      out << pad << s->args[0]->name << " = alloc " << typeName(s->args[0]->type) << " x "
          << expr(s->args[1], true);
      if (s->args.size() > 2 && s->args[2]) out << " into " << expr(s->args[2], true);
      out << (s->fill == AllocFill::Zero ? " (zeroed)" : s->fill == AllocFill::Keep ? " (kept)" : "") << "\n";
      return;
    case StmtOp::Free: out << pad << "free " << expr(s->args[0], true) << "\n"; return;
    case StmtOp::Break: out << pad << "break\n"; return;
    case StmtOp::Evaluate: out << pad << expr(s->args[0], true) << "\n"; return;
  }
}

}  // namespace

std::string print(const Expr& e) { return expr(e, true); }

std::string print(const Stmt& s, int indent) {
  std::ostringstream out;
  stmt(out, s, indent);
  return out.str();
}

std::string print(const Function& f) {
  std::string head = f.doc.empty() ? "" : "// " + f.doc + "\n";
  return head + f.name + "(tensors)\n" + print(f.body, 1);
}

}  // namespace tessel::ir
