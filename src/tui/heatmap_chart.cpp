// Heatmap charts (see heatmap_chart.hpp). Layout inside the area, border included:
//   ┌ CPU Core Utilization (%) ──────┐
//   │ Core 0 ██████████████████████  │   a band per series: its label (dim, right-aligned), then buckets
//   │ Core 1 ██████████████████████  │
//   │        0s                  5m  │   the window's start and end
//   └────────────────────────────────┘
// A bucket's value is the mean of at most kSamplesPerBucket points spread evenly over it, so a frame costs
// plot width x series x that, however long the run; a bucket with no point stays blank. Bands share the
// rows as evenly as they can, the first ones a row taller.
#include "tui/heatmap_chart.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "tui/color_scheme.hpp"
#include "tui/value_format.hpp"

namespace runmon::tui {
namespace {

constexpr int16_t kFocusColor = 14;  // bright cyan, as line charts
constexpr Style kDimStyle{kDefaultColor, kDefaultColor, kDim};
constexpr size_t kSamplesPerBucket = 32;
constexpr int kMaxLabelWidth = 12;

std::string FormatX(double x, runview::XAxisKind kind) {
  return kind == runview::XAxisKind::kStep ? FormatStep(x) : FormatDuration(x);
}

// The mean of up to kSamplesPerBucket points of [first, last), evenly spread; NaN when empty.
double BucketMean(const runview::TimeSeries& data, size_t first, size_t last) {
  if (first >= last) return std::numeric_limits<double>::quiet_NaN();
  const size_t count = last - first;
  const size_t taken = std::min(count, kSamplesPerBucket);
  double sum = 0;
  size_t used = 0;
  for (size_t i = 0; i < taken; ++i) {
    const double y = data.y(first + i * count / taken);
    if (!std::isfinite(y)) continue;
    sum += y;
    ++used;
  }
  return used == 0 ? std::numeric_limits<double>::quiet_NaN() : sum / static_cast<double>(used);
}

}  // namespace

int16_t HeatmapColor(double percent, std::span<const int16_t> ramp) {
  return RampColor(ramp.empty() ? SchemeColors(kDefaultFrenchFriesColorScheme) : ramp, percent);
}

void DrawHeatmapChart(CellGrid& grid, Rect area, const ChartSpec& spec) {
  const Rect bounds = grid.bounds();
  const int x0 = std::max(area.x, bounds.x);
  const int y0 = std::max(area.y, bounds.y);
  const int x1 = std::min(area.x + area.width, bounds.x + bounds.width);
  const int y1 = std::min(area.y + area.height, bounds.y + bounds.height);
  area = {x0, y0, std::max(0, x1 - x0), std::max(0, y1 - y0)};
  if (area.width < 2 || area.height < 2) return;
  grid.Fill(area, U' ');
  const Style frame_style = spec.focused ? Style{kFocusColor, kDefaultColor, kBold} : Style{};
  const Rect inner{area.x + 1, area.y + 1, area.width - 2, area.height - 2};
  const bool has_x_labels = inner.height >= 3;
  const int band_rows = inner.height - (has_x_labels ? 1 : 0);
  const size_t shown = std::min(spec.series.size(), static_cast<size_t>(std::max(band_rows, 0)));
  std::string title = spec.title;
  if (!spec.unit.empty()) title += (title.empty() ? "(" : " (") + spec.unit + ")";
  if (shown < spec.series.size()) title += fmt::format(" · {} of {}", shown, spec.series.size());
  grid.DrawBox(area, frame_style, title);
  if (inner.width < 4 || band_rows < 1 || shown == 0) return;

  int label_width = 0;
  for (size_t i = 0; i < shown; ++i) label_width = std::max(label_width, DisplayWidth(spec.series[i].name));
  label_width = std::min(label_width, kMaxLabelWidth);
  if (inner.width - label_width - 1 < 4) label_width = 0;
  const int plot_x = inner.x + (label_width > 0 ? label_width + 1 : 0);
  const int plot_width = inner.x + inner.width - plot_x;

  const bool window_valid = std::isfinite(spec.x_start) && std::isfinite(spec.x_end);
  const double x_start = spec.x_start;
  const double x_end = window_valid && spec.x_end > spec.x_start ? spec.x_end : spec.x_start + 1;
  const double bucket_width = (x_end - x_start) / plot_width;
  const double x_end_exclusive = std::nextafter(x_end, std::numeric_limits<double>::infinity());

  const int base_rows = band_rows / static_cast<int>(shown);
  const int taller = band_rows % static_cast<int>(shown);
  int y = inner.y;
  for (size_t i = 0; i < shown; ++i) {
    const ChartSeries& series = spec.series[i];
    const int rows = base_rows + (static_cast<int>(i) < taller ? 1 : 0);  // at least 1: shown <= band_rows
    if (label_width > 0) {
      const int width = std::min(DisplayWidth(series.name), label_width);
      grid.PutText(inner.x + label_width - width, y + (rows - 1) / 2, series.name, kDimStyle, width);
    }
    if (window_valid && series.data != nullptr && !series.data->empty()) {
      for (int column = 0; column < plot_width; ++column) {
        const double from = x_start + column * bucket_width;
        const double to = column + 1 == plot_width ? x_end_exclusive : x_start + (column + 1) * bucket_width;
        const auto [first, last] = series.data->IndexRange(from, to);
        const double mean = BucketMean(*series.data, first, last);
        if (std::isnan(mean)) continue;
        for (int row = 0; row < rows; ++row)
          grid.Set(plot_x + column, y + row, U'█', Style{HeatmapColor(mean, spec.heat_ramp)});
      }
    }
    y += rows;
  }
  if (has_x_labels) {
    const std::string left = FormatX(x_start, spec.x_axis);
    const std::string right = FormatX(x_end, spec.x_axis);
    const int bottom = inner.y + inner.height - 1;
    if (DisplayWidth(left) <= plot_width) grid.PutText(plot_x, bottom, left, kDimStyle, plot_width);
    if (DisplayWidth(left) + 1 + DisplayWidth(right) <= plot_width) {
      grid.PutText(plot_x + plot_width - DisplayWidth(right), bottom, right, kDimStyle, DisplayWidth(right));
    }
  }
}

}  // namespace runmon::tui
