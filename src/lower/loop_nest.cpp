// Applying a schedule: each command rewrites the loop nest and is checked here.
#include "lower/loop_nest.h"

#include <algorithm>
#include <map>

#include "lower/level_format.h"
#include "lower/output_plan.h"
#include "lower/symbols.h"
#include "notation/products.h"
#include "tessel/error.h"

namespace tessel::lower {

int LoopNest::coordLoopOf(const IndexVar& v) const {
  for (size_t d = 0; d < loops.size(); d++)
    if (loops[d].kind == Loop::Kind::Coord && loops[d].of == v) return static_cast<int>(d);
  return -1;
}

int LoopNest::firstTouching(const IndexVar& v) const {
  for (size_t d = 0; d < loops.size(); d++)
    for (const IndexVar& t : loops[d].touches())
      if (t == v) return static_cast<int>(d);
  return static_cast<int>(loops.size());
}

int LoopNest::endOfLoopsFor(const std::vector<IndexVar>& vars) const {
  int end = 0;
  for (size_t d = 0; d < loops.size(); d++)
    for (const IndexVar& t : loops[d].touches())
      if (std::find(vars.begin(), vars.end(), t) != vars.end()) end = static_cast<int>(d) + 1;
  return end;
}

int LoopNest::parallelLoop() const {
  for (size_t d = 0; d < loops.size(); d++)
    if (loops[d].parallel) return static_cast<int>(d);
  return -1;
}

std::vector<const IndexStmtNode*> LoopNest::localWheres() const {
  std::vector<const IndexStmtNode*> out, todo = {stmt.get()};
  for (size_t k = 0; k < todo.size(); k++) {  // breadth first: outer wheres first
    const IndexStmtNode* n = todo[k];
    if (!n) continue;
    if (n->kind == IndexStmtNode::Kind::Forall) todo.push_back(n->body.get());
    if (n->kind == IndexStmtNode::Kind::Sequence)
      for (const IndexStmt& st : n->stmts) todo.push_back(st.get());
    if (n->kind == IndexStmtNode::Kind::Where) {
      if (n->temporary) out.push_back(n);
      todo.push_back(n->consumer.get());
      todo.push_back(n->producer.get());
    }
  }
  return out;
}

namespace {

/// Names that stand for fused loops (fuse) or their positions (fuse + pos).
struct Alias {
  IndexVar name;          ///< the fused (or fused-position) variable itself
  IndexVar outer, inner;  ///< the Coord loops' variables
  int access = -1;        ///< pos: the operand whose positions are iterated
};

class Scheduler {
 public:
  Scheduler(Problem& p, const Schedule& s) : p_(p), s_(s) {
    for (const IndexVar& v : p.order) {
      Loop l;
      l.var = l.of = v;
      nest_.loops.push_back(l);
    }
    nest_.schedule = s.str();
  }

  LoopNest run() {
    std::vector<Local> locals;
    for (const ScheduleCommand& c : s_.commands()) {
      cmd_ = &c;
      // A temporary at a loop is placed in the final nest, whatever comes after it.
      if ((c.kind == K::Precompute && c.expr.defined() && !c.vars.empty()) || c.kind == K::LoopFuse) {
        locals.push_back(localAt(c));
        continue;
      }
      apply(c);
    }
    IndexStmt body = assignStmt(p_.assignment.lhs, p_.assignment.rhs, false);
    nest_.stmt = foralls(0, static_cast<int>(nest_.loops.size()), body, [](const Loop&) { return true; });
    // Each fusion after the first rewrites a producer or consumer of an earlier one
    // (SparseLNR's recursion), found by the loop it names.
    for (const Local& l : locals) {
      cmd_ = l.command;
      ScheduleCommand at = *l.command;
      at.vars[0] = l.loop;
      if (!l.chunk)  // the loop as later commands named it: split's inner loop, pos's, bound's
        for (const Loop& x : nest_.loops)
          if (x.kind != Loop::Kind::Chunk && x.of == l.loop) at.vars[0] = x.var;
      nest_.stmt = placeLocal(nest_.stmt, at);
    }
    return nest_;
  }

 private:
  using K = ScheduleCommand::Kind;

  [[noreturn]] void fail(const std::string& why) const {
    throw ScheduleError("schedule command " + cmd_->str() + ": " + why);
  }

  /// A precompute at a loop or a loopfuse, placed once the other commands have built the
  /// loops: the loop it names when it is given. A loop over coordinates is found again
  /// by its variable (`of`) under the name later commands give it, so
  /// `loopfuse(i),split(i,i0,i1,4)` fuses at i1, as `split(i,i0,i1,4),loopfuse(i1)` does;
  /// a block loop (`chunk`) keeps its name.
  struct Local {
    const ScheduleCommand* command;
    IndexVar loop;  ///< a coordinate loop's variable (`of`), or the block loop's name
    bool chunk = false;
  };

  Local localAt(const ScheduleCommand& c) const {
    const IndexVar& at = c.vars[0];
    int d = require(at);
    if (d < 0) d = find(aliases_.at(at.id()).inner);  // a fused loop (fuse, pos): at its inner loop
    if (d < 0) fail(at.name() + " names no loop of the nest (loops now: " + loopNames() + ")");
    const Loop& l = nest_.loops[static_cast<size_t>(d)];
    const bool chunk = l.kind == Loop::Kind::Chunk;
    return {&c, chunk ? l.var : l.of, chunk};
  }

  std::string loopNames() const {
    std::string s;
    for (auto& l : nest_.loops) s += (s.empty() ? "" : ", ") + l.var.name();
    for (auto& [id, a] : aliases_) s += ", " + a.name.name();
    return s;
  }

  int find(const IndexVar& v) const {
    for (size_t d = 0; d < nest_.loops.size(); d++)
      if (nest_.loops[d].var == v) return static_cast<int>(d);
    return -1;
  }

  int require(const IndexVar& v) const {
    int d = find(v);
    if (d < 0 && !aliases_.count(v.id()))
      fail("unknown index variable " + v.name() + " (loops now: " + loopNames() + ")");
    return d;
  }

  void freshName(const IndexVar& v) const {
    if (find(v) >= 0 || aliases_.count(v.id()))
      fail("index variable " + v.name() + " already names a loop");
    for (const IndexVar& o : p_.order)
      if (o == v) fail("index variable " + v.name() + " already names a loop");
  }

  int accessOfTensor(const std::string& name) const {
    for (size_t a = 0; a < p_.inputs.size(); a++)
      if (p_.inputs[a].node->tensor.name() == name) return static_cast<int>(a);
    fail(name + " is not a tensor on the right-hand side");
  }

  const Format& formatOf(int access) const { return p_.args[p_.inputs[access].arg].format; }

  void apply(const ScheduleCommand& c) {
    switch (c.kind) {
      case K::Split: case K::Divide: return split(c);
      case K::Pos: return pos(c);
      case K::Fuse: return fuse(c);
      case K::Reorder: return reorder(c);
      case K::Precompute: return precompute(c);
      case K::Parallelize: return parallelize(c);
      case K::Unroll: return unroll(c);
      case K::Bound: return bound(c);
      case K::LoopFuse: return;  // placed in the final nest (run)
    }
  }

  void split(const ScheduleCommand& c) {
    const IndexVar &i = c.vars[0], &outer = c.vars[1], &inner = c.vars[2];
    if (c.amount < 1) fail("the " + std::string(c.kind == K::Split ? "block size" : "number of pieces") +
                           " must be at least 1");
    int d = require(i);
    freshName(outer);
    freshName(inner);
    if (outer == inner) fail("the outer and inner variables must differ");
    Loop chunk;
    chunk.kind = Loop::Kind::Chunk;
    chunk.var = outer;
    chunk.amount = c.amount;
    chunk.divide = c.kind == K::Divide;
    if (d < 0) {  // fuse + pos: blocks of the operand's positions over two levels
      const Alias& a = aliases_.at(i.id());
      if (a.access < 0) fail(i.name() + " fuses two loops; apply pos(" + i.name() + ", ..., tensor) before splitting it");
      int od = find(a.outer);
      chunk.overPositions = true;
      chunk.access = a.access;
      chunk.of = nest_.loops[od + 1].of;
      chunk.level = levelOf(a.access, chunk.of);
      chunk.fusedOuter = nest_.loops[od].of;
      nest_.loops.insert(nest_.loops.begin() + od, chunk);
      aliases_.erase(i.id());
      return;
    }
    Loop& l = nest_.loops[d];
    if (l.kind == Loop::Kind::Chunk) fail(i.name() + " is the outer loop of a split; split its inner loop instead");
    if (l.parallel || l.bound) fail("split " + i.name() + " before parallelize or bound");
    chunk.of = l.of;
    if (l.posAccess >= 0) {
      chunk.overPositions = true;
      chunk.access = l.posAccess;
      chunk.level = levelOf(l.posAccess, l.of);
      chunk.splitsRuns = !formatOf(l.posAccess).levelIsUnique(chunk.level);
      if (restricted(d, l.of)) fail(i.name() + " is already split; apply pos before split");
    }
    l.var = inner;
    nest_.loops.insert(nest_.loops.begin() + d, chunk);
  }

  /// A chunk above loop d already restricts v.
  bool restricted(int d, const IndexVar& v) const {
    for (int e = 0; e < d; e++)
      if (nest_.loops[e].kind == Loop::Kind::Chunk)
        for (auto& t : nest_.loops[e].touches())
          if (t == v) return true;
    return false;
  }

  int levelOf(int access, const IndexVar& v) const {
    const auto& lv = p_.inputs[access].levelVars;
    for (size_t k = 0; k < lv.size(); k++)
      if (lv[k] == v) return static_cast<int>(k);
    return -1;
  }

  /// pos(i, ip, B): B must drive the loop over i (a factor of the expression) and be
  /// stored by position at i.
  void checkDrives(int a, const IndexVar& v, int k) const {
    const std::string& b = p_.inputs[a].node->tensor.name();
    if (k < 0) fail(b + " is not indexed by " + v.name());
    if (makeLevelFormat(formatOf(a), k)->locatable())
      fail(b + "'s level " + std::to_string(k) + " (" + v.name() + ") is dense (" + formatOf(a).str() +
           "); pos iterates the stored positions of a compressed or singleton level");
    if (!isFactor(p_.assignment.rhs, p_.inputs[a].node))
      fail("the expression is not zero where " + b + " has no entry (" + b +
           " is not a factor of every term), so " + b + "'s positions do not cover the loop over " + v.name());
  }

  void pos(const ScheduleCommand& c) {
    const IndexVar &i = c.vars[0], &ip = c.vars[1];
    int d = require(i);
    freshName(ip);
    int a = accessOfTensor(c.tensor);
    if (d < 0) {
      Alias al = aliases_.at(i.id());
      if (al.access >= 0) fail(i.name() + " already iterates positions");
      int od = find(al.outer);
      const IndexVar &vi = nest_.loops[od].of, &vj = nest_.loops[od + 1].of;
      int k = levelOf(a, vj);
      checkDrives(a, vj, k);
      const Format& f = formatOf(a);
      if (k < 1 || levelOf(a, vi) != k - 1)
        fail(c.tensor + " does not store " + vi.name() + " in the level directly above " + vj.name() +
             " (" + f.str() + "), so its positions cannot cover the fused loop");
      if (!makeLevelFormat(f, k)->hasPosArray())
        fail(c.tensor + "'s level " + std::to_string(k) + " (" + vj.name() + ") has no positions array (" +
             f.str() + "); fuse+pos needs a compressed level");
      const tessel::LevelFormat& up = levelFormat(f, k - 1);
      if (!((up.full() && up.locatable()) || (up.hasPosArray() && up.unique())))
        fail(c.tensor + "'s level " + std::to_string(k - 1) + " (" + vi.name() +
             ") must be dense or compressed-unique for fuse+pos");
      al.access = a;
      al.name = ip;
      nest_.loops[od + 1].posAccess = a;
      aliases_.erase(i.id());
      aliases_[ip.id()] = al;
      return;
    }
    Loop& l = nest_.loops[d];
    if (l.kind == Loop::Kind::Chunk) fail(i.name() + " is the outer loop of a split; pos applies to a loop over coordinates");
    if (restricted(d, l.of)) fail(i.name() + " is already split; apply pos before split");
    checkDrives(a, l.of, levelOf(a, l.of));
    l.posAccess = a;
    l.var = ip;
  }

  void fuse(const ScheduleCommand& c) {
    const IndexVar &i = c.vars[0], &j = c.vars[1], &f = c.vars[2];
    int di = require(i), dj = require(j);
    freshName(f);
    if (di < 0 || dj < 0) fail("fuse applies to loops over coordinates, not to fused loops");
    if (dj != di + 1) fail("the loop over " + j.name() + " must be directly inside the loop over " + i.name());
    for (int d : {di, dj}) {
      const Loop& l = nest_.loops[d];
      if (l.kind != Loop::Kind::Coord || l.var != l.of || l.posAccess >= 0 || l.parallel || l.bound)
        fail(l.var.name() + " is already transformed; fuse the original loops first");
    }
    aliases_[f.id()] = Alias{f, i, j, -1};
  }

  void reorder(const ScheduleCommand& c) {
    std::vector<int> slots;
    for (const IndexVar& v : c.vars) {
      int d = require(v);
      if (d < 0) fail(v.name() + " is a fused loop; reorder the loops before fusing");
      if (std::count(slots.begin(), slots.end(), d)) fail(v.name() + " is listed twice");
      slots.push_back(d);
    }
    std::vector<int> sorted = slots;
    std::sort(sorted.begin(), sorted.end());
    std::vector<Loop> moved;
    for (int d : slots) moved.push_back(nest_.loops[d]);
    for (size_t k = 0; k < sorted.size(); k++) nest_.loops[sorted[k]] = moved[k];
    checkOrder();
    p_.order.clear();
    for (const Loop& l : nest_.loops)
      if (l.kind == Loop::Kind::Coord) p_.order.push_back(l.of);
  }

  /// Chunks come before the loops they restrict; operands' compressed levels after
  /// the levels above them.
  void checkOrder() const {
    const auto& L = nest_.loops;
    auto coordDepth = [&](const IndexVar& v) { return nest_.coordLoopOf(v); };
    for (size_t d = 0; d < L.size(); d++)
      if (L[d].kind == Loop::Kind::Chunk)
        for (const IndexVar& t : L[d].touches())
          if (coordDepth(t) < static_cast<int>(d))
            fail(L[d].var.name() + " splits " + t.name() + " and must stay outside the loop over it");
    auto check = [&](const AccessInfo& acc, const Format& f, bool output) {
      const auto& lv = acc.levelVars;
      const std::string& name = acc.node->tensor.name();
      for (size_t k = 1; k < lv.size(); k++) {
        if (levelFormat(f, static_cast<int>(k)).locatable()) continue;
        for (size_t u = 0; u < k; u++)
          if (coordDepth(lv[u]) > coordDepth(lv[k]))
            fail(name + " (" + f.str() + ") stores " + lv[u].name() + " before " + lv[k].name() +
                 " and its level for " + lv[k].name() + (output ? " is appended in order" : " has no random access") +
                 "; iterate " + lv[u].name() + " outside " + lv[k].name() + " or store " + name +
                 " in another mode order");
      }
    };
    for (size_t a = 0; a < p_.inputs.size(); a++) check(p_.inputs[a], formatOf(static_cast<int>(a)), false);
    check(p_.output, p_.args[0].format, true);
  }

  void precompute(const ScheduleCommand& c) {
    // A sub-expression's precompute splits the assignment into stages (Kernel), above
    // any one loop nest.
    if (c.vars.empty()) fail("a sub-expression is precomputed by Kernel::compile, not within one loop nest");
    const IndexVar& i = c.vars[0];
    if (std::find(p_.order.begin(), p_.order.end(), i) == p_.order.end())
      fail("unknown index variable " + i.name() + " (precompute names a variable of the assignment)");
    nest_.precompute = i;
  }

  static bool has(const std::vector<IndexVar>& vs, const IndexVar& v) {
    return std::find(vs.begin(), vs.end(), v) != vs.end();
  }

  /// forall(loops[from]) ... forall(loops[to - 1], body), skipping loops that `keep` refuses.
  template <typename Keep>
  IndexStmt foralls(int from, int to, IndexStmt body, const Keep& keep) const {
    for (int d = to - 1; d >= from; d--)
      if (keep(nest_.loops[d])) body = forallStmt(nest_.loops[d], d, body);
    return body;
  }

  /// Where a temporary at a loop goes: the forall over `at` and the perfect nest below
  /// it, down to the assignment (the whole kernel's, or a producer's or consumer's).
  struct Site {
    const IndexStmtNode* at = nullptr;
    std::vector<const IndexStmtNode*> below;  ///< the foralls under `at`, outer first
    const IndexStmtNode* leaf = nullptr;      ///< the assignment
    /// Depth of the loop whose where holds this nest (-1: the kernel's own assignment); the
    /// loops down to it bind fixed values for the assignment, not sums.
    int outer = -1;
    std::vector<const Loop*> above;  ///< the loops enclosing `at`, outer first (placeAt)
    bool root() const { return outer < 0; }
  };

  /// Appends the loops from `s` down to (not including) `target`; false if it is not in s.
  static bool pathTo(const IndexStmtNode* s, const IndexStmtNode* target, std::vector<const Loop*>& out) {
    if (s == target) return true;
    switch (s->kind) {
      case IndexStmtNode::Kind::Forall:
        out.push_back(&s->loop);
        if (pathTo(s->body.get(), target, out)) return true;
        out.pop_back();
        return false;
      case IndexStmtNode::Kind::Where:
        return pathTo(s->consumer.get(), target, out) || pathTo(s->producer.get(), target, out);
      case IndexStmtNode::Kind::Sequence:
        for (const IndexStmt& st : s->stmts)
          if (pathTo(st.get(), target, out)) return true;
        return false;
      case IndexStmtNode::Kind::Assign: return false;
    }
    return false;
  }

  /// The perfect nests holding a loop named `at`; `enclosing` gets whether some loop so
  /// named holds an earlier where instead.
  void sitesOf(const IndexStmt& s, const IndexVar& at, int outer, int last, std::vector<Site>& out,
               bool& enclosing) const {
    const IndexStmtNode* n = s.get();
    switch (n->kind) {
      case IndexStmtNode::Kind::Forall: {
        if (n->loop.var == at) {
          Site site{n, {}, nullptr, outer, {}};
          const IndexStmtNode* m = n->body.get();
          for (; m->kind == IndexStmtNode::Kind::Forall; m = m->body.get()) site.below.push_back(m);
          if (m->kind == IndexStmtNode::Kind::Assign) {
            site.leaf = m;
            out.push_back(site);
            return;
          }
          enclosing = true;
        }
        return sitesOf(n->body, at, outer, n->depth, out, enclosing);
      }
      case IndexStmtNode::Kind::Where:
        sitesOf(n->consumer, at, last, last, out, enclosing);
        return sitesOf(n->producer, at, last, last, out, enclosing);
      case IndexStmtNode::Kind::Sequence:
        for (const IndexStmt& st : n->stmts) sitesOf(st, at, last, last, out, enclosing);
        return;
      case IndexStmtNode::Kind::Assign: return;
    }
  }

  /// A copy of `s` with the node `target` replaced.
  static IndexStmt replaced(const IndexStmt& s, const IndexStmtNode* target, const IndexStmt& with) {
    if (s.get() == target) return with;
    switch (s->kind) {
      case IndexStmtNode::Kind::Forall: return forallStmt(s->loop, s->depth, replaced(s->body, target, with));
      case IndexStmtNode::Kind::Where:
        return whereStmt(replaced(s->consumer, target, with), replaced(s->producer, target, with), s->temporary,
                         s->temporaryAccess, s->unsplit);
      case IndexStmtNode::Kind::Sequence: {
        std::vector<IndexStmt> st;
        for (const IndexStmt& x : s->stmts) st.push_back(replaced(x, target, with));
        return sequenceStmt(st);
      }
      case IndexStmtNode::Kind::Assign: return s;
    }
    return s;
  }

  /// precompute(e, t, at) or loopfuse(at) placed in the nest `root`: at the one perfect
  /// nest below a loop named `at` where it applies.
  IndexStmt placeLocal(const IndexStmt& root, const ScheduleCommand& c) {
    const IndexVar& at = c.vars[0];
    if (find(at) < 0) fail("unknown index variable " + at.name() + " (loops now: " + loopNames() + ")");
    std::vector<Site> sites;
    bool enclosing = false;
    sitesOf(root, at, -1, -1, sites, enclosing);
    if (sites.empty() && enclosing)
      fail("the loop over " + at.name() + " encloses an earlier fusion or precompute at a loop; apply the one at " +
           at.name() + " first (fusions nest from the outside in)");
    if (sites.empty()) fail("no loop over " + at.name() + " is left in the nest (loops now: " + loopNames() + ")");
    if (sites.size() == 1) return placeAt(root, sites[0], c);
    // A variable both sides of a where iterate: the one side where the command applies.
    std::vector<IndexStmt> fits;
    std::string why;
    for (const Site& site : sites) try {
        fits.push_back(placeAt(root, site, c));
      } catch (const ScheduleError& e) {
        if (why.empty()) why = e.what();
      }
    if (fits.size() == 1) return fits[0];
    if (fits.empty()) throw ScheduleError(why);
    fail("the loop over " + at.name() + " runs in both the producer and the consumer of an earlier fusion, and " +
         "the command applies to both; name a loop that only one of them runs");
  }

  IndexStmt placeAt(const IndexStmt& root, Site site, const ScheduleCommand& c) {
    const Loop& l = site.at->loop;
    if (l.kind == Loop::Kind::Chunk && l.overPositions)
      fail(c.vars[0].name() + " blocks an operand's positions (pos); fuse at a loop over coordinates or the " +
           "outer loop of a split of coordinates");
    pathTo(root.get(), site.at, site.above);
    return precomputeAt(root, site, c.kind == K::LoopFuse ? fusedProducer(site, c) : c);
  }

  /// The rewrite of precompute(e, t, at): forall(at, S) becomes
  ///   forall(at, where(forall(.., lhs = rest * t(vars)), forall(.., t(vars) += e)))
  /// each side over the loops below `at` that its expression uses, in scheduled order.
  IndexStmt precomputeAt(const IndexStmt& root, const Site& site, const ScheduleCommand& c) {
    LocalTemporary local = localTemporary(site, c);
    std::vector<IndexExpr> have, mine, rest;
    factorsOf(site.leaf->rhs, have);
    for (const IndexExpr& f : have)
      (std::count(local.factors.begin(), local.factors.end(), f.get()) ? mine : rest).push_back(f);
    IndexExpr access;
    if (const int b = positionsFor(site, local); b >= 0) {
      // t at B's positions: the consumer reads it through an access with B's levels (B's
      // argument slot), so its loops iterate B's pattern.
      const AccessInfo in = p_.inputs[b];  // (a copy: the push_back below may move the vector)
      access = TensorVar(local.name, p_.outputType(), in.node->tensor.dims(), p_.args[in.arg].format)(local.vars);
      p_.inputs.push_back(AccessInfo{access.get(), in.arg, in.levelVars});
      local.positionsOf = in.node;
      local.positionsRead = access.get();
    } else {
      access = denseTemporary(local.name, p_.outputType(), local.vars, p_.assignment);
    }
    auto t = std::make_shared<const LocalTemporary>(std::move(local));
    rest.push_back(access);
    IndexExpr produced = productOf(mine), consumed = productOf(rest);
    // A loop over one operand's positions (pos) runs over coordinates in a side without
    // that operand (named by its variable there), which then has no blocks of those
    // positions to run.
    auto nestOver = [&](const IndexExpr& e, IndexStmt body) {
      const std::vector<const tessel::ExprNode*> in = accessesIn(e);
      auto holds = [&](int a) { return std::count(in.begin(), in.end(), p_.inputs[a].node) > 0; };
      for (auto l = site.below.rbegin(); l != site.below.rend(); ++l) {
        Loop loop = (*l)->loop;
        if (!mentions(e, loop.of) || (loop.overPositions && !holds(loop.access))) continue;
        if (loop.posAccess >= 0 && !holds(loop.posAccess)) {
          loop.posAccess = -1;
          loop.var = loop.of;
        }
        body = forallStmt(loop, (*l)->depth, body);
      }
      return body;
    };
    IndexStmt consumer = nestOver(consumed, assignStmt(site.leaf->lhs, consumed, site.leaf->accumulate));
    IndexStmt producer = nestOver(produced, assignStmt(access, produced, true));
    IndexStmt where = whereStmt(consumer, producer, t, access, site.at->body);
    names_.push_back(t->name);
    return replaced(root, site.at, forallStmt(site.at->loop, site.at->depth, where));
  }

  /// The producer's factor B at whose positions t can be stored (index into p_.inputs),
  /// or -1: t at the outermost loop, over blocks of rows (split or divide of i), t(i,j)
  /// indexed like B(i,j) stored as CSR (dense i, compressed unique j, identity order). B
  /// multiplies the producer, so t is zero wherever B has no entry, and each row of a
  /// block is one range of B's positions, which no other block writes.
  int positionsFor(const Site& site, const LocalTemporary& t) const {
    if (!site.root() || !site.above.empty() || !t.block || t.vars.size() != 2 || !(t.vars[0] == *t.block)) return -1;
    for (const tessel::ExprNode* n : t.factors) {
      const int a = p_.accessIndex(n);
      const Format& f = p_.args[p_.inputs[a].arg].format;
      if (n->mask.isMask || n->mask.complement || p_.maskTested(a)) continue;
      if (f.order() != 2) continue;
      const tessel::LevelFormat &rows = levelFormat(f, 0), &cols = levelFormat(f, 1);
      if (!rows.full() || !rows.locatable() || rows.hasFlagArray()) continue;  // dense rows
      if (!cols.hasPosArray() || !cols.unique() || cols.locatable()) continue;  // compressed, unique
      if (f.modeOrder() != std::vector<int>{0, 1} || p_.inputs[a].levelVars != t.vars || n->vars != t.vars) continue;
      return a;
    }
    return -1;
  }

  /// The variables of an assignment's left-hand side (the output's, or a temporary's).
  static std::vector<IndexVar> lhsVars(const Site& site) { return site.leaf->lhs.node().vars; }

  /// loopfuse(at[, t]) as the precompute at `at` it stands for: the consumer keeps the
  /// factors that use a variable of the left-hand side bound below `at` (SparseLNR: the
  /// consumer's remaining variables), the producer is every other tensor factor.
  ScheduleCommand fusedProducer(const Site& site, const ScheduleCommand& c) {
    const IndexVar& at = c.vars[0];
    const IndexExpr& rhs = site.leaf->rhs;
    std::vector<IndexExpr> have, producer;
    factorsOf(rhs, have);
    if (have.size() < 2) fail("the right-hand side " + rhs.str() + " is not a product to distribute");
    // At the outer loop of a split, the split variable is shared: each side runs the
    // block's own loop over it, and t holds the block.
    const bool blocks = site.at->loop.kind == Loop::Kind::Chunk;
    std::vector<IndexVar> below;
    for (const IndexStmtNode* l : site.below)
      if (has(lhsVars(site), l->loop.of) && !(blocks && l->loop.of == site.at->loop.of) && !has(below, l->loop.of))
        below.push_back(l->loop.of);
    std::string consumerText;
    for (const IndexExpr& f : have) {
      bool consumer = f.kind() != ExprKind::Access;
      for (const tessel::ExprNode* n : accessesIn(f))
        for (const IndexVar& v : n->vars) consumer |= has(below, v);
      if (!consumer) producer.push_back(f);
      else consumerText += (consumerText.empty() ? "" : " * ") + f.str();
    }
    const std::string what = site.root() ? "output variable" : "index of " + site.leaf->lhs.str();
    std::string belowText;
    for (const IndexVar& v : below) belowText += (belowText.empty() ? "" : ", ") + v.name();
    if (below.empty())
      fail("it splits nothing: no " + what + " is bound below " + at.name() +
           ", so no factor would be left for the consumer (fuse at an outer loop)");
    if (producer.empty())
      fail("it splits nothing: every factor uses an " + what + " bound below " + at.name() + " (" + belowText +
           "), so none is left for the producer");
    if (consumerText.empty())
      fail("it splits nothing: no factor uses the " + what + "s below " + at.name() + " (" + belowText + ")");
    ScheduleCommand pc = c;
    pc.expr = productOf(producer);
    if (pc.tensor.empty()) pc.tensor = "t_" + at.name();
    return pc;
  }

  LocalTemporary localTemporary(const Site& site, const ScheduleCommand& c) {
    const IndexVar& at = c.vars[0];
    const int d = site.at->depth;
    // Loops outside `at` may be split or iterate positions (they only choose which
    // iterations of the shared loops run); below it the producer and consumer each run
    // their own copies of the loops their expressions use, split and over positions as
    // scheduled, but not a block loop outside `at` over a variable bound below it (the
    // split would cross the fusion point), not one block loop over two levels' positions
    // (fuse + pos), and serially: each iteration of `at` has one temporary, which
    // parallel iterations below it would race on.
    for (const IndexStmtNode* below : site.below) {
      const Loop& l = below->loop;
      if (l.fusedOuter)
        fail(l.var.name() + " blocks the positions of two fused loops below " + at.name() +
             " (fuse + pos); fuse and split those loops outside " + at.name() + ", or split each one");
      if (l.parallel)
        throw ScheduleError("schedule command " + l.parallelCommand + ": " + l.var.name() + " runs below " +
                            at.name() + " (" + cmd_->str() + "), whose loops run once per temporary and cannot " +
                            "be parallel: their iterations would race on it; parallelize " + at.name() +
                            " or a loop outside it");
    }
    // (Blocks of coordinates of the variable whose blocks `at` splits further are nested,
    // not crossing.)
    const bool blocks = site.at->loop.kind == Loop::Kind::Chunk;
    for (const Loop* l : site.above)
      if (l->kind == Loop::Kind::Chunk)
        for (const IndexVar& v : l->touches())
          if (nest_.coordLoopOf(v) > d && !(blocks && !l->overPositions && v == site.at->loop.of))
            fail(l->var.name() + " splits " + v.name() + ", which runs below " + at.name() +
                 ", and runs outside it: a split may not cross the fusion point (keep " + l->var.name() +
                 " below " + at.name() + ", or fuse at " + v.name() + "'s loop or an outer one)");
    std::vector<IndexExpr> have, want;
    factorsOf(site.leaf->rhs, have);
    factorsOf(c.expr, want);
    LocalTemporary t;
    t.name = c.tensor;
    t.command = c.str();
    t.at = at;
    t.depth = d;
    // loopfuse's consumer holds every output loop below `at`: the plain nest runs them once
    // per entry of the fiber, the fused one once per fiber, so from 2 entries on fusing
    // does less work (<SpMM, GEMM> on luxembourg_osm, 1-3 entries per row: the plain nest
    // for fibers under 4 made it 0.55x the separate kernels).
    t.minFiber = c.kind == K::LoopFuse ? 2 : 4;
    if (site.at->loop.kind == Loop::Kind::Chunk) {
      t.block = site.at->loop.of;
      t.blockAmount = site.at->loop.amount;
      t.blockDivide = site.at->loop.divide;
    }
    std::vector<bool> used(have.size(), false);
    for (const IndexExpr& w : want) {
      size_t f = 0;
      while (f < have.size() && (used[f] || have[f].str() != w.str() || have[f].kind() != ExprKind::Access)) f++;
      if (f == have.size()) {  // appended piece by piece: "'" + std::string trips GCC 12's false -Wrestrict
        std::string why = "'";
        why += c.expr.str();
        why += "' is not some of the tensor factors of the right-hand side product ";
        why += site.leaf->rhs.str();
        fail(why);
      }
      used[f] = true;
      t.factors.push_back(have[f].get());
    }
    if (t.name.empty() || t.name == p_.args[0].tensor.name()) fail("the temporary needs a name of its own");
    for (const TensorArg& a : p_.args)
      if (a.tensor.name() == t.name) fail("the temporary needs a name that no tensor of the assignment has");
    if (std::count(names_.begin(), names_.end(), t.name)) fail("the temporary needs a name that no earlier temporary has (" + t.name + ")");
    // Variables of e: bound at or above `at`, else t's indices (the rest uses them) or
    // summed into t (only e uses them).
    std::vector<IndexVar> rest = lhsVars(site), mine;
    for (size_t f = 0; f < have.size(); f++)
      if (!used[f])
        for (const tessel::ExprNode* n : accessesIn(have[f])) rest.insert(rest.end(), n->vars.begin(), n->vars.end());
    for (const tessel::ExprNode* n : t.factors)
      for (const IndexVar& v : n->vars)
        if (!has(mine, v)) mine.push_back(v);
    for (const IndexVar& v : mine) {
      int vd = nest_.coordLoopOf(v);
      if (vd <= d) continue;
      (has(rest, v) ? t.vars : t.summed).push_back(v);
    }
    for (const IndexVar& v : mine) {
      const int vd = nest_.coordLoopOf(v);
      if (vd > site.outer && vd < d && !has(rest, v))  // t would hold one term of the sum per value of v
        fail("the loop over " + at.name() + " does not enclose the sum over " + v.name() +
             " (only '" + c.expr.str() + "' uses " + v.name() + ", and its loop runs outside); " +
             (c.kind == K::LoopFuse ? "fuse" : "precompute") + " at " + v.name() + " or an outer loop");
    }
    for (const IndexVar& v : lhsVars(site))  // a broadcast output variable would be skipped below `at`
      if (nest_.coordLoopOf(v) > d && !has(t.vars, v)) {
        bool inRest = false;
        for (size_t f = 0; f < have.size(); f++)
          if (!used[f])
            for (const tessel::ExprNode* n : accessesIn(have[f])) inRest |= has(n->vars, v);
        if (!inRest) fail("the output's " + v.name() + " appears in no factor below the loop over " + at.name());
      }
    return t;
  }

  int loopFor(const IndexVar& v) const {
    int d = require(v);
    if (d >= 0) return d;
    const Alias& a = aliases_.at(v.id());
    return find(a.outer);  // a fused loop runs as its outer loop
  }

  void parallelize(const ScheduleCommand& c) {
    int d = loopFor(c.vars[0]);
    int prev = nest_.parallelLoop();
    if (prev >= 0 && prev != d)
      fail("only one loop may run in parallel, and " + nest_.loops[prev].var.name() + " already does");
    Loop& l = nest_.loops[d];
    l.parallel = true;
    l.race = c.race;
    l.parallelCommand = c.str();
  }

  void unroll(const ScheduleCommand& c) {
    if (c.amount < 1) fail("the unroll factor must be at least 1");
    nest_.loops[loopFor(c.vars[0])].unroll = c.amount;
  }

  void bound(const ScheduleCommand& c) {
    if (c.amount < 1) fail("the bound must be at least 1");
    int d = require(c.vars[0]);
    if (d < 0 || nest_.loops[d].kind != Loop::Kind::Coord)
      fail("bound applies to a loop over coordinates");
    freshName(c.vars[1]);
    Loop& l = nest_.loops[d];
    l.bound = c.amount;
    l.boundKind = c.boundKind;
    l.var = c.vars[1];
  }

  Problem& p_;
  const Schedule& s_;
  LoopNest nest_;
  std::map<uint64_t, Alias> aliases_;  ///< by the alias variable's id
  std::vector<std::string> names_;     ///< the temporaries placed so far
  const ScheduleCommand* cmd_ = nullptr;
};

}  // namespace

std::vector<bool> fusionProducers(const Problem& p, const std::vector<IndexVar>& order, int depth) {
  auto has = [](const std::vector<IndexVar>& vs, const IndexVar& v) { return std::find(vs.begin(), vs.end(), v) != vs.end(); };
  std::vector<IndexVar> below;
  for (size_t k = static_cast<size_t>(depth) + 1; k < order.size(); k++)
    if (has(p.output.levelVars, order[k])) below.push_back(order[k]);
  std::vector<IndexExpr> have;
  factorsOf(p.assignment.rhs, have);
  std::vector<bool> out;
  for (const IndexExpr& f : have) {
    bool consumer = f.kind() != ExprKind::Access;
    for (const tessel::ExprNode* n : accessesIn(f))
      for (const IndexVar& v : n->vars) consumer |= has(below, v);
    out.push_back(!consumer);
  }
  return out;
}

LoopNest scheduleLoops(Problem& p, const Schedule& s) { return Scheduler(p, s).run(); }

}  // namespace tessel::lower
