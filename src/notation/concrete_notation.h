// Concrete index notation (TACO / COMET): statements that fix loop order and
// temporaries. forall(i, S); where(consumer, producer) with a temporary the producer
// fills and the consumer reads; sequence(S1, S2); and assignments.
#pragma once

#include <memory>
#include <string>

#include "tessel/notation.h"

namespace tessel {

struct ConcreteStmtNode;
using ConcreteStmt = std::shared_ptr<const ConcreteStmtNode>;

struct ConcreteStmtNode {
  enum Kind { Assign, Forall, Where, Sequence } kind;
  IndexVar var;             ///< Forall
  std::string assignText;   ///< Assign, in index-notation text
  ConcreteStmt a, b;        ///< Forall body (a); Where consumer (a), producer (b); Sequence
};

ConcreteStmt concreteAssign(const std::string& text);
ConcreteStmt forall(const IndexVar& v, ConcreteStmt body);
ConcreteStmt where(ConcreteStmt consumer, ConcreteStmt producer);
ConcreteStmt sequence(ConcreteStmt first, ConcreteStmt second);

/// "forall(i, forall(j, A(i,j) = B(i,j) * c(j)))".
std::string str(const ConcreteStmt& s);

}  // namespace tessel
