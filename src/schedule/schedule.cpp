// Schedule: the command list users build (C++ API) and its printed form.
#include "tessel/schedule.h"

#include <algorithm>

#include "tessel/error.h"

namespace tessel {

namespace {

const char* raceName(OutputRace r) {
  switch (r) {
    case OutputRace::NoRaces: return "no_races";
    case OutputRace::IgnoreRaces: return "ignore_races";
    case OutputRace::Atomics: return "atomics";
    case OutputRace::Temporary: return "temporary";
  }
  return "?";
}

const char* kindName(ScheduleCommand::Kind k) {
  using K = ScheduleCommand::Kind;
  switch (k) {
    case K::Split: return "split";
    case K::Divide: return "divide";
    case K::Pos: return "pos";
    case K::Fuse: return "fuse";
    case K::Reorder: return "reorder";
    case K::Precompute: return "precompute";
    case K::Parallelize: return "parallelize";
    case K::Unroll: return "unroll";
    case K::Bound: return "bound";
    case K::LoopFuse: return "loopfuse";
  }
  return "?";
}

}  // namespace

std::string ScheduleCommand::str() const {
  using K = ScheduleCommand::Kind;
  std::string s = std::string(kindName(kind)) + "(";
  if (kind == K::Precompute && expr.defined()) {  // precompute(e,t) or precompute(e,t,at)
    s += expr.str() + "," + tensor;
    if (!vars.empty()) s += "," + vars[0].name();
    if (!storedLike.empty()) s += "," + storedLike;
    return s + ")";
  }
  for (size_t v = 0; v < vars.size(); v++) s += (v ? "," : "") + vars[v].name();
  switch (kind) {
    // Appends one piece at a time: "," + std::string trips GCC 12's false -Wrestrict.
    case K::Split: case K::Divide: case K::Unroll: s += ','; s += std::to_string(amount); break;
    case K::Pos: s += "," + tensor; break;
    case K::LoopFuse:
      if (!tensor.empty()) s += "," + tensor;
      break;
    case K::Parallelize: s += std::string(",cpu_thread,") + raceName(race); break;
    case K::Bound:
      s += ',';
      s += std::to_string(amount);
      s += boundKind == BoundKind::MaxExact ? ",max_exact" : ",upper_bound";
      break;
    default: break;
  }
  return s + ")";
}

namespace {
ScheduleCommand make(ScheduleCommand::Kind k, std::vector<IndexVar> vars, int64_t amount = 0) {
  ScheduleCommand c;
  c.kind = k;
  c.vars = std::move(vars);
  c.amount = amount;
  return c;
}

/// Appends c within the bounds (kMaxScheduleCommands and the others in schedule.h).
void append(std::vector<ScheduleCommand>& commands, ScheduleCommand c) {
  using K = ScheduleCommand::Kind;
  if (commands.size() >= kMaxScheduleCommands)
    throw ScheduleError("schedule command " + c.str() + ": a schedule has at most " +
                        std::to_string(kMaxScheduleCommands) + " commands");
  auto splits = [](const ScheduleCommand& x) { return x.kind == K::Split || x.kind == K::Divide; };
  if (splits(c) && std::count_if(commands.begin(), commands.end(), splits) >= kMaxScheduleSplits)
    throw ScheduleError("schedule command " + c.str() + ": a schedule has at most " +
                        std::to_string(kMaxScheduleSplits) +
                        " split and divide commands (each adds a loop; deeper nests take the C compiler minutes)");
  if (c.kind == K::Unroll && c.amount > kMaxUnrollFactor)
    throw ScheduleError("schedule command " + c.str() + ": the unroll factor must be at most " +
                        std::to_string(kMaxUnrollFactor));
  commands.push_back(std::move(c));
}
}  // namespace

Schedule& Schedule::split(const IndexVar& i, const IndexVar& outer, const IndexVar& inner, int64_t size) {
  append(commands_, make(ScheduleCommand::Kind::Split, {i, outer, inner}, size));
  return *this;
}
Schedule& Schedule::divide(const IndexVar& i, const IndexVar& outer, const IndexVar& inner, int64_t pieces) {
  append(commands_, make(ScheduleCommand::Kind::Divide, {i, outer, inner}, pieces));
  return *this;
}
Schedule& Schedule::pos(const IndexVar& i, const IndexVar& ip, const Access& access) {
  return pos(i, ip, access.tensorVar().name());
}
Schedule& Schedule::pos(const IndexVar& i, const IndexVar& ip, const std::string& tensorName) {
  ScheduleCommand c = make(ScheduleCommand::Kind::Pos, {i, ip});
  c.tensor = tensorName;
  append(commands_, c);
  return *this;
}
Schedule& Schedule::fuse(const IndexVar& i, const IndexVar& j, const IndexVar& f) {
  append(commands_, make(ScheduleCommand::Kind::Fuse, {i, j, f}));
  return *this;
}
Schedule& Schedule::reorder(const std::vector<IndexVar>& order) {
  append(commands_, make(ScheduleCommand::Kind::Reorder, order));
  return *this;
}
Schedule& Schedule::precompute(const IndexVar& i) {
  append(commands_, make(ScheduleCommand::Kind::Precompute, {i}));
  return *this;
}
Schedule& Schedule::precompute(const IndexExpr& e, const std::string& temporary) {
  ScheduleCommand c = make(ScheduleCommand::Kind::Precompute, {});
  c.expr = e;
  c.tensor = temporary;
  append(commands_, c);
  return *this;
}
Schedule& Schedule::precomputeLike(const IndexExpr& e, const std::string& temporary, const std::string& pattern) {
  ScheduleCommand c = make(ScheduleCommand::Kind::Precompute, {});
  c.expr = e;
  c.tensor = temporary;
  c.storedLike = pattern;
  append(commands_, c);
  return *this;
}
Schedule& Schedule::precompute(const IndexExpr& e, const std::string& temporary, const IndexVar& at) {
  ScheduleCommand c = make(ScheduleCommand::Kind::Precompute, {at});
  c.expr = e;
  c.tensor = temporary;
  append(commands_, c);
  return *this;
}
Schedule& Schedule::loopfuse(const IndexVar& at, const std::string& temporary) {
  ScheduleCommand c = make(ScheduleCommand::Kind::LoopFuse, {at});
  c.tensor = temporary;
  append(commands_, c);
  return *this;
}
Schedule& Schedule::add(const ScheduleCommand& c) {
  append(commands_, c);
  return *this;
}
Schedule& Schedule::parallelize(const IndexVar& i, ParallelUnit, OutputRace race) {
  ScheduleCommand c = make(ScheduleCommand::Kind::Parallelize, {i});
  c.race = race;
  append(commands_, c);
  return *this;
}
Schedule& Schedule::unroll(const IndexVar& i, int64_t factor) {
  append(commands_, make(ScheduleCommand::Kind::Unroll, {i}, factor));
  return *this;
}
Schedule& Schedule::bound(const IndexVar& i, const IndexVar& ib, int64_t n, BoundKind kind) {
  ScheduleCommand c = make(ScheduleCommand::Kind::Bound, {i, ib}, n);
  c.boundKind = kind;
  append(commands_, c);
  return *this;
}

std::string Schedule::str() const {
  std::string s;
  for (size_t c = 0; c < commands_.size(); c++) {
    if (c) s += ',';
    s += commands_[c].str();
  }
  return s;
}

}  // namespace tessel
