// Writing a distributed tensor into one .mtx or .tns file in parallel (SuperTaco §4.6):
// each rank formats the entries of its piece with the serial writers' line text
// (io/text_entries.h), an exclusive scan of the byte counts gives it its offset, and it
// pwrites there into a temporary that rank 0 created next to the target; once every
// rank agrees that it succeeded, rank 0 renames the temporary into place. The file is
// byte for byte writeTensorFile's of the gathered entries: the pieces are in row-major
// order across ranks (checked on the data: each writing rank's first and last entry),
// or are moved to row blocks first.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "io/io_util.h"
#include "io/text_entries.h"
#include "runtime/spmd/box.h"
#include "runtime/spmd/comm.h"
#include "runtime/spmd/dist_files.h"
#include "runtime/spmd/dist_tensor_impl.h"
#include "tessel/error.h"
#include "tessel/io.h"

namespace tessel {

namespace {

bool hasSuffix(const std::string& s, std::string_view suffix) {
  return s.size() > suffix.size() && io_detail::equalsIgnoreCase(std::string_view(s).substr(s.size() - suffix.size()), suffix);
}

/// This rank's entries to write, global coordinates, row-major: its piece unless a lower
/// rank holds the same box (a replicated piece is written once).
CooData entriesToWrite(const DistTensor& t, bool skipZeros) {
  CooData out;
  out.dims = t.dims();
  const auto& piece = t.piece();
  if (!piece) return out;
  // Pieces of a fused partition may share a box (one row split between ranks) and hold
  // different entries; elsewhere equal boxes are copies.
  bool fusedParts = false;
  if (t.distribution().defined())
    for (const MachineDim& m : t.distribution().levels().at(0).machine)
      fusedParts |= m.kind == MachineDim::Kind::Partition && m.tensorDim == MachineDim::kFused;
  const auto all = t.allPieces();
  for (int q = 0; q < comm::rank() && !fusedParts; q++)
    if (all[static_cast<size_t>(q)] == piece) return out;
  const spmd::Box& box = *piece;
  const int order = static_cast<int>(box.size());
  if (t.sparse()) {
    if (!t.sparsePiece().defined()) return out;
    CooData local = spmd::sortedLexicographically(t.sparsePiece().toCoo());
    for (int64_t e = 0; e < local.nnz(); e++) {
      const double v = local.values[static_cast<size_t>(e)];
      if (skipZeros && v == 0) continue;
      for (int m = 0; m < order; m++) out.coords.push_back(local.coords[static_cast<size_t>(e * order + m)] + box[static_cast<size_t>(m)].lo);
      out.values.push_back(v);
    }
    return out;
  }
  // Dense: the non-zeros (gather() keeps those), row-major over the box.
  std::vector<int64_t> at;
  for (const Extent& e : box) at.push_back(e.lo);
  const double* vals = t.data();
  for (int64_t x = 0; x < t.localSize(); x++) {
    if (vals[x] != 0.0) {
      out.coords.insert(out.coords.end(), at.begin(), at.end());
      out.values.push_back(vals[x]);
    }
    for (int d = order; d-- > 0;) {
      if (++at[static_cast<size_t>(d)] < box[static_cast<size_t>(d)].hi) break;
      at[static_cast<size_t>(d)] = box[static_cast<size_t>(d)].lo;
    }
  }
  return out;
}

/// Whether the ranks' entries, each rank's sorted, are in row-major order rank after rank.
bool inRankOrder(const CooData& mine) {
  const int p = comm::size(), me = comm::rank(), order = mine.order();
  const size_t stride = 2 * static_cast<size_t>(order) + 1;
  std::vector<int64_t> ends(static_cast<size_t>(p) * stride, 0);
  if (mine.nnz() > 0) {
    int64_t* slot = ends.data() + static_cast<size_t>(me) * stride;
    slot[0] = 1;
    std::copy_n(mine.coords.begin(), order, slot + 1);
    std::copy_n(mine.coords.end() - order, order, slot + 1 + order);
  }
  comm::sumOver(ends);
  const int64_t* last = nullptr;
  for (int q = 0; q < p; q++) {
    const int64_t* slot = ends.data() + static_cast<size_t>(q) * stride;
    if (!slot[0]) continue;
    if (last && !std::lexicographical_compare(last, last + order, slot + 1, slot + 1 + order)) return false;
    last = slot + 1 + order;
  }
  return true;
}

void pwriteAll(int fd, const std::string& text, int64_t at, const std::string& path) {
  const char* p = text.data();
  size_t n = text.size();
  while (n > 0) {
    ssize_t w = ::pwrite(fd, p, std::min<size_t>(n, size_t(1) << 30), at);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw FileError(path, std::string("cannot write: ") + std::strerror(w < 0 ? errno : EIO));
    p += w, n -= static_cast<size_t>(w), at += w;
  }
}

}  // namespace

void DistTensor::write(const std::string& path) const {
  const bool mtx = hasSuffix(path, ".mtx"), tns = hasSuffix(path, ".tns");
  const int order = static_cast<int>(impl_->dims.size());
  if ((!mtx && !tns) || order == 0) {  // .tsb (packed whole), scalars, and names writeTensorFile refuses
    CooData all = gather();
    spmd::agreeOnFailure([&] {
      if (comm::rank() == 0) writeTensorFile(path, all);
    });
    return;
  }
  if (mtx && order != 2)
    throw UserError("writeMtx: " + path + ": Matrix Market files hold matrices (order 2), not order " +
                    std::to_string(order));
  const int me = comm::rank();
  CooData mine;
  spmd::agreeOnFailure([&] { mine = entriesToWrite(*this, tns); });
  if (!inRankOrder(mine)) mine = spmd::sortedLexicographically(spmd::toRowBlocks(mine));

  std::string text, header;
  const int64_t nnz = comm::sumOver(mine.nnz());
  spmd::agreeOnFailure([&] {
    // At most 20 characters per coordinate and 25 per value, blanks and newline.
    io_detail::requireMemory(static_cast<long double>(mine.nnz()) * (21 * order + 26), "formatting this rank's entries of " + path);
    text.reserve(static_cast<size_t>(mine.nnz()) * static_cast<size_t>(8 * order + 20));
    for (int64_t e = 0; e < mine.nnz(); e++)
      io_detail::appendEntryLine(text, mine.coords.data() + e * order, order, mine.values[static_cast<size_t>(e)]);
    mine = CooData();
    if (me == 0)
      header = mtx ? io_detail::mtxHeaderText(impl_->dims[0], impl_->dims[1], nnz)
                   : order > 0 ? io_detail::tnsDimsComment(impl_->dims) : std::string();
  });
  const std::vector<int64_t> sizes = comm::allGather(static_cast<int64_t>(me == 0 ? header.size() + text.size() : text.size()));
  int64_t offset = me == 0 ? static_cast<int64_t>(header.size()) : 0;
  for (int q = 0; q < me; q++) offset += sizes[static_cast<size_t>(q)];

  std::string tmp;
  int fd = -1, slot = -1;
  auto cleanup = [&] {
    if (fd >= 0) ::close(fd);
    fd = -1;
    if (me == 0 && !tmp.empty()) ::unlink(tmp.c_str());
    io_detail::unregisterTemporary(slot);
  };
  try {
    spmd::agreeOnFailure([&] {
      if (me == 0) fd = io_detail::createTemporary(path, tmp, slot);
    });
    const std::string name = comm::broadcast(0, tmp);
    spmd::agreeOnFailure([&] {
      if (me != 0) {
        fd = ::open(name.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0) throw FileError(path, "cannot open the temporary " + name + ": " + std::strerror(errno));
      } else {
        pwriteAll(fd, header, 0, path);
      }
      pwriteAll(fd, text, offset, path);
      // On disk before the rename: otherwise a crash can leave the new name on missing data.
      if (::fsync(fd) != 0 && errno != EINVAL) throw FileError(path, std::string("cannot write: ") + std::strerror(errno));
      const int f = fd;
      fd = -1;
      if (::close(f) != 0) throw FileError(path, std::string("cannot write: ") + std::strerror(errno));
    });
    spmd::agreeOnFailure([&] {
      if (me != 0) return;
      if (::rename(tmp.c_str(), path.c_str()) != 0)
        throw FileError(path, std::string("cannot replace file: ") + std::strerror(errno));
      tmp.clear();
      io_detail::unregisterTemporary(slot);
      slot = -1;
      // The rename itself is durable only once the directory is synced.
      const size_t slash = path.rfind('/');
      const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
      int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
      }
    });
  } catch (...) {
    cleanup();
    throw;
  }
}

}  // namespace tessel
