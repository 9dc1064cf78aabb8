// libFuzzer target: tessel::readMtx on arbitrary bytes (see fuzz_common.h).
#include <cmath>
#include <cstring>

#include "fuzz_common.h"

namespace {

/// Header facts the result must agree with, parsed independently and leniently.
struct Header {
  bool ok = false, coordinate = false, general = false, pattern = false;
  long long rows = -1, cols = -1, nnz = -1;
};

Header parseHeader(const uint8_t* data, size_t size) {
  Header h;
  std::string text(reinterpret_cast<const char*>(data), std::min<size_t>(size, 4096));
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t nl = text.find('\n');
  if (nl == std::string::npos) return h;
  std::string banner = text.substr(0, nl);
  h.coordinate = banner.find("coordinate") != std::string::npos;
  h.general = banner.find("general") != std::string::npos;
  h.pattern = banner.find("pattern") != std::string::npos;
  // First line after the banner that is not blank or a comment.
  size_t pos = nl + 1;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) return h;
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    size_t f = line.find_first_not_of(" \t\r\v\f");
    if (f == std::string::npos || line[f] == '%') continue;
    if (std::sscanf(line.c_str(), "%lld %lld %lld", &h.rows, &h.cols, &h.nnz) >= 2) h.ok = true;
    return h;
  }
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = fuzz::writeInput("in.mtx", data, size);
  tessel::FileContents fc;
  try {
    fc = tessel::readMtx(path);
  } catch (const tessel::UserError&) {
    return 0;
  }
  const tessel::CooData& d = fc.data;
  FUZZ_CHECK(d.dims.size() == 2);
  fuzz::checkCoo(d);
  Header h = parseHeader(data, size);
  if (h.ok) {
    FUZZ_CHECK(d.dims[0] == h.rows && d.dims[1] == h.cols);
    if (h.coordinate && h.general) FUZZ_CHECK(d.nnz() == h.nnz);
    if (h.coordinate && !h.general) FUZZ_CHECK(d.nnz() >= h.nnz && d.nnz() <= 2 * h.nnz);
    if (!h.coordinate && h.general) FUZZ_CHECK(d.nnz() == h.rows * h.cols);
  }
  if (fc.field == tessel::FileField::Pattern)
    for (double v : d.values) FUZZ_CHECK(v == 1.0);
  if (fc.field == tessel::FileField::Integer)
    for (double v : d.values) FUZZ_CHECK(std::isfinite(v) && v == std::trunc(v));
  return 0;
}
