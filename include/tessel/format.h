// Tensor formats: a sequence of level kinds, a mode order, and index widths.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessel {

/// Element types a tensor may hold.
enum class Datatype { Bool, Int32, Int64, Float32, Float64 };

/// C spelling of a datatype ("double", "int32_t", ...).
const char* cTypeName(Datatype t);
/// Short name used in messages and file headers ("float64", ...).
const char* datatypeName(Datatype t);
/// Size in bytes of one element.
int datatypeSize(Datatype t);

template <typename T>
constexpr Datatype datatypeOf();
template <> constexpr Datatype datatypeOf<bool>() { return Datatype::Bool; }
template <> constexpr Datatype datatypeOf<int32_t>() { return Datatype::Int32; }
template <> constexpr Datatype datatypeOf<int64_t>() { return Datatype::Int64; }
template <> constexpr Datatype datatypeOf<float>() { return Datatype::Float32; }
template <> constexpr Datatype datatypeOf<double>() { return Datatype::Float64; }

/// How one level of a tensor stores coordinates (TACO / MLIR level types).
///  Dense:        every coordinate 0..N-1, no arrays.
///  Compressed:   pos (per parent position: [begin,end)) + sorted unique crd.
///  CompressedNU: like Compressed but coordinates may repeat (COO's first level);
///                must be followed by Singleton levels only.
///  Singleton:    one crd per parent position; must follow CompressedNU or Singleton.
///                It is unique iff it is the last level.
///  Bitmap:       a presence flag (uint8, stored in crd[k]) and a value slot for every
///                coordinate under every parent position; absent slots hold zero.
/// Code outside src/format asks levelFormat() (src/format/level_format.h) about a level.
enum class LevelKind { Dense, Compressed, CompressedNU, Singleton, Bitmap };

/// One-letter code used by the tool: d, s, u, q, b.
char levelLetter(LevelKind k);

/// Bit width of stored positions or coordinates.
enum class IndexWidth { W32 = 32, W64 = 64 };

/// A tensor format. Level k stores mode modeOrder[k].
class Format {
 public:
  Format() = default;
  /// Levels in storage order; identity mode order; 32-bit indices.
  Format(std::vector<LevelKind> levels);
  Format(std::vector<LevelKind> levels, std::vector<int> modeOrder,
         IndexWidth posWidth = IndexWidth::W32, IndexWidth crdWidth = IndexWidth::W32);

  int order() const { return static_cast<int>(levels_.size()); }
  const std::vector<LevelKind>& levels() const { return levels_; }
  LevelKind level(int k) const { return levels_.at(k); }
  const std::vector<int>& modeOrder() const { return modeOrder_; }
  /// Mode stored at level k.
  int modeOfLevel(int k) const { return modeOrder_.at(k); }
  /// Level that stores mode m.
  int levelOfMode(int m) const;
  IndexWidth posWidth() const { return posWidth_; }
  IndexWidth crdWidth() const { return crdWidth_; }
  /// Same format with other index widths.
  Format withWidths(IndexWidth pos, IndexWidth crd) const;

  /// True if a level stores coordinates that may repeat (CompressedNU, non-last Singleton).
  bool levelIsUnique(int k) const;
  /// True if every level is Dense.
  bool isAllDense() const;

  /// Parse "ds", "ds:1,0" (tool syntax). Throws FormatError.
  static Format parse(const std::string& text);
  /// Inverse of parse: "ds:1,0" (mode order omitted when identity).
  std::string str() const;

  bool operator==(const Format& o) const = default;

 private:
  void validate() const;
  std::vector<LevelKind> levels_;
  std::vector<int> modeOrder_;
  IndexWidth posWidth_ = IndexWidth::W32;
  IndexWidth crdWidth_ = IndexWidth::W32;
};

/// Named formats.
Format CSR();
Format CSC();
Format DCSR();
Format DCSC();
Format COO(int order = 2);
Format CSF(int order = 3);
Format DenseFormat(int order);

}  // namespace tessel
