// The SPMD executor. Every rank computes every other rank's boxes from the program (no
// messages needed to agree on who sends what), so each step's transfers are posted alike
// on all ranks and completed together: no step can deadlock. A tensor's fetch for step
// s+1 is posted before step s's leaf runs (double buffers), so it overlaps the compute.
#include "runtime/spmd/executor.h"

#include <algorithm>
#include <chrono>
#include <deque>

#include "io/io_util.h"
#include "runtime/spmd/comm.h"
#include "runtime/spmd/sparse_fetch.h"
#include "tessel/error.h"

namespace tessel::spmd {

std::vector<std::optional<Box>> piecesOf(const TensorUse& t) {
  if (!t.dataPieces.empty()) return t.dataPieces;
  std::vector<std::optional<Box>> out;
  for (int q = 0; q < t.grid.size(); q++) {
    if (!t.distribution.defined()) {
      Box all;
      for (int64_t n : t.dims) all.push_back(Extent{0, n});
      out.push_back(all);
    } else {
      out.push_back(t.distribution.piece(t.dims, t.grid, t.grid.coordOf(q)));
    }
  }
  return out;
}

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// The distinct pieces of a tensor and the ranks holding each (several when replicated).
struct Owners {
  std::vector<Box> boxes;
  std::vector<std::vector<int>> ranks;
  explicit Owners(const TensorUse& t) {
    auto pieces = piecesOf(t);
    for (int q = 0; q < static_cast<int>(pieces.size()); q++) {
      if (!pieces[q] || volume(*pieces[q]) == 0) continue;
      auto at = std::find(boxes.begin(), boxes.end(), *pieces[q]);
      if (at == boxes.end()) {
        boxes.push_back(*pieces[q]);
        ranks.push_back({q});
      } else {
        ranks[static_cast<size_t>(at - boxes.begin())].push_back(q);
      }
    }
  }
  /// Only rank q holds its piece (not replicated).
  bool soleOwner(int q) const {
    for (const auto& rs : ranks)
      if (std::find(rs.begin(), rs.end(), q) != rs.end()) return rs.size() == 1;
    return false;
  }
  /// Who sends piece g to rank q: q itself when it holds a replica, else one replica
  /// picked by q (spreads the senders of a replicated piece).
  int source(size_t g, int q) const {
    const auto& rs = ranks[g];
    if (std::find(rs.begin(), rs.end(), q) != rs.end()) return q;
    return rs[static_cast<size_t>(q) % rs.size()];
  }
};

/// A tensor's box at its communication level: its own storage, or (when the box is
/// exactly this rank's piece) the piece itself, uncopied.
struct Buffer {
  Box box;
  std::vector<double> storage;
  double* ptr = nullptr;
  void reset(const Box& b, bool zero) {
    box = b;
    storage.resize(static_cast<size_t>(volume(b)));
    if (zero) std::fill(storage.begin(), storage.end(), 0.0);
    ptr = storage.data();
  }
  void alias(const Box& b, double* piece) {
    box = b;
    ptr = piece;
  }
};

/// Transfers in flight and what to do with received data once they land.
struct Transfers {
  comm::Exchange exchange;
  std::deque<std::vector<double>> staging;  // stable references while more are staged
  struct Landing {
    int from;  // rank order of reductions (deterministic sums)
    const double* src;
    Box srcBox;
    double* dst;
    Box dstBox;
    Box region;
    bool add;
  };
  std::vector<Landing> landings;
  std::vector<double>& stage(int64_t n) {
    staging.emplace_back(static_cast<size_t>(n));
    return staging.back();
  }
  void finish() {
    exchange.wait();
    std::stable_sort(landings.begin(), landings.end(), [](const Landing& a, const Landing& b) { return a.from < b.from; });
    for (const Landing& l : landings) copyRegion(l.src, l.srcBox, l.dst, l.dstBox, l.region, l.add);
    landings.clear();
    staging.clear();
  }
};

class Run {
 public:
  Run(const Program& p, Leaf& leaf, std::vector<Piece>& pieces)
      : p_(p), leaf_(leaf), pieces_(pieces), me_(comm::rank()), ranks_(comm::size()) {
    for (const TensorUse& t : p.tensors) owners_.emplace_back(t);
    D_ = p.distributedLoops;
    for (size_t l = static_cast<size_t>(D_); l < p.loops.size(); l++) counts_.push_back(p.loops[l].count);
    total_ = 1;
    for (int64_t c : counts_) total_ *= c;
    stats_.bytesSent.assign(p.tensors.size(), 0);
    stats_.bytesReceived.assign(p.tensors.size(), 0);
    stats_.formulaBytes.assign(p.tensors.size(), 0);
    stats_.messages.assign(p.tensors.size(), 0);
    stats_.broadcasts.assign(p.tensors.size(), 0);
    stats_.reductions.assign(p.tensors.size(), 0);
    cur_.resize(p.tensors.size());
    next_.resize(p.tensors.size());
    scratch_.resize(p.tensors.size());
    aliasedOutput_.assign(p.tensors.size(), false);
  }

  ExecStats go() {
    auto t0 = Clock::now();
    for (size_t t = 0; t < p_.tensors.size(); t++)
      if (p_.tensors[t].sparse && pieces_[t].sparse) leaf_.bindSparse(t, *pieces_[t].sparse);
    for (size_t t = 1; t < p_.tensors.size(); t++)
      if (p_.tensors[t].sparse) fetchSparse(t);
    // The output piece starts at zero, but a dgemm leaf writing it whole can skip that
    // (beta = 0): zeroing is deferred until something else touches the piece.
    if (!p_.accumulate && pieces_[0].box && !p_.tensors[0].sparse) {
      pieceFresh_ = true;
      if (!leaf_.canOverwrite() || p_.leaves.size() > 1) materializePiece();
    }
    std::vector<int64_t> digits(counts_.size(), 0);
    if (total_ > 0) {
      Transfers first;
      for (size_t t = 0; t < p_.tensors.size(); t++) begin(t, digits, cur_[t], first);
      timedFinish(first);
    }
    for (int64_t s = 0; s < total_; s++) {
      std::vector<int64_t> after = digits;
      bool more = advance(after);
      Transfers prefetch;
      std::vector<size_t> swapped;
      if (more)
        for (size_t t = 0; t < p_.tensors.size(); t++)
          if (!p_.tensors[t].output && startsAt(p_.tensors[t].level, after)) {
            begin(t, after, next_[t], prefetch);
            swapped.push_back(t);
          }
      runLeaf(digits);
      for (size_t t = 0; t < p_.tensors.size(); t++)
        if (p_.tensors[t].output && endsAt(p_.tensors[t].level, digits)) reduce(t, digits);
      timedFinish(prefetch);
      for (size_t t : swapped) std::swap(cur_[t], next_[t]);
      if (more)
        for (size_t t = 0; t < p_.tensors.size(); t++)
          if (p_.tensors[t].output && startsAt(p_.tensors[t].level, after)) {
            Transfers none;
            begin(t, after, cur_[t], none);
          }
      digits = after;
    }
    materializePiece();
    // A sparse output piece is what this rank's one leaf run assembled (owner computes:
    // nothing to reduce; the driver checked that no other rank computes into it).
    if (p_.tensors[0].sparse && pieces_[0].collectSparseOutput && pieces_[0].box)
      pieces_[0].sparseOutput = leaf_.takeSparseOutput(*pieces_[0].box);
    stats_.seconds = since(t0);
    return stats_;
  }

 private:
  /// The output piece, still unwritten, becomes zeros.
  void materializePiece() {
    if (!pieceFresh_) return;
    std::fill(pieces_[0].data, pieces_[0].data + volume(*pieces_[0].box), 0.0);
    pieceFresh_ = false;
  }

  /// A sparse input whose box (fixed for the run: communicated at a distributed loop) is
  /// not the piece a rank holds: every rank fetches the rows of its box it needs (those
  /// its row filter holds, else all) and computes on them. Collective when any rank needs
  /// it, which every rank derives alike from the program.
  void fetchSparse(size_t t) {
    const TensorUse& u = p_.tensors[t];
    const std::vector<int64_t> first(counts_.size(), 0);
    const auto pieces = piecesOf(u);
    bool any = false, mine = false;
    Box want;
    for (int q = 0; q < ranks_; q++) {
      Box b = boxAt(p_, static_cast<int>(t), u.level, valuesOf(q, first));
      const bool needs = volume(b) > 0 && (!pieces[static_cast<size_t>(q)] || *pieces[static_cast<size_t>(q)] != b);
      any |= needs;
      if (q == me_) {
        mine = needs;
        want = b;
      }
    }
    if (!any) return;
    auto t0 = Clock::now();
    std::vector<int64_t> rows;
    if (mine) {
      const Extent& r = want[0];
      const int f = u.rowFilter;
      const bool filtered = f > 0 && p_.tensors[static_cast<size_t>(f)].sparse && pieces_[static_cast<size_t>(f)].sparse &&
                            pieces_[static_cast<size_t>(f)].box;
      if (filtered) {
        const int64_t lo = (*pieces_[static_cast<size_t>(f)].box)[static_cast<size_t>(u.rowFilterDim)].lo;
        for (int64_t c : coordinatesOf(*pieces_[static_cast<size_t>(f)].sparse, u.rowFilterDim, lo))
          if (c >= r.lo && c < r.hi) rows.push_back(c);
      } else {
        for (int64_t c = r.lo; c < r.hi; c++) rows.push_back(c);
      }
    }
    SparseFetchStats fs;
    TensorBase got = fetchSparseRows(u, pieces_[t].sparse, pieces_[t].box, mine, want, rows, fs);
    stats_.bytesSent[t] += fs.bytesSent;
    stats_.bytesReceived[t] += fs.bytesReceived;
    stats_.messages[t] += fs.messages;
    if (mine) {
      fetched_.push_back(got);
      leaf_.bindSparse(t, fetched_.back());
    }
    stats_.commSeconds += since(t0);
  }

  /// Loop values (block indices) of rank q at the step `digits`.
  std::vector<int64_t> valuesOf(int q, const std::vector<int64_t>& digits) const {
    std::vector<int64_t> v(p_.loops.size(), 0);
    std::vector<int> coord = p_.grid.coordOf(q);
    for (size_t l = 0; l < p_.loops.size(); l++) {
      if (static_cast<int>(l) < D_)
        v[l] = coord.at(static_cast<size_t>(p_.loops[l].gridDim));
      else
        v[l] = blockIndex(p_, static_cast<int>(l), digits[l - static_cast<size_t>(D_)], v);
    }
    return v;
  }
  bool advance(std::vector<int64_t>& d) const {
    for (size_t k = d.size(); k-- > 0;) {
      if (++d[k] < counts_[k]) return true;
      d[k] = 0;
    }
    return false;
  }
  /// The loop at `level` starts an iteration at step `d`: every step loop inside it is at 0.
  bool startsAt(int level, const std::vector<int64_t>& d) const {
    for (size_t k = static_cast<size_t>(std::max(level + 1, D_) - D_); k < d.size(); k++)
      if (d[k] != 0) return false;
    return level >= D_ || std::all_of(d.begin(), d.end(), [](int64_t x) { return x == 0; });
  }
  bool endsAt(int level, const std::vector<int64_t>& d) const {
    for (size_t k = static_cast<size_t>(std::max(level + 1, D_) - D_); k < d.size(); k++)
      if (d[k] != counts_[k] - 1) return false;
    if (level >= D_) return true;
    for (size_t k = 0; k < d.size(); k++)
      if (d[k] != counts_[k] - 1) return false;
    return true;
  }

  void timedFinish(Transfers& tr) {
    auto t0 = Clock::now();
    tr.finish();
    stats_.commSeconds += since(t0);
  }

  /// Start tensor t's box at step d: an input is fetched from its owners into `buf`; an
  /// output's buffer is zeroed.
  void begin(size_t t, const std::vector<int64_t>& d, Buffer& buf, Transfers& tr) {
    auto t0 = Clock::now();
    const TensorUse& u = p_.tensors[t];
    const Box mine = boxAt(p_, static_cast<int>(t), u.level, valuesOf(me_, d));
    if (u.sparse) {  // never moved: the box is the piece (the driver checked every rank's)
      buf.alias(mine, nullptr);
      return;
    }
    const bool ownPiece = pieces_[t].box && *pieces_[t].box == mine;
    // A box the schedule communicates can be far larger than the rank's piece (a whole
    // input fetched at the top): checked against the memory limit like any size from input.
    if (!ownPiece) {
      const long double bytes = static_cast<long double>(volume(mine)) * 8 * (u.output ? 1 : 2);
      if (bytes > static_cast<long double>(io_detail::memoryLimit()))
        io_detail::requireMemory(bytes, "tensor " + u.name + ": its box communicated at " +
                                            (u.level >= 0 ? "loop " + p_.loops[u.level].name : std::string("the top")) +
                                            " on rank " + std::to_string(me_) + " (double-buffered)");
    }
    if (u.output) {
      // An output box that is this rank's whole piece for the whole run accumulates there
      // (the piece starts at zero, or at its old values for +=).
      if (ownPiece && u.level < D_ && owners_[t].soleOwner(me_)) {
        buf.alias(mine, pieces_[t].data);
        aliasedOutput_[t] = true;
      } else {
        buf.reset(mine, true);
      }
      return;
    }
    if (ownPiece)  // nothing to fetch or copy for this rank (others may still need it)
      buf.alias(mine, pieces_[t].data);
    else
      buf.reset(mine, false);
    stats_.formulaBytes[t] += volume(mine) * 8;
    const Owners& own = owners_[t];
    const int tag = static_cast<int>(t) * 4 + static_cast<int>(stepParity_++ & 1) * 2;
    std::vector<Box> need(static_cast<size_t>(ranks_));
    for (int q = 0; q < ranks_; q++) need[q] = q == me_ ? mine : boxAt(p_, static_cast<int>(t), u.level, valuesOf(q, d));
    for (size_t g = 0; g < own.boxes.size(); g++) {
      // The ranks needing the same region of piece g, in rank order (a row of SUMMA).
      std::vector<std::pair<Box, std::vector<int>>> wanted;
      for (int q = 0; q < ranks_; q++) {
        Box region = intersect(need[q], own.boxes[g]);
        if (volume(region) == 0) continue;
        if (own.source(g, q) == q) {  // q holds a replica: a local copy
          if (q == me_ && !ownPiece) copyRegion(pieces_[t].data, *pieces_[t].box, buf.ptr, buf.box, region, false);
          continue;
        }
        auto at = std::find_if(wanted.begin(), wanted.end(), [&](const auto& w) { return w.first == region; });
        if (at == wanted.end()) wanted.push_back({region, {q}});
        else at->second.push_back(q);
      }
      for (const auto& [region, receivers] : wanted) {
        if (receivers.size() >= 2 && comm::collectivesEnabled()) {
          broadcast(t, g, region, receivers, buf, tr);
          continue;
        }
        for (int q : receivers) {
          int src = own.source(g, q);
          if (src == me_) sendRegion(q, tag, t, region, tr);
          else if (q == me_) receiveRegion(src, tag, t, region, buf, tr);
        }
      }
    }
    stats_.commSeconds += since(t0);
  }

  /// Received data for `region` of buffer `buf`: in place when contiguous there.
  double* landingFor(int from, size_t t, const Box& region, Buffer& buf, Transfers& tr) {
    stats_.bytesReceived[t] += volume(region) * 8;
    if (auto off = contiguousOffset(buf.box, region)) return buf.ptr + *off;
    auto& staged = tr.stage(volume(region));
    tr.landings.push_back({from, staged.data(), region, buf.ptr, buf.box, region, false});
    return staged.data();
  }

  void receiveRegion(int from, int tag, size_t t, const Box& region, Buffer& buf, Transfers& tr) {
    tr.exchange.recv(from, tag, landingFor(from, t, region, buf, tr), volume(region));
  }

  /// One owner of piece g sends `region` to all `receivers` at once (a row or column
  /// broadcast on their sub-communicator).
  void broadcast(size_t t, size_t g, const Box& region, const std::vector<int>& receivers, Buffer& buf,
                 Transfers& tr) {
    const int root = owners_[t].ranks[g].front();
    std::vector<int> members = receivers;
    members.push_back(root);
    std::sort(members.begin(), members.end());
    if (!std::binary_search(members.begin(), members.end(), me_)) return;
    const int64_t n = volume(region);
    if (me_ == root) {
      stats_.bytesSent[t] += n * 8 * static_cast<int64_t>(receivers.size());
      stats_.broadcasts[t]++;
      const Box& from = *pieces_[t].box;
      if (auto off = contiguousOffset(from, region)) {
        tr.exchange.bcast(members, root, pieces_[t].data + *off, n);
      } else {
        auto& staged = tr.stage(n);
        copyRegion(pieces_[t].data, from, staged.data(), region, region, false);
        tr.exchange.bcast(members, root, staged.data(), n);
      }
    } else {
      tr.exchange.bcast(members, root, landingFor(root, t, region, buf, tr), n);
    }
  }

  void sendRegion(int to, int tag, size_t t, const Box& region, Transfers& tr) {
    stats_.bytesSent[t] += volume(region) * 8;
    stats_.messages[t]++;
    const Box& from = *pieces_[t].box;
    if (auto off = contiguousOffset(from, region)) {
      tr.exchange.send(to, tag, pieces_[t].data + *off, volume(region));
      return;
    }
    auto& staged = tr.stage(volume(region));
    copyRegion(pieces_[t].data, from, staged.data(), region, region, false);
    tr.exchange.send(to, tag, staged.data(), volume(region));
  }

  /// Add every rank's box of output t (at step d) into the pieces that own it.
  void reduce(size_t t, const std::vector<int64_t>& d) {
    if (p_.tensors[t].sparse) return;  // assembled by its owner, see go()
    auto t0 = Clock::now();
    if (t == 0) materializePiece();
    const TensorUse& u = p_.tensors[t];
    const Owners& own = owners_[t];
    Transfers tr;
    const int tag = static_cast<int>(t) * 4 + 1;
    stats_.formulaBytes[t] += volume(cur_[t].box) * 8;
    std::vector<Box> contrib(static_cast<size_t>(ranks_));
    for (int q = 0; q < ranks_; q++)
      contrib[q] = q == me_ ? cur_[t].box : boxAt(p_, static_cast<int>(t), u.level, valuesOf(q, d));
    for (size_t g = 0; g < own.boxes.size(); g++) {
      // The contributors of each distinct region of piece g, in rank order.
      std::vector<std::pair<Box, std::vector<int>>> parts;
      for (int q = 0; q < ranks_; q++) {
        Box region = intersect(contrib[q], own.boxes[g]);
        if (volume(region) == 0) continue;
        auto at = std::find_if(parts.begin(), parts.end(), [&](const auto& w) { return w.first == region; });
        if (at == parts.end()) parts.push_back({region, {q}});
        else at->second.push_back(q);
      }
      for (const auto& [region, from] : parts) {
        if (comm::collectivesEnabled() && reduceCollective(t, g, region, from, tr)) continue;
        for (int q : from)
          for (int r : own.ranks[g]) reducePointToPoint(t, q, r, tag, region, tr);
      }
    }
    tr.finish();
    stats_.commSeconds += since(t0);
  }

  void reducePointToPoint(size_t t, int q, int r, int tag, const Box& region, Transfers& tr) {
    if (q == me_ && r == me_) {
      if (!aliasedOutput_[t])  // else computed in place
        tr.landings.push_back({me_, cur_[t].ptr, cur_[t].box, pieces_[t].data, *pieces_[t].box, region, true});
    } else if (q == me_) {
      stats_.bytesSent[t] += volume(region) * 8;
      stats_.messages[t]++;
      auto& staged = tr.stage(volume(region));
      copyRegion(cur_[t].ptr, cur_[t].box, staged.data(), region, region, false);
      tr.exchange.send(r, tag, staged.data(), volume(region));
    } else if (r == me_) {
      stats_.bytesReceived[t] += volume(region) * 8;
      auto& staged = tr.stage(volume(region));
      tr.exchange.recv(q, tag, staged.data(), volume(region));
      tr.landings.push_back({q, staged.data(), region, pieces_[t].data, *pieces_[t].box, region, true});
    }
  }

  /// Reductions MPI does better: many contributors into one owner (MPI_Ireduce, the k
  /// layers of Johnson's 3-D), or every holder of a replicated piece contributing
  /// (MPI_Iallreduce, an inner product's scalar). False: point-to-point it is.
  bool reduceCollective(size_t t, size_t g, const Box& region, const std::vector<int>& from, Transfers& tr) {
    const std::vector<int>& owners = owners_[t].ranks[g];
    const int64_t n = volume(region);
    if (owners.size() >= 2 && from.size() == 1) {  // one rank computed a replicated block
      std::vector<int> members = owners;
      if (!std::binary_search(members.begin(), members.end(), from[0]))
        members.insert(std::lower_bound(members.begin(), members.end(), from[0]), from[0]);
      if (members.size() < 3) return false;
      if (!std::binary_search(members.begin(), members.end(), me_)) return true;
      double* block = tr.stage(n).data();
      if (me_ == from[0]) {
        copyRegion(cur_[t].ptr, cur_[t].box, block, region, region, false);
        stats_.bytesSent[t] += n * 8 * static_cast<int64_t>(members.size() - 1);
        stats_.broadcasts[t]++;
      } else {
        stats_.bytesReceived[t] += n * 8;
      }
      tr.exchange.bcast(members, from[0], block, n);
      if (std::binary_search(owners.begin(), owners.end(), me_))
        tr.landings.push_back({from[0], block, region, pieces_[t].data, *pieces_[t].box, region, true});
      return true;
    }
    if (owners.size() >= 2) {
      if (from != owners) return false;  // both in rank order
      if (!std::binary_search(owners.begin(), owners.end(), me_)) return true;
      auto& staged = tr.stage(n);
      copyRegion(cur_[t].ptr, cur_[t].box, staged.data(), region, region, false);
      stats_.bytesSent[t] += n * 8;
      stats_.bytesReceived[t] += n * 8;
      if (me_ == owners.front()) stats_.reductions[t]++;
      tr.exchange.allreduce(owners, staged.data(), n);
      tr.landings.push_back({me_, staged.data(), region, pieces_[t].data, *pieces_[t].box, region, true});
      return true;
    }
    const int root = owners.front();
    std::vector<int> members = from;
    if (!std::binary_search(members.begin(), members.end(), root))
      members.insert(std::lower_bound(members.begin(), members.end(), root), root);
    if (members.size() < 3) return false;  // one message: point-to-point
    if (!std::binary_search(members.begin(), members.end(), me_)) return true;
    auto& mine = tr.stage(n);  // zeros unless this rank contributed (and did not compute in place)
    const bool contributes = std::binary_search(from.begin(), from.end(), me_) && !(me_ == root && aliasedOutput_[t]);
    if (contributes) copyRegion(cur_[t].ptr, cur_[t].box, mine.data(), region, region, false);
    if (me_ != root) {
      stats_.bytesSent[t] += n * 8;
      tr.exchange.reduce(members, root, mine.data(), nullptr, n);
      return true;
    }
    stats_.bytesReceived[t] += n * 8 * static_cast<int64_t>(members.size() - 1);
    stats_.reductions[t]++;
    auto& sum = tr.stage(n);
    tr.exchange.reduce(members, root, mine.data(), sum.data(), n);
    tr.landings.push_back({me_, sum.data(), region, pieces_[t].data, *pieces_[t].box, region, true});
    return true;
  }

  void runLeaf(const std::vector<int64_t>& d) {
    const int leafLevel = static_cast<int>(p_.loops.size()) - 1;
    std::vector<int64_t> vals = valuesOf(me_, d);
    for (size_t s = 0; s < p_.spaces.size(); s++)
      if (rangeAt(p_, static_cast<int>(s), leafLevel, vals).size() == 0) return;  // no iterations here
    std::vector<Box> boxes;
    std::vector<double*> data;
    auto t0 = Clock::now();
    for (size_t t = 0; t < p_.tensors.size(); t++) {
      Box b = boxAt(p_, static_cast<int>(t), leafLevel, vals);
      Buffer& buf = cur_[t];
      if (p_.tensors[t].sparse) {
        if (b != buf.box)
          throw ScheduleError("sparse tensor " + p_.tensors[t].name +
                              ": the loops below its communicate level split it, and a sparse piece runs whole "
                              "(split those loops in the leaf schedule instead)");
        data.push_back(nullptr);
      } else if (b == buf.box) {
        data.push_back(buf.ptr);
      } else {  // the leaf's block of a box fetched further out
        scratch_[t].reset(b, p_.tensors[t].output);
        if (!p_.tensors[t].output) copyRegion(buf.ptr, buf.box, scratch_[t].ptr, b, b, false);
        data.push_back(scratch_[t].ptr);
      }
      boxes.push_back(b);
    }
    // Overwrite the untouched output piece when the one leaf writes all of it.
    bool overwrite = pieceFresh_ && aliasedOutput_[0] && data[0] == cur_[0].ptr && p_.leaves.size() == 1;
    for (size_t v = 0; v < p_.leaves.size(); v++) {
      bool first = true;
      for (int s : p_.leaves[v].firstBlockOf) first &= rangeAt(p_, s, leafLevel, vals).lo == 0;
      if (!first) continue;
      if (overwrite) {
        pieceFresh_ = false;
      } else if (aliasedOutput_[0]) {
        materializePiece();
      }
      leaf_.run(v, boxes, data, overwrite);
    }
    for (size_t t = 0; t < p_.tensors.size(); t++)
      if (p_.tensors[t].output && data[t] != cur_[t].ptr)
        copyRegion(data[t], boxes[t], cur_[t].ptr, cur_[t].box, boxes[t], true);
    stats_.computeSeconds += since(t0);
  }

  const Program& p_;
  Leaf& leaf_;
  std::vector<Piece>& pieces_;
  const int me_, ranks_;
  int D_ = 0;
  std::vector<int64_t> counts_;
  int64_t total_ = 1;
  uint64_t stepParity_ = 0;
  std::vector<Owners> owners_;
  std::vector<Buffer> cur_, next_, scratch_;
  std::vector<bool> aliasedOutput_;
  bool pieceFresh_ = false;  ///< the output piece is not yet zeroed nor written
  std::deque<TensorBase> fetched_;  ///< sparse rows fetched for this run (bound to the leaf)
  ExecStats stats_;
};

}  // namespace

ExecStats execute(const Program& p, Leaf& leaf, std::vector<Piece>& pieces) {
  if (p.grid.size() != comm::size())
    throw DistributionError("the program is for a " + p.grid.str() + " grid of " + std::to_string(p.grid.size()) +
                            " ranks, but " + std::to_string(comm::size()) + " are running");
  if (pieces.size() != p.tensors.size()) throw InternalError("execute: one piece per program tensor expected");
  return Run(p, leaf, pieces).go();
}

}  // namespace tessel::spmd
