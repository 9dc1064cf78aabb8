// Machines (grids of ranks) and tensor distribution notation: see tessel/distribution.h.
#include "tessel/distribution.h"

#include <algorithm>
#include <cctype>

#include "tessel/error.h"

namespace tessel {

namespace {

std::string trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

[[noreturn]] void bad(const std::string& text, const std::string& why) {
  throw DistributionError("distribution '" + text + "': " + why);
}

DistributionStatement parseStatement(const std::string& whole, const std::string& raw) {
  std::string s = trimmed(raw);
  size_t arrow = s.find("->");
  if (arrow == std::string::npos) bad(whole, "expected TENSOR_DIMS->MACHINE_DIMS, as in xy->x");
  std::string x = trimmed(s.substr(0, arrow)), y = trimmed(s.substr(arrow + 2));
  if (x.empty()) bad(whole, "no tensor dimensions before '->' (one letter per dimension, as in xy)");
  if (y.empty()) bad(whole, "no machine dimensions after '->' (a letter, a digit or * per dimension)");
  DistributionStatement st;
  if (x.front() == '(') {  // fused leading dimensions: (xy)z
    size_t close = x.find(')');
    if (close == std::string::npos) bad(whole, "'(' without ')': fuse leading dimensions as in (xy)->~f");
    st.fused = static_cast<int>(close - 1);
    if (st.fused < 2) bad(whole, "a fusion names at least two tensor dimensions, as in (xy)");
    x = x.substr(1, close - 1) + x.substr(close + 1);
  }
  for (char c : x) {
    if (!std::isalpha(static_cast<unsigned char>(c)))
      bad(whole, std::string("tensor dimensions are letters, not '") + c + "'");
    if (st.tensorNames.find(c) != std::string::npos)
      bad(whole, std::string("tensor dimension '") + c + "' is named twice");
    st.tensorNames += c;
  }
  std::string seen;
  bool tilde = false;
  for (char c : y) {
    MachineDim m;
    if (c == '~') {
      if (tilde) bad(whole, "'~~': one '~' marks a partition by non-zeros, as in ~x");
      tilde = true;
      continue;
    }
    if (tilde && !std::isalpha(static_cast<unsigned char>(c)))
      bad(whole, std::string("'~' partitions a dimension by non-zeros and comes before its letter, not before '") + c +
                     "'");
    if (c == '*') {
      m.kind = MachineDim::Kind::Broadcast;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      m.kind = MachineDim::Kind::Fix;
      m.coord = c - '0';
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      size_t at = st.tensorNames.find(c);
      if (seen.find(c) != std::string::npos)
        bad(whole, std::string("tensor dimension '") + c + "' is partitioned by two machine dimensions");
      m.kind = MachineDim::Kind::Partition;
      m.nonZeros = tilde;
      if (at == std::string::npos && st.fused > 0) {  // the fused space, by any new letter
        if (st.fusedName && st.fusedName != c)
          bad(whole, std::string("machine dimension '") + c + "' names no tensor dimension, and the fused one is '" +
                         st.fusedName + "'");
        if (!tilde)
          bad(whole, std::string("the fused dimensions are partitioned by non-zeros: write ~") + c);
        st.fusedName = c;
        m.tensorDim = MachineDim::kFused;
      } else if (at == std::string::npos) {
        bad(whole, std::string("machine dimension '") + c + "' names no tensor dimension (" + st.tensorNames +
                       "): name one, fix it with a digit or broadcast with *");
      } else {
        if (static_cast<int>(at) < st.fused)
          bad(whole, std::string("tensor dimension '") + c + "' is fused: partition the fused space (~f) instead");
        m.tensorDim = static_cast<int>(at);
      }
      seen += c;
    } else {
      bad(whole, std::string("machine dimensions are letters, digits or *, not '") + c + "'");
    }
    st.machine.push_back(m);
    tilde = false;
  }
  if (tilde) bad(whole, "'~' at the end: it comes before the letter it partitions by non-zeros");
  if (st.fused > 0 && !st.fusedName)
    bad(whole, "the fused dimensions (" + st.tensorNames.substr(0, static_cast<size_t>(st.fused)) +
                   ") are partitioned by no machine dimension: add ~f");
  return st;
}

}  // namespace

// ---- Grid ----------------------------------------------------------------------------

Grid::Grid(std::vector<int> dims) : dims_(std::move(dims)) {
  if (dims_.empty()) throw DistributionError("a grid needs at least one dimension");
  int64_t n = 1;
  for (int d : dims_) {
    if (d < 1) throw DistributionError("grid " + str() + ": every dimension needs at least one rank");
    n *= d;
    if (n > (int64_t{1} << 24)) throw DistributionError("grid " + str() + ": more than 2^24 ranks");
  }
}

Grid Grid::parse(const std::string& text) {
  std::vector<int> dims;
  std::string cur;
  auto flush = [&] {
    if (cur.empty() || cur.size() > 8)
      throw DistributionError("machine '" + text + "': expected ranks per dimension separated by x, as in 4, 2x2 or 2x2x2");
    dims.push_back(std::stoi(cur));
    cur.clear();
  };
  for (char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c))) cur += c;
    else if (c == 'x' || c == 'X') flush();
    else throw DistributionError("machine '" + text + "': expected ranks per dimension separated by x, as in 4, 2x2 or 2x2x2");
  }
  flush();
  try {
    return Grid(dims);
  } catch (const DistributionError& e) {
    throw DistributionError("machine '" + text + "': " + e.what());
  }
}

int Grid::size() const {
  int n = 1;
  for (int d : dims_) n *= d;
  return n;
}

std::vector<int> Grid::coordOf(int rank) const {
  std::vector<int> c(dims_.size());
  for (int d = order() - 1; d >= 0; d--) {
    c[d] = rank % dims_[d];
    rank /= dims_[d];
  }
  return c;
}

int Grid::rankOf(const std::vector<int>& coord) const {
  int r = 0;
  for (int d = 0; d < order(); d++) r = r * dims_[d] + coord.at(d);
  return r;
}

std::string Grid::str() const {
  std::string s;
  for (size_t d = 0; d < dims_.size(); d++) s += (d ? "x" : "") + std::to_string(dims_[d]);
  return s;
}

// ---- blocks ----------------------------------------------------------------------------

Extent blockOf(int64_t n, int pieces, int p) {
  int64_t size = std::max<int64_t>(1, (n + pieces - 1) / pieces);
  return {std::min(n, p * size), std::min(n, (p + 1) * size)};
}

// ---- Distribution --------------------------------------------------------------------

std::string DistributionStatement::str() const {
  std::string s = fused ? "(" + tensorNames.substr(0, static_cast<size_t>(fused)) + ")" +
                              tensorNames.substr(static_cast<size_t>(fused))
                        : tensorNames;
  s += "->";
  for (const MachineDim& m : machine) {
    if (m.nonZeros) s += '~';
    s += m.kind == MachineDim::Kind::Partition
             ? std::string(1, m.tensorDim == MachineDim::kFused ? fusedName : tensorNames[m.tensorDim])
         : m.kind == MachineDim::Kind::Fix ? std::to_string(m.coord)
                                           : std::string("*");
  }
  return s;
}

bool DistributionStatement::byNonZeros() const {
  for (const MachineDim& m : machine)
    if (m.nonZeros) return true;
  return false;
}

Distribution Distribution::parse(const std::string& text) {
  std::string s = trimmed(text);
  std::vector<DistributionStatement> levels;
  if (!s.empty() && s.front() == '[') {
    if (s.back() != ']') bad(text, "a hierarchical distribution is a list [A->B, C->D]: missing ']'");
    std::string inner = s.substr(1, s.size() - 2);
    size_t start = 0;
    while (true) {
      size_t comma = inner.find(',', start);
      levels.push_back(parseStatement(text, inner.substr(start, comma - start)));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  } else {
    levels.push_back(parseStatement(text, s));
  }
  return Distribution(std::move(levels));
}

std::string Distribution::str() const {
  if (levels_.size() == 1) return levels_[0].str();
  std::string s = "[";
  for (size_t k = 0; k < levels_.size(); k++) s += (k ? ", " : "") + levels_[k].str();
  return s + "]";
}

void Distribution::check(const std::string& tensor, int order, const Grid& grid) const {
  auto fail = [&](const std::string& why) {
    throw DistributionError("distribution of " + tensor + " (" + str() + "): " + why);
  };
  if (levels_.empty()) return;
  if (levels_.size() > 1)
    fail("one statement per machine level, and machine " + grid.str() + " has one level");
  const DistributionStatement& st = levels_[0];
  if (static_cast<int>(st.tensorNames.size()) != order)
    fail("names " + std::to_string(st.tensorNames.size()) + " tensor dimension(s), and " + tensor + " has " +
         std::to_string(order));
  if (static_cast<int>(st.machine.size()) != grid.order())
    fail("names " + std::to_string(st.machine.size()) + " machine dimension(s), and machine " + grid.str() +
         " has " + std::to_string(grid.order()));
  for (int d = 0; d < grid.order(); d++)
    if (st.machine[d].kind == MachineDim::Kind::Fix && st.machine[d].coord >= grid.dim(d))
      fail("fixes machine dimension " + std::to_string(d) + " at " + std::to_string(st.machine[d].coord) +
           ", outside its " + std::to_string(grid.dim(d)) + " rank(s)");
}

void Distribution::checkFormat(const std::string& tensor, const std::vector<bool>& levelIsDense,
                               const std::vector<int>& modeOfLevel) const {
  if (levels_.empty()) return;
  auto fail = [&](const std::string& why) {
    throw DistributionError("distribution of " + tensor + " (" + str() + "): " + why);
  };
  const DistributionStatement& st = levels_[0];
  if (st.tensorNames.size() != levelIsDense.size())
    fail("names " + std::to_string(st.tensorNames.size()) + " tensor dimension(s), and " + tensor + " has " +
         std::to_string(levelIsDense.size()));
  if (st.byNonZeros() && std::all_of(levelIsDense.begin(), levelIsDense.end(), [](bool d) { return d; }))
    fail("a partition by non-zeros needs a sparse level, and every level of " + tensor +
         " is dense (all its entries are stored): partition by coordinates instead (drop the ~)");
  for (int k = 0; k < st.fused; k++)
    if (modeOfLevel.at(static_cast<size_t>(k)) != k)
      fail("fused dimensions must be the leading levels in storage order, and level " + std::to_string(k) +
           " of " + tensor + " stores dimension " + std::to_string(modeOfLevel[static_cast<size_t>(k)]));
}

std::optional<std::vector<Extent>> Distribution::piece(const std::vector<int64_t>& dims, const Grid& grid,
                                                       const std::vector<int>& coord) const {
  std::vector<Extent> box;
  for (int64_t n : dims) box.push_back({0, n});
  if (levels_.empty()) return box;
  if (levels_[0].byNonZeros())
    throw DistributionError("distribution " + str() + " partitions by non-zeros: its pieces depend on the data, "
                            "and only sparse tensors take it");
  const DistributionStatement& st = levels_[0];
  for (int d = 0; d < grid.order(); d++) {
    const MachineDim& m = st.machine.at(d);
    if (m.kind == MachineDim::Kind::Partition)
      box[m.tensorDim] = blockOf(dims.at(m.tensorDim), grid.dim(d), coord.at(d));
    else if (m.kind == MachineDim::Kind::Fix && coord.at(d) != m.coord)
      return std::nullopt;
  }
  return box;
}

std::vector<int> Distribution::owners(const std::vector<int64_t>& dims, const Grid& grid,
                                      const std::vector<int64_t>& coords) const {
  if (byNonZeros())
    throw DistributionError("distribution " + str() + " partitions by non-zeros: an entry's owner depends on the data");
  // Per machine dimension, the coordinates that hold the entry.
  std::vector<std::vector<int>> choices(grid.order());
  for (int d = 0; d < grid.order(); d++) {
    const MachineDim m = levels_.empty() ? MachineDim{} : levels_[0].machine.at(d);
    if (m.kind == MachineDim::Kind::Partition) {
      int64_t n = dims.at(m.tensorDim);
      int64_t size = std::max<int64_t>(1, (n + grid.dim(d) - 1) / grid.dim(d));
      choices[d] = {static_cast<int>(coords.at(m.tensorDim) / size)};
    } else if (m.kind == MachineDim::Kind::Fix) {
      choices[d] = {m.coord};
    } else {
      for (int c = 0; c < grid.dim(d); c++) choices[d].push_back(c);
    }
  }
  std::vector<int> ranks;
  std::vector<int> at(grid.order(), 0), coord(grid.order());
  while (true) {
    for (int d = 0; d < grid.order(); d++) coord[d] = choices[d][at[d]];
    ranks.push_back(grid.rankOf(coord));
    int d = grid.order() - 1;
    while (d >= 0 && ++at[d] == static_cast<int>(choices[d].size())) at[d--] = 0;
    if (d < 0) break;
  }
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

}  // namespace tessel
