// A compiled kernel as an SPMD leaf.
#include <cstdint>
#include <cstdlib>
#include <map>

#include "runtime/spmd/leaves.h"
#include "tessel/kernel.h"
#include "tessel/parser.h"
#include "tessel/tensor.h"

namespace tessel::spmd {

namespace {

class KernelLeaf : public Leaf {
 public:
  KernelLeaf(const Program& p, std::vector<std::shared_ptr<Kernel>> k) : p_(p), kernels_(std::move(k)), cache_(kernels_.size()) {}

  void bindSparse(size_t t, const TensorBase& piece) override {
    if (sparse_.size() <= t) sparse_.resize(t + 1);
    sparse_[t] = piece;
  }

  /// One leaf assigning the whole dense output block writes it in place (no add pass,
  /// and the executor skips zeroing the piece).
  bool canOverwrite() const override { return p_.leaves.size() == 1 && !isSparseOutput(); }

  void run(size_t v, const std::vector<Box>& boxes, const std::vector<double*>& data, bool overwrite) override {
    Bound& b = boundFor(v, boxes);
    for (size_t t = 1; t < boxes.size(); t++) {
      if (isSparse(t)) continue;  // the piece itself is bound
      tessel_tensor_t& raw = b.tensors[t].raw();
      raw.vals = data[t];
      raw.vals_size = volume(boxes[t]);
    }
    if (overwrite && !isSparseOutput()) {
      // The kernel assigns every entry of its dense output: let it write the block itself.
      // The local tensor's own array comes back however the run ends (it owns that one).
      tessel_tensor_t& raw = b.tensors[0].raw();
      struct Restore {
        tessel_tensor_t& raw;
        void* vals;
        ~Restore() { raw.vals = vals; }
      } restore{raw, raw.vals};
      raw.vals = data[0];
      kernels_[v]->run(b.assignment, p_.threads);
      return;
    }
    kernels_[v]->run(b.assignment, p_.threads);
    if (isSparseOutput()) {  // assembled in its format; the executor takes it
      assembled_ = b.tensors[0];
      return;
    }
    const double* out = static_cast<const double*>(b.tensors[0].raw().vals);
    const int64_t n = volume(boxes[0]);
    for (int64_t x = 0; x < n; x++) data[0][x] += out[x];
  }

 private:
  struct Bound {
    std::vector<TensorBase> tensors;
    Assignment assignment;
  };

  /// Local tensors of these shapes (inputs wrap the executor's blocks), made once per shape.
  Bound& boundFor(size_t v, const std::vector<Box>& boxes) {
    std::vector<int64_t> key;
    for (const Box& b : boxes)
      for (const Extent& e : b) key.push_back(e.size());
    for (size_t t = 0; t < boxes.size(); t++)  // a new piece (new data) binds anew
      if (isSparse(t)) key.push_back(static_cast<int64_t>(reinterpret_cast<intptr_t>(sparse_[t].impl().get())));
    auto it = cache_[v].find(key);
    if (it != cache_[v].end()) return it->second;
    Bound b;
    std::map<std::string, TensorBase> byName;
    for (size_t t = 0; t < boxes.size(); t++) {
      if (t == 0 && isSparseOutput()) {
        std::vector<int64_t> dims;
        for (const Extent& e : boxes[t]) dims.push_back(e.size());
        TensorBase out(p_.tensors[t].name, Datatype::Float64, dims, *p_.tensors[t].sparseFormat);
        b.tensors.push_back(out);
        byName.emplace(p_.tensors[t].name, out);
        continue;
      }
      if (isSparse(t)) {
        b.tensors.push_back(sparse_[t]);
        byName.emplace(p_.tensors[t].name, sparse_[t]);
        continue;
      }
      std::vector<int64_t> dims;
      for (const Extent& e : boxes[t]) dims.push_back(e.size());
      TensorBase local(p_.tensors[t].name, Datatype::Float64, dims, DenseFormat(static_cast<int>(dims.size())));
      if (t > 0) {  // an input: its values live in the executor's block, not here
        Storage& s = local.impl()->storage;
        std::free(s.raw.vals);
        s.raw.vals = nullptr;
        s.external = std::make_shared<int>(0);
      }
      local.impl()->packed = true;
      b.tensors.push_back(local);
      byName.emplace(p_.tensors[t].name, local);
    }
    b.assignment = parseAssignment(p_.leaves[v].text, byName);
    return cache_[v].emplace(key, std::move(b)).first->second;
  }

  TensorBase takeSparseOutput(const Box& box) override {
    std::vector<int64_t> dims;
    for (const Extent& e : box) dims.push_back(e.size());
    TensorBase piece(p_.tensors[0].name, Datatype::Float64, dims, *p_.tensors[0].sparseFormat);
    if (assembled_.defined() && assembled_.dims() == dims) {
      // The arrays move to the piece; the bound output assembles into fresh ones next run.
      piece.impl()->storage.swapArrays(assembled_.impl()->storage);
      piece.impl()->packed = true;
    } else {
      piece.setFromCoo(CooData{dims, {}, {}});
    }
    assembled_ = TensorBase();
    return piece;
  }

  bool isSparseOutput() const { return p_.tensors[0].sparse; }
  bool isSparse(size_t t) const { return t < sparse_.size() && sparse_[t].defined(); }

  const Program& p_;
  std::vector<std::shared_ptr<Kernel>> kernels_;
  std::vector<TensorBase> sparse_;  ///< per program tensor: the bound sparse piece, or undefined
  std::vector<std::map<std::vector<int64_t>, Bound>> cache_;
  TensorBase assembled_;  ///< a sparse output's piece from this run's leaf, until taken
};

}  // namespace

std::unique_ptr<Leaf> kernelLeaf(const Program& p, std::vector<std::shared_ptr<Kernel>> kernels) {
  return std::make_unique<KernelLeaf>(p, std::move(kernels));
}

}  // namespace tessel::spmd
