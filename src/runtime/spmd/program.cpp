// Index arithmetic and printing of SPMD programs.
#include "runtime/spmd/program.h"

#include <algorithm>
#include <sstream>

namespace tessel::spmd {

Extent rangeAt(const Program& p, int space, int level, const std::vector<int64_t>& values) {
  const IndexSpace& s = p.spaces.at(static_cast<size_t>(space));
  Extent r{0, s.extent};
  for (const SplitStep& st : s.chain) {
    if (st.loop > level) break;  // chains are in loop order (checked by the lowering)
    int64_t b = values.at(static_cast<size_t>(st.loop));
    if (!st.dataBlocks.empty()) {
      const Extent& d = st.dataBlocks.at(static_cast<size_t>(b));
      r = Extent{std::max(r.lo, d.lo), std::max(std::max(r.lo, d.lo), std::min(r.hi, d.hi))};
    } else if (st.divide) {
      Extent piece = blockOf(r.size(), static_cast<int>(st.amount), static_cast<int>(b));
      r = Extent{r.lo + piece.lo, r.lo + piece.hi};
    } else {
      int64_t lo = std::min(r.hi, r.lo + b * st.amount);
      r = Extent{lo, std::min(r.hi, lo + st.amount)};
    }
  }
  return r;
}

std::vector<Extent> boxAt(const Program& p, int t, int level, const std::vector<int64_t>& values) {
  const TensorUse& u = p.tensors.at(static_cast<size_t>(t));
  std::vector<Extent> box;
  for (int s : u.dimSpace) box.push_back(rangeAt(p, s, level, values));
  return box;
}

int64_t blockIndex(const Program& p, int l, int64_t s, const std::vector<int64_t>& values) {
  const Loop& loop = p.loops.at(static_cast<size_t>(l));
  if (loop.rotateBy.empty()) return s;
  int64_t shift = 0;
  for (int by : loop.rotateBy) shift += values.at(static_cast<size_t>(by));
  return (s + shift) % loop.count;
}

namespace {

std::string boxText(const Program& p, const TensorUse& u, int level) {
  std::string s = u.name + "(";
  for (size_t d = 0; d < u.dimSpace.size(); d++) {
    const IndexSpace& sp = p.spaces[static_cast<size_t>(u.dimSpace[d])];
    std::string loops;
    for (const SplitStep& st : sp.chain)
      if (st.loop <= level) loops += (loops.empty() ? "" : ",") + p.loops[static_cast<size_t>(st.loop)].name;
    s += (d ? ", " : "") + (loops.empty() ? sp.name + ":all" : sp.name + "[" + loops + "]");
  }
  return s + ")";
}

}  // namespace

std::string print(const Program& p) {
  std::ostringstream o;
  o << "// SPMD program on a " << p.grid.str() << " grid (" << p.grid.size() << " ranks";
  if (p.threads > 1) o << " x " << p.threads << " threads";
  o << "); every rank runs it at its grid coordinate.\n";
  for (const TensorUse& u : p.tensors)
    o << "// " << u.name << ": " << (u.distribution.defined() ? u.distribution.str() + " on " + u.grid.str() : "replicated")
      << (u.output ? " (output)" : "") << "\n";
  std::string indent;
  auto communicateAt = [&](int level) {
    for (const TensorUse& u : p.tensors)
      if (u.level == level && !u.output)
        o << indent << "fetch " << boxText(p, u, level) << " from its owners\n";
      else if (u.level == level)
        o << indent << "accumulate " << boxText(p, u, level) << " locally (zero)\n";
  };
  auto reduceAt = [&](int level, const std::string& in) {
    for (const TensorUse& u : p.tensors)
      if (u.level == level && u.output) o << in << "reduce " << boxText(p, u, level) << " into its owners\n";
  };
  communicateAt(-1);
  for (size_t l = 0; l < p.loops.size(); l++) {
    const Loop& loop = p.loops[l];
    o << indent << "for " << loop.name << " in [0, " << loop.count << ")";
    if (loop.gridDim >= 0) o << "  // distributed: machine dimension " << loop.gridDim << ", this rank's coordinate";
    else if (!loop.rotateBy.empty()) {
      o << "  // rotated: block (" << loop.name;
      for (int by : loop.rotateBy) o << " + " << p.loops[static_cast<size_t>(by)].name;
      o << ") mod " << loop.count;
    } else {
      o << "  // sequential step";
    }
    o << "\n";
    indent += "  ";
    communicateAt(static_cast<int>(l));
  }
  int last = static_cast<int>(p.loops.size()) - 1;
  for (const Program::LeafVariant& v : p.leaves) {
    std::string when;
    for (int s : v.firstBlockOf) when += (when.empty() ? "" : " and ") + p.spaces[static_cast<size_t>(s)].name;
    if (!when.empty()) o << indent << "where the blocks of " << when << " are the first:\n";
    o << indent << (when.empty() ? "" : "  ") << (p.gemm ? "BLAS dgemm on the local boxes: " : "leaf kernel on the local boxes: ")
      << v.text << (p.gemm || v.schedule.empty() ? "" : "  schedule: " + v.schedule) << "\n";
  }
  for (int l = last; l >= -1; l--) {
    std::string in = indent;
    reduceAt(l, in);
    if (indent.size() >= 2) indent.resize(indent.size() - 2);
  }
  return o.str();
}

}  // namespace tessel::spmd
