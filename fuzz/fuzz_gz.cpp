// libFuzzer target: the gzip input path. The bytes are written as "in.mtx.gz" and
// "in.tns.gz" and read with readMtx and readTns; zlib passes non-gzip data through as is,
// so this covers corrupt and truncated gzip streams as well as plain text.
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (const char* name : {"in.mtx.gz", "in.tns.gz"}) {
    std::string path = fuzz::writeInput(name, data, size);
    try {
      tessel::FileContents fc = name[4] == 'm' ? tessel::readMtx(path) : tessel::readTns(path);
      fuzz::checkCoo(fc.data);
    } catch (const tessel::UserError&) {
    }
  }
  return 0;
}
