// A hand-written recursive-descent parser for the text syntax of index notation
// (grammar in tessel/syntax.h). Parsing first builds a syntax tree of names; binding
// those names to tensors and index variables is a separate step. Nesting (parentheses,
// negations, sums) and the tree's depth (a flat sum of n terms is n deep) are bounded by
// kMaxExpressionDepth as the text is read, so neither the recursion here nor any later
// walk over the expression can run out of stack.
#include "tessel/syntax.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <memory>
#include <optional>

#include "notation/parse_bind.h"
#include "tessel/error.h"

namespace tessel {

namespace {

enum class Tok { Name, Number, LParen, RParen, Comma, Plus, Minus, Star, Slash, Assign, PlusAssign, Compare, At, End };

struct Token {
  Tok kind = Tok::End;
  std::string text;
  int column = 0;  // 1-based
  double value = 0;
};

struct SyntaxAccess {
  std::string name;
  int column = 0;
  std::vector<std::string> vars;
};

struct SyntaxNode {
  ExprKind kind = ExprKind::Literal;
  SyntaxAccess access;  // Access; Sum: the summed variable as `access.vars[0]`
  double value = 0;     // Literal
  BinaryOp op;          // Apply
  bool annotated = false;  // Mul written `@(add,mul)`
  int depth = 1;        // 1 + the depth of the deepest operand
  std::unique_ptr<SyntaxNode> a, b;
};

void collectSyntaxAccesses(const SyntaxNode& n, std::vector<const SyntaxAccess*>& out);

struct SyntaxAssignment {
  SyntaxAccess lhs;
  std::unique_ptr<SyntaxNode> rhs;
  bool accumulate = false;
  std::optional<Semiring> semiring;  ///< written as `X @(add,mul) Y`
};

/// Names that call element-wise functions when followed by '(' (not tensors).
bool isFunctionName(const std::string& s) { return s == "min" || s == "max" || s == "abs"; }

bool isNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) { advance(); }

  SyntaxAssignment parseAssignment() {
    SyntaxAssignment out;
    if (tok_.kind == Tok::End) fail("empty expression", tok_.column);
    if (tok_.kind == Tok::Number)
      fail("the left-hand side must be a tensor access, not a number", tok_.column);
    if (tok_.kind != Tok::Name)
      fail("expected a tensor access on the left-hand side but found " + describe(tok_), tok_.column);
    if (tok_.text == "sum") fail("a tensor cannot be named sum (it is the reduction sum(j, e))", tok_.column);
    if (isFunctionName(tok_.text))
      fail("a tensor cannot be named " + tok_.text + " (it is the element-wise function " + tok_.text + "(...))",
           tok_.column);
    out.lhs = parseAccess();
    lhsVars_ = out.lhs.vars;
    if (tok_.kind == Tok::Assign) {
      out.accumulate = false;
    } else if (tok_.kind == Tok::PlusAssign) {
      out.accumulate = true;
    } else {
      fail("expected '=' or '+=' but found " + describe(tok_), tok_.column);
    }
    std::string op = tok_.text;
    advance();
    if (tok_.kind == Tok::End) fail("empty expression after '" + op + "'", tok_.column);
    out.rhs = parseExpr();
    if (tok_.kind == Tok::RParen) fail("unmatched ')'", tok_.column);
    if (tok_.kind != Tok::End)
      fail("unexpected " + describe(tok_) + " after the end of the expression", tok_.column);
    if (semiring_) {
      out.semiring = semiring_;
      if (!semiring_->isPlusTimes()) checkOneSemiring(*out.rhs);
    }
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& msg, int column) const {
    throw ParseError(msg, text_, column);
  }

  static std::string describe(const Token& t) {
    if (t.kind == Tok::End) return "end of input";
    return "'" + t.text + "'";
  }

  // Lex the next token into tok_.
  void advance() {
    const size_t n = text_.size();
    while (pos_ < n && std::isspace(static_cast<unsigned char>(text_[pos_]))) pos_++;
    tok_ = Token();
    tok_.column = static_cast<int>(pos_) + 1;
    if (pos_ >= n) {
      tok_.kind = Tok::End;
      return;
    }
    const size_t start = pos_;
    char c = text_[pos_];
    if (isNameStart(c)) {
      while (pos_ < n && isNameChar(text_[pos_])) pos_++;
      tok_.kind = Tok::Name;
      tok_.text = text_.substr(start, pos_ - start);
      return;
    }
    if (isDigit(c) || (c == '.' && pos_ + 1 < n && isDigit(text_[pos_ + 1]))) {
      lexNumber();
      return;
    }
    pos_++;
    tok_.text = std::string(1, c);
    switch (c) {
      case '(': tok_.kind = Tok::LParen; return;
      case ')': tok_.kind = Tok::RParen; return;
      case ',': tok_.kind = Tok::Comma; return;
      case '-': tok_.kind = Tok::Minus; return;
      case '*': tok_.kind = Tok::Star; return;
      case '/': tok_.kind = Tok::Slash; return;
      case '@': tok_.kind = Tok::At; return;
      case '<':
      case '>':
      case '!':
      case '=':
        if (pos_ < n && text_[pos_] == '=') {  // <=, >=, !=, ==
          pos_++;
          tok_.kind = Tok::Compare;
          tok_.text += '=';
          return;
        }
        if (c == '=') {
          tok_.kind = Tok::Assign;
          return;
        }
        if (c != '!') {
          tok_.kind = Tok::Compare;
          return;
        }
        break;
      case '+':
        if (pos_ < n && text_[pos_] == '=') {
          pos_++;
          tok_.kind = Tok::PlusAssign;
          tok_.text = "+=";
        } else {
          tok_.kind = Tok::Plus;
        }
        return;
      default:
        break;
    }
    std::string shown = std::isprint(static_cast<unsigned char>(c))
                            ? std::string(1, c)
                            : "\\x" + std::string(1, "0123456789abcdef"[(c >> 4) & 15]) +
                                  std::string(1, "0123456789abcdef"[c & 15]);
    fail("unexpected character '" + shown + "'", static_cast<int>(start) + 1);
  }

  // digits ['.' digits] [('e'|'E') ['+'|'-'] digits], or '.' digits [...]
  void lexNumber() {
    const size_t n = text_.size();
    const size_t start = pos_;
    while (pos_ < n && isDigit(text_[pos_])) pos_++;
    if (pos_ < n && text_[pos_] == '.') {
      pos_++;
      while (pos_ < n && isDigit(text_[pos_])) pos_++;
    }
    if (pos_ < n && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      size_t e = pos_ + 1;
      if (e < n && (text_[e] == '+' || text_[e] == '-')) e++;
      if (e >= n || !isDigit(text_[e]))
        fail("malformed exponent in number", static_cast<int>(pos_) + 1);
      pos_ = e;
      while (pos_ < n && isDigit(text_[pos_])) pos_++;
    }
    tok_.kind = Tok::Number;
    tok_.text = text_.substr(start, pos_ - start);
    // from_chars does not take "1." or ".5" in every library version: normalize.
    std::string digits;
    const std::string& t = tok_.text;
    for (size_t k = 0; k < t.size(); k++) {
      if (t[k] == '.' && k == 0) digits += '0';
      digits += t[k];
      if (t[k] == '.' && (k + 1 == t.size() || !isDigit(t[k + 1]))) digits += '0';
    }
    double v = 0;
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (r.ec == std::errc::result_out_of_range) {
      // Underflow to zero is harmless; overflow is not.
      bool tiny = false;
      for (size_t k = 0; k < digits.size(); k++)
        if ((digits[k] == 'e' || digits[k] == 'E') && k + 1 < digits.size() && digits[k + 1] == '-')
          tiny = true;
      if (!tiny) fail("number " + tok_.text + " is out of range", static_cast<int>(start) + 1);
      v = 0;
    } else if (r.ec != std::errc() || r.ptr != digits.data() + digits.size()) {
      fail("malformed number " + tok_.text, static_cast<int>(start) + 1);
    }
    tok_.value = v;
  }

  /// What to add when an access's parentheses hold something other than index
  /// variables: it may be meant as a function call.
  static std::string noFunction(const std::string& name) {
    return " (if " + name + "(...) is meant as a function call: there is no function " + name +
           "; the functions are sum(j, e), min(a, b), max(a, b) and abs(a))";
  }

  // access := NAME [ '(' [NAME (',' NAME)*] ')' ]
  [[gnu::noinline]] SyntaxAccess parseAccess() {
    SyntaxAccess acc;
    acc.name = tok_.text;
    acc.column = tok_.column;
    advance();
    if (tok_.kind != Tok::LParen) return acc;  // a scalar
    const int open = tok_.column;
    advance();
    if (tok_.kind == Tok::RParen) {
      advance();
      return acc;
    }
    for (;;) {
      if (tok_.kind == Tok::End)
        fail("missing ')' for the '(' in column " + std::to_string(open), tok_.column);
      if (tok_.kind != Tok::Name)
        fail("expected an index variable name but found " + describe(tok_) +
                 (acc.vars.empty() && tok_.kind != Tok::Comma ? noFunction(acc.name) : std::string()),
             tok_.column);
      acc.vars.push_back(tok_.text);
      advance();
      if (tok_.kind == Tok::LParen)  // foo(B(i,j)): a function call
        fail("'" + acc.name + "(...)' calls a function, but there is no function " + acc.name +
                 " (the functions are sum(j, e), min(a, b), max(a, b) and abs(a); '" + acc.name + "(' starts an access of tensor " +
                 acc.name + ")",
             acc.column);
      if (tok_.kind == Tok::Comma) {
        advance();
        continue;
      }
      if (tok_.kind == Tok::RParen) {
        advance();
        return acc;
      }
      if (tok_.kind == Tok::End)
        fail("missing ')' for the '(' in column " + std::to_string(open), tok_.column);
      fail("expected ',' or ')' but found " + describe(tok_), tok_.column);
    }
  }

  [[noreturn]] void tooDeep(int column) const {
    fail("expression nests deeper than " + std::to_string(kMaxExpressionDepth) +
             " levels (a sum or product of n terms is n levels deep); split it into several assignments",
         column);
  }

  /// Parentheses, negations and sums open around a point of the text: twice the tree's
  /// limit, since printing puts "-(" around each nested negation.
  static constexpr int kMaxNesting = 2 * kMaxExpressionDepth;

  /// A node over operands a (and b), no deeper than kMaxExpressionDepth. `column`: the
  /// operator's, for the error.
  std::unique_ptr<SyntaxNode> node(ExprKind k, std::unique_ptr<SyntaxNode> a,
                                   std::unique_ptr<SyntaxNode> b, int column) const {
    auto n = std::make_unique<SyntaxNode>();
    n->kind = k;
    n->depth = 1 + std::max(a->depth, b ? b->depth : 0);
    if (n->depth > kMaxExpressionDepth) tooDeep(column);
    n->a = std::move(a);
    n->b = std::move(b);
    return n;
  }

  /// Counts the open parentheses, negations and sums around the current token.
  class Nesting {
   public:
    Nesting(Parser& p, int column) : p_(p) {
      if (++p_.nesting_ > kMaxNesting)
        p_.fail("expression has more than " + std::to_string(kMaxNesting) +
                    " nested parentheses, negations and sums; split it into several assignments",
                column);
    }
    ~Nesting() { --p_.nesting_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    Parser& p_;
  };

  // expr := arith [('<'|'<='|'>'|'>='|'=='|'!=') arith]   (comparisons do not chain)
  // arith := term (('+'|'-') term)*
  // One function for both levels: each nesting level of parentheses costs a frame per
  // level, and 2000 of them overflowed the stack under ASan with a frame more.
  std::unique_ptr<SyntaxNode> parseExpr(bool comparison = true) {
    auto e = parseTerm();
    while (tok_.kind == Tok::Plus || tok_.kind == Tok::Minus) {
      ExprKind k = tok_.kind == Tok::Plus ? ExprKind::Add : ExprKind::Sub;
      const int at = tok_.column;
      advance();
      auto rhs = parseTerm();
      e = node(k, std::move(e), std::move(rhs), at);
    }
    if (comparison && tok_.kind == Tok::Compare) return parseComparison(std::move(e));
    return e;
  }

  /// `lhs` followed by a comparison: its operator and right-hand side (out of line, so
  /// parseExpr's frame stays small).
  [[gnu::noinline]] std::unique_ptr<SyntaxNode> parseComparison(std::unique_ptr<SyntaxNode> lhs) {
    const std::string sym = tok_.text;
    const int at = tok_.column;
    advance();
    auto rhs = parseExpr(false);
    if (tok_.kind == Tok::Compare)
      fail("comparisons do not chain (a < b < c); parenthesize one of them", tok_.column);
    auto n = node(ExprKind::Apply, std::move(lhs), std::move(rhs), at);
    n->op = sym == "<"    ? BinaryOp::lt()
            : sym == "<=" ? BinaryOp::le()
            : sym == ">"  ? BinaryOp::gt()
            : sym == ">=" ? BinaryOp::ge()
            : sym == "==" ? BinaryOp::eq()
                          : BinaryOp::ne();
    return n;
  }

  // term := factor (('*'|'/'|'@(' op ',' op ')') factor)*
  std::unique_ptr<SyntaxNode> parseTerm() {
    auto e = parseFactor();
    while (tok_.kind == Tok::Star || tok_.kind == Tok::Slash || tok_.kind == Tok::At) {
      ExprKind k = tok_.kind == Tok::Slash ? ExprKind::Div : ExprKind::Mul;
      const int at = tok_.column;
      bool annotated = tok_.kind == Tok::At;
      if (annotated) parseSemiring();
      advance();
      auto rhs = parseFactor();
      e = node(k, std::move(e), std::move(rhs), at);
      e->annotated = annotated;
    }
    return e;
  }

  // '@' '(' op ',' op ')' with op a symbol (+, *) or a name (min, or, ...): the semiring
  // of the product it stands for; leaves tok_ at the ')'.
  [[gnu::noinline]] void parseSemiring() {
    const int at = tok_.column;
    advance();
    if (tok_.kind != Tok::LParen) fail("expected '(' after '@' (as in A(i,k) @(min,+) B(k,j))", tok_.column);
    auto opName = [&]() {
      advance();
      if (tok_.kind != Tok::Name && tok_.kind != Tok::Plus && tok_.kind != Tok::Star)
        fail("expected an operator name in @(add,mul) but found " + describe(tok_), tok_.column);
      try {
        return BinaryOp::byName(tok_.text);
      } catch (const NotationError& e) {
        fail(e.what(), tok_.column);
      }
    };
    BinaryOp add = opName();
    advance();
    if (tok_.kind != Tok::Comma) fail("expected ',' in @(add,mul) but found " + describe(tok_), tok_.column);
    BinaryOp mul = opName();
    advance();
    if (tok_.kind != Tok::RParen) fail("expected ')' closing @(add,mul) but found " + describe(tok_), tok_.column);
    Semiring s = add.kind == BinaryOpKind::Add && mul.kind == BinaryOpKind::Mul ? Semiring::plusTimes()
                                                                                : Semiring::of(add, mul);
    if (semiring_ && !(*semiring_ == s))
      fail("mixing semirings (" + semiring_->name + " and " + s.name + ") in one expression is not supported", at);
    semiring_ = s;
  }

  /// One semiring other than plus_times: its `+` and `*` mean add and mul everywhere, so
  /// the expression may not also use `+`, `-`, `/` or a plain `*` (which would read as
  /// plus_times's).
  void checkOneSemiring(const SyntaxNode& n) const {
    const char* op = n.kind == ExprKind::Add   ? "+"
                     : n.kind == ExprKind::Sub ? "-"
                     : n.kind == ExprKind::Neg ? "-"
                     : n.kind == ExprKind::Div ? "/"
                     : n.kind == ExprKind::Mul && !n.annotated ? "*"
                                                               : nullptr;
    if (op)
      throw NotationError("mixing semirings is not supported: the expression uses @(" + semiring_->add.name + "," +
                          semiring_->mul.name + ") and a plain '" + op +
                          "' (write every product of it with @(...), or give the whole assignment --semiring " +
                          semiring_->name + " and plain operators)");
    if (n.a) checkOneSemiring(*n.a);
    if (n.b) checkOneSemiring(*n.b);
  }

  // factor := '-' factor | '(' expr ')' | number | access
  std::unique_ptr<SyntaxNode> parseFactor() {
    switch (tok_.kind) {
      case Tok::Minus: {
        const int at = tok_.column;
        Nesting nest(*this, at);
        advance();
        return node(ExprKind::Neg, parseFactor(), nullptr, at);
      }
      case Tok::LParen: {
        const int open = tok_.column;
        Nesting nest(*this, open);
        advance();
        if (tok_.kind == Tok::RParen) fail("empty parentheses", tok_.column);
        auto e = parseExpr();
        if (tok_.kind != Tok::RParen)
          fail("missing ')' for the '(' in column " + std::to_string(open) + ", found " +
                   describe(tok_),
               tok_.column);
        advance();
        return e;
      }
      case Tok::Number: {
        auto n = std::make_unique<SyntaxNode>();
        n->kind = ExprKind::Literal;
        n->value = tok_.value;
        advance();
        return n;
      }
      case Tok::Name: {
        if (tok_.text == "sum") return parseSum();
        if (isFunctionName(tok_.text) && peekIs('(')) return parseCall();
        auto n = std::make_unique<SyntaxNode>();
        n->kind = ExprKind::Access;
        n->access = parseAccess();
        return n;
      }
      case Tok::End:
        fail("expected an operand at the end of the expression", tok_.column);
      default:
        fail("expected an operand but found " + describe(tok_), tok_.column);
    }
  }

  /// Whether the next non-space character after the current token is c.
  bool peekIs(char c) const {
    size_t k = pos_;
    while (k < text_.size() && std::isspace(static_cast<unsigned char>(text_[k]))) k++;
    return k < text_.size() && text_[k] == c;
  }

  // call := ('min'|'max') '(' expr ',' expr ')' | 'abs' '(' expr ')'
  [[gnu::noinline]] std::unique_ptr<SyntaxNode> parseCall() {
    const std::string fn = tok_.text;
    const int at = tok_.column;
    Nesting nest(*this, at);
    advance();  // the name
    const int open = tok_.column;
    advance();  // '('
    if (tok_.kind == Tok::RParen) fail(fn + "() needs " + (fn == "abs" ? "one operand" : "two operands"), tok_.column);
    auto a = parseExpr();
    std::unique_ptr<SyntaxNode> b;
    if (fn != "abs") {
      if (tok_.kind != Tok::Comma)
        fail(fn + "(a, b) takes two operands; expected ',' but found " + describe(tok_), tok_.column);
      advance();
      b = parseExpr();
    }
    if (tok_.kind == Tok::Comma) fail(fn + "(...) takes " + (fn == "abs" ? "one operand" : "two operands"), tok_.column);
    if (tok_.kind != Tok::RParen)
      fail("missing ')' for the '(' in column " + std::to_string(open) + ", found " + describe(tok_), tok_.column);
    advance();
    auto n = node(fn == "abs" ? ExprKind::Abs : ExprKind::Apply, std::move(a), std::move(b), at);
    if (fn == "min") n->op = BinaryOp::min();
    if (fn == "max") n->op = BinaryOp::max();
    return n;
  }

  // sum := 'sum' '(' NAME ',' expr ')'
  [[gnu::noinline]] std::unique_ptr<SyntaxNode> parseSum() {
    const int at = tok_.column;
    Nesting nest(*this, at);
    advance();
    if (tok_.kind != Tok::LParen)
      fail("sum is the reduction sum(j, e), not a tensor name; found " + describe(tok_) + " after it", tok_.column);
    const int open = tok_.column;
    advance();
    if (tok_.kind != Tok::Name)
      fail("expected the index variable to sum over after 'sum(' but found " + describe(tok_), tok_.column);
    auto n = std::make_unique<SyntaxNode>();
    n->kind = ExprKind::Sum;
    n->access.name = "sum";
    n->access.column = at;
    n->access.vars = {tok_.text};
    const std::string v = tok_.text;
    const int vcol = tok_.column;
    advance();
    if (tok_.kind != Tok::Comma)
      fail("expected ',' and an expression after sum(" + v + " but found " + describe(tok_), tok_.column);
    advance();
    for (const std::string& l : lhsVars_)
      if (l == v) fail("sum(" + v + ", ...): " + v + " is an index variable of the left-hand side, so it cannot be summed", vcol);
    for (const std::string& o : summing_)
      if (o == v) fail("sum(" + v + ", ...): " + v + " is already summed by an enclosing sum", vcol);
    summing_.push_back(v);
    n->a = parseExpr();
    summing_.pop_back();
    n->depth = 1 + n->a->depth;
    if (n->depth > kMaxExpressionDepth) tooDeep(at);
    if (tok_.kind != Tok::RParen)
      fail("missing ')' for the '(' in column " + std::to_string(open) + ", found " + describe(tok_), tok_.column);
    advance();
    std::vector<const SyntaxAccess*> inside;
    collectSyntaxAccesses(*n->a, inside);
    bool used = false;
    for (const SyntaxAccess* acc : inside)
      used |= std::find(acc->vars.begin(), acc->vars.end(), v) != acc->vars.end();
    if (!used) fail("sum(" + v + ", ...): " + v + " does not appear in its expression", vcol);
    return n;
  }

  const std::string& text_;
  size_t pos_ = 0;
  Token tok_;
  std::vector<std::string> lhsVars_;
  std::vector<std::string> summing_;  // variables of the enclosing sums
  int nesting_ = 0;                   // see Nesting
  std::optional<Semiring> semiring_;  // of the `@(add,mul)` products
};

void collectSyntaxAccesses(const SyntaxNode& n, std::vector<const SyntaxAccess*>& out) {
  switch (n.kind) {
    case ExprKind::Access:
      out.push_back(&n.access);
      break;
    case ExprKind::Literal:
      break;
    case ExprKind::Neg:
    case ExprKind::Abs:
    case ExprKind::Sum:
      collectSyntaxAccesses(*n.a, out);
      break;
    default:
      collectSyntaxAccesses(*n.a, out);
      collectSyntaxAccesses(*n.b, out);
      break;
  }
}

class Binder {
 public:
  explicit Binder(const AccessBinder& tensors) : tensors_(tensors) {}

  IndexExpr access(const SyntaxAccess& s) {
    std::vector<IndexVar> vars;
    for (const std::string& v : s.vars) vars.push_back(var(v));
    IndexExpr e = tensors_(s.name, std::move(vars));
    if (!e.defined())
      throw NotationError("unknown tensor " + s.name + " (at column " + std::to_string(s.column) + ")");
    return e;
  }

  IndexExpr expr(const SyntaxNode& n) {
    switch (n.kind) {
      case ExprKind::Access:
        return access(n.access);
      case ExprKind::Literal:
        return IndexExpr(n.value);
      case ExprKind::Neg:
        return -expr(*n.a);
      case ExprKind::Sum: {
        IndexVar v = var(n.access.vars[0]);
        return sum(v, expr(*n.a));
      }
      case ExprKind::Add: {
        IndexExpr a = expr(*n.a);
        return a + expr(*n.b);
      }
      case ExprKind::Sub: {
        IndexExpr a = expr(*n.a);
        return a - expr(*n.b);
      }
      case ExprKind::Mul: {
        IndexExpr a = expr(*n.a);
        return a * expr(*n.b);
      }
      case ExprKind::Div: {
        IndexExpr a = expr(*n.a);
        return a / expr(*n.b);
      }
      case ExprKind::Abs:
        return absolute(expr(*n.a));
      case ExprKind::Apply: {
        IndexExpr a = expr(*n.a);
        return apply(n.op, a, expr(*n.b));
      }
    }
    throw InternalError("bad syntax node");
  }

 private:
  IndexVar var(const std::string& name) {
    auto it = vars_.find(name);
    if (it != vars_.end()) return it->second;
    IndexVar v(name);
    vars_.emplace(name, v);
    return v;
  }

  const AccessBinder& tensors_;
  std::map<std::string, IndexVar> vars_;
};

}  // namespace

std::vector<TensorUse> scanTensors(const std::string& text) {
  SyntaxAssignment s = Parser(text).parseAssignment();
  std::vector<const SyntaxAccess*> accesses{&s.lhs};
  collectSyntaxAccesses(*s.rhs, accesses);
  std::vector<TensorUse> out;
  for (size_t k = 0; k < accesses.size(); k++) {
    const SyntaxAccess& a = *accesses[k];
    int order = static_cast<int>(a.vars.size());
    bool found = false;
    for (const TensorUse& u : out)
      if (u.name == a.name) {
        found = true;
        if (u.order != order)
          throw NotationError("tensor " + a.name + " is used with " + std::to_string(u.order) +
                              " and with " + std::to_string(order) + " index variables");
      }
    if (!found) out.push_back(TensorUse{a.name, order, k == 0, k == 0 && s.accumulate});
  }
  return out;
}

Assignment parseAssignment(const std::string& text, const std::map<std::string, TensorVar>& tensors) {
  return parseAssignmentWith(text, [&](const std::string& name, std::vector<IndexVar> vars) -> IndexExpr {
    auto it = tensors.find(name);
    if (it == tensors.end() || !it->second.defined()) return IndexExpr();
    return Access(it->second, std::move(vars));
  });
}

Assignment parseAssignmentWith(const std::string& text, const AccessBinder& tensors) {
  SyntaxAssignment s = Parser(text).parseAssignment();
  Binder b(tensors);
  Assignment a;
  a.lhs = b.access(s.lhs);
  a.rhs = b.expr(*s.rhs);
  a.accumulate = s.accumulate;
  if (s.semiring) a.semiring = *s.semiring;
  return a;
}

}  // namespace tessel
