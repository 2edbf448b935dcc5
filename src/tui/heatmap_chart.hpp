// A percentage chart drawn as a heatmap (LEET's "French fries"): one band of rows per series, the x window
// cut into one bucket per column, each bucket the mean of its points coloured on a sequential ramp (the
// config's french_fries_color_scheme) from 0 to 100 %. Many series in little room (a CPU's cores, a node's
// GPUs) read at a glance where a line chart would be a tangle. The series' names label the bands on the left;
// the window's start and end label the bottom row; a chart with more series than rows shows the first ones
// and says how many it left out.
#pragma once

#include <cstdint>
#include <span>

#include "tui/cell_grid.hpp"
#include "tui/line_chart.hpp"

namespace runmon::tui {

// Draws `spec` (its unit is "%"; its log_scale is ignored) inside `area`, border included. Like
// DrawLineChart, never anything outside `area`.
void DrawHeatmapChart(CellGrid& grid, Rect area, const ChartSpec& spec);

// The colour (xterm-256) of a percentage on `ramp` (empty: viridis, W&B's default), clamped to 0-100;
// NaN has none (kDefaultColor).
int16_t HeatmapColor(double percent, std::span<const int16_t> ramp = {});

}  // namespace runmon::tui
