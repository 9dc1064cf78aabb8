// Symbol tables for generated functions.
#include "lower/symbols.h"

#include <algorithm>
#include <cctype>

#include "tessel/error.h"

namespace tessel::lower {

using namespace ir;

namespace {
void collect(const IndexExpr& e, std::vector<const tessel::ExprNode*>& out) {
  const tessel::ExprNode& n = e.node();
  if (n.kind == ExprKind::Access) {
    out.push_back(&n);
    return;
  }
  if (n.a.defined()) collect(n.a, out);
  if (n.b.defined()) collect(n.b, out);
}

bool validIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}
}  // namespace

std::vector<const tessel::ExprNode*> accessesIn(const IndexExpr& e) {
  std::vector<const tessel::ExprNode*> r;
  if (e.defined()) collect(e, r);
  return r;
}

bool mentions(const IndexExpr& e, const IndexVar& v) {
  for (const tessel::ExprNode* n : accessesIn(e))
    if (std::find(n->vars.begin(), n->vars.end(), v) != n->vars.end()) return true;
  return false;
}

std::string Symbols::fresh(const std::string& base) {
  std::string s = validIdentifier(base) ? base : "v";
  std::string candidate = s;
  for (int n = 2; used_.count(candidate); n++) candidate = s + std::to_string(n);
  used_.insert(candidate);
  return candidate;
}

Symbols::Symbols(const Problem& p, bool outputArraysLoaded) : p_(p), outputLoaded_(outputArraysLoaded) {
  used_ = {"tensors", "t", "auto", "int", "double", "float", "char", "long", "if", "for",
           "while", "do", "return", "void", "bool", "main", "const", "static", "restrict",
           "register", "default", "case", "switch", "break", "continue", "signed",
           "unsigned", "short", "struct", "union", "enum", "goto", "sizeof", "volatile",
           "inline", "extern", "else", "typedef", "free", "malloc", "calloc", "NAN", "INFINITY"};
  // Index variables keep their own names where possible.
  std::vector<IndexVar> vars = freeVars(p.assignment);
  for (auto& v : reductionVars(p.assignment)) vars.push_back(v);
  for (auto& v : vars) indexVars_[v.id()] = var(fresh(v.name()), i64());

  for (size_t a = 0; a < p.args.size(); a++) {
    const TensorArg& ta = p.args[a];
    tensorNames_.push_back(fresh(ta.cname));
    const std::string& t = tensorNames_.back();
    std::vector<LevelArrays> arrs;
    std::vector<std::unique_ptr<LevelFormat>> lfs;
    bool isConst = !ta.isOutput;
    for (int k = 0; k < ta.format.order(); k++) {
      lfs.push_back(makeLevelFormat(ta.format, k));
      LevelArrays la;
      la.dim = var(fresh(t + std::to_string(k) + "_dim"), i64());
      if (lfs.back()->hasPosArray())
        la.pos = var(fresh(t + std::to_string(k) + "_pos"),
                     ptr(indexType(ta.format.posWidth()).elem, isConst));
      if (lfs.back()->hasCrdArray())
        la.crd = var(fresh(t + std::to_string(k) + "_crd"),
                     ptr(indexType(ta.format.crdWidth()).elem, isConst));
      if (lfs.back()->hasFlagArray())  // uint8 presence flags in the crd slot
        la.flags = var(fresh(t + std::to_string(k) + "_flags"), ptr(Datatype::Bool, isConst));
      arrs.push_back(la);
    }
    arrays_.push_back(arrs);
    levels_.push_back(std::move(lfs));
    vals_.push_back(var(fresh(t + "_vals"), ptr(ta.tensor.datatype(), isConst)));
  }
  for (size_t i = 0; i < p.inputs.size(); i++) {
    const AccessInfo& in = p.inputs[i];
    std::vector<Expr> ps;
    for (size_t k = 0; k < in.levelVars.size(); k++)
      ps.push_back(var(fresh("p" + tensorNames_[in.arg] + std::to_string(k)), i64()));
    iterPos_.push_back(ps);
  }
  // Each variable's extent comes from the first level (output first) it indexes.
  auto note = [&](int arg, const std::vector<IndexVar>& lv) {
    for (size_t k = 0; k < lv.size(); k++)
      if (!extents_.count(lv[k].id())) extents_[lv[k].id()] = arrays_[arg][k].dim;
  };
  note(0, p.output.levelVars);
  for (auto& in : p.inputs) note(in.arg, in.levelVars);
}

Expr Symbols::indexVar(const IndexVar& v) const { return indexVars_.at(v.id()); }
Expr Symbols::extent(const IndexVar& v) const { return extents_.at(v.id()); }

Datatype Symbols::computeType() const {
  switch (p_.outputType()) {
    case Datatype::Float32: return Datatype::Float32;
    case Datatype::Float64: return Datatype::Float64;
    default: return Datatype::Int64;
  }
}

std::vector<Stmt> Symbols::prologue() const {
  std::vector<Stmt> s;
  for (size_t a = 0; a < p_.args.size(); a++) {
    Expr t = tensor(static_cast<int>(a));
    Expr tensors = var("tensors", opaque(TypeKind::Tensor, true, true));  // the kernel's argument
    s.push_back(decl(t, load(tensors, intImm(static_cast<int64_t>(a)))));
    bool loadArrays = !p_.args[a].isOutput || outputLoaded_;
    for (size_t k = 0; k < arrays_[a].size(); k++) {
      const LevelArrays& la = arrays_[a][k];
      s.push_back(decl(la.dim, field(t, "dims", i64(), static_cast<int64_t>(k))));
      if (la.pos && loadArrays)
        s.push_back(decl(la.pos, cast(la.pos->type, field(t, "pos", la.pos->type, static_cast<int64_t>(k)))));
      if (la.crd && loadArrays)
        s.push_back(decl(la.crd, cast(la.crd->type, field(t, "crd", la.crd->type, static_cast<int64_t>(k)))));
      if (la.flags && loadArrays)
        s.push_back(decl(la.flags, cast(la.flags->type, field(t, "crd", la.flags->type, static_cast<int64_t>(k)))));
    }
    if (loadArrays)
      s.push_back(decl(vals_[a], cast(vals_[a]->type, field(t, "vals", vals_[a]->type))));
  }
  return s;
}

}  // namespace tessel::lower
