// libFuzzer target: the .tsb reader (readBinary and mapBinary) on arbitrary bytes. Most
// mutations would only ever meet the checksums, so a buffer that starts like a header gets
// its payload and header checksums recomputed first (as the reader computes them): the
// mutations then reach the header's fields, the array table and the arrays' contents. A
// FileError is the expected outcome for bad input; a read that succeeds must give a
// tensor whose arrays are consistent (toCoo walks all of them) and equal between the two
// readers.
#include <cstring>

#include "fuzz_common.h"
#include "tessel/binary_format.h"

namespace {

uint64_t get(const std::vector<uint8_t>& b, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--) v = (v << 8) | b[at + i];
  return v;
}

void put64(std::vector<uint8_t>& b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; i++) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

/// The payload checksum over the arrays the header declares (present ones, in payload
/// order), then the header checksum over bytes 0..735: see tessel/binary_format.h.
void repairChecksums(std::vector<uint8_t>& b) {
  constexpr size_t kHeader = 768, kOrder = 20, kPosWidth = 24, kCrdWidth = 28, kLevels = 32, kArrays = 192,
                   kVals = 704, kPayloadSum = 728, kHeaderSum = 736;
  if (b.size() < kHeader || std::memcmp(b.data(), "TESSELTB", 8) != 0) return;
  uint64_t order = get(b, kOrder, 4);
  if (order > 16) return;
  const int64_t posBytes = get(b, kPosWidth, 4) / 8, crdBytes = get(b, kCrdWidth, 4) / 8;
  static const int64_t kTypeBytes[] = {1, 4, 8, 4, 8};
  uint64_t type = get(b, 16, 4);
  uint64_t sum = 0;
  auto add = [&](size_t field, int64_t elemBytes) {
    uint64_t offset = get(b, field, 8), count = get(b, field + 8, 8);
    if (elemBytes <= 0 || count > b.size() || offset > b.size() || offset + count * elemBytes > b.size()) return;
    sum = tessel::binaryChecksum(b.data() + offset, count * elemBytes, sum);
  };
  for (uint64_t k = 0; k < order; k++) {
    uint8_t kind = b[kLevels + k];  // 0 dense, 1 compressed, 2 compressed non-unique, 3 singleton
    if (kind == 1 || kind == 2) add(kArrays + 32 * k, posBytes);
    if (kind >= 1 && kind <= 3) add(kArrays + 32 * k + 16, crdBytes);
  }
  add(kVals, type < 5 ? kTypeBytes[type] : 0);
  put64(b, kPayloadSum, sum);
  put64(b, kHeaderSum, tessel::binaryChecksum(b.data(), kHeaderSum, 0));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  repairChecksums(bytes);
  std::string path = fuzz::writeInput("in.tsb", bytes.data(), bytes.size());
  tessel::CooData read, mapped;
  bool readOk = false, mapOk = false;
  try {
    read = tessel::readBinary(path).toCoo();
    fuzz::checkCoo(read);
    readOk = true;
  } catch (const tessel::UserError&) {
  }
  try {
    mapped = tessel::mapBinary(path).toCoo();
    mapOk = true;
  } catch (const tessel::UserError&) {
  }
  FUZZ_CHECK(readOk == mapOk);  // the same validation either way
  if (readOk) {
    FUZZ_CHECK(read.dims == mapped.dims);
    FUZZ_CHECK(read.coords == mapped.coords);
    FUZZ_CHECK(read.values.size() == mapped.values.size());
  }
  return 0;
}
