// The distributed lowering: schedule commands by name over a loop order, then the SPMD
// program. See distribute_loops.h.
#include "lower/distribute_loops.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "notation/reductions.h"
#include "schedule/schedule_text.h"
#include "tessel/error.h"
#include "tessel/schedule.h"

namespace tessel::lower {

namespace {

std::string join(const std::vector<std::string>& v, const char* sep = ",") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

/// Arguments with `{a,b}` groups put back together (the text splitter knows parentheses only).
std::vector<std::string> groupBraces(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const std::string& a : args) {
    if (!out.empty() && out.back().front() == '{' && out.back().back() != '}')
      out.back() += "," + a;
    else
      out.push_back(a);
  }
  return out;
}

std::vector<std::string> listOf(const std::string& arg) {
  if (arg.size() >= 2 && arg.front() == '{' && arg.back() == '}') {
    std::vector<std::string> items;
    std::string inner = arg.substr(1, arg.size() - 2), cur;
    for (char c : inner + ",") {
      if (c == ',') {
        size_t b = cur.find_first_not_of(" \t"), e = cur.find_last_not_of(" \t");
        items.push_back(b == std::string::npos ? "" : cur.substr(b, e - b + 1));
        cur.clear();
      } else {
        cur += c;
      }
    }
    return items;
  }
  return {arg};
}

struct SplitRec {
  std::string parent, outer, inner;
  bool divide = true;
  int64_t amount = 1;
};

struct LoopVar {
  int space = -1;
  bool outer = false;  ///< the outer loop of a split/divide
};

/// The schedule applied to loop names.
class DistScheduler {
 public:
  DistScheduler(const Assignment& a, const Machine& m) : a_(a), m_(m) {
    for (const IndexVar& v : freeVars(a)) addSpace(v);
    for (const IndexVar& v : reductionVars(a)) addSpace(v);
    tensorNames_.insert(a.lhsNode().tensor.name());
    for (const ExprNode* n : rhsAccesses(a)) tensorNames_.insert(n->tensor.name());
  }

  void apply(const ScheduleText& c) {
    cmd_ = &c;
    const std::string& n = c.name;
    std::vector<std::string> args = groupBraces(c.args);
    if ((n == "split" || n == "divide") && fusedPos_ && args.size() == 4 && args[0] == fusedPos_->pos) {
      // SpDISTAL's non-zero split: fuse(i,j,f),pos(f,fp,B),divide(fp,fo,fi,P). The blocks of
      // B's positions are its pieces under (xy)->~f, so the loop over the leading fused
      // variable is divided, and each run takes the rows each piece spans from the data
      // (the other fused variables run whole inside a piece).
      if (n != "divide") fail("split the non-zeros of " + fusedPos_->tensor + " into pieces with divide(" +
                              fusedPos_->pos + ",..,..,P)");
      splitLoop(fusedPos_->vars[0], args[1], args[2], true, number(args[3]));
      fusedPos_.reset();
    } else if (n == "split" || n == "divide") {
      arity(args, 4);
      splitLoop(args[0], args[1], args[2], n == "divide", number(args[3]));
    } else if (n == "fuse" && !leafStarted_) {
      if (args.size() < 3) fail("fuse needs the loops to fuse and the fused loop's name");
      fuse_ = std::vector<std::string>(args.begin(), args.end() - 1);
      fuseName_ = args.back();
      for (const std::string& v : *fuse_) {
        loop(v);
        if (vars_.at(v).outer || innermost_[static_cast<size_t>(vars_.at(v).space)] != v)
          fail(v + " is split; fuse the loops of index variables before splitting them");
      }
      auto at = std::find(order_.begin(), order_.end(), (*fuse_)[0]);
      for (size_t k = 0; k < fuse_->size(); k++)
        if (at + static_cast<long>(k) == order_.end() || *(at + static_cast<long>(k)) != (*fuse_)[k])
          fail("the fused loops must be adjacent, in this order (loops: " + join(order_) + ")");
      fresh(fuseName_);
    } else if (n == "pos" && fuse_ && args.size() == 3 && args[0] == fuseName_) {
      if (!tensorNames_.count(args[2])) fail("'" + args[2] + "' is not a tensor of the assignment");
      fresh(args[1]);
      fusedPos_ = FusedPos{*fuse_, args[1], args[2]};
      fuse_.reset();
    } else if (n == "reorder") {
      if (args.size() < 2) fail("reorder needs at least two loops");
      reorder(args);
      reordered_ = true;
    } else if (n == "distribute") {
      distribute(args);
    } else if (n == "communicate") {
      arity(args, 2);
      std::string at = loop(args[1]);
      for (const std::string& t : listOf(args[0])) {
        if (!tensorNames_.count(t)) fail("'" + t + "' is not a tensor of the assignment");
        if (communicate_.count(t)) fail("tensor " + t + " is already communicated at " + communicate_[t]);
        communicate_[t] = at;
        communicateText_[t] = c.text;
      }
    } else if (n == "rotate") {
      arity(args, 3);
      rotate(args);
    } else if (n == "substitute") {
      arity(args, 2);
      std::string kind = args[1];
      std::transform(kind.begin(), kind.end(), kind.begin(), ::tolower);
      if (kind != "blas" && kind != "gemm" && kind != "dgemm" && kind != "gemv" && kind != "dgemv")
        fail("unknown substitute '" + args[1] + "' (blas, gemm, gemv)");
      substitute_ = listOf(args[0]);
      substituteText_ = c.text;
    } else if (n == "loopfuse") {
      // SparseLNR's fusion of the leaf's loops: checked against the loops now, placed at
      // finish (the loop may be split or distributed later: the fusion follows its inner
      // loop). Not a leaf start: fuse/pos after it may still split non-zeros over ranks.
      if (args.empty() || args.size() > 2) fail("expected loopfuse(at) or loopfuse(at,temporary)");
      loop(args[0]);
      if (std::find(distributed_.begin(), distributed_.end(), args[0]) != distributed_.end())
        fail("loop " + args[0] + " is distributed over the machine and runs above the leaf kernel; loopfuse fuses "
             "the leaf's loops (fuse at a loop below the distributed ones)");
      loopfuses_.push_back(leafCommands_.size());
      leafCommands_.push_back(c);
    } else if (n == "parallelize" || n == "unroll" || n == "bound" || n == "pos" || n == "fuse" || n == "precompute") {
      leafStarted_ = true;
      leafCommands_.push_back(c);
    } else {
      fail("unknown command '" + n +
           "' (distributed schedules know divide, split, reorder, distribute, communicate, rotate, substitute, "
           "and for the leaf parallelize, unroll, bound, precompute, loopfuse)");
    }
  }

  spmd::Program finish(const std::map<std::string, Placement>& placement);
  /// A fuse(...) or pos(f, ...) at the distributed level left without its divide.
  void requireFusionDone() const {
    if (fuse_) fail("fuse(" + join(*fuse_) + "," + fuseName_ + ") at the distributed level needs pos(" + fuseName_ +
                    ",fp,T) and divide(fp,fo,fi,P) after it");
    if (fusedPos_) fail("pos(..," + fusedPos_->pos + "," + fusedPos_->tensor + ") needs divide(" + fusedPos_->pos +
                        ",fo,fi,P) after it");
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw ScheduleError("schedule command " + (cmd_ ? cmd_->text : std::string("?")) + ": " + why);
  }
  void arity(const std::vector<std::string>& args, size_t n) const {
    if (args.size() != n) fail("expected " + std::to_string(n) + " arguments, got " + std::to_string(args.size()));
  }
  int64_t number(const std::string& t) const { return positiveArgument(*cmd_, t); }
  void addSpace(const IndexVar& v) {
    spmd::IndexSpace s;
    s.name = v.name();
    s.extent = extentOf(a_, v);
    vars_[v.name()] = LoopVar{static_cast<int>(spaces_.size()), false};
    innermost_.push_back(v.name());
    chains_.emplace_back();
    spaces_.push_back(s);
    order_.push_back(v.name());
  }
  /// A loop of the current order, by name.
  std::string loop(const std::string& name) const {
    if (std::find(order_.begin(), order_.end(), name) == order_.end()) {
      if (rotatedAway_.count(name))
        fail("loop " + name + " was rotated into " + rotatedAway_.at(name) + "; refer to " + rotatedAway_.at(name));
      fail("'" + name + "' is not a loop here (loops: " + join(order_) + ")");
    }
    return name;
  }
  void fresh(const std::string& name) const {
    bool ok = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
    for (char ch : name) ok &= std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
    if (!ok) fail("'" + name + "' is not an index variable name");
    if (vars_.count(name) || rotatedAway_.count(name)) fail("'" + name + "' already names a loop");
  }
  void splitLoop(const std::string& v, const std::string& o, const std::string& in, bool divide, int64_t amount) {
    loop(v);
    const LoopVar lv = vars_.at(v);
    if (innermost_[static_cast<size_t>(lv.space)] != v)
      fail(v + " is " + (lv.outer ? "the outer loop of a split" : "already split") +
           "; split the innermost loop of " + spaces_[static_cast<size_t>(lv.space)].name + " (" +
           innermost_[static_cast<size_t>(lv.space)] + ")");
    fresh(o);
    fresh(in);
    if (o == in) fail("the outer and inner loops need different names");
    auto at = std::find(order_.begin(), order_.end(), v);
    *at = in;
    order_.insert(at, o);
    vars_[o] = LoopVar{lv.space, true};
    vars_[in] = LoopVar{lv.space, false};
    innermost_[static_cast<size_t>(lv.space)] = in;
    chains_[static_cast<size_t>(lv.space)].push_back(SplitRec{v, o, in, divide, amount});
  }
  void reorder(const std::vector<std::string>& names) {
    std::vector<size_t> at;
    std::set<std::string> seen;
    for (const std::string& n : names) {
      if (!seen.insert(loop(n)).second) fail("loop " + n + " is named twice");
      at.push_back(static_cast<size_t>(std::find(order_.begin(), order_.end(), n) - order_.begin()));
    }
    std::sort(at.begin(), at.end());
    for (size_t k = 0; k < names.size(); k++) order_[at[k]] = names[k];
  }
  void distribute(const std::vector<std::string>& args) {
    if (args.size() == 1 && args[0].front() != '{') {
      std::string v = loop(args[0]);
      const SplitRec* s = splitOf(v);
      if (!s || !s->divide)
        fail(v + " is not the outer loop of a divide: distribute(io) needs divide(i,io,ii,N) first");
      markDistributed(v);
      return;
    }
    if (args.size() != 3 && args.size() != 4)
      fail("expected distribute(io) or distribute({i,j},{io,jo},{ii,ji}[,Grid(2,2)])");
    std::vector<std::string> is = listOf(args[0]), os = listOf(args[1]), ins = listOf(args[2]);
    if (is.size() != os.size() || is.size() != ins.size())
      fail("the three lists must have one name per distributed variable");
    if (args.size() == 4) {
      std::string g = args[3];
      if (g.rfind("Grid(", 0) != 0 || g.back() != ')') fail("the last argument must be Grid(...), e.g. Grid(2,2)");
      std::string dims = g.substr(5, g.size() - 6);
      std::replace(dims.begin(), dims.end(), ',', 'x');
      dims.erase(std::remove(dims.begin(), dims.end(), ' '), dims.end());
      Grid grid = Grid::parse(dims);
      if (!(grid == m_.grid))
        fail("names " + g + ", but the machine is a " + m_.grid.str() + " grid (-m)");
    }
    const size_t first = distributed_.size();
    if (first + is.size() > static_cast<size_t>(m_.grid.order()))
      fail("distributes " + std::to_string(first + is.size()) + " loops over a machine of " +
           std::to_string(m_.grid.order()) + " dimension(s) (" + m_.grid.str() + ")");
    for (size_t k = 0; k < is.size(); k++)
      splitLoop(is[k], os[k], ins[k], true, m_.grid.dim(static_cast<int>(first + k)));
    std::vector<std::string> newOrder = os;
    newOrder.insert(newOrder.end(), ins.begin(), ins.end());
    if (newOrder.size() >= 2) reorder(newOrder);
    for (const std::string& o : os) markDistributed(o);
  }
  void markDistributed(const std::string& v) {
    if (std::find(distributed_.begin(), distributed_.end(), v) != distributed_.end()) fail(v + " is already distributed");
    const int g = static_cast<int>(distributed_.size());
    if (g >= m_.grid.order())
      fail("the machine " + m_.grid.str() + " has " + std::to_string(m_.grid.order()) +
           " dimension(s); every one is already distributed over");
    const SplitRec* s = splitOf(v);
    if (s->amount != m_.grid.dim(g))
      fail(v + " has " + std::to_string(s->amount) + " pieces, but machine dimension " + std::to_string(g) + " has " +
           std::to_string(m_.grid.dim(g)) + " ranks");
    distributed_.push_back(v);
  }
  /// The loop a loopfuse named now stands for: its rotated name, or, once split, the
  /// inner loop of the split (the loop that carries its variable into the leaf).
  std::string fusedLoop(std::string v) const {
    for (int guard = 0; guard < 1000; guard++) {
      if (rotatedAway_.count(v)) {
        v = rotatedAway_.at(v);
        continue;
      }
      if (std::find(order_.begin(), order_.end(), v) != order_.end()) return v;
      const SplitRec* r = nullptr;
      for (const auto& chain : chains_)
        for (const SplitRec& s : chain)
          if (s.parent == v) r = &s;
      if (!r) return v;
      v = r->inner;
    }
    return v;
  }
  /// Each loopfuse at the loop it stands for, which must run in the leaf (below
  /// `boundary`, the deepest loop above it): its argument renamed for the leaf.
  void placeLoopFuses(int boundary, const std::function<std::string(const std::string&)>& rename) {
    for (size_t k : loopfuses_) {
      ScheduleText& c = leafCommands_[k];
      const std::string named = c.args[0], at = fusedLoop(named);
      const auto pos = std::find(order_.begin(), order_.end(), at) - order_.begin();
      if (pos <= boundary) {
        const bool dist = std::find(distributed_.begin(), distributed_.end(), at) != distributed_.end();
        throw ScheduleError(
            "schedule command " + c.text + ": loop " + at + (at != named ? " (what " + named + " became)" : "") +
            (dist ? " is distributed over the machine" : " is a step loop (a tensor is communicated at or below it)") +
            " and runs above the leaf kernel, but loopfuse fuses loops inside the leaf: fuse at a loop below " +
            order_[static_cast<size_t>(boundary)] + (rotateBy_.count(at) ? " (a rotated loop runs above the leaf)" : ""));
      }
      c.args[0] = rename(at);
    }
  }
  const SplitRec* splitOf(const std::string& outer) const {
    for (const auto& chain : chains_)
      for (const SplitRec& s : chain)
        if (s.outer == outer) return &s;
    return nullptr;
  }
  void rotate(const std::vector<std::string>& args) {
    std::string t = loop(args[0]);
    if (!vars_.at(t).outer) fail(t + " is not the outer loop of a split or divide");
    std::vector<std::string> by = listOf(args[1]);
    for (const std::string& b : by) loop(b);
    fresh(args[2]);
    const std::string& r = args[2];
    *std::find(order_.begin(), order_.end(), t) = r;
    vars_[r] = vars_.at(t);
    vars_.erase(t);
    for (auto& chain : chains_)
      for (SplitRec& s : chain)
        if (s.outer == t) s.outer = r;
    for (auto& d : distributed_)
      if (d == t) fail(t + " is distributed; rotate a sequential loop");
    rotatedAway_[t] = r;
    rotateBy_[r] = by;
  }

  const Assignment& a_;
  const Machine& m_;
  const ScheduleText* cmd_ = nullptr;
  std::set<std::string> tensorNames_;
  std::vector<spmd::IndexSpace> spaces_;
  std::vector<std::vector<SplitRec>> chains_;
  std::vector<std::string> innermost_;
  std::map<std::string, LoopVar> vars_;
  std::vector<std::string> order_;
  std::vector<std::string> distributed_;
  std::map<std::string, std::string> rotatedAway_;
  std::map<std::string, std::vector<std::string>> rotateBy_;
  std::map<std::string, std::string> communicate_, communicateText_;
  std::optional<std::vector<std::string>> substitute_;
  std::string substituteText_;
  std::vector<ScheduleText> leafCommands_;
  std::vector<size_t> loopfuses_;  ///< the loopfuse commands among leafCommands_
  bool reordered_ = false;  ///< the schedule has a reorder command (distribute's own moves aside)
  bool leafStarted_ = false;  ///< a leaf command came: fuse/pos after it are the leaf's
  std::optional<std::vector<std::string>> fuse_;  ///< fuse(i,j,f) awaiting its pos
  std::string fuseName_;
  struct FusedPos {
    std::vector<std::string> vars;
    std::string pos, tensor;
  };
  std::optional<FusedPos> fusedPos_;  ///< pos(f,fp,B) awaiting its divide
};

/// Top-level terms of the right-hand side (explicit reductions), with their signs.
void termsOf(const IndexExpr& e, bool negative, std::vector<IndexExpr>& out) {
  const ExprNode& n = e.node();
  if (n.kind == ExprKind::Add) {
    termsOf(n.a, negative, out);
    termsOf(n.b, negative, out);
  } else if (n.kind == ExprKind::Sub) {
    termsOf(n.a, negative, out);
    termsOf(n.b, !negative, out);
  } else if (n.kind == ExprKind::Neg) {
    termsOf(n.a, !negative, out);
  } else {
    out.push_back(negative ? -e : e);
  }
}

void varsIn(const IndexExpr& e, std::set<std::string>& out) {
  const ExprNode& n = e.node();
  if (n.kind == ExprKind::Access)
    for (const IndexVar& v : n.vars) out.insert(v.name());
  if (n.a.defined()) varsIn(n.a, out);
  if (n.b.defined()) varsIn(n.b, out);
}

/// dgemm's view of the leaf: out(X,Y) = sum(K, a * b), groups of adjacent dimensions.
std::optional<spmd::GemmLeaf> gemmOf(const Assignment& leaf, const spmd::Program& p, std::string& why) {
  RootReduction r = rootReduction(explicitReductions(leaf));
  const ExprNode& body = r.body.node();
  if (body.kind != ExprKind::Mul || body.a.node().kind != ExprKind::Access || body.b.node().kind != ExprKind::Access) {
    why = "the leaf is not one product of two tensors";
    return std::nullopt;
  }
  auto spaceOf = [&](const IndexVar& v) {
    for (size_t s = 0; s < p.spaces.size(); s++)
      if (p.spaces[s].name == v.name()) return static_cast<int>(s);
    return -1;
  };
  auto spaces = [&](const std::vector<IndexVar>& vs) {
    std::vector<int> o;
    for (const IndexVar& v : vs) o.push_back(spaceOf(v));
    return o;
  };
  auto tensorIndex = [&](const std::string& name) {
    for (size_t t = 0; t < p.tensors.size(); t++)
      if (p.tensors[t].name == name) return static_cast<int>(t);
    return -1;
  };
  std::vector<int> out = spaces(leaf.lhsNode().vars), K = spaces(r.vars);
  for (int swap = 0; swap < 2; swap++) {
    const ExprNode& A = swap ? body.b.node() : body.a.node();
    const ExprNode& B = swap ? body.a.node() : body.b.node();
    std::vector<int> a = spaces(A.vars), b = spaces(B.vars);
    auto notK = [&](const std::vector<int>& v) {
      std::vector<int> o;
      for (int s : v)
        if (std::find(K.begin(), K.end(), s) == K.end()) o.push_back(s);
      return o;
    };
    std::vector<int> X = notK(a), Y = notK(b), XY = X;
    XY.insert(XY.end(), Y.begin(), Y.end());
    if (XY != out) continue;
    auto cat = [](std::vector<int> u, const std::vector<int>& v) {
      u.insert(u.end(), v.begin(), v.end());
      return u;
    };
    spmd::GemmLeaf g;
    if (a == cat(X, K)) g.transA = false;
    else if (a == cat(K, X)) g.transA = true;
    else continue;
    if (b == cat(K, Y)) g.transB = false;
    else if (b == cat(Y, K)) g.transB = true;
    else continue;
    g.out = 0;
    g.a = tensorIndex(A.tensor.name());
    g.b = tensorIndex(B.tensor.name());
    g.x = X;
    g.y = Y;
    g.k = K;
    return g;
  }
  why = "its dimensions are not (X,K) x (K,Y) -> (X,Y) in some order";
  return std::nullopt;
}

spmd::Program DistScheduler::finish(const std::map<std::string, Placement>& placement) {
  cmd_ = nullptr;
  auto failFinal = [](const std::string& why) -> void { throw ScheduleError("distributed schedule: " + why); };
  spmd::Program p;
  p.grid = m_.grid;
  p.threads = m_.threads;
  p.accumulate = a_.accumulate;
  const int D = static_cast<int>(distributed_.size());
  if (D != m_.grid.order())
    failFinal("the machine " + m_.grid.str() + " has " + std::to_string(m_.grid.order()) + " dimension(s), but " +
              std::to_string(D) + " loop(s) are distributed" + (D ? " (" + join(distributed_) + ")" : "") +
              ": distribute one loop per machine dimension");
  for (int g = 0; g < D; g++)
    if (order_[static_cast<size_t>(g)] != distributed_[static_cast<size_t>(g)])
      failFinal("distributed loops must be the outermost, in machine order (" + join(distributed_) +
                "), but the loops are " + join(order_));
  // The leaf starts below the deepest loop a tensor is communicated at.
  int boundary = D - 1;
  for (const auto& [t, at] : communicate_) {
    int pos = static_cast<int>(std::find(order_.begin(), order_.end(), at) - order_.begin());
    boundary = std::max(boundary, pos);
  }
  for (int l = D; l <= boundary; l++) {
    const std::string& name = order_[static_cast<size_t>(l)];
    if (!vars_.at(name).outer) {
      std::string who;
      for (const auto& [t, at] : communicate_)
        if (std::find(order_.begin(), order_.end(), at) - order_.begin() >= l) who = communicateText_.at(t);
      throw ScheduleError("schedule command " + who + ": loop " + name +
                          " would run above the leaf, but only distributed loops and the outer loops of split or "
                          "divide may (communicate at an outer loop, or reorder)");
    }
  }
  std::map<std::string, int> loopIndex;
  for (int l = 0; l <= boundary; l++) {
    const std::string& name = order_[static_cast<size_t>(l)];
    loopIndex[name] = l;
    spmd::Loop loop;
    loop.name = name;
    loop.gridDim = l < D ? l : -1;
    p.loops.push_back(loop);
  }
  // Index spaces: their chains of splits above the leaf; the rest schedule the leaf.
  std::vector<std::string> leafSplits;
  std::vector<int> leafSplitSpace;  // the index space of each leaf split
  std::map<std::string, std::string> leafName;  // a leaf loop -> its name in the leaf assignment
  for (size_t s = 0; s < spaces_.size(); s++) {
    spmd::IndexSpace sp = spaces_[s];
    std::string current = sp.name;
    int64_t ext = sp.extent;
    bool inLeaf = false;
    int last = -1;
    for (const SplitRec& r : chains_[s]) {
      auto at = loopIndex.find(r.outer);
      if (at == loopIndex.end()) {
        inLeaf = true;
        std::string parent = r.parent == current ? sp.name : r.parent;
        leafSplits.push_back(std::string(r.divide ? "divide(" : "split(") + parent + "," + r.outer + "," + r.inner +
                             "," + std::to_string(r.amount) + ")");
        leafSplitSpace.push_back(static_cast<int>(s));
        continue;
      }
      if (inLeaf || at->second < last)
        failFinal("the splits of " + sp.name + " must run outer to inner: " + r.outer + " is above the leaf but " +
                  "an earlier split of " + sp.name + " is not (reorder)");
      last = at->second;
      spmd::Loop& loop = p.loops[static_cast<size_t>(at->second)];
      loop.count = r.divide ? r.amount : (ext + r.amount - 1) / r.amount;
      if (loop.count < 1) loop.count = 1;
      ext = r.divide ? (ext + r.amount - 1) / r.amount : std::min(ext, r.amount);
      sp.chain.push_back(spmd::SplitStep{at->second, r.divide, r.amount, {}});
      current = r.inner;
    }
    leafName[current] = sp.name;
    p.spaces.push_back(sp);
  }
  for (auto& [r, by] : rotateBy_) {
    auto at = loopIndex.find(r);
    if (at == loopIndex.end()) failFinal("rotate: " + r + " must run above the leaf (communicate at it)");
    for (const std::string& b : by) {
      auto bi = loopIndex.find(b);
      if (bi == loopIndex.end() || bi->second >= at->second)
        failFinal("rotate: " + r + " is rotated by " + b + ", which must be a loop outside it");
      p.loops[static_cast<size_t>(at->second)].rotateBy.push_back(bi->second);
    }
  }
  p.distributedLoops = D;
  // Tensors: the output, then the right-hand side's in order of first appearance.
  std::vector<const ExprNode*> accesses{&a_.lhsNode()};
  for (const ExprNode* n : rhsAccesses(a_)) accesses.push_back(n);
  std::set<std::string> seen;
  for (const ExprNode* n : accesses) {
    const std::string& name = n->tensor.name();
    if (!seen.insert(name).second) continue;
    spmd::TensorUse u;
    u.name = name;
    u.output = n == &a_.lhsNode();
    u.dims = n->tensor.dims();
    for (const IndexVar& v : n->vars) {
      int s = vars_.at(v.name()).space;
      if (std::find(u.dimSpace.begin(), u.dimSpace.end(), s) != u.dimSpace.end())
        throw NotationError("distributed: " + name + " is indexed twice by " + v.name() + " (a diagonal access)");
      u.dimSpace.push_back(s);
    }
    auto c = communicate_.find(name);
    u.level = c == communicate_.end() ? D - 1 : loopIndex.at(c->second);
    auto pl = placement.find(name);
    if (pl != placement.end()) {
      u.grid = pl->second.grid;
      u.distribution = pl->second.distribution;
    } else {
      u.grid = m_.grid;
    }
    if (u.grid.size() != m_.grid.size())
      throw DistributionError("tensor " + name + " is distributed over a " + u.grid.str() + " grid (" +
                              std::to_string(u.grid.size()) + " ranks), but the machine " + m_.grid.str() + " has " +
                              std::to_string(m_.grid.size()));
    if (u.distribution.defined()) u.distribution.check(name, static_cast<int>(u.dims.size()), u.grid);
    p.tensors.push_back(u);
  }
  std::vector<IndexExpr> productTerms;
  termsOf(explicitReductions(a_), false, productTerms);
  if (productTerms.size() == 1)
    for (size_t t = 1; t < p.tensors.size(); t++) {
      spmd::TensorUse& u = p.tensors[t];
      for (size_t f = 1; f < p.tensors.size() && u.rowFilter < 0 && !u.dimSpace.empty(); f++) {
        if (f == t) continue;
        const auto& spaces = p.tensors[f].dimSpace;
        auto at = std::find(spaces.begin(), spaces.end(), u.dimSpace[0]);
        if (at == spaces.end()) continue;
        u.rowFilter = static_cast<int>(f);
        u.rowFilterDim = static_cast<int>(at - spaces.begin());
      }
    }
  // The leaf: its loops in order, named as in the assignment.
  std::vector<std::string> leafLoops;
  for (size_t l = static_cast<size_t>(boundary) + 1; l < order_.size(); l++) {
    auto it = leafName.find(order_[l]);
    leafLoops.push_back(it == leafName.end() ? order_[l] : it->second);
  }
  auto rename = [&](const std::string& x) {
    auto it = leafName.find(x);
    return it == leafName.end() ? x : it->second;
  };
  placeLoopFuses(boundary, rename);
  // The leaf's single-node schedule over the index spaces in `used`: a leaf variant that
  // lacks a variable (the D(i,j) of B(i,k)*C(k,j) + D(i,j) with k split above the leaf)
  // has no loops over it to split, reorder or parallelize.
  auto spaceOfLoop = [&](const std::string& loop) {
    auto it = vars_.find(loop);
    return it == vars_.end() ? -1 : it->second.space;
  };
  auto leafScheduleOver = [&](const std::set<int>& used) {
    std::vector<std::string> cmds, loops;
    for (size_t k = 0; k < leafSplits.size(); k++)
      if (used.count(leafSplitSpace[k])) cmds.push_back(leafSplits[k]);
    for (size_t l = static_cast<size_t>(boundary) + 1; l < order_.size(); l++)
      if (used.count(spaceOfLoop(order_[l]))) loops.push_back(leafLoops[l - static_cast<size_t>(boundary) - 1]);
    // The leaf loops in the assignment's own order, unsplit, are left to the single-node
    // default (which orders sparse operands' loops concordantly: SpGEMM's i, k, j);
    // any other order is the user's and is kept.
    // A fused leaf keeps the default order through its splits too: the assignment's order
    // puts A(i,l)'s l above j, where loopfuse(j) would split nothing.
    const bool fuses = std::any_of(leafCommands_.begin(), leafCommands_.end(),
                                   [](const ScheduleText& c) { return c.name == "loopfuse"; });
    bool natural = fuses ? !reordered_ : cmds.empty();
    for (size_t k = 1; k < loops.size(); k++)
      natural &= fuses ? spaceOfLoop(loops[k - 1]) <= spaceOfLoop(loops[k])
                       : spaceOfLoop(loops[k - 1]) < spaceOfLoop(loops[k]);
    if (loops.size() >= 2 && !natural) cmds.push_back("reorder(" + join(loops) + ")");
    for (const ScheduleText& c : leafCommands_) {
      std::vector<std::string> args;
      bool keep = true;
      for (const std::string& x : c.args) {
        if (c.name == "loopfuse" && !args.empty()) {  // the temporary's name, not a loop
          args.push_back(x);
          continue;
        }
        int sp = spaceOfLoop(x);
        keep &= sp < 0 || used.count(sp) > 0;
        args.push_back(c.name == "loopfuse" ? x : rename(x));
      }
      if (keep) cmds.push_back(c.name + "(" + join(args) + ")");
    }
    return join(cmds);
  };
  // Leaf variants: terms that do not use a summed variable split above the leaf run at
  // its first block only (A = B*C + D adds D once).
  std::set<std::string> splitSums;
  for (const IndexVar& v : reductionVars(a_))
    if (!p.spaces[static_cast<size_t>(vars_.at(v.name()).space)].chain.empty()) splitSums.insert(v.name());
  std::vector<IndexExpr> terms;
  termsOf(explicitReductions(a_), false, terms);
  std::map<std::vector<int>, IndexExpr> variants;
  for (const IndexExpr& term : terms) {
    std::set<std::string> used;
    varsIn(term, used);
    std::vector<IndexVar> rooted = rootReduction(term.node().kind == ExprKind::Neg ? term.node().a : term).vars;
    std::vector<int> missing;
    for (const std::string& v : splitSums) {
      if (!used.count(v)) {
        missing.push_back(vars_.at(v).space);
        continue;
      }
      bool atRoot = std::any_of(rooted.begin(), rooted.end(), [&](const IndexVar& r) { return r.name() == v; });
      if (!atRoot)
        failFinal("the term " + term.str() + " sums over " + v + " inside it, so " + v +
                  " cannot be split over ranks or steps (its partial sums would not add up); keep " + v +
                  " in the leaf");
    }
    auto it = variants.find(missing);
    if (it == variants.end()) variants.emplace(missing, term);
    else it->second = it->second + term;
  }
  for (const auto& [missing, rhs] : variants) {
    Assignment leaf;
    leaf.lhs = a_.lhs;
    leaf.rhs = variants.size() == 1 ? a_.rhs : rhs;
    std::set<std::string> names;
    varsIn(leaf.rhs, names);
    for (const IndexVar& v : a_.lhsNode().vars) names.insert(v.name());
    std::set<int> used;
    for (const std::string& n : names) used.insert(spaceOfLoop(n));
    std::string renamed;
    for (const auto& [loop, name] : leafName)
      if (loop != name && used.count(spaceOfLoop(name))) renamed += (renamed.empty() ? "" : ", ") + loop + " is " + name;
    p.leaves.push_back(spmd::Program::LeafVariant{leaf.str(), missing, leafScheduleOver(used), renamed});
  }
  if (substitute_) {
    std::set<std::string> want(substitute_->begin(), substitute_->end()), have;
    for (size_t l = static_cast<size_t>(boundary) + 1; l < order_.size(); l++) have.insert(order_[l]);
    if (want != have)
      throw ScheduleError("schedule command " + substituteText_ + ": names {" + join(*substitute_) +
                          "}, but the leaf's loops are {" + join(std::vector<std::string>(have.begin(), have.end())) +
                          "}");
    if (!leafCommands_.empty() || !leafSplits.empty())
      throw ScheduleError("schedule command " + substituteText_ + ": BLAS replaces the leaf, so " +
                          (leafCommands_.empty() ? leafSplits[0] : leafCommands_[0].text) + " has nothing to schedule");
    if (p.leaves.size() != 1)
      throw ScheduleError("schedule command " + substituteText_ + ": the leaf has terms added at the first block only");
    Assignment leaf = a_;
    leaf.accumulate = false;
    std::string why;
    auto g = gemmOf(leaf, p, why);
    if (!g) throw ScheduleError("schedule command " + substituteText_ + ": " + leaf.str() + ": " + why);
    p.gemm = true;
    p.gemmLeaf = *g;
    p.leaves[0].schedule.clear();
  }
  return p;
}

}  // namespace

std::string defaultDistributedSchedule(const Assignment& a, const Machine& m, const Placement& output) {
  std::vector<std::string> candidates, chosen;
  for (const IndexVar& v : freeVars(a)) candidates.push_back(v.name());
  for (const IndexVar& v : reductionVars(a)) candidates.push_back(v.name());
  const auto& lhs = a.lhsNode().vars;
  std::vector<std::string> byDim(static_cast<size_t>(m.grid.order()));
  if (output.distribution.defined() && output.grid == m.grid)
    for (int g = 0; g < m.grid.order(); g++) {
      const MachineDim& md = output.distribution.levels()[0].machine[static_cast<size_t>(g)];
      if (md.kind == MachineDim::Kind::Partition) byDim[static_cast<size_t>(g)] = lhs.at(static_cast<size_t>(md.tensorDim)).name();
    }
  for (auto& v : byDim) {
    if (!v.empty()) continue;
    for (const std::string& c : candidates)
      if (std::find(byDim.begin(), byDim.end(), c) == byDim.end()) {
        v = c;
        break;
      }
    if (v.empty())
      throw ScheduleError("no default distributed schedule: the machine " + m.grid.str() + " has more dimensions than " +
                          a.str() + " has index variables; give -s");
  }
  std::set<std::string> taken(candidates.begin(), candidates.end());
  auto fresh = [&](const std::string& base) {
    std::string n = base;
    for (int k = 2; taken.count(n); k++) n = base + std::to_string(k);
    taken.insert(n);
    return n;
  };
  std::vector<std::string> outer, inner;
  for (const auto& v : byDim) outer.push_back(fresh(v + "o"));
  for (const auto& v : byDim) inner.push_back(fresh(v + "i"));
  std::string text = "distribute({" + join(byDim) + "},{" + join(outer) + "},{" + join(inner) + "})";
  // distribute reorders its own loops in the places they had: when a loop that is not
  // distributed comes first (A(i,j) by columns, xy->y: i, jo, ji, k), move the
  // distributed loops outermost.
  std::set<std::string> first(candidates.begin(), candidates.begin() + static_cast<long>(byDim.size()));
  if (std::set<std::string>(byDim.begin(), byDim.end()) != first) {
    std::vector<std::string> order = outer;
    for (const std::string& c : candidates) {
      auto at = std::find(byDim.begin(), byDim.end(), c);
      order.push_back(at == byDim.end() ? c : inner[static_cast<size_t>(at - byDim.begin())]);
    }
    text += ",reorder(" + join(order) + ")";
  }
  return text;
}

std::string distributedScheduleFor(const Assignment& a, const std::string& schedule, const Machine& m,
                                   const Placement& output) {
  if (schedule.empty()) return defaultDistributedSchedule(a, m, output);
  std::vector<ScheduleText> commands = splitScheduleText(schedule);
  bool onlyFusions = !commands.empty();
  for (const ScheduleText& c : commands) onlyFusions &= c.name == "loopfuse";
  // loopfuse first: a fusion at a loop the default distributes follows its inner loop.
  return onlyFusions ? schedule + "," + defaultDistributedSchedule(a, m, output) : schedule;
}

spmd::Program distributeLoops(const Assignment& a, const std::string& schedule, const Machine& m,
                              const std::map<std::string, Placement>& placement) {
  if (!a.semiring.isPlusTimes())
    throw NotationError("distributed kernels compute over plus_times only (got " + a.semiring.name + ")");
  std::vector<ScheduleText> commands = splitScheduleText(schedule);
  if (commands.size() > kMaxScheduleCommands)
    throw ScheduleError("schedule has " + std::to_string(commands.size()) + " commands; at most " +
                        std::to_string(kMaxScheduleCommands) + " are allowed");
  DistScheduler s(a, m);
  for (const ScheduleText& c : commands) s.apply(c);
  s.requireFusionDone();
  return s.finish(placement);
}

}  // namespace tessel::lower
