// Tensors: a tensor variable (name, datatype, dimensions, format: what the compiler
// sees, tessel/notation.h) bound to level-array storage (what the runtime sees).
//
//   Tensor<double> B("B", {m, n}, CSR());
//   B.insert({0, 3}, 1.5);   // any order, duplicates summed at pack()
//   B.pack();
//   B.forEachStored([](const std::vector<int64_t>& c, double v) { ... });
//
// A Tensor is a handle: copies share storage (like TACO), so an assignment recorded
// with `a(i) = B(i,j) * c(j)` can later run with `a.evaluate()`.
#pragma once

#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessel/coo.h"
#include "tessel/error.h"
#include "tessel/format.h"
#include "tessel/notation.h"
#include "tessel/runtime_abi.h"

namespace tessel {

class Kernel;

/// Owns a tessel_tensor_t's malloc'd arrays -- unless `external` is set: then the
/// arrays point into memory that `external` keeps alive (e.g. a read-only file mapping,
/// see mapBinary in tessel/binary_format.h), and release() drops that reference instead
/// of calling free().
struct Storage {
  tessel_tensor_t raw{};
  std::shared_ptr<void> external;
  bool recomputed = false;  // a kernel wrote the arrays before: they keep its capacity
  /// A sparse `+=` output's arrays from before its last run (the kernel read its old
  /// entries there): the next run writes into them, so repeated runs neither copy,
  /// allocate nor page-fault. Released with the arrays.
  std::unique_ptr<Storage> spare;
  Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage() { release(); }
  void release();
  /// Arrays that start inside their malloc'd block (crd_block / vals_block) point at
  /// the block's start again, contents not kept: a kernel about to write this output
  /// sees plain blocks. (Only sparse outputs get such arrays, and kernels never keep a
  /// sparse output's old entries.)
  void rebase();
  /// Exchange arrays (and `recomputed`) with `o`; order and dims stay. Neither may be
  /// external.
  void swapArrays(Storage& o);
};

/// A tensor variable bound to storage. Accesses of the tensor carry a pointer to it
/// (ExprNode::binding), through which runs find the arrays of each variable.
struct TensorImpl {
  TensorVar var;  // name, type, dims (per mode), format: fixed for the tensor's life
  Storage storage;
  bool packed = false;
  // pending inserts (mode order), values as raw element bytes
  std::vector<int64_t> pendingCoords;
  std::vector<unsigned char> pendingVals;
  std::optional<Assignment> assignment;
  std::shared_ptr<Kernel> kernel;
};

/// Untyped tensor handle.
class TensorBase {
 public:
  TensorBase() = default;
  TensorBase(std::string name, Datatype type, std::vector<int64_t> dims, Format format);
  explicit TensorBase(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  const std::string& name() const { return impl_->var.name(); }
  Datatype datatype() const { return impl_->var.datatype(); }
  int order() const { return impl_->var.order(); }
  const std::vector<int64_t>& dims() const { return impl_->var.dims(); }
  int64_t dim(int mode) const { return impl_->var.dim(mode); }
  const Format& format() const { return impl_->var.format(); }
  /// The tensor's variable: what compiling an assignment over it needs.
  const TensorVar& tensorVar() const { return impl_->var; }
  /// A new, empty tensor whose variable is `var` (storage bound to an existing variable,
  /// e.g. one an assignment was compiled over).
  static TensorBase forVar(const TensorVar& var);
  bool defined() const { return impl_ != nullptr; }
  const std::shared_ptr<TensorImpl>& impl() const { return impl_; }

  /// Level arrays as generated kernels see them (pack() first).
  tessel_tensor_t& raw() { return impl_->storage.raw; }
  const tessel_tensor_t& raw() const { return impl_->storage.raw; }
  /// Number of stored values (explicit zeros included).
  int64_t storedCount() const { return impl_->storage.raw.vals_size; }

  /// Build level arrays from the inserted entries (duplicates summed). Throws
  /// DimensionError for out-of-range coordinates, OverflowError when a size does not
  /// fit the format's index widths or a value does not fit an integer type (+-inf are
  /// its largest and smallest values, as the min and max semirings' infinities).
  void pack();
  /// Give back array capacity beyond the stored sizes. A kernel's first result into a
  /// tensor is trimmed this way; one computed again keeps the room its kernel needs, so
  /// repeated runs neither allocate nor page-fault.
  void shrinkToFit();
  /// Stored entries in mode order (explicit zeros included), values as double.
  CooData toCoo() const;
  /// The same, and for each entry its position in the values array (entry e is vals[e]
  /// except under bitmap levels, whose absent slots are skipped).
  CooData toCoo(std::vector<int64_t>& positions) const;
  /// Replace contents with `coo` (packed into this tensor's format).
  void setFromCoo(const CooData& coo);
  /// A new tensor with the same values in another format.
  TensorBase convert(const Format& f, const std::string& newName = "") const;
  /// Value at a coordinate (0 if not stored), as double. O(levels * log nnz).
  double at(const std::vector<int64_t>& coords) const;

  /// Index this tensor: B(i, j).
  template <typename... V>
  Access operator()(const V&... vars) const {
    return Access(*this, std::vector<IndexVar>{vars...});
  }
  Access operator()(const std::vector<IndexVar>& vars) const { return Access(*this, vars); }

  /// The assignment recorded by `A(i,j) = ...` (throws NotationError if none). Its
  /// accesses carry their tensors' storage (ExprNode::binding); its output's, without
  /// owning it (no reference cycle), so a copy of it must not outlive the tensor.
  const Assignment& assignment() const;
  void setAssignment(const Assignment& a);
  /// Compile (JIT, cached), assemble and compute the recorded assignment.
  void evaluate();
  /// Generated C source for the recorded assignment.
  std::string emitC() const;

 protected:
  void insertBytes(const std::vector<int64_t>& coords, const void* value);
  std::shared_ptr<TensorImpl> impl_;
};

/// A tensor of element type T (double, float, int32_t, int64_t, bool).
template <typename T>
class Tensor : public TensorBase {
 public:
  Tensor() = default;
  Tensor(std::string name, std::vector<int64_t> dims, Format format)
      : TensorBase(std::move(name), datatypeOf<T>(), std::move(dims), std::move(format)) {}
  /// Dense tensor.
  Tensor(std::string name, std::vector<int64_t> dims)
      : Tensor(std::move(name), dims, DenseFormat(static_cast<int>(dims.size()))) {}
  explicit Tensor(const TensorBase& b) : TensorBase(b.impl()) {
    if (b.datatype() != datatypeOf<T>())
      throw UserError("tensor " + b.name() + " holds " + datatypeName(b.datatype()) +
                      ", not " + datatypeName(datatypeOf<T>()));
  }

  /// Add `value` at `coords` (mode order). Duplicates are summed at pack().
  void insert(const std::vector<int64_t>& coords, T value) { insertBytes(coords, &value); }

  /// Call f(coords, value) for every stored entry in storage order.
  void forEachStored(const std::function<void(const std::vector<int64_t>&, T)>& f) const {
    std::vector<int64_t> at;
    CooData c = toCoo(at);
    std::vector<int64_t> cs(order());
    for (int64_t e = 0; e < c.nnz(); e++) {
      for (int m = 0; m < order(); m++) cs[m] = c.coords[e * order() + m];
      f(cs, valueAt(at[e]));
    }
  }
  /// The stored value at position p of the values array.
  T valueAt(int64_t p) const { return static_cast<const T*>(raw().vals)[p]; }
  Tensor<T> convert(const Format& f, const std::string& newName = "") const {
    return Tensor<T>(TensorBase::convert(f, newName));
  }
};

}  // namespace tessel
