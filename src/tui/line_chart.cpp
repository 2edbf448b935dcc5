// Braille line charts (see line_chart.hpp). Layout inside the area, border included:
//   ┌ Title (unit) ──────────┐
//   │ max ⡀⠄⠂⠁               │   y labels (dim, right-aligned): the range's top and bottom
//   │ min ⠁                  │
//   │     0s              5m │   x labels (dim): the window's start and end
//   │ GPU 0 87% GPU 1 12%    │   legend: "name value" in the series colour, then "+N more"
//   └────────────────────────┘
// Short areas drop the legend, then the x labels; an inner area under 4x2 shows the border and title only,
// and an area under 2x2 nothing. Each dot column covers an equal x interval of the window; its extent
// comes from the series' block summaries (TimeSeries::YExtent), so drawing costs plot width x series, not
// points. A column draws its min..max span, and a straight dot line joins the previous non-empty column's
// last point to this column's first point, so data sparser than the dot columns still reads as a line.
// On a log scale, values <= 0 are skipped: spans use the positive-only summaries, and a column whose first
// or last point is <= 0 joins at the bottom of its span.
#include "tui/line_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "tui/value_format.hpp"

namespace runmon::tui {
namespace {

constexpr int16_t kFocusColor = 14;  // bright cyan
constexpr int kMinInnerWidth = 4;
constexpr int kMinInnerHeight = 2;
constexpr int kLegendGap = 2;  // columns between legend entries
constexpr Style kDimStyle{kDefaultColor, kDefaultColor, kDim};

Rect Intersect(Rect a, Rect b) {
  const int64_t x0 = std::max<int64_t>(a.x, b.x);
  const int64_t y0 = std::max<int64_t>(a.y, b.y);
  const int64_t x1 =
      std::min<int64_t>(static_cast<int64_t>(a.x) + a.width, static_cast<int64_t>(b.x) + b.width);
  const int64_t y1 =
      std::min<int64_t>(static_cast<int64_t>(a.y) + a.height, static_cast<int64_t>(b.y) + b.height);
  if (x1 <= x0 || y1 <= y0) return {};
  return {static_cast<int>(x0), static_cast<int>(y0), static_cast<int>(x1 - x0), static_cast<int>(y1 - y0)};
}

std::string FormatX(double x, runview::XAxisKind kind) {
  return kind == runview::XAxisKind::kStep ? FormatStep(x) : FormatDuration(x);
}

// Braille dots of the plot, all series ORed together, with the colour of the last series that set a dot
// in each cell.
class DotCanvas {
 public:
  DotCanvas(int width_cells, int height_cells)
      : width_cells_(width_cells),
        height_cells_(height_cells),
        dots_(static_cast<size_t>(width_cells) * static_cast<size_t>(height_cells), 0),
        colors_(dots_.size(), kDefaultColor) {}

  int dot_width() const { return width_cells_ * 2; }
  int dot_height() const { return height_cells_ * 4; }

  void Set(int column, int row, int16_t color) {
    if (column < 0 || row < 0 || column >= dot_width() || row >= dot_height()) return;
    // Bit k is dot k+1: dots 1-3 and 7 are the left column top to bottom, 4-6 and 8 the right.
    static constexpr uint8_t kBits[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};
    const size_t cell =
        static_cast<size_t>(row / 4) * static_cast<size_t>(width_cells_) + static_cast<size_t>(column / 2);
    dots_[cell] = static_cast<uint8_t>(dots_[cell] | kBits[column % 2][row % 4]);
    colors_[cell] = color;
  }

  void VerticalSpan(int column, int top, int bottom, int16_t color) {
    for (int row = std::min(top, bottom); row <= std::max(top, bottom); ++row) Set(column, row, color);
  }

  // A straight, 8-connected dot line (Bresenham) including both ends.
  void Line(int column0, int row0, int column1, int row1, int16_t color) {
    const int dx = std::abs(column1 - column0);
    const int dy = -std::abs(row1 - row0);
    const int step_x = column0 < column1 ? 1 : -1;
    const int step_y = row0 < row1 ? 1 : -1;
    int error = dx + dy;
    while (true) {
      Set(column0, row0, color);
      if (column0 == column1 && row0 == row1) return;
      const int twice = 2 * error;
      if (twice >= dy) {
        error += dy;
        column0 += step_x;
      }
      if (twice <= dx) {
        error += dx;
        row0 += step_y;
      }
    }
  }

  void Blit(CellGrid& grid, Rect plot) const {
    for (int y = 0; y < height_cells_; ++y) {
      for (int x = 0; x < width_cells_; ++x) {
        const size_t cell =
            static_cast<size_t>(y) * static_cast<size_t>(width_cells_) + static_cast<size_t>(x);
        if (dots_[cell] == 0) continue;
        grid.Set(plot.x + x, plot.y + y, BrailleCodePoint(dots_[cell]), Style{colors_[cell]});
      }
    }
  }

 private:
  int width_cells_;
  int height_cells_;
  std::vector<uint8_t> dots_;
  std::vector<int16_t> colors_;
};

// The y axis: value -> dot row (0 at the top), linear or log10.
struct YAxis {
  double low = 0;  // in axis units (log10 of the value on a log scale)
  double high = 1;
  bool log = false;
  int dot_height = 1;

  bool Drawable(double value) const { return !log || value > 0; }
  int Row(double value) const {
    const double position = log ? std::log10(value) : value;
    const double fraction = (high - position) / (high - low);
    const double row = std::round(fraction * (dot_height - 1));
    if (!(row >= 0)) return 0;  // NaN too
    return static_cast<int>(std::min(row, static_cast<double>(dot_height - 1)));
  }
  double LabelValue(double position) const { return log ? std::pow(10.0, position) : position; }
};

struct VisibleSeries {
  const ChartSeries* series;
  size_t first = 0;
  size_t last = 0;
  bool empty() const { return first >= last; }
};

void DrawSeries(DotCanvas& canvas, const VisibleSeries& visible, const YAxis& axis, double x_start,
                double column_width, double x_end_exclusive) {
  const runview::TimeSeries& data = *visible.series->data;
  const int16_t color = visible.series->color;
  int previous_column = -1;
  int previous_row = 0;
  for (int column = 0; column < canvas.dot_width(); ++column) {
    const double from = x_start + column * column_width;
    const double to =
        column + 1 == canvas.dot_width() ? x_end_exclusive : x_start + (column + 1) * column_width;
    auto [first, last] = data.IndexRange(from, to);
    first = std::max(first, visible.first);
    last = std::min(last, visible.last);
    if (first >= last) continue;
    const runview::Extent extent = axis.log ? data.PositiveYExtent(first, last) : data.YExtent(first, last);
    if (extent.empty) continue;
    const int top = axis.Row(extent.max);
    const int bottom = axis.Row(extent.min);
    const float first_y = data.y(first);
    const float last_y = data.y(last - 1);
    const int first_row = axis.Drawable(first_y) ? axis.Row(first_y) : bottom;
    const int last_row = axis.Drawable(last_y) ? axis.Row(last_y) : bottom;
    canvas.VerticalSpan(column, top, bottom, color);
    if (previous_column >= 0) canvas.Line(previous_column, previous_row, column, first_row, color);
    previous_column = column;
    previous_row = last_row;
  }
}

// "name value" entries left to right in `row`, as many as fit, then "+N more".
void DrawLegend(CellGrid& grid, Rect row, const ChartSpec& spec, const std::vector<VisibleSeries>& visible) {
  const size_t count = visible.size();
  if (count == 0) return;
  std::vector<std::string> texts;
  std::vector<int> widths;
  texts.reserve(count);
  widths.reserve(count);
  int total = 0;
  for (const VisibleSeries& entry : visible) {
    std::string text = entry.series->name;
    if (!entry.empty()) {
      if (!text.empty()) text += ' ';
      text += FormatValue(entry.series->data->y(entry.last - 1), spec.unit);
    }
    widths.push_back(DisplayWidth(text));
    total += widths.back() + (texts.empty() ? 0 : kLegendGap);
    texts.push_back(std::move(text));
  }
  const auto more_text = [](size_t hidden) { return fmt::format("+{} more", hidden); };
  int used = 0;
  for (size_t i = 0; i < count; ++i) {
    const int gap = i == 0 ? 0 : kLegendGap;
    const size_t hidden_after = count - i - 1;
    // What must still fit after this entry: nothing when everything fits, else the "+N more" note.
    const int reserve =
        total <= row.width || hidden_after == 0 ? 0 : kLegendGap + DisplayWidth(more_text(hidden_after));
    int width = widths[i];
    if (used + gap + width + reserve > row.width) {
      if (i != 0) {
        grid.PutText(row.x + used + gap, row.y, more_text(count - i), kDimStyle, row.width - used - gap);
        return;
      }
      width = row.width - reserve;  // the first entry is cut rather than left out
      if (width < 3) {
        grid.PutText(row.x, row.y, more_text(count), kDimStyle, row.width);
        return;
      }
    }
    used += gap;
    used += grid.PutText(row.x + used, row.y, texts[i], Style{visible[i].series->color}, width);
  }
}

// Guides go under the series: the canvas only writes the cells that have dots.
void DrawGuides(CellGrid& grid, Rect plot, ChartSpec::Guides guides) {
  constexpr Style kGuideStyle{240, kDefaultColor, kNoAttributes};
  if (guides == ChartSpec::Guides::kDots) {
    for (int y = 0; y < plot.height; y += 2) {
      for (int x = 2; x < plot.width; x += 4) grid.Set(plot.x + x, plot.y + y, U'·', kGuideStyle);
    }
  } else if (guides == ChartSpec::Guides::kLines && plot.height >= 4) {
    for (int quarter = 1; quarter < 4; ++quarter) {
      const int y = plot.y + plot.height * quarter / 4;
      for (int x = 0; x < plot.width; ++x) grid.Set(plot.x + x, y, U'─', kGuideStyle);
    }
  }
}

}  // namespace

char32_t BrailleCodePoint(uint8_t dots) {
  return static_cast<char32_t>(0x2800 + dots);
}

void DrawLineChart(CellGrid& grid, Rect area, const ChartSpec& spec) {
  area = Intersect(area, grid.bounds());
  if (area.width < 2 || area.height < 2) return;
  grid.Fill(area, U' ');
  const Style frame_style = spec.focused ? Style{kFocusColor, kDefaultColor, kBold} : Style{};
  std::string title = spec.title;
  if (!spec.unit.empty()) title += (title.empty() ? "(" : " (") + spec.unit + ")";
  grid.DrawBox(area, frame_style, title);
  const Rect inner{area.x + 1, area.y + 1, area.width - 2, area.height - 2};
  if (inner.width < kMinInnerWidth || inner.height < kMinInnerHeight) return;

  // Rows from the bottom: the legend, then the x labels, go first when the area is short.
  const bool has_legend = inner.height >= 4;
  const bool has_x_labels = inner.height >= 3;
  const int plot_height = inner.height - (has_legend ? 1 : 0) - (has_x_labels ? 1 : 0);

  // The window, and which points of each series are in it.
  const bool window_valid = std::isfinite(spec.x_start) && std::isfinite(spec.x_end);
  const double x_start = spec.x_start;
  const double x_end = window_valid && spec.x_end > spec.x_start ? spec.x_end : spec.x_start + 1;
  const double x_end_exclusive = std::nextafter(x_end, std::numeric_limits<double>::infinity());
  std::vector<VisibleSeries> visible;
  visible.reserve(spec.series.size());
  runview::Extent y_extent;
  for (const ChartSeries& series : spec.series) {
    VisibleSeries entry{&series};
    if (window_valid && series.data != nullptr && !series.data->empty()) {
      std::tie(entry.first, entry.last) = series.data->IndexRange(x_start, x_end_exclusive);
      if (!entry.empty()) {
        y_extent.Add(spec.log_scale ? series.data->PositiveYExtent(entry.first, entry.last)
                                    : series.data->YExtent(entry.first, entry.last));
      }
    }
    visible.push_back(entry);
  }

  // The y range: the visible extent, from 0 when nothing is negative (linear), padded when flat.
  YAxis axis;
  axis.log = spec.log_scale;
  const bool has_data = !y_extent.empty;
  if (has_data) {
    if (axis.log) {
      axis.low = std::log10(static_cast<double>(y_extent.min));
      axis.high = std::log10(static_cast<double>(y_extent.max));
      if (!(axis.high > axis.low)) axis.low = axis.high - 1;
    } else {
      axis.low = std::min(static_cast<double>(y_extent.min), 0.0);
      axis.high = y_extent.max;
      if (y_extent.min < 0 && y_extent.max == y_extent.min) axis.high = 0;
      if (!(axis.high > axis.low)) axis.high = axis.low + 1;
    }
  }

  // The y labels take a column on the left when they leave room for a plot.
  std::string top_label;
  std::string bottom_label;
  int label_width = 0;
  if (has_data) {
    top_label = FormatValue(axis.LabelValue(axis.high), spec.unit);
    bottom_label = FormatValue(axis.LabelValue(axis.low), spec.unit);
    label_width = std::max(DisplayWidth(top_label), DisplayWidth(bottom_label));
    if (inner.width - label_width - 1 < 2) label_width = 0;
  }
  const int plot_x = inner.x + (label_width > 0 ? label_width + 1 : 0);
  const Rect plot{plot_x, inner.y, inner.x + inner.width - plot_x, plot_height};
  if (label_width > 0) {
    grid.PutText(inner.x + label_width - DisplayWidth(top_label), plot.y, top_label, kDimStyle, label_width);
    grid.PutText(inner.x + label_width - DisplayWidth(bottom_label), plot.y + plot.height - 1, bottom_label,
                 kDimStyle, label_width);
  }

  DrawGuides(grid, plot, spec.guides);
  if (has_data) {
    DotCanvas canvas(plot.width, plot.height);
    axis.dot_height = canvas.dot_height();
    const double column_width = (x_end - x_start) / canvas.dot_width();
    for (const VisibleSeries& entry : visible) {
      if (!entry.empty()) DrawSeries(canvas, entry, axis, x_start, column_width, x_end_exclusive);
    }
    canvas.Blit(grid, plot);
  } else {
    constexpr std::string_view kNoData = "no data";
    const int width = std::min(static_cast<int>(kNoData.size()), plot.width);
    grid.PutText(plot.x + (plot.width - width) / 2, plot.y + (plot.height - 1) / 2, kNoData, kDimStyle,
                 width);
  }

  if (has_x_labels) {
    const int y = plot.y + plot.height;
    const std::string left = FormatX(x_start, spec.x_axis);
    const std::string right = FormatX(x_end, spec.x_axis);
    const int left_width = DisplayWidth(left);
    const int right_width = DisplayWidth(right);
    if (left_width <= plot.width) grid.PutText(plot.x, y, left, kDimStyle, plot.width);
    if (left_width + 1 + right_width <= plot.width) {
      grid.PutText(plot.x + plot.width - right_width, y, right, kDimStyle, right_width);
    }
  }
  if (has_legend) DrawLegend(grid, {inner.x, inner.y + inner.height - 1, inner.width, 1}, spec, visible);
}

}  // namespace runmon::tui
