// Distributed tensors: this rank's piece, filling it, gathering all pieces on rank 0.
#include <algorithm>

#include "runtime/spmd/box.h"
#include "runtime/spmd/comm.h"
#include "runtime/spmd/dist_tensor_impl.h"
#include "runtime/spmd/executor.h"
#include "runtime/spmd/sparse_pieces.h"
#include "tessel/distributed.h"
#include "tessel/error.h"
#include "io/io_util.h"

namespace tessel {


namespace {
/// A tensor's name, dims and grid, checked (dims >= 0, the grid has the running ranks).
std::shared_ptr<DistTensor::Impl> placed(std::string name, std::vector<int64_t> dims, Grid grid) {
  for (int64_t n : dims)
    if (n < 0) throw DimensionError("tensor " + name + ": negative dimension " + std::to_string(n));
  if (grid.size() != comm::size())
    throw DistributionError("tensor " + name + " is placed on a " + grid.str() + " grid of " +
                            std::to_string(grid.size()) + " ranks, but " + std::to_string(comm::size()) +
                            " are running");
  auto impl = std::make_shared<DistTensor::Impl>();
  impl->name = std::move(name);
  impl->dims = std::move(dims);
  impl->grid = std::move(grid);
  return impl;
}

/// Every rank's box of a tensor of `dims` under a distribution by coordinates.
std::vector<std::optional<std::vector<Extent>>> boxesOf(const std::vector<int64_t>& dims, const Grid& grid,
                                                        const Distribution& d) {
  spmd::TensorUse u;
  u.dims = dims;
  u.grid = grid;
  u.distribution = d;
  return spmd::piecesOf(u);
}
}  // namespace

int worldRank() { return comm::rank(); }
int worldSize() { return comm::size(); }
void finalizeDistributed() { comm::finalize(); }
int64_t reduceOverRanks(int64_t v, bool largest) { return largest ? comm::maxOver(v) : -comm::maxOver(-v); }
int64_t sumOverRanks(int64_t v) { return comm::sumOver(v); }
void abortAllRanks(int code, const std::string& message) { comm::abortAll(code, message); }

Machine Machine::parse(const std::string& text, int threads) {
  Machine m{Grid::parse(text), threads};
  if (threads < 1) throw UserError("--threads must be at least 1");
  return m;
}

Machine Machine::world(int threads) { return Machine{Grid(comm::size()), threads}; }

void Machine::checkRanks() const {
  if (grid.size() != comm::size())
    throw DistributionError("the machine " + grid.str() + " has " + std::to_string(grid.size()) + " ranks, but " +
                            std::to_string(comm::size()) + " are running (start with mpirun -np " +
                            std::to_string(grid.size()) + ")");
}

DistTensor::DistTensor(std::string name, std::vector<int64_t> dims, const std::string& distribution, Grid grid)
    : DistTensor(std::move(name), std::move(dims), distribution.empty() ? Distribution() : Distribution::parse(distribution),
                 std::move(grid)) {}

DistTensor::DistTensor(std::string name, std::vector<int64_t> dims, Distribution distribution, Grid grid)
    : impl_(placed(std::move(name), std::move(dims), std::move(grid))) {
  if (distribution.defined()) distribution.check(impl_->name, static_cast<int>(impl_->dims.size()), impl_->grid);
  if (distribution.byNonZeros())
    throw DistributionError("distribution of " + impl_->name + " (" + distribution.str() +
                            "): a partition by non-zeros needs a sparse level, and every level of " + impl_->name +
                            " is dense (all its entries are stored): partition by coordinates instead (drop the ~)");
  impl_->distribution = std::move(distribution);
  impl_->piece = boxesOf(impl_->dims, impl_->grid, impl_->distribution).at(static_cast<size_t>(comm::rank()));
  if (impl_->piece) {
    const int64_t n = spmd::volume(*impl_->piece);
    io_detail::requireMemory(static_cast<long double>(n) * 8, "tensor " + impl_->name + ": this rank's piece");
    impl_->vals.assign(static_cast<size_t>(n), 0.0);
  }
}

DistTensor::DistTensor(std::string name, std::vector<int64_t> dims, const std::string& distribution, Grid grid,
                       Format format)
    : impl_(placed(std::move(name), std::move(dims), std::move(grid))) {
  if (format.order() != static_cast<int>(impl_->dims.size()))
    throw FormatError("tensor " + impl_->name + ": format " + format.str() + " has " + std::to_string(format.order()) +
                      " levels, and the tensor " + std::to_string(impl_->dims.size()) + " dimensions");
  Distribution d = distribution.empty() ? Distribution() : Distribution::parse(distribution);
  if (d.defined()) {
    d.check(impl_->name, static_cast<int>(impl_->dims.size()), impl_->grid);
    spmd::checkSparseDistribution(impl_->name, d, format);
  }
  impl_->distribution = d;
  impl_->format = format;
  // Its box is known before the data under a partition by coordinates; by non-zeros it
  // comes with setFromCoo.
  impl_->piece = d.byNonZeros() ? std::nullopt
                                : boxesOf(impl_->dims, impl_->grid, d).at(static_cast<size_t>(comm::rank()));
  if (impl_->piece) {  // empty until setFromCoo
    CooData none;
    for (const Extent& e : *impl_->piece) none.dims.push_back(e.size());
    impl_->sparsePiece = TensorBase(impl_->name, Datatype::Float64, none.dims, format);
    impl_->sparsePiece.setFromCoo(none);
  }
}

bool DistTensor::sparse() const { return impl_->format.has_value(); }
const TensorBase& DistTensor::sparsePiece() const { return impl_->sparsePiece; }
const Format& DistTensor::sparsePieceFormat() const {
  if (!impl_->format) throw UserError("tensor " + impl_->name + " is dense");
  return *impl_->format;
}

std::vector<std::optional<std::vector<Extent>>> DistTensor::allPieces() const {
  if (impl_->distribution.byNonZeros()) {
    if (impl_->dataPieces.empty())
      throw UserError("tensor " + impl_->name + " (" + impl_->distribution.str() +
                      "): its pieces follow its non-zeros: place them with setFromCoo first");
    return impl_->dataPieces;
  }
  return boxesOf(impl_->dims, impl_->grid, impl_->distribution);
}

const std::string& DistTensor::name() const { return impl_->name; }
const std::vector<int64_t>& DistTensor::dims() const { return impl_->dims; }
const Distribution& DistTensor::distribution() const { return impl_->distribution; }
const Grid& DistTensor::grid() const { return impl_->grid; }
const std::optional<std::vector<Extent>>& DistTensor::piece() const { return impl_->piece; }
double* DistTensor::data() { return impl_->vals.data(); }
const double* DistTensor::data() const { return impl_->vals.data(); }
int64_t DistTensor::localSize() const { return static_cast<int64_t>(impl_->vals.size()); }

void DistTensor::fill(const std::function<double(const std::vector<int64_t>&)>& value) {
  if (sparse()) throw UserError("tensor " + impl_->name + " is sparse: place its entries with setFromCoo");
  if (!impl_->piece) return;
  const spmd::Box& box = *impl_->piece;
  std::vector<int64_t> at;
  for (const Extent& e : box) at.push_back(e.lo);
  for (double& v : impl_->vals) {
    v = value(at);
    for (size_t d = at.size(); d-- > 0;) {
      if (++at[d] < box[d].hi) break;
      at[d] = box[d].lo;
    }
  }
}

void DistTensor::setFromCoo(const CooData& global) {
  if (global.dims != impl_->dims)
    throw DimensionError("tensor " + impl_->name + ": the data has other dimensions than the tensor");
  if (sparse()) {  // every rank places all entries alike and keeps its own
    TensorBase whole(impl_->name, Datatype::Float64, impl_->dims, *impl_->format);
    whole.setFromCoo(global);
    const int me = comm::rank();
    auto pieces = spmd::sparsePieces(whole, impl_->distribution, impl_->grid, me);
    impl_->piece = pieces[static_cast<size_t>(me)].box;
    impl_->sparsePiece = pieces[static_cast<size_t>(me)].tensor;
    impl_->dataPieces.clear();
    for (const spmd::SparsePiece& p : pieces) impl_->dataPieces.push_back(p.box);
    return;
  }
  std::fill(impl_->vals.begin(), impl_->vals.end(), 0.0);
  if (!impl_->piece) return;
  const spmd::Box& box = *impl_->piece;
  const int order = static_cast<int>(impl_->dims.size());
  for (int64_t e = 0; e < global.nnz(); e++) {
    int64_t off = 0;
    bool in = true;
    for (int d = 0; d < order && in; d++) {
      int64_t c = global.coords[static_cast<size_t>(e * order + d)];
      in = c >= box[static_cast<size_t>(d)].lo && c < box[static_cast<size_t>(d)].hi;
      off = off * box[static_cast<size_t>(d)].size() + (c - box[static_cast<size_t>(d)].lo);
    }
    if (in) impl_->vals[static_cast<size_t>(off)] += global.values[static_cast<size_t>(e)];
  }
}

namespace {

/// This rank's piece is the first replica of its entries: its coordinate is 0 along every
/// machine dimension that broadcasts the tensor (no distribution: rank 0 alone).
bool firstReplica(const DistTensor::Impl& t) {
  if (!t.piece) return false;
  if (!t.distribution.defined()) return comm::rank() == 0;
  const std::vector<int> coord = t.grid.coordOf(comm::rank());
  const DistributionStatement& st = t.distribution.levels()[0];
  for (size_t d = 0; d < st.machine.size(); d++)
    if (st.machine[d].kind == MachineDim::Kind::Broadcast && coord[d] != 0) return false;
  return true;
}

/// Rank 0 gets every entry of a sparse tensor's pieces, sorted, entries that two pieces
/// hold summed (neighbours of a fused partition may each hold part of a shared row).
/// Coordinates travel as doubles: exact below 2^53.
CooData gatherSparse(const DistTensor::Impl& t) {
  const int me = comm::rank(), ranks = comm::size();
  const int order = static_cast<int>(t.dims.size());
  CooData mine;
  if (firstReplica(t) && t.sparsePiece.defined()) mine = t.sparsePiece.toCoo();
  std::vector<double> packed;  // coordinates (global), then values
  packed.reserve(static_cast<size_t>(mine.nnz() * (order + 1)));
  for (int64_t e = 0; e < mine.nnz(); e++)
    for (int d = 0; d < order; d++)
      packed.push_back(static_cast<double>(mine.coords[static_cast<size_t>(e * order + d)] + (*t.piece)[static_cast<size_t>(d)].lo));
  packed.insert(packed.end(), mine.values.begin(), mine.values.end());
  std::vector<double> counts(static_cast<size_t>(ranks), 0.0);
  double n = static_cast<double>(mine.nnz());
  {
    comm::Exchange ex;
    if (me != 0) ex.send(0, 9997, &n, 1);
    else
      for (int q = 1; q < ranks; q++) ex.recv(q, 9997, &counts[static_cast<size_t>(q)], 1);
    ex.wait();
  }
  counts[0] = n;
  CooData out;
  out.dims = t.dims;
  std::vector<std::vector<double>> landed(static_cast<size_t>(ranks));
  {
    comm::Exchange ex;
    if (me != 0 && !packed.empty()) ex.send(0, 9998, packed.data(), static_cast<int64_t>(packed.size()));
    if (me == 0) {
      long double all = 0;
      for (double c : counts) all += c;
      io_detail::requireMemory(all * (order + 1) * 8 * 2, "gathering " + t.name + " on rank 0");
      for (int q = 1; q < ranks; q++) {
        auto& buf = landed[static_cast<size_t>(q)];
        buf.resize(static_cast<size_t>(counts[static_cast<size_t>(q)]) * static_cast<size_t>(order + 1));
        if (!buf.empty()) ex.recv(q, 9998, buf.data(), static_cast<int64_t>(buf.size()));
      }
    }
    ex.wait();
  }
  if (me != 0) return out;
  landed[0] = std::move(packed);
  CooData all;
  all.dims = t.dims;
  for (size_t q = 0; q < landed.size(); q++) {
    const int64_t k = static_cast<int64_t>(counts[q]);
    const std::vector<double>& buf = landed[q];
    for (int64_t x = 0; x < k * order; x++) all.coords.push_back(static_cast<int64_t>(buf[static_cast<size_t>(x)]));
    all.values.insert(all.values.end(), buf.begin() + k * order, buf.begin() + k * (order + 1));
  }
  TensorBase whole(t.name, Datatype::Float64, t.dims, *t.format);  // sorts and sums duplicates
  whole.setFromCoo(all);
  return whole.toCoo();
}

}  // namespace

namespace spmd {
void setSparseOutput(const DistTensor& t, const std::optional<Box>& box, TensorBase piece,
                     std::vector<std::optional<Box>> all) {
  DistTensor::Impl& im = *t.impl();
  im.piece = box;
  im.sparsePiece = std::move(piece);
  if (im.distribution.byNonZeros()) im.dataPieces = std::move(all);
}
void setSparseOutput(const DistTensor& t, Piece& piece, std::vector<std::optional<Box>> all) {
  setSparseOutput(t, piece.box, std::move(piece.sparseOutput), std::move(all));
}
}  // namespace spmd

CooData DistTensor::gather() const {
  if (sparse()) return gatherSparse(*impl_);
  const int me = comm::rank();
  auto pieces = boxesOf(impl_->dims, impl_->grid, impl_->distribution);
  spmd::Box all;
  for (int64_t n : impl_->dims) all.push_back(Extent{0, n});
  std::vector<double> dense;
  if (me == 0) {
    io_detail::requireMemory(static_cast<long double>(spmd::volume(all)) * 8, "gathering " + impl_->name + " on rank 0");
    dense.assign(static_cast<size_t>(spmd::volume(all)), 0.0);
  }
  // The first rank holding each distinct piece sends it.
  comm::Exchange ex;
  std::vector<std::pair<std::vector<double>, spmd::Box>> landed;
  std::vector<spmd::Box> sent;
  for (int q = 0; q < static_cast<int>(pieces.size()); q++) {
    if (!pieces[q] || spmd::volume(*pieces[q]) == 0) continue;
    if (std::find(sent.begin(), sent.end(), *pieces[q]) != sent.end()) continue;
    sent.push_back(*pieces[q]);
    if (q == 0 && me == 0) {
      spmd::copyRegion(impl_->vals.data(), *pieces[q], dense.data(), all, *pieces[q], false);
    } else if (q == me) {
      ex.send(0, 9999, impl_->vals.data(), spmd::volume(*pieces[q]));
    } else if (me == 0) {
      landed.emplace_back(std::vector<double>(static_cast<size_t>(spmd::volume(*pieces[q]))), *pieces[q]);
      ex.recv(q, 9999, landed.back().first.data(), spmd::volume(*pieces[q]));
    }
  }
  ex.wait();
  CooData out;
  out.dims = impl_->dims;
  if (me != 0) return out;
  for (auto& [vals, box] : landed) spmd::copyRegion(vals.data(), box, dense.data(), all, box, false);
  const int order = static_cast<int>(impl_->dims.size());
  std::vector<int64_t> at(static_cast<size_t>(order), 0);
  for (size_t x = 0; x < dense.size(); x++) {
    if (dense[x] != 0.0) {
      out.coords.insert(out.coords.end(), at.begin(), at.end());
      out.values.push_back(dense[x]);
    }
    for (int d = order; d-- > 0;) {
      if (++at[static_cast<size_t>(d)] < impl_->dims[static_cast<size_t>(d)]) break;
      at[static_cast<size_t>(d)] = 0;
    }
  }
  return out;
}

}  // namespace tessel
