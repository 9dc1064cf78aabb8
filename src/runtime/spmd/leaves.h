// The two kinds of leaf an SPMD program runs: a compiled tessel kernel, or BLAS dgemm
// (`substitute`, DISTAL §5.4).
#pragma once

#include <memory>
#include <vector>

#include "runtime/spmd/executor.h"

namespace tessel {
class Kernel;
}

namespace tessel::spmd {

/// The leaf assignments (p.leaves, one kernel each) compiled by tessel: run on local tensors that wrap
/// the executor's blocks (inputs are not copied); the output is computed into its own
/// tensor and added into the block.
std::unique_ptr<Leaf> kernelLeaf(const Program& p, std::vector<std::shared_ptr<Kernel>> kernels);
/// dgemm on the blocks, accumulating into the output block (beta = 1), or writing it
/// (beta = 0) when the executor says it holds nothing yet.
std::unique_ptr<Leaf> gemmLeaf(const Program& p);
/// This build has a CBLAS (OpenBLAS).
bool haveBlas();

}  // namespace tessel::spmd
