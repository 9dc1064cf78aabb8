// Concrete index notation constructors and printer.
#include "notation/concrete_notation.h"

namespace tessel {


ConcreteStmt concreteAssign(const std::string& text) {
  auto n = std::make_shared<ConcreteStmtNode>();
  n->kind = ConcreteStmtNode::Assign;
  n->assignText = text;
  return n;
}
ConcreteStmt forall(const IndexVar& v, ConcreteStmt body) {
  auto n = std::make_shared<ConcreteStmtNode>();
  n->kind = ConcreteStmtNode::Forall;
  n->var = v;
  n->a = std::move(body);
  return n;
}
ConcreteStmt where(ConcreteStmt consumer, ConcreteStmt producer) {
  auto n = std::make_shared<ConcreteStmtNode>();
  n->kind = ConcreteStmtNode::Where;
  n->a = std::move(consumer);
  n->b = std::move(producer);
  return n;
}
ConcreteStmt sequence(ConcreteStmt first, ConcreteStmt second) {
  auto n = std::make_shared<ConcreteStmtNode>();
  n->kind = ConcreteStmtNode::Sequence;
  n->a = std::move(first);
  n->b = std::move(second);
  return n;
}

std::string str(const ConcreteStmt& s) {
  switch (s->kind) {
    case ConcreteStmtNode::Assign: return s->assignText;
    case ConcreteStmtNode::Forall: return "forall(" + s->var.name() + ", " + str(s->a) + ")";
    case ConcreteStmtNode::Where: return "where(" + str(s->a) + ", " + str(s->b) + ")";
    case ConcreteStmtNode::Sequence: return "sequence(" + str(s->a) + ", " + str(s->b) + ")";
  }
  return "";
}

}  // namespace tessel
