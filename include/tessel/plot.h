// Sparsity-pattern pictures (`tessel plot`): a matrix, or the mode-0/1 projection of a
// 3-tensor, drawn as a PNG or SVG, downsampled so each pixel cell's darkness is the
// log-scaled number of non-zeros in it, optionally coloured by the rank that owns each
// part under a simple distribution (SpDISTAL, Figure 5).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tessel/coo.h"

namespace tessel {

/// The distributions `tessel plot` can colour by (a subset of the distribution notation).
enum class PlotPartition {
  None,            ///< no colouring (black)
  Rows,            ///< xy->x: rows in equal blocks over a 1-D grid (universe partition)
  Columns,         ///< xy->y: columns in equal blocks over a 1-D grid
  RowsByNonzeros,  ///< xy->~x: rows in contiguous blocks with about equal non-zeros
  FusedNonzeros,   ///< (xy)->~f: non-zeros in row-major order split evenly
  Blocks2D,        ///< xy->xy: rows over grid dim 0, columns over grid dim 1
};

struct PlotDistribution {
  PlotPartition kind = PlotPartition::None;
  int gridX = 1;      ///< ranks along grid dimension 0 (the only one for 1-D partitions)
  int gridY = 1;      ///< ranks along grid dimension 1 (Blocks2D only)
  std::string label;  ///< e.g. "B:xy->~x on 4 ranks", for the SVG legend
  int ranks() const { return gridX * gridY; }
};

/// Owner rank (0 .. ranks-1) of every entry of `data` (in data order), looking at modes
/// 0 (rows) and 1 (columns); an order-1 tensor is one row. The ranks' own placement
/// (format/sparse_placement, what the distributed runtime holds): equal blocks of
/// ceil(N / P) as divide() cuts loops; ~x: rows stay whole and contiguous, row r goes to
/// rank floor(s * P / nnz), s = non-zeros in rows before r; ~f: the k-th entry in
/// row-major order goes to floor(k * P / nnz); 2-D blocks: rank = rowBlock * gridY + colBlock.
/// Empty vector for PlotPartition::None.
std::vector<int> plotOwners(const CooData& data, const PlotDistribution& dist);

/// The fixed palette: colour of a rank (cycles after 12 ranks).
std::array<uint8_t, 3> plotRankColour(int rank);

struct PlotOptions {
  int size = 512;  ///< pixels on the long side (aspect ratio kept)
  PlotDistribution dist;
  std::string name = "tensor";  ///< shown in the SVG legend
};

/// An 8-bit RGB raster, row-major, 3 bytes per pixel.
struct PlotImage {
  int width = 0, height = 0;
  int gridWidth = 0, gridHeight = 0;  ///< cells the data was binned into (<= pixels)
  std::vector<uint8_t> rgb;
  std::vector<int64_t> rankNonzeros;  ///< non-zeros per rank (empty without a distribution)
  std::array<uint8_t, 3> pixel(int x, int y) const {
    size_t o = (static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) * 3;
    return {rgb[o], rgb[o + 1], rgb[o + 2]};
  }
};

/// Throws UserError for orders other than 1, 2 and 3, or a size outside [1, 16384].
PlotImage renderPlot(const CooData& data, const PlotOptions& opt);
/// PNG file bytes (8-bit RGB, one IDAT).
std::string encodePng(const PlotImage& image);
/// SVG text: one rect per non-empty cell (the grid is coarsened until at most 65536
/// cells are non-empty), a white background and a legend below the picture.
std::string renderSvg(const CooData& data, const PlotOptions& opt);
/// By extension (.png or .svg, else UserError); written atomically.
void writePlot(const std::string& path, const CooData& data, const PlotOptions& opt);

}  // namespace tessel
