// Formats: level kinds, mode orders, index widths; parsing and validation.
#include "tessel/format.h"

#include <string>
#include <vector>

#include "tessel/error.h"
#include "tessel/runtime_abi.h"

namespace tessel {

const char* cTypeName(Datatype t) {
  switch (t) {
    case Datatype::Bool: return "bool";
    case Datatype::Int32: return "int32_t";
    case Datatype::Int64: return "int64_t";
    case Datatype::Float32: return "float";
    case Datatype::Float64: return "double";
  }
  throw InternalError("cTypeName: unknown datatype " + std::to_string(static_cast<int>(t)));
}

const char* datatypeName(Datatype t) {
  switch (t) {
    case Datatype::Bool: return "bool";
    case Datatype::Int32: return "int32";
    case Datatype::Int64: return "int64";
    case Datatype::Float32: return "float32";
    case Datatype::Float64: return "float64";
  }
  throw InternalError("datatypeName: unknown datatype " + std::to_string(static_cast<int>(t)));
}

int datatypeSize(Datatype t) {
  switch (t) {
    case Datatype::Bool: return static_cast<int>(sizeof(bool));
    case Datatype::Int32: return 4;
    case Datatype::Int64: return 8;
    case Datatype::Float32: return 4;
    case Datatype::Float64: return 8;
  }
  throw InternalError("datatypeSize: unknown datatype " + std::to_string(static_cast<int>(t)));
}

char levelLetter(LevelKind k) {
  switch (k) {
    case LevelKind::Dense: return 'd';
    case LevelKind::Compressed: return 's';
    case LevelKind::CompressedNU: return 'u';
    case LevelKind::Singleton: return 'q';
    case LevelKind::Bitmap: return 'b';
  }
  throw InternalError("levelLetter: unknown level kind " + std::to_string(static_cast<int>(k)));
}

namespace {

const char* levelKindName(LevelKind k) {
  switch (k) {
    case LevelKind::Dense: return "dense (d)";
    case LevelKind::Compressed: return "compressed (s)";
    case LevelKind::CompressedNU: return "compressed non-unique (u)";
    case LevelKind::Singleton: return "singleton (q)";
    case LevelKind::Bitmap: return "bitmap (b)";
  }
  return "unknown";
}

std::vector<int> identityOrder(size_t n) {
  std::vector<int> v(n);
  for (size_t i = 0; i < n; i++) v[i] = static_cast<int>(i);
  return v;
}

std::string joinInts(const std::vector<int>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); i++) {
    if (i) s += ',';
    s += std::to_string(v[i]);
  }
  return s;
}

}  // namespace

Format::Format(std::vector<LevelKind> levels)
    : levels_(std::move(levels)), modeOrder_(identityOrder(levels_.size())) {
  validate();
}

Format::Format(std::vector<LevelKind> levels, std::vector<int> modeOrder, IndexWidth posWidth,
               IndexWidth crdWidth)
    : levels_(std::move(levels)),
      modeOrder_(std::move(modeOrder)),
      posWidth_(posWidth),
      crdWidth_(crdWidth) {
  validate();
}

void Format::validate() const {
  const int n = order();
  const std::string what = "format '" + str() + "'";
  if (n > TESSEL_MAX_ORDER)
    throw FormatError(what + " has " + std::to_string(n) + " levels; at most " +
                      std::to_string(TESSEL_MAX_ORDER) + " are supported");
  if (static_cast<int>(modeOrder_.size()) != n)
    throw FormatError(what + ": mode order has " + std::to_string(modeOrder_.size()) +
                      " entries but the format has " + std::to_string(n) + " levels");
  std::vector<bool> seen(n, false);
  for (int m : modeOrder_) {
    if (m < 0 || m >= n || seen[m])
      throw FormatError(what + ": mode order " + joinInts(modeOrder_) +
                        " is not a permutation of 0.." + std::to_string(n - 1));
    seen[m] = true;
  }
  if (posWidth_ != IndexWidth::W32 && posWidth_ != IndexWidth::W64)
    throw FormatError(what + ": pos width must be 32 or 64 bits");
  if (crdWidth_ != IndexWidth::W32 && crdWidth_ != IndexWidth::W64)
    throw FormatError(what + ": crd width must be 32 or 64 bits");
  bool afterNU = false;
  for (int k = 0; k < n; k++) {
    LevelKind kind = levels_[k];
    std::string lvl = "level " + std::to_string(k) + " (" + levelKindName(kind) + ")";
    if (afterNU && kind != LevelKind::Singleton)
      throw FormatError(what + ": " + lvl +
                        " follows a compressed non-unique (u) level; only singleton (q) "
                        "levels may follow it");
    if (kind == LevelKind::Singleton) {
      if (k == 0)
        throw FormatError(what + ": " + lvl +
                          " cannot be the first level; a singleton (q) level must follow a "
                          "compressed non-unique (u) or singleton (q) level");
      LevelKind prev = levels_[k - 1];
      if (prev != LevelKind::CompressedNU && prev != LevelKind::Singleton)
        throw FormatError(what + ": " + lvl + " follows level " + std::to_string(k - 1) + " (" +
                          levelKindName(prev) +
                          "); a singleton (q) level must follow a compressed non-unique (u) "
                          "or singleton (q) level");
    }
    if (kind == LevelKind::CompressedNU) {
      if (k == n - 1)
        throw FormatError(what + ": " + lvl +
                          " is the last level; it must be followed by singleton (q) levels");
      afterNU = true;
    }
  }
}

int Format::levelOfMode(int m) const {
  for (int k = 0; k < order(); k++)
    if (modeOrder_[k] == m) return k;
  throw FormatError("format '" + str() + "' has no mode " + std::to_string(m));
}

Format Format::withWidths(IndexWidth pos, IndexWidth crd) const {
  Format f = *this;
  f.posWidth_ = pos;
  f.crdWidth_ = crd;
  f.validate();
  return f;
}

bool Format::levelIsUnique(int k) const {
  LevelKind kind = level(k);
  if (kind == LevelKind::CompressedNU) return false;
  if (kind == LevelKind::Singleton) return k == order() - 1;
  return true;
}

bool Format::isAllDense() const {
  for (LevelKind k : levels_)
    if (k != LevelKind::Dense) return false;
  return true;
}

Format Format::parse(const std::string& input) {
  // Trim surrounding whitespace.
  size_t b = input.find_first_not_of(" \t\r\n");
  size_t e = input.find_last_not_of(" \t\r\n");
  std::string text = b == std::string::npos ? std::string() : input.substr(b, e - b + 1);
  auto bad = [&](const std::string& why) -> FormatError {
    return FormatError("bad format '" + input + "': " + why);
  };

  size_t colon = text.find(':');
  std::string letters = text.substr(0, colon);
  std::vector<LevelKind> levels;
  for (size_t i = 0; i < letters.size(); i++) {
    switch (letters[i]) {
      case 'd': levels.push_back(LevelKind::Dense); break;
      case 's': levels.push_back(LevelKind::Compressed); break;
      case 'u': levels.push_back(LevelKind::CompressedNU); break;
      case 'q': levels.push_back(LevelKind::Singleton); break;
      case 'b': levels.push_back(LevelKind::Bitmap); break;
      default:
        throw bad("unknown level letter '" + std::string(1, letters[i]) + "' at position " +
                  std::to_string(i + 1) + " (expected d, s, u, q or b)");
    }
  }
  if (levels.size() > TESSEL_MAX_ORDER)
    throw bad(std::to_string(levels.size()) + " levels; at most " +
              std::to_string(TESSEL_MAX_ORDER) + " are supported");

  std::vector<int> order;
  if (colon == std::string::npos) {
    order = identityOrder(levels.size());
  } else {
    std::string rest = text.substr(colon + 1);
    if (rest.empty()) throw bad("empty mode order after ':'");
    size_t i = 0;
    while (true) {
      size_t j = rest.find(',', i);
      std::string item = rest.substr(i, j == std::string::npos ? std::string::npos : j - i);
      if (item.empty()) throw bad("empty entry in mode order '" + rest + "'");
      if (item.size() > 4) throw bad("mode '" + item + "' in mode order is out of range");
      int v = 0;
      for (char c : item) {
        if (c < '0' || c > '9')
          throw bad("mode order entry '" + item + "' is not a non-negative integer");
        v = v * 10 + (c - '0');
      }
      order.push_back(v);
      if (j == std::string::npos) break;
      i = j + 1;
    }
    if (order.size() != levels.size())
      throw bad("mode order '" + rest + "' has " + std::to_string(order.size()) +
                " entries but there are " + std::to_string(levels.size()) + " levels");
    std::vector<bool> seen(levels.size(), false);
    for (int m : order) {
      if (m >= static_cast<int>(levels.size()) || seen[m])
        throw bad("mode order '" + rest + "' is not a permutation of 0.." +
                  std::to_string(static_cast<int>(levels.size()) - 1));
      seen[m] = true;
    }
  }
  try {
    return Format(std::move(levels), std::move(order));
  } catch (const FormatError& err) {
    throw FormatError("bad format '" + input + "': " + err.what());
  }
}

std::string Format::str() const {
  std::string s;
  for (LevelKind k : levels_) s += levelLetter(k);
  bool identity = modeOrder_.size() == levels_.size();
  for (size_t i = 0; identity && i < modeOrder_.size(); i++)
    identity = modeOrder_[i] == static_cast<int>(i);
  if (!identity) {  // two appends: ":" + string trips GCC 12's false -Wrestrict (PR 105651)
    s += ':';
    s += joinInts(modeOrder_);
  }
  return s;
}

Format CSR() { return Format({LevelKind::Dense, LevelKind::Compressed}); }
Format CSC() { return Format({LevelKind::Dense, LevelKind::Compressed}, {1, 0}); }
Format DCSR() { return Format({LevelKind::Compressed, LevelKind::Compressed}); }
Format DCSC() { return Format({LevelKind::Compressed, LevelKind::Compressed}, {1, 0}); }

Format COO(int order) {
  if (order < 0 || order > TESSEL_MAX_ORDER)
    throw FormatError("COO(" + std::to_string(order) + "): order must be 0.." +
                      std::to_string(TESSEL_MAX_ORDER));
  if (order == 0) return Format(std::vector<LevelKind>{});
  // A 1-D coordinate list is sorted and unique after packing: one compressed level.
  if (order == 1) return Format({LevelKind::Compressed});
  std::vector<LevelKind> levels(order, LevelKind::Singleton);
  levels[0] = LevelKind::CompressedNU;
  return Format(std::move(levels));
}

Format CSF(int order) {
  if (order < 0 || order > TESSEL_MAX_ORDER)
    throw FormatError("CSF(" + std::to_string(order) + "): order must be 0.." +
                      std::to_string(TESSEL_MAX_ORDER));
  return Format(std::vector<LevelKind>(order, LevelKind::Compressed));
}

Format DenseFormat(int order) {
  if (order < 0 || order > TESSEL_MAX_ORDER)
    throw FormatError("DenseFormat(" + std::to_string(order) + "): order must be 0.." +
                      std::to_string(TESSEL_MAX_ORDER));
  return Format(std::vector<LevelKind>(order, LevelKind::Dense));
}

}  // namespace tessel
