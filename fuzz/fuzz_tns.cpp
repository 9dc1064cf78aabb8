// libFuzzer target: tessel::readTns on arbitrary bytes (see fuzz_common.h). A successful
// read is read again with its own dimensions given, which must give the same data.
#include <cmath>

#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = fuzz::writeInput("in.tns", data, size);
  tessel::FileContents fc;
  try {
    fc = tessel::readTns(path);
  } catch (const tessel::UserError&) {
    return 0;
  }
  const tessel::CooData& d = fc.data;
  fuzz::checkCoo(d);
  // Dims are the largest index seen, or (a file without entries) those of its
  // '# tessel dims:' comment, which may be 0 (an empty tensor written by tessel).
  for (int64_t x : d.dims) FUZZ_CHECK(x >= (d.nnz() > 0 ? 1 : 0));
  if (fc.field == tessel::FileField::Integer)
    for (double v : d.values) FUZZ_CHECK(std::isfinite(v) && v == std::trunc(v));
  tessel::FileContents again = tessel::readTns(path, d.dims);  // must not throw
  FUZZ_CHECK(again.data.dims == d.dims);
  FUZZ_CHECK(again.data.coords == d.coords);
  FUZZ_CHECK(again.data.values.size() == d.values.size());
  for (size_t i = 0; i < d.values.size(); ++i)
    FUZZ_CHECK(again.data.values[i] == d.values[i] ||
               (std::isnan(again.data.values[i]) && std::isnan(d.values[i])));
  FUZZ_CHECK(again.field == fc.field);
  return 0;
}
