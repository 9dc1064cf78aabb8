// Small tools the IR-to-IR passes share: what an expression mentions, renaming
// variables, and fresh names that no statement of a function uses yet.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tessel::ir {

/// Whether e mentions a variable named `name`.
bool mentions(const Expr& e, const std::string& name);
/// Whether e mentions any of `names`.
bool mentionsAny(const Expr& e, const std::set<std::string>& names);
/// Whether e calls a function (passes only move pure expressions).
bool hasCall(const Expr& e);
/// e with variables replaced by name.
Expr rename(const Expr& e, const std::map<std::string, Expr>& to);
/// Calls f on s and on every statement nested in it, outer first, bodies before else
/// bodies (the order the statements appear in the C code).
void forEachStmt(const Stmt& s, const std::function<void(const Stmt&)>& f);
/// Whether s or a statement nested in it satisfies pred.
bool anyStmt(const Stmt& s, const std::function<bool(const Stmt&)>& pred);
/// Whether an expression of s or of a statement nested in it mentions any of `names`.
bool stmtMentionsAny(const Stmt& s, const std::set<std::string>& names);
/// s with rename() applied to every expression in it.
Stmt renameIn(const Stmt& s, const std::map<std::string, Expr>& to);
/// The statements of a loop body: a block's list, or the one statement.
std::vector<Stmt> statementsOf(const Stmt& body);
/// `decl x = e` with e free of calls: safe to repeat or drop.
bool isPureDecl(const Stmt& s);
/// Structural equality.
bool sameExpr(const Expr& a, const Expr& b);
/// e is the variable p, or casts and loads of read-only arrays (pos arrays) applied to
/// such an e: nondecreasing in p for valid tensors.
bool monotoneIn(const Expr& e, const std::string& p);
/// [begin, end) is [F(x), F(x + 1)) for an F monotone in the variable x: the children
/// of position x in a pos array (nested pos arrays too).
bool childrenOf(const Expr& begin, const Expr& end, const Expr& x);

/// Fresh variable names: none that `root` declares or mentions, and none handed out before.
class FreshNames {
 public:
  explicit FreshNames(const Stmt& root);
  std::string operator()(const std::string& base);

 private:
  std::set<std::string> used_;
};

}  // namespace tessel::ir
