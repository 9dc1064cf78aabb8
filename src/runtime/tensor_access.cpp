// Accesses of Tensors: a tensor variable plus a binding to the tensor's storage
// (ExprNode::binding), which runs read to find each variable's arrays. Building them,
// recording assignments into tensors, and parsing text over named tensors live here,
// with the storage, so that notation itself knows variables only.
#include "notation/access_node.h"
#include "notation/parse_bind.h"
#include "tessel/error.h"
#include "tessel/parser.h"
#include "tessel/tensor.h"

namespace tessel {

namespace {

std::shared_ptr<const ExprNode> tensorAccessNode(const TensorBase& t, std::vector<IndexVar> vars) {
  if (!t.defined()) throw NotationError("access to an undefined tensor");
  return accessNode(t.tensorVar(), t.impl(), std::move(vars));
}

/// The tensor an assignment is recorded in: its output's binding.
TensorBase outputOf(const Access& lhs) {
  if (!lhs.node().binding)
    throw NotationError("cannot record an assignment into " + lhs.tensorVar().name() +
                        ", a tensor variable without storage: build an Assignment{lhs, rhs} instead");
  return TensorBase(lhs.node().binding);
}

}  // namespace

Access::Access(const TensorBase& t, std::vector<IndexVar> vars)
    : IndexExpr(tensorAccessNode(t, std::move(vars))), handle_(std::make_shared<const TensorBase>(t)) {}

const TensorBase& Access::tensor() const {
  if (!handle_) throw NotationError(node().tensor.name() + " is a tensor variable without storage, not a Tensor");
  return *handle_;
}

Access& Access::operator=(const IndexExpr& e) {
  Assignment a;
  a.lhs = *this;
  a.rhs = e;
  a.accumulate = false;
  checkAssignment(a);
  outputOf(*this).setAssignment(a);
  return *this;
}

Access& Access::operator=(const Access& e) { return *this = static_cast<const IndexExpr&>(e); }

Access& Access::operator+=(const IndexExpr& e) {
  Assignment a;
  a.lhs = *this;
  a.rhs = e;
  a.accumulate = true;
  checkAssignment(a);
  outputOf(*this).setAssignment(a);
  return *this;
}

Assignment parseAssignment(const std::string& text, const std::map<std::string, TensorBase>& tensors) {
  return parseAssignmentWith(text, [&](const std::string& name, std::vector<IndexVar> vars) -> IndexExpr {
    auto it = tensors.find(name);
    if (it == tensors.end() || !it->second.defined()) return IndexExpr();
    return Access(it->second, std::move(vars));
  });
}

}  // namespace tessel
