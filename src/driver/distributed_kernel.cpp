// DistributedKernel: the distributed lowering, the leaf kernels (compiled once per node),
// and runs through the SPMD executor.
#include <map>
#include <optional>

#include "driver/pipeline.h"
#include "lower/distribute_loops.h"
#include "runtime/spmd/comm.h"
#include "runtime/spmd/executor.h"
#include "runtime/spmd/leaves.h"
#include "runtime/spmd/sparse_pieces.h"
#include "tessel/distributed.h"
#include "tessel/error.h"
#include "tessel/kernel.h"
#include "tessel/syntax.h"

namespace tessel {

struct DistributedKernel::Impl {
  spmd::Program program;
  std::string schedule;
  std::vector<Assignment> leafAssignments;
  std::vector<Schedule> leafSchedules;
  std::unique_ptr<spmd::Leaf> leaf;
};

DistributedKernel::~DistributedKernel() = default;

namespace {

std::map<std::string, TensorVar> varsOf(const std::vector<DistTensor>& tensors) {
  std::map<std::string, TensorVar> vars;
  for (const DistTensor& t : tensors) {
    if (!t.impl()) throw UserError("a distributed kernel was given an empty DistTensor handle");
    vars.emplace(t.name(), TensorVar(t.name(), Datatype::Float64, t.dims(),
                                     t.sparse() ? t.sparsePieceFormat() : DenseFormat(static_cast<int>(t.dims().size()))));
  }
  return vars;
}

/// A leaf schedule's error with where it comes from: the leaf names the distributed
/// schedule's loops by their variables ("ii is i"), so its commands may read otherwise.
[[noreturn]] void leafScheduleError(const ScheduleError& e, const Assignment& leaf,
                                    const spmd::Program::LeafVariant& v) {
  throw ScheduleError(std::string(e.what()) + " (in the leaf kernel " + leaf.str() + ", schedule \"" + v.schedule +
                      "\"" + (v.renamed.empty() ? "" : ", where " + v.renamed) + ")");
}

struct CompileLeaves {
  const std::vector<Assignment>* assignments;
  const std::vector<Schedule>* schedules;
  const std::vector<spmd::Program::LeafVariant>* variants;
  std::vector<std::shared_ptr<Kernel>> kernels;
  static void run(void* self) {
    auto* c = static_cast<CompileLeaves*>(self);
    c->kernels.clear();
    for (size_t v = 0; v < c->assignments->size(); v++) {
      try {
        c->kernels.push_back(Kernel::compile((*c->assignments)[v], (*c->schedules)[v]));
      } catch (const ScheduleError& e) {
        leafScheduleError(e, (*c->assignments)[v], (*c->variants)[v]);
      }
    }
  }
};

}  // namespace

namespace {

/// A tensor partitioned by non-zeros (xy->~x) decides the blocks of the distributed loop
/// over the dimension it partitions: its pieces, this run's data.
void takeDataBlocks(spmd::Program& p, size_t t, const DistTensor& d) {
  spmd::TensorUse& u = p.tensors[t];
  u.dataPieces = d.allPieces();
  if (!(u.grid == p.grid)) return;  // placed on another grid: fetched as it lies (dense only)
  const DistributionStatement& st = d.distribution().levels()[0];
  for (int gd = 0; gd < p.grid.order(); gd++) {
    const MachineDim& m = st.machine[static_cast<size_t>(gd)];
    if (m.kind != MachineDim::Kind::Partition || !m.nonZeros) continue;
    // By non-zeros along one dimension (~x): its blocks. Fused ((xy)->~f): the rows of the
    // leading dimension each piece spans (neighbours may share one: both add into it).
    const int dim = m.tensorDim == MachineDim::kFused ? 0 : m.tensorDim;
    const int space = u.dimSpace[static_cast<size_t>(dim)];
    std::vector<Extent> blocks(static_cast<size_t>(p.grid.dim(gd)));
    for (int q = 0; q < p.grid.size(); q++)
      if (const auto& box = u.dataPieces[static_cast<size_t>(q)])
        blocks[static_cast<size_t>(p.grid.coordOf(q)[static_cast<size_t>(gd)])] = (*box)[static_cast<size_t>(dim)];
    for (spmd::SplitStep& step : p.spaces[static_cast<size_t>(space)].chain) {
      if (step.loop >= p.distributedLoops || p.loops[static_cast<size_t>(step.loop)].gridDim != gd) continue;
      if (!step.dataBlocks.empty() && step.dataBlocks != blocks)
        throw ScheduleError("tensors partition " + p.spaces[static_cast<size_t>(space)].name +
                            " by their non-zeros differently; the distributed loop can follow one of them");
      step.dataBlocks = blocks;
    }
  }
}


/// The run's tensor for program tensor `u`: same name, dims and distribution as compiled.
const DistTensor& tensorFor(const spmd::TensorUse& u, const std::vector<DistTensor>& tensors) {
  const DistTensor* found = nullptr;
  for (const DistTensor& d : tensors)
    if (d.impl() && d.name() == u.name) found = &d;
  if (!found) throw UserError("run: no tensor named " + u.name + " (the kernel was compiled for it)");
  if (found->dims() != u.dims || !(found->grid() == u.grid) || found->distribution().str() != u.distribution.str())
    throw UserError("run: tensor " + u.name + " has other dimensions or another distribution than compiled for");
  return *found;
}

/// Every rank's box of tensor t at its communicate level, at the first step.
std::vector<std::vector<Extent>> firstStepBoxes(const spmd::Program& p, size_t t) {
  std::vector<std::vector<Extent>> out;
  for (int q = 0; q < p.grid.size(); q++) {
    std::vector<int64_t> values(p.loops.size(), 0);
    std::vector<int> coord = p.grid.coordOf(q);
    for (size_t l = 0; l < p.loops.size(); l++)
      values[l] = static_cast<int>(l) < p.distributedLoops ? coord.at(static_cast<size_t>(p.loops[l].gridDim))
                                                           : spmd::blockIndex(p, static_cast<int>(l), 0, values);
    out.push_back(spmd::boxAt(p, static_cast<int>(t), p.tensors[t].level, values));
  }
  return out;
}

/// A sparse output partitioned by non-zeros holds what its owners compute: its pieces
/// are the boxes of the loops (which the inputs' non-zeros decide, or equal blocks).
void outputFollowsLoops(spmd::Program& p) {
  spmd::TensorUse& u = p.tensors[0];
  if (!u.sparse || !u.distribution.byNonZeros()) return;
  u.dataPieces.clear();
  for (auto& box : firstStepBoxes(p, 0)) u.dataPieces.emplace_back(std::move(box));
}

/// `p` with the blocks the tensors partitioned by non-zeros decide, or nothing when none
/// is (the program as compiled serves). UserError when such an input is not placed yet.
std::optional<spmd::Program> withDataBlocks(const spmd::Program& p, const std::vector<DistTensor>& tensors) {
  std::optional<spmd::Program> out;
  for (size_t t = 0; t < p.tensors.size(); t++) {
    const DistTensor& d = tensorFor(p.tensors[t], tensors);
    if (!d.distribution().byNonZeros() || (p.tensors[t].output && p.tensors[t].sparse)) continue;
    if (!out) out = p;
    takeDataBlocks(*out, t, d);
  }
  if (out) outputFollowsLoops(*out);
  return out;
}

/// A sparse output is assembled by the leaf in one run per rank and never reduced: no
/// step loop may run the leaf twice, no `+=`, one leaf variant.
void requireSparseOutputOnce(const spmd::Program& p) {
  const spmd::TensorUse& u = p.tensors[0];
  if (!u.sparse) return;
  if (p.accumulate)
    throw NotationError("output " + u.name + " is sparse: a distributed sparse output is assembled anew, so write "
                        "`=` (or make it dense for `+=`)");
  for (size_t l = static_cast<size_t>(p.distributedLoops); l < p.loops.size(); l++)
    if (p.loops[l].count > 1)
      throw ScheduleError("sparse output " + u.name + ": the step loop " + p.loops[l].name +
                          " runs the leaf " + std::to_string(p.loops[l].count) +
                          " times per rank, and a sparse piece is assembled in one run: split that loop in the leaf "
                          "schedule instead, or make " + u.name + " dense");
  if (p.leaves.size() > 1)
    throw ScheduleError("sparse output " + u.name + ": a term added once per block needs a second leaf, and a sparse "
                        "piece is assembled by one");
}

/// Sparse inputs are fetched once per run (the rows a rank's box needs, executor), so
/// they are communicated at a distributed loop; a sparse output is assembled where it is
/// computed: every rank's box of it must be the piece it holds. Checked when compiling,
/// so the error is one line agreed by all ranks, not a failure mid-run.
void requireSparseOwnerComputes(const spmd::Program& p) {
  requireSparseOutputOnce(p);
  for (size_t t = 0; t < p.tensors.size(); t++) {
    const spmd::TensorUse& u = p.tensors[t];
    if (!u.sparse) continue;
    if (u.level >= p.distributedLoops)
      throw ScheduleError("sparse tensor " + u.name + " is communicated at the step loop " +
                          p.loops[static_cast<size_t>(u.level)].name +
                          "; a sparse operand's rows are fetched once per run: communicate it at a distributed loop");
    if (!u.output) continue;
    auto pieces = spmd::piecesOf(u);
    auto boxes = firstStepBoxes(p, t);
    for (int q = 0; q < p.grid.size(); q++) {
      const std::vector<Extent>& need = boxes[static_cast<size_t>(q)];
      bool empty = false;
      for (const Extent& e : need) empty |= e.size() == 0;
      if (empty) continue;
      if (!pieces[static_cast<size_t>(q)] || *pieces[static_cast<size_t>(q)] != need)
        throw ScheduleError("sparse output " + u.name + ": rank " + std::to_string(q) +
                            " computes another block of it than the piece it holds, and a sparse output is "
                            "assembled where it is computed: distribute the loops as " + u.name +
                            " is distributed (owner computes) and communicate it at the distributed loop");
    }
  }
}

}  // namespace

std::shared_ptr<DistributedKernel> DistributedKernel::compile(const std::string& expr, const std::vector<DistTensor>& tensors,
                                                              const Machine& machine, const std::string& schedule) {
  machine.checkRanks();
  Assignment a = parseAssignment(expr, varsOf(tensors));
  std::map<std::string, lower::Placement> placement;
  for (const DistTensor& t : tensors) placement[t.name()] = lower::Placement{t.grid(), t.distribution()};
  auto k = std::shared_ptr<DistributedKernel>(new DistributedKernel());
  k->impl_ = std::make_unique<Impl>();
  Impl& im = *k->impl_;
  const std::string& out = a.lhsNode().tensor.name();
  if (!placement.count(out)) throw NotationError("no DistTensor given for the output " + out);
  im.schedule = lower::distributedScheduleFor(a, schedule, machine, placement.at(out));
  im.program = lower::distributeLoops(a, im.schedule, machine, placement);
  for (spmd::TensorUse& u : im.program.tensors)
    for (const DistTensor& t : tensors)
      if (t.name() == u.name && t.sparse()) {
        u.sparse = true;
        u.sparseFormat = t.sparsePieceFormat();
      }
  outputFollowsLoops(im.program);
  {  // with the data as placed now (pieces by non-zeros decide blocks; not placed yet: the run checks)
    std::optional<spmd::Program> data;
    bool placed = true;
    try {
      data = withDataBlocks(im.program, tensors);
    } catch (const UserError&) {
      placed = false;
    }
    if (placed) requireSparseOwnerComputes(data ? *data : im.program);
  }
  if (im.program.gemm) {
    for (const spmd::TensorUse& u : im.program.tensors)
      if (u.sparse) throw ScheduleError("substitute(..., blas): " + u.name + " is sparse, and dgemm takes dense blocks");
    im.leaf = spmd::gemmLeaf(im.program);
    return k;
  }
  // The leaf kernels run on local tensors of the same names (any shape: the kernel takes
  // dimensions at run time).
  std::map<std::string, TensorVar> vars = varsOf(tensors);
  for (const spmd::Program::LeafVariant& v : im.program.leaves) {
    Assignment leaf = parseAssignment(v.text, vars);
    Schedule s;
    try {
      s = parseSchedule(v.schedule, leaf);
    } catch (const ScheduleError& e) {
      leafScheduleError(e, leaf, v);
    }
    if (machine.threads > 1 && v.schedule.find("parallelize") == std::string::npos) {
      // The default parallel schedule splits the leaf's outermost variable: when the leaf
      // schedule has split that one already (divide(ii,...) above), it does not apply,
      // and the leaf runs on one thread, as a kernel does when no parallel schedule is safe.
      const Schedule threads = defaultParallelSchedule(leaf, machine.threads);
      Schedule parallel = s;
      for (const ScheduleCommand& c : threads.commands()) parallel.add(c);
      try {
        driver::lowerAssignment(leaf, parallel);
        s = parallel;
      } catch (const UserError&) {
      }
    }
    im.leafAssignments.push_back(leaf);
    im.leafSchedules.push_back(s);
  }
  CompileLeaves c{&im.leafAssignments, &im.leafSchedules, &im.program.leaves, {}};
  comm::nodeLeaderFirst("compiling the leaf kernel", &CompileLeaves::run, &c);
  im.leaf = spmd::kernelLeaf(im.program, c.kernels);
  return k;
}

DistRunStats DistributedKernel::run(const std::vector<DistTensor>& tensors) const {
  // This run's data decides blocks when a tensor is partitioned by non-zeros; then its
  // pieces are checked again (a partition by coordinates was checked when compiling).
  const std::optional<spmd::Program> data = withDataBlocks(impl_->program, tensors);
  const spmd::Program& p = data ? *data : impl_->program;
  if (data) requireSparseOwnerComputes(p);
  std::vector<spmd::Piece> pieces(p.tensors.size());
  const int me = comm::rank();
  for (size_t t = 0; t < p.tensors.size(); t++) {
    const DistTensor& found = tensorFor(p.tensors[t], tensors);
    pieces[t].box = found.piece();
    pieces[t].data = const_cast<double*>(found.data());
    if (found.sparse()) pieces[t].sparse = &found.sparsePiece();
    if (p.tensors[t].output && p.tensors[t].sparse) {  // its pieces are where it is computed
      pieces[t].box = spmd::piecesOf(p.tensors[t]).at(static_cast<size_t>(me));
      pieces[t].sparse = nullptr;
      pieces[t].collectSparseOutput = true;
    }
  }
  spmd::ExecStats e = spmd::execute(p, *impl_->leaf, pieces);
  if (p.tensors[0].sparse)
    spmd::setSparseOutput(tensorFor(p.tensors[0], tensors), pieces[0], spmd::piecesOf(p.tensors[0]));
  DistRunStats s;
  s.seconds = comm::maxOver(e.seconds);
  s.computeSeconds = comm::maxOver(e.computeSeconds);
  s.commSeconds = comm::maxOver(e.commSeconds);
  int64_t sent = 0;
  for (size_t t = 0; t < p.tensors.size(); t++) {
    DistRunStats::PerTensor pt;
    pt.name = p.tensors[t].name;
    pt.maxBytesReceived = comm::maxOver(e.bytesReceived[t]);
    pt.totalBytesSent = comm::sumOver(e.bytesSent[t]);
    pt.formulaBytes = comm::maxOver(e.formulaBytes[t]);
    pt.messages = comm::sumOver(e.messages[t]);
    pt.broadcasts = comm::sumOver(e.broadcasts[t]);
    pt.reductions = comm::sumOver(e.reductions[t]);
    sent += e.bytesSent[t];
    s.tensors.push_back(pt);
  }
  s.maxBytesSent = comm::maxOver(sent);
  return s;
}

std::string DistributedKernel::emit() const {
  std::string out = spmd::print(impl_->program);
  for (size_t v = 0; v < impl_->leafAssignments.size(); v++)
    out += "\n// leaf kernel " + std::to_string(v) + ": " + impl_->leafAssignments[v].str() + "\n" +
           Kernel::emitC(impl_->leafAssignments[v], impl_->leafSchedules[v]);
  return out;
}

const std::string& DistributedKernel::schedule() const { return impl_->schedule; }

}  // namespace tessel
