// TensorBase::convert between CSR and CSC (a counting sort, runtime/matrix_convert.cpp)
// against the general path (through COO, which sorts): the same arrays for every pair of
// index widths, every datatype, empty and zero-extent shapes, explicit zeros. A source
// whose arrays are inconsistent raises FormatError instead of writing out of bounds.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "support/test_support.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

std::mt19937_64 rng(20261122);

/// A tensor's level-1 arrays as int64 and its value bytes.
struct Arrays {
  std::vector<int64_t> dims, pos, crd;
  std::vector<unsigned char> vals;
  bool operator==(const Arrays&) const = default;
};

Arrays arraysOf(const TensorBase& t) {
  const tessel_tensor_t& r = t.raw();
  Arrays a;
  a.dims = {r.dims[0], r.dims[1]};
  a.pos = indexArray(r.pos[1], r.pos_size[1], t.format().posWidth());
  a.crd = indexArray(r.crd[1], r.crd_size[1], t.format().crdWidth());
  const auto* v = static_cast<const unsigned char*>(r.vals);
  a.vals.assign(v, v + r.vals_size * datatypeSize(t.datatype()));
  return a;
}

std::vector<Format> csrAndCscOfAllWidths() {
  std::vector<Format> out;
  for (const Format& f : {CSR(), CSC()})
    for (IndexWidth p : {IndexWidth::W32, IndexWidth::W64})
      for (IndexWidth c : {IndexWidth::W32, IndexWidth::W64}) out.push_back(f.withWidths(p, c));
  return out;
}

std::string widthsOf(const Format& f) {
  return f.str() + (f.posWidth() == IndexWidth::W64 ? " pos64" : " pos32") +
         (f.crdWidth() == IndexWidth::W64 ? " crd64" : " crd32");
}

}  // namespace

TEST(MatrixConvert, CsrCscMatchTheGeneralPath) {
  const std::vector<std::vector<int64_t>> shapes = {{0, 0}, {0, 5}, {5, 0}, {1, 1}, {1, 9}, {9, 1}, {17, 23}, {64, 3}};
  const std::vector<Format> formats = csrAndCscOfAllWidths();
  for (const auto& dims : shapes)
    for (double density : {0.0, 0.15, 0.6}) {
      CooData data = randomCoo(dims, density, rng);
      if (data.nnz() > 1) data.values[1] = 0;  // an explicit zero stays stored
      for (Datatype type : {Datatype::Float64, Datatype::Float32, Datatype::Int64, Datatype::Int32, Datatype::Bool})
        for (const Format& from : formats) {
          TensorBase src("B", type, dims, from);
          src.setFromCoo(data);
          for (const Format& to : formats) {
            SCOPED_TRACE(std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + " density " +
                         std::to_string(density) + " " + datatypeName(type) + ": " + widthsOf(from) + " -> " +
                         widthsOf(to));
            TensorBase fast = src.convert(to, "C");
            TensorBase general = src.convert(COO(2)).convert(to);
            EXPECT_EQ(fast.name(), "C");
            EXPECT_EQ(fast.format(), to);
            EXPECT_TRUE(arraysOf(fast) == arraysOf(general));
            std::string why;
            EXPECT_TRUE(tensorsClose(src.toCoo(), fast.toCoo(), 0, 0, &why)) << why;
          }
        }
    }
}

TEST(MatrixConvert, InconsistentArraysAreRejected) {
  CooData data = randomCoo({6, 8}, 0.4, rng);
  ASSERT_GT(data.nnz(), 3);
  auto expectRejected = [](const TensorBase& t, const std::string& part) {
    for (const Format& to : {CSC(), CSR().withWidths(IndexWidth::W64, IndexWidth::W64)}) {
      try {
        t.convert(to);
        ADD_FAILURE() << "converted to " << widthsOf(to);
      } catch (const FormatError& e) {
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
      }
    }
  };
  TensorBase bad("B", Datatype::Float64, {6, 8}, CSR());
  bad.setFromCoo(data);
  auto* crd = static_cast<int32_t*>(bad.raw().crd[1]);
  auto* pos = static_cast<int32_t*>(bad.raw().pos[1]);
  crd[2] = 8;
  expectRejected(bad, "coordinate 8 of mode 1 is out of range");
  crd[2] = -1;
  expectRejected(bad, "coordinate -1 of mode 1 is out of range");
  bad.setFromCoo(data);
  pos = static_cast<int32_t*>(bad.raw().pos[1]);
  int32_t last = pos[6];
  pos[6] = last + 1;  // past the crd array
  expectRejected(bad, "pos array is inconsistent");
  pos[6] = last;
  pos[3] = pos[4] + 1;  // decreasing from row 3 to row 4
  expectRejected(bad, "pos array is inconsistent");
}
