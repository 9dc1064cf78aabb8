// Concrete index notation: constructors, printer, and the forall chain.
#include "lower/concrete_stmt.h"

namespace tessel::lower {

std::vector<IndexVar> Loop::touches() const {
  if (kind == Kind::Chunk && fusedOuter) return {*fusedOuter, of};
  return {of};
}

IndexStmt assignStmt(IndexExpr lhs, IndexExpr rhs, bool accumulate) {
  auto n = std::make_shared<IndexStmtNode>();
  n->kind = IndexStmtNode::Kind::Assign;
  n->lhs = std::move(lhs);
  n->rhs = std::move(rhs);
  n->accumulate = accumulate;
  return n;
}

IndexStmt forallStmt(const Loop& loop, int depth, IndexStmt body) {
  auto n = std::make_shared<IndexStmtNode>();
  n->kind = IndexStmtNode::Kind::Forall;
  n->loop = loop;
  n->depth = depth;
  n->body = std::move(body);
  return n;
}

IndexStmt whereStmt(IndexStmt consumer, IndexStmt producer, std::shared_ptr<const LocalTemporary> t, IndexExpr access,
               IndexStmt unsplit) {
  auto n = std::make_shared<IndexStmtNode>();
  n->kind = IndexStmtNode::Kind::Where;
  n->consumer = std::move(consumer);
  n->producer = std::move(producer);
  n->temporary = std::move(t);
  n->temporaryAccess = std::move(access);
  n->unsplit = std::move(unsplit);
  return n;
}

IndexStmt sequenceStmt(std::vector<IndexStmt> stmts) {
  auto n = std::make_shared<IndexStmtNode>();
  n->kind = IndexStmtNode::Kind::Sequence;
  n->stmts = std::move(stmts);
  return n;
}

IndexExpr denseTemporary(const std::string& name, Datatype type, const std::vector<IndexVar>& vars,
                         const Assignment& a) {
  std::vector<int64_t> dims;
  for (const IndexVar& v : vars) dims.push_back(extentOf(a, v));
  return TensorVar(name, type, dims, DenseFormat(static_cast<int>(vars.size())))(vars);
}

namespace {

std::string loopNote(const Loop& l) {
  std::string note;
  if (l.kind == Loop::Kind::Chunk)
    note = std::string(l.divide ? " in " : " by ") + std::to_string(l.amount) + (l.overPositions ? " positions" : "");
  if (l.parallel) note += " parallel";
  if (l.unroll) note += " unroll " + std::to_string(l.unroll);
  return note;
}

}  // namespace

std::string str(const IndexStmt& s) {
  switch (s->kind) {
    case IndexStmtNode::Kind::Assign:
      return s->lhs.str() + (s->accumulate ? " += " : " = ") + s->rhs.str();
    case IndexStmtNode::Kind::Forall:
      return "forall(" + s->loop.var.name() + loopNote(s->loop) + ", " + str(s->body) + ")";
    case IndexStmtNode::Kind::Where:
      if (const LocalTemporary* t = s->temporary.get(); t && t->positionsOf)
        return "where(" + str(s->consumer) + ", " + str(s->producer) + ", " + t->name + " at " +
               t->positionsOf->tensor.name() + "'s positions)";
      return "where(" + str(s->consumer) + ", " + str(s->producer) + ")";
    case IndexStmtNode::Kind::Sequence: {
      std::string out = "sequence(";
      for (size_t k = 0; k < s->stmts.size(); k++) out += (k ? ", " : "") + str(s->stmts[k]);
      return out + ")";
    }
  }
  return "";
}

std::vector<const IndexStmtNode*> forallChain(const IndexStmt& s) {
  std::vector<const IndexStmtNode*> chain;
  for (const IndexStmtNode* n = s.get(); n && n->kind == IndexStmtNode::Kind::Forall; n = n->body.get()) chain.push_back(n);
  return chain;
}

}  // namespace tessel::lower
