// A line chart drawn into a cell grid with braille characters: each cell is 2 dots wide and 4 dots high,
// so a 30x8 cell plot has 60x32 dots. Each dot column covers an x interval and draws the series' extent in
// it (min to max) joined to the previous column, so spikes survive downsampling. The chart has a title
// with its unit, y-axis labels (value formatted with the unit), x-axis labels (elapsed time or steps), a
// legend (series name and latest value, as many as fit), an optional log scale, optional background guides
// and a focus highlight.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runview/time_series.hpp"
#include "tui/cell_grid.hpp"

namespace runmon::tui {

struct ChartSeries {
  std::string name;                           // legend text ("GPU 0", "sda read"); may be any UTF-8
  const runview::TimeSeries* data = nullptr;  // not owned; may be empty
  int16_t color = kDefaultColor;
};

struct ChartSpec {
  std::string title;  // "GPU Utilization"
  std::string unit;   // catalog unit: "%", "MiB", "bytes", "bytes/s", "W", "°C", "MHz", "count", ...
  std::vector<ChartSeries> series;
  runview::XAxisKind x_axis = runview::XAxisKind::kElapsedSeconds;
  // The x window shown: [x_start, x_end]. The caller picks it (whole run, zoomed, tail).
  double x_start = 0;
  double x_end = 1;
  bool log_scale = false;  // log10 y axis; values <= 0 are not drawn in it
  bool focused = false;    // highlighted border and title
  // Background guides behind the series: none, dots on a 4x2 cell lattice, or lines at the plot's
  // quarters (LEET's off, dots, horizontal).
  enum class Guides : uint8_t { kOff, kDots, kLines } guides = Guides::kOff;
  // Drawn as a heatmap: the ramp its buckets are coloured on, 0 % to 100 % (empty: viridis).
  std::span<const int16_t> heat_ramp;
};

// Draws the chart inside `area` (border included). Areas too small for a plot show the title only, or
// nothing; never anything outside `area`.
void DrawLineChart(CellGrid& grid, Rect area, const ChartSpec& spec);

// The braille code point with the given dots set; `dots` bit k is dot k+1 in Unicode's numbering (dots
// 1-3 and 7 are the left column top to bottom, 4-6 and 8 the right column).
char32_t BrailleCodePoint(uint8_t dots);

}  // namespace runmon::tui
