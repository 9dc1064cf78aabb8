// Index notation: index variables, expression trees, assignments and their checks.
#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

#include "notation/access_node.h"
#include "notation/reductions.h"
#include "tessel/error.h"
#include "tessel/notation.h"

namespace tessel {

namespace {

std::atomic<uint64_t> nextVarId{0};
std::atomic<uint64_t> nextVarName{0};
std::atomic<uint64_t> nextTensorVarId{1};  // 0: undefined

std::shared_ptr<const ExprNode> literalNode(double v) {
  auto n = std::make_shared<ExprNode>();
  n->kind = ExprKind::Literal;
  n->value = v;
  return n;
}

/// Depth of a node over these operands; refuses more than kMaxExpressionDepth, so every
/// recursive walk (printing, checks, lowering, the reference evaluator, destruction) over
/// an expression stays within a small stack.
int depthOver(const IndexExpr& a, const IndexExpr* b = nullptr) {
  int d = 1 + std::max(a.node().depth, b ? b->node().depth : 0);
  if (d > kMaxExpressionDepth)
    throw NotationError("index expression nests deeper than " + std::to_string(kMaxExpressionDepth) +
                        " levels (a sum or product of n terms nests n deep); split it into several assignments");
  return d;
}

IndexExpr binary(ExprKind k, const IndexExpr& a, const IndexExpr& b) {
  if (!a.defined() || !b.defined())
    throw NotationError("operand of an index expression is undefined");
  auto n = std::make_shared<ExprNode>();
  n->kind = k;
  n->depth = depthOver(a, &b);
  n->a = a;
  n->b = b;
  return IndexExpr(std::shared_ptr<const ExprNode>(std::move(n)));
}

// Shortest text that reads back as the same double ("2", "0.5", "1e+20").
std::string literalText(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// Binding strength when printing: higher binds tighter.
int precedence(const ExprNode& n) {
  switch (n.kind) {
    case ExprKind::Apply:  // comparisons bind looser than `+`; calls are self-delimiting
      return n.op.isComparison() ? 0 : 4;
    case ExprKind::Abs:
      return 4;
    case ExprKind::Add:
    case ExprKind::Sub:
      return 1;
    case ExprKind::Mul:
    case ExprKind::Div:
      return 2;
    case ExprKind::Neg:
      return 3;
    case ExprKind::Literal:
      // A negative literal prints with a leading '-', like a negation.
      return (n.value < 0 || std::signbit(n.value)) ? 3 : 4;
    case ExprKind::Access:
    case ExprKind::Sum:  // "sum(j, e)" is self-delimiting
      return 4;
  }
  return 4;
}

std::string plainAccessText(const ExprNode& n) {
  std::string s = n.tensor.defined() ? n.tensor.name() : std::string("<undefined>");
  if (n.vars.empty()) return s;  // a scalar prints as its name
  s += '(';
  for (size_t k = 0; k < n.vars.size(); k++) {
    if (k) s += ',';
    s += n.vars[k].name();
  }
  s += ')';
  return s;
}

// A mask's factor prints as what it tests: mask(M(i,j)), mask(!(M(i,j) != 0)).
std::string accessText(const ExprNode& n) {
  if (!n.mask.isMask) return plainAccessText(n);
  std::string t = plainAccessText(n);
  if (n.mask.valued) t = n.mask.complement ? "(" + t + " != 0)" : t + " != 0";
  return "mask(" + std::string(n.mask.complement ? "!" : "") + t + ")";
}

std::string exprText(const ExprNode& n) {
  switch (n.kind) {
    case ExprKind::Access:
      return accessText(n);
    case ExprKind::Literal:
      return literalText(n.value);
    case ExprKind::Sum:
      return "sum(" + n.vars[0].name() + ", " + exprText(n.a.node()) + ")";
    case ExprKind::Abs:
      return "abs(" + exprText(n.a.node()) + ")";
    case ExprKind::Apply: {
      // An absent operand (a merge lattice's case) prints as `_`.
      auto operand = [](const IndexExpr& x) { return x.defined() ? exprText(x.node()) : std::string("_"); };
      if (!n.op.isComparison()) return n.op.name + "(" + operand(n.a) + ", " + operand(n.b) + ")";
      // Comparisons do not chain: an operand that is one is parenthesized.
      std::string ls = operand(n.a), rs = operand(n.b);
      if (n.a.defined() && precedence(n.a.node()) == 0) ls = "(" + ls + ")";
      if (n.b.defined() && precedence(n.b.node()) == 0) rs = "(" + rs + ")";
      return ls + " " + n.op.symbol + " " + rs;
    }
    case ExprKind::Neg: {
      const ExprNode& o = n.a.node();
      std::string inner = exprText(o);
      // Parenthesize anything looser than a factor, and a nested negation ("-(-x)").
      if (precedence(o) <= 3) return "-(" + inner + ")";
      return "-" + inner;
    }
    case ExprKind::Add:
    case ExprKind::Sub:
    case ExprKind::Mul:
    case ExprKind::Div: {
      int p = precedence(n);
      const ExprNode& l = n.a.node();
      const ExprNode& r = n.b.node();
      std::string ls = exprText(l), rs = exprText(r);
      // Left-associative: the left operand needs parentheses only if it binds looser;
      // the right operand also when it binds equally (keeps the tree on re-parse).
      if (precedence(l) < p) ls = "(" + ls + ")";
      if (precedence(r) <= p) rs = "(" + rs + ")";
      const char* op = n.kind == ExprKind::Add   ? " + "
                       : n.kind == ExprKind::Sub ? " - "
                       : n.kind == ExprKind::Mul ? " * "
                                                 : " / ";
      return ls + op + rs;
    }
  }
  return "?";
}

void collectAccesses(const IndexExpr& e, std::vector<const ExprNode*>& out) {
  if (!e.defined()) return;
  const ExprNode& n = e.node();
  switch (n.kind) {
    case ExprKind::Access:
      out.push_back(&n);
      break;
    case ExprKind::Literal:
      break;
    case ExprKind::Neg:
    case ExprKind::Abs:
    case ExprKind::Sum:
      collectAccesses(n.a, out);
      break;
    default:
      collectAccesses(n.a, out);
      collectAccesses(n.b, out);
      break;
  }
}

bool contains(const std::vector<IndexVar>& vs, const IndexVar& v) {
  return std::find(vs.begin(), vs.end(), v) != vs.end();
}

const ExprNode& lhsAccess(const Assignment& a) {
  if (!a.lhs.defined() || a.lhs.kind() != ExprKind::Access)
    throw NotationError("the left-hand side of an assignment must be a tensor access");
  return a.lhs.node();
}

}  // namespace

// ---------------------------------------------------------------- IndexVar

IndexVar::IndexVar() : id_(nextVarId++) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "i%llu", static_cast<unsigned long long>(nextVarName++));
  name_ = std::make_shared<const std::string>(buf);
}

IndexVar::IndexVar(const std::string& name)
    : name_(std::make_shared<const std::string>(name)), id_(nextVarId++) {}

const std::string& IndexVar::name() const { return *name_; }

// ---------------------------------------------------------------- IndexExpr

IndexExpr::IndexExpr(double literal) : node_(literalNode(literal)) {}
IndexExpr::IndexExpr(int literal) : node_(literalNode(static_cast<double>(literal))) {}

ExprKind IndexExpr::kind() const {
  if (!node_) throw NotationError("undefined index expression");
  return node_->kind;
}

std::string IndexExpr::str() const {
  if (!node_) return "<undefined>";
  return exprText(*node_);
}

IndexExpr operator+(const IndexExpr& a, const IndexExpr& b) { return binary(ExprKind::Add, a, b); }
IndexExpr operator-(const IndexExpr& a, const IndexExpr& b) { return binary(ExprKind::Sub, a, b); }
IndexExpr operator*(const IndexExpr& a, const IndexExpr& b) { return binary(ExprKind::Mul, a, b); }
IndexExpr operator/(const IndexExpr& a, const IndexExpr& b) { return binary(ExprKind::Div, a, b); }

IndexExpr operator-(const IndexExpr& a) {
  if (!a.defined()) throw NotationError("operand of an index expression is undefined");
  auto n = std::make_shared<ExprNode>();
  n->kind = ExprKind::Neg;
  n->depth = depthOver(a);
  n->a = a;
  return IndexExpr(std::shared_ptr<const ExprNode>(std::move(n)));
}

IndexExpr sum(const IndexVar& v, const IndexExpr& e) {
  if (!e.defined()) throw NotationError("the expression of sum(" + v.name() + ", ...) is undefined");
  auto n = std::make_shared<ExprNode>();
  n->kind = ExprKind::Sum;
  n->depth = depthOver(e);
  n->vars = {v};
  n->a = e;
  return IndexExpr(std::shared_ptr<const ExprNode>(std::move(n)));
}

IndexExpr apply(const BinaryOp& op, const IndexExpr& a, const IndexExpr& b) {
  if (!a.defined() || !b.defined())
    throw NotationError("operand of " + op.name + "(...) is undefined");
  if (op.kind == BinaryOpKind::Custom && !op.fn)
    throw NotationError("operator " + op.name + " has no function for the reference evaluator");
  auto n = std::make_shared<ExprNode>();
  n->kind = ExprKind::Apply;
  n->depth = depthOver(a, &b);
  n->op = op;
  n->a = a;
  n->b = b;
  return IndexExpr(std::shared_ptr<const ExprNode>(std::move(n)));
}

IndexExpr absolute(const IndexExpr& a) {
  if (!a.defined()) throw NotationError("operand of abs(...) is undefined");
  auto n = std::make_shared<ExprNode>();
  n->kind = ExprKind::Abs;
  n->depth = depthOver(a);
  n->a = a;
  return IndexExpr(std::shared_ptr<const ExprNode>(std::move(n)));
}

IndexExpr withOperands(const ExprNode& n, const IndexExpr& a, const IndexExpr& b) {
  switch (n.kind) {
    case ExprKind::Access:
    case ExprKind::Literal: return IndexExpr(std::make_shared<const ExprNode>(n));
    case ExprKind::Sum: return sum(n.vars[0], a);
    case ExprKind::Neg: return -a;
    case ExprKind::Abs: return absolute(a);
    case ExprKind::Add: return a + b;
    case ExprKind::Sub: return a - b;
    case ExprKind::Mul: return a * b;
    case ExprKind::Div: return a / b;
    case ExprKind::Apply: return apply(n.op, a, b);
  }
  throw InternalError("withOperands: unknown expression kind");
}

// ---------------------------------------------------------------- TensorVar, Access

TensorVar::TensorVar(std::string name, Datatype type, std::vector<int64_t> dims, Format format) {
  auto c = std::make_shared<Content>();
  c->name = std::move(name);
  c->type = type;
  c->dims = std::move(dims);
  c->format = std::move(format);
  c->id = nextTensorVarId++;
  content_ = std::move(c);
}

Access TensorVar::operator()(const std::vector<IndexVar>& vars) const { return Access(*this, vars); }

// Accesses of Tensors (bound to storage), tensor(), operator= and += live in the runtime
// (runtime/tensor_access.cpp): notation knows variables only.

std::shared_ptr<const ExprNode> accessNode(const TensorVar& t, TensorBinding binding,
                                           std::vector<IndexVar> vars) {
  if (!t.defined()) throw NotationError("access to an undefined tensor");
  if (static_cast<int>(vars.size()) != t.order())
    throw NotationError(t.name() + " has order " + std::to_string(t.order()) +
                        " but is accessed with " + std::to_string(vars.size()) +
                        " index variable" + (vars.size() == 1 ? "" : "s"));
  auto n = std::make_shared<ExprNode>();
  n->kind = ExprKind::Access;
  n->tensor = t;
  n->binding = std::move(binding);
  n->vars = std::move(vars);
  return n;
}

Access::Access(const TensorVar& t, std::vector<IndexVar> vars) : IndexExpr(accessNode(t, nullptr, std::move(vars))) {}

const TensorVar& Access::tensorVar() const { return node().tensor; }

const std::vector<IndexVar>& Access::vars() const { return node().vars; }

IndexExpr accessLike(const ExprNode& n, std::vector<IndexVar> vars) {
  auto node = std::make_shared<ExprNode>(*accessNode(n.tensor, n.binding, std::move(vars)));
  node->mask = n.mask;  // a rebuilt mask factor stays one
  return IndexExpr(std::shared_ptr<const ExprNode>(std::move(node)));
}

// ---------------------------------------------------------------- masks

std::string OutputMask::str() const {
  if (!defined()) return "";
  std::string s = (complement ? "!" : "") + access.node().tensor.name();
  if (valued) s += ",valued";
  if (replace) s += ",replace";
  return s;
}

OutputMask outputMask(const Access& m, bool valued, bool complement, bool replace) {
  OutputMask k;
  k.access = m;
  k.valued = valued;
  k.complement = complement;
  k.replace = replace;
  return k;
}

IndexExpr maskFactor(const Assignment& a) {
  if (!a.mask.defined()) throw InternalError("maskFactor of an assignment without a mask");
  const ExprNode& m = a.mask.access.node();
  auto node = std::make_shared<ExprNode>(*accessNode(m.tensor, m.binding, a.lhsNode().vars));
  node->mask = MaskRead{true, a.mask.valued, a.mask.complement};
  return IndexExpr(std::shared_ptr<const ExprNode>(std::move(node)));
}

namespace {

/// The mask has the output's shape, is accessed by the output's variables, is not the
/// output, and the output is not a scalar.
void checkMask(const Assignment& a) {
  const OutputMask& k = a.mask;
  if (!k.defined()) {
    if (k.complement || k.valued || k.replace)
      throw NotationError("a mask option (complement, valued or replace) is given without a mask");
    return;
  }
  const ExprNode& out = a.lhsNode();
  if (k.access.kind() != ExprKind::Access) throw NotationError("the mask of " + a.lhs.str() + " is not a tensor access");
  const ExprNode& m = k.access.node();
  if (!m.tensor.defined()) throw NotationError("the mask of " + a.lhs.str() + " accesses an undefined tensor");
  if (out.vars.empty()) throw NotationError("the scalar output " + out.tensor.name() + " cannot have a mask");
  if (m.tensor == out.tensor)
    throw NotationError("the mask " + m.tensor.name() + " is the output itself (not supported)");
  if (m.tensor.dims() != out.tensor.dims()) {
    auto dimsText = [](const std::vector<int64_t>& d) {
      std::string s;
      for (size_t x = 0; x < d.size(); x++) s += (x ? "x" : "") + std::to_string(d[x]);
      return s.empty() ? std::string("a scalar") : s;
    };
    throw DimensionError("the mask " + m.tensor.name() + " is " + dimsText(m.tensor.dims()) + " but the output " +
                         out.tensor.name() + " is " + dimsText(out.tensor.dims()) + ": a mask has the output's shape");
  }
  if (m.vars != out.vars)
    throw NotationError("the mask " + plainAccessText(m) + " must be accessed by the output's variables, as in " +
                        plainAccessText(out));
}

}  // namespace

// ---------------------------------------------------------------- Assignment

std::string Assignment::str() const {
  std::string l = lhs.str();
  if (mask.defined() && lhs.defined()) {  // C<M>(i,j): the mask between the name and the variables
    const ExprNode& n = lhs.node();
    std::string name = n.tensor.defined() ? n.tensor.name() : std::string("<undefined>");
    l = name + "<" + mask.str() + ">" + l.substr(std::min(name.size(), l.size()));
  }
  std::string r = rhs.str();
  return l + (accumulate ? " += " : " = ") + r;
}

std::vector<IndexVar> freeVars(const Assignment& a) { return lhsAccess(a).vars; }

std::vector<IndexVar> reductionVars(const Assignment& a) {
  const std::vector<IndexVar>& lhsVars = lhsAccess(a).vars;
  std::vector<IndexVar> out;
  for (const ExprNode* n : rhsAccesses(a))
    for (const IndexVar& v : n->vars)
      if (!contains(lhsVars, v) && !contains(out, v)) out.push_back(v);
  return out;
}

bool accumulatesInPlace(const Assignment& a) {
  // A replacing mask clears entries of the old output: A = M * (A_old + e), not in place.
  return a.accumulate && a.lhs.defined() && a.lhsNode().tensor.format().isAllDense() &&
         !(a.mask.defined() && a.mask.replace);
}

bool accumulatesSum(const Assignment& a) {
  return a.accumulate && !accumulatesInPlace(a) && !reductionVars(a).empty();
}

std::vector<const ExprNode*> rhsAccesses(const Assignment& a) {
  std::vector<const ExprNode*> out;
  collectAccesses(a.rhs, out);
  return out;
}

void checkSemiringFits(const Assignment& a) {
  if (a.semiring.isPlusTimes() || !a.rhs.defined()) return;
  std::function<void(const IndexExpr&)> walk = [&](const IndexExpr& e) {
    const ExprNode& n = e.node();
    const char* op = n.kind == ExprKind::Sub || n.kind == ExprKind::Neg ? "-" : n.kind == ExprKind::Div ? "/" : nullptr;
    if (op)
      throw NotationError("semiring " + a.semiring.name + " has no '" + op + "' (in " + e.str() + ")");
    if (n.a.defined()) walk(n.a);
    if (n.b.defined()) walk(n.b);
  };
  walk(a.rhs);
}

void checkAssignment(const Assignment& a) {
  const ExprNode& lhs = lhsAccess(a);
  if (!a.rhs.defined()) throw NotationError("the right-hand side of an assignment is undefined");
  checkSemiringFits(a);
  if (!lhs.tensor.defined()) throw NotationError("the left-hand side accesses an undefined tensor");

  std::vector<const ExprNode*> accesses;
  accesses.push_back(&lhs);
  collectAccesses(a.rhs, accesses);

  // Arity and repeated variables, left to right.
  for (size_t k = 0; k < accesses.size(); k++) {
    const ExprNode& n = *accesses[k];
    if (!n.tensor.defined()) throw NotationError("access to an undefined tensor");
    const std::string name = n.tensor.name();
    int order = static_cast<int>(n.tensor.dims().size());
    if (static_cast<int>(n.vars.size()) != order)
      throw NotationError(name + " has order " + std::to_string(order) + " but is accessed with " +
                          std::to_string(n.vars.size()) + " index variable" +
                          (n.vars.size() == 1 ? "" : "s"));
    for (size_t x = 0; x < n.vars.size(); x++)
      for (size_t y = x + 1; y < n.vars.size(); y++)
        if (n.vars[x] == n.vars[y]) {
          if (k == 0)
            throw NotationError("index variable " + n.vars[x].name() +
                                " appears twice on the left-hand side " + accessText(n));
          throw NotationError("index variable " + n.vars[x].name() + " is repeated in " +
                              accessText(n) + " (a variable repeated inside one access is not supported)");
        }
    if (k > 0 && n.tensor == lhs.tensor)
      throw NotationError("the output tensor " + name + " also appears on the right-hand side" +
                          (a.accumulate ? std::string(" (not supported)")
                                        : std::string("; use += to accumulate into it")));
  }

  // A kernel computes in its output's type (integers and bool in int64): floating-point
  // operands of an integer or bool output would be truncated before they are combined
  // (0.5 * 4 as 0), which no user means. Refused, naming both tensors; an operand whose
  // values the semiring never reads (pair's operands, first's right one, second's left
  // one: a BFS step y(j) = f(i) * A(i,j) over min_first on a float A) may be any type.
  const Datatype outType = lhs.tensor.datatype();
  auto isFloat = [](Datatype t) { return t == Datatype::Float32 || t == Datatype::Float64; };
  std::function<void(const IndexExpr&)> valuesRead = [&](const IndexExpr& e) {
    const ExprNode& n = e.node();
    if (n.kind == ExprKind::Access) {
      const Datatype t = n.tensor.datatype();
      if (isFloat(t) && !n.mask.isMask)
        throw NotationError("tensor " + lhs.tensor.name() + " is " + datatypeName(outType) + " but " +
                            n.tensor.name() + " is " + datatypeName(t) + ": the kernel computes in " +
                            lhs.tensor.name() + "'s type, so " + n.tensor.name() +
                            "'s values would be truncated; make " + lhs.tensor.name() +
                            " floating-point or give " + n.tensor.name() + " an integer type");
      return;
    }
    const BinaryOpKind mul = a.semiring.mul.kind;
    const bool product = n.kind == ExprKind::Mul;
    if (n.a.defined() && !(product && (mul == BinaryOpKind::Pair || mul == BinaryOpKind::Second))) valuesRead(n.a);
    if (n.b.defined() && !(product && (mul == BinaryOpKind::Pair || mul == BinaryOpKind::First))) valuesRead(n.b);
  };
  if (!isFloat(outType)) valuesRead(a.rhs);

  // Every variable has one extent.
  struct Seen {
    int64_t extent;
    std::string tensor;
    int mode;
  };
  std::map<IndexVar, Seen> seen;
  for (const ExprNode* n : accesses)
    for (size_t m = 0; m < n->vars.size(); m++) {
      const IndexVar& v = n->vars[m];
      int64_t ext = n->tensor.dims()[m];
      auto it = seen.find(v);
      if (it == seen.end()) {
        seen.emplace(v, Seen{ext, n->tensor.name(), static_cast<int>(m)});
      } else if (it->second.extent != ext) {
        throw DimensionError("index variable " + v.name() + ": extent " +
                             std::to_string(it->second.extent) + " in " + it->second.tensor +
                             " (mode " + std::to_string(it->second.mode) + ") but " +
                             std::to_string(ext) + " in " + n->tensor.name() + " (mode " +
                             std::to_string(m) + ")");
      }
    }
  checkSums(a);
  checkMask(a);
}

int64_t extentOf(const Assignment& a, const IndexVar& v) {
  const ExprNode& lhs = lhsAccess(a);
  std::vector<const ExprNode*> accesses;
  accesses.push_back(&lhs);
  collectAccesses(a.rhs, accesses);
  for (const ExprNode* n : accesses) {
    if (!n->tensor.defined()) continue;
    for (size_t m = 0; m < n->vars.size() && m < n->tensor.dims().size(); m++)
      if (n->vars[m] == v) return n->tensor.dims()[m];
  }
  throw NotationError("index variable " + v.name() + " does not appear in " + a.str());
}

}  // namespace tessel
