// dgemm as an SPMD leaf: out(X,Y) += a(X,K) * b(K,Y) with the groups' extents multiplied
// out (the blocks are contiguous row-major, so adjacent dimensions fuse).
#include <algorithm>
#include <cstdint>

#include "runtime/spmd/leaves.h"
#include "tessel/error.h"

#ifdef TESSEL_HAVE_CBLAS
#include <cblas.h>
#endif

namespace tessel::spmd {

bool haveBlas() {
#ifdef TESSEL_HAVE_CBLAS
  return true;
#else
  return false;
#endif
}

namespace {

class GemmLeafRun : public Leaf {
 public:
  explicit GemmLeafRun(const Program& p) : p_(p), g_(p.gemmLeaf) {}

  bool canOverwrite() const override { return true; }

  void run(size_t, const std::vector<Box>& boxes, const std::vector<double*>& data, bool overwrite) override {
    auto extent = [&](const std::vector<int>& spaces) {
      int64_t n = 1;
      for (int s : spaces) n *= spaceExtent(boxes, s);
      return n;
    };
    const int64_t m = extent(g_.x), n = extent(g_.y), k = extent(g_.k);
    if (m == 0 || n == 0) return;
    if (k == 0) {  // nothing to add; but an output to overwrite still becomes zeros
      if (overwrite) std::fill(data[static_cast<size_t>(g_.out)], data[static_cast<size_t>(g_.out)] + m * n, 0.0);
      return;
    }
    if (std::max({m, n, k}) > INT32_MAX)
      throw OverflowError("substitute(..., blas): a local block of " + std::to_string(m) + " x " + std::to_string(k) +
                          " x " + std::to_string(n) + " exceeds BLAS's 32-bit sizes; divide it further");
#ifdef TESSEL_HAVE_CBLAS
    cblas_dgemm(CblasRowMajor, g_.transA ? CblasTrans : CblasNoTrans, g_.transB ? CblasTrans : CblasNoTrans,
                static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0, data[static_cast<size_t>(g_.a)],
                static_cast<int>(g_.transA ? m : k), data[static_cast<size_t>(g_.b)], static_cast<int>(g_.transB ? k : n),
                overwrite ? 0.0 : 1.0, data[static_cast<size_t>(g_.out)], static_cast<int>(n));
#else
    throw EnvironmentError("substitute(..., blas): this tessel was built without a CBLAS");
#endif
  }

 private:
  /// The extent of index space s in the leaf boxes (from any tensor indexed by it).
  int64_t spaceExtent(const std::vector<Box>& boxes, int s) const {
    for (size_t t = 0; t < p_.tensors.size(); t++)
      for (size_t d = 0; d < p_.tensors[t].dimSpace.size(); d++)
        if (p_.tensors[t].dimSpace[d] == s) return boxes[t][d].size();
    throw InternalError("gemm leaf: index space " + std::to_string(s) + " indexes no tensor");
  }

  const Program& p_;
  GemmLeaf g_;
};

}  // namespace

std::unique_ptr<Leaf> gemmLeaf(const Program& p) {
  if (!haveBlas()) throw ScheduleError("substitute(..., blas): this tessel was built without a CBLAS (OpenBLAS)");
  return std::make_unique<GemmLeafRun>(p);
}

}  // namespace tessel::spmd
