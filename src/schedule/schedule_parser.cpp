// Schedules from text: "split(i,i0,i1,32),parallelize(i0,cpu_thread,no_races)".
#include <cctype>
#include <map>

#include "notation/parse_bind.h"
#include "schedule/schedule_text.h"
#include "tessel/error.h"
#include "tessel/schedule.h"

namespace tessel {

namespace {

using RawCommand = ScheduleText;

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n"), e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// The ')' closing the '(' at `open`, or npos. Arguments may hold parentheses:
/// precompute(B(j,k)*x(k),t).
size_t matchingParen(const std::string& text, size_t open) {
  int depth = 0;
  for (size_t p = open; p < text.size(); p++) {
    if (text[p] == '(') depth++;
    if (text[p] == ')' && --depth == 0) return p;
  }
  return std::string::npos;
}

/// The arguments inside a command's parentheses, split at commas outside parentheses.
std::vector<std::string> splitArguments(const std::string& inside) {
  std::vector<std::string> args;
  int depth = 0;
  size_t from = 0;
  for (size_t p = 0; p <= inside.size(); p++) {
    if (p < inside.size() && inside[p] == '(') depth++;
    if (p < inside.size() && inside[p] == ')') depth--;
    if (p == inside.size() || (inside[p] == ',' && depth == 0)) {
      std::string a = trim(inside.substr(from, p - from));
      if (!a.empty() || p < inside.size() || !args.empty()) args.push_back(a);
      from = p + 1;
    }
  }
  return args;
}

}  // namespace

std::vector<ScheduleText> splitScheduleText(const std::string& text) {
  std::vector<RawCommand> out;
  size_t p = 0;
  while (p < text.size()) {
    while (p < text.size() && (std::isspace(static_cast<unsigned char>(text[p])) || text[p] == ',' || text[p] == ';')) p++;
    if (p >= text.size()) break;
    size_t open = text.find('(', p);
    size_t close = open == std::string::npos ? std::string::npos : matchingParen(text, open);
    if (close == std::string::npos) {
      std::string rest = trim(text.substr(p));
      throw ScheduleError("schedule command '" + rest + "' at column " + std::to_string(p + 1) +
                          ": expected name(arguments), e.g. split(i,i0,i1,32)");
    }
    RawCommand c;
    c.name = trim(text.substr(p, open - p));
    c.text = trim(text.substr(p, close - p + 1));
    c.args = splitArguments(text.substr(open + 1, close - open - 1));
    out.push_back(c);
    p = close + 1;
  }
  return out;
}

int64_t positiveArgument(const ScheduleText& c, const std::string& arg) {
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(arg, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  auto fail = [&](const std::string& why) { throw ScheduleError("schedule command " + c.text + ": " + why); };
  if (used != arg.size() || arg.empty()) fail("'" + arg + "' is not an integer");
  if (v < 1) fail("'" + arg + "' must be at least 1");
  return v;
}

namespace {

/// Lower case without underscores: "CPUThread" and "cpu_thread" read alike.
std::string canonical(const std::string& s) {
  std::string o;
  for (char ch : s)
    if (ch != '_') o += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return o;
}

class CommandParser {
 public:
  explicit CommandParser(const Assignment& a) {
    for (const IndexVar& v : freeVars(a)) vars_.emplace(v.name(), v);
    for (const IndexVar& v : reductionVars(a)) vars_.emplace(v.name(), v);
    for (const ExprNode* n : rhsAccesses(a)) {
      bound_.emplace(n->tensor.name(), *n);
    }
  }

  void apply(const RawCommand& c, Schedule& s) {
    cmd_ = &c;
    const std::string& n = c.name;
    if (n == "split" || n == "divide") {
      arity(4);
      IndexVar i = var(0), o = var(1), in = var(2);
      int64_t f = number(3);
      n == "split" ? s.split(i, o, in, f) : s.divide(i, o, in, f);
    } else if (n == "pos") {
      arity(3);
      // pos(f,fp,B) or, as in C++, pos(f,fp,B(i,j)): the access's tensor.
      std::string t = c.args[2];
      if (size_t open = t.find('('); open != std::string::npos) {
        std::string name = trim(t.substr(0, open));
        auto it = bound_.find(name);
        if (it == bound_.end() || t.back() != ')')
          fail("'" + t + "' is not an access of a tensor on the right-hand side");
        std::string want = name + "(";
        for (size_t k = 0; k < it->second.vars.size(); k++) want += (k ? "," : "") + it->second.vars[k].name();
        want += ")";
        std::string given;
        for (char ch : t)
          if (ch != ' ' && ch != '\t') given += ch;
        if (given != want) fail("'" + t + "' is not how the expression accesses " + name + " (it has " + want + ")");
        t = name;
      }
      if (!bound_.count(t))
        fail("'" + t + "' is not a tensor on the right-hand side");
      s.pos(var(0), var(1), t);
    } else if (n == "fuse") {
      arity(3);
      s.fuse(var(0), var(1), var(2));
    } else if (n == "reorder") {
      if (c.args.size() < 2) fail("reorder needs at least two index variables");
      std::vector<IndexVar> order;
      for (size_t k = 0; k < c.args.size(); k++) order.push_back(var(k));
      s.reorder(order);
    } else if (n == "precompute") {
      if (c.args.size() == 2) {
        s.precompute(expression(c.args[0]), name(c.args[1]));
      } else if (c.args.size() == 3 && bound_.count(trim(c.args[2])) && !vars_.count(trim(c.args[2]))) {
        s.precomputeLike(expression(c.args[0]), name(c.args[1]), trim(c.args[2]));  // stored like a tensor
      } else if (c.args.size() == 3) {
        s.precompute(expression(c.args[0]), name(c.args[1]), var(2));
      } else {
        if (c.args.size() != 1)
          fail("expected precompute(j), precompute(expression,temporary), precompute(expression,temporary,j) or "
               "precompute(expression,temporary,tensor)");
        s.precompute(var(0));
      }
    } else if (n == "loopfuse") {
      if (c.args.size() != 1 && c.args.size() != 2) fail("expected loopfuse(j) or loopfuse(j,temporary)");
      s.loopfuse(var(0), c.args.size() == 2 ? name(c.args[1]) : std::string());
    } else if (n == "parallelize") {
      if (c.args.size() < 1 || c.args.size() > 3) fail("expected parallelize(i[,cpu_thread[,race]])");
      if (c.args.size() >= 2 && canonical(c.args[1]) != "cputhread")
        fail("unknown parallel unit '" + c.args[1] + "' (this build has cpu_thread)");
      OutputRace r = OutputRace::NoRaces;
      if (c.args.size() == 3) r = race(c.args[2]);
      s.parallelize(var(0), CPUThread, r);
    } else if (n == "unroll") {
      arity(2);
      s.unroll(var(0), number(1));
    } else if (n == "bound") {
      if (c.args.size() != 3 && c.args.size() != 4) fail("expected bound(i,ib,n[,max_exact|upper_bound])");
      BoundKind k = BoundKind::MaxExact;
      if (c.args.size() == 4) {
        std::string b = canonical(c.args[3]);
        if (b == "upperbound") k = BoundKind::UpperBound;
        else if (b != "maxexact") fail("unknown bound kind '" + c.args[3] + "' (max_exact or upper_bound)");
      }
      s.bound(var(0), var(1), number(2), k);
    } else {
      fail("unknown command '" + n +
           "' (known: split, divide, pos, fuse, reorder, precompute, loopfuse, parallelize, unroll, bound)");
    }
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw ScheduleError("schedule command " + cmd_->text + ": " + why);
  }
  void arity(size_t n) const {
    if (cmd_->args.size() != n)
      fail("expected " + std::to_string(n) + " arguments, got " + std::to_string(cmd_->args.size()));
  }
  IndexVar var(size_t k) {
    const std::string& name = cmd_->args[k];
    bool ok = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
    for (char ch : name) ok &= std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
    if (!ok) fail("'" + name + "' is not an index variable name");
    auto it = vars_.find(name);
    if (it == vars_.end()) it = vars_.emplace(name, IndexVar(name)).first;
    return it->second;
  }
  /// A sub-expression over the assignment's tensors (its variables match by name).
  IndexExpr expression(const std::string& text) {
    static const std::string lhs = "tessel_precompute_lhs";
    // The expression's accesses are like the assignment's (same variables and storage).
    auto bind = [&](const std::string& name, std::vector<IndexVar> vars) -> IndexExpr {
      if (name == lhs) return Access(TensorVar(lhs, Datatype::Float64, {}, DenseFormat(0)), std::move(vars));
      auto it = bound_.find(name);
      return it == bound_.end() ? IndexExpr() : accessLike(it->second, std::move(vars));
    };
    std::string prefix = lhs + " = ";
    try {
      return parseAssignmentWith(prefix + text, bind).rhs;
    } catch (const ParseError& e) {
      std::string why = e.what();
      why = why.substr(0, why.find(" at column "));
      fail("'" + text + "': " + why + " at column " + std::to_string(e.column() - static_cast<int>(prefix.size())));
    } catch (const Error& e) {
      std::string why = e.what();  // its column counts the prefix: drop it
      why = why.substr(0, why.find(" (at column "));
      fail("'" + text + "' is not an expression over the right-hand side's tensors: " + why);
    }
  }
  std::string name(const std::string& text) const {
    bool ok = !text.empty() && (std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_');
    for (char ch : text) ok &= std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
    if (!ok) fail("'" + text + "' is not a tensor name");
    return text;
  }
  int64_t number(size_t k) const { return positiveArgument(*cmd_, cmd_->args[k]); }
  OutputRace race(const std::string& t) const {
    std::string r = canonical(t);
    if (r == "noraces") return OutputRace::NoRaces;
    if (r == "ignoreraces") return OutputRace::IgnoreRaces;
    if (r == "atomics") return OutputRace::Atomics;
    if (r == "temporary") return OutputRace::Temporary;
    fail("unknown race strategy '" + t + "' (no_races, ignore_races, atomics, temporary)");
  }

  std::map<std::string, IndexVar> vars_;
  std::map<std::string, ExprNode> bound_;  ///< an access of each rhs tensor, by name
  const RawCommand* cmd_ = nullptr;
};

}  // namespace

Schedule parseSchedule(const std::string& text, const Assignment& a) {
  std::vector<RawCommand> commands = splitScheduleText(text);
  // Refused before any command is checked: a schedule this long is not a schedule.
  if (commands.size() > kMaxScheduleCommands)
    throw ScheduleError("schedule has " + std::to_string(commands.size()) + " commands; at most " +
                        std::to_string(kMaxScheduleCommands) + " are allowed");
  Schedule s;
  CommandParser parser(a);
  for (const RawCommand& c : commands) parser.apply(c, s);
  return s;
}

}  // namespace tessel
