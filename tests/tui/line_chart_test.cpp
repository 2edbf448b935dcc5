// Unit tests of the braille line chart: exact frames for small charts (a ramp, sparse points, a log scale,
// a negative range, the legend's "+N more", short areas), the y range rules, spikes surviving
// downsampling, sparse data joined across empty columns, colours and focus, "no data", never a write
// outside the area (random rects, 0 and 1 included), and the cost of a 24-hour chart.
#include "tui/line_chart.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace runmon::tui {
namespace {

std::string Draw(int width, int height, const ChartSpec& spec) {
  CellGrid grid(width, height);
  DrawLineChart(grid, grid.bounds(), spec);
  return grid.ToString();
}

ChartSpec Spec(std::string title, std::string unit, double x_start, double x_end,
               std::vector<ChartSeries> series) {
  ChartSpec spec;
  spec.title = std::move(title);
  spec.unit = std::move(unit);
  spec.x_start = x_start;
  spec.x_end = x_end;
  spec.series = std::move(series);
  return spec;
}

bool IsBraille(char32_t code_point) {
  return code_point >= 0x2800 && code_point <= 0x28FF;
}

// Dots of the braille cells in `plot`, as [dot row][dot column].
std::vector<std::vector<bool>> Dots(const CellGrid& grid, Rect plot) {
  std::vector<std::vector<bool>> dots(static_cast<size_t>(plot.height) * 4,
                                      std::vector<bool>(static_cast<size_t>(plot.width) * 2, false));
  constexpr int kBit[2][4] = {{0, 1, 2, 6}, {3, 4, 5, 7}};
  for (int y = 0; y < plot.height; ++y) {
    for (int x = 0; x < plot.width; ++x) {
      const char32_t code_point = grid.at(plot.x + x, plot.y + y).code_point;
      if (!IsBraille(code_point)) continue;
      const uint32_t bits = code_point - 0x2800;
      for (int column = 0; column < 2; ++column) {
        for (int row = 0; row < 4; ++row) {
          if (bits & (1u << kBit[column][row])) {
            dots[static_cast<size_t>(y * 4 + row)][static_cast<size_t>(x * 2 + column)] = true;
          }
        }
      }
    }
  }
  return dots;
}

TEST(BrailleCodePoint, DotNumbering) {
  EXPECT_EQ(BrailleCodePoint(0), U'\u2800');
  EXPECT_EQ(BrailleCodePoint(0xFF), U'⣿');
  EXPECT_EQ(BrailleCodePoint(1 << 0), U'⠁');  // dot 1: top left
  EXPECT_EQ(BrailleCodePoint(1 << 2), U'⠄');  // dot 3: third row left
  EXPECT_EQ(BrailleCodePoint(1 << 3), U'⠈');  // dot 4: top right
  EXPECT_EQ(BrailleCodePoint(1 << 6), U'⡀');  // dot 7: bottom left
  EXPECT_EQ(BrailleCodePoint(1 << 7), U'⢀');  // dot 8: bottom right
  EXPECT_EQ(BrailleCodePoint((1 << 6) | (1 << 7)), U'⣀');
}

TEST(DrawLineChart, RampGolden) {
  runview::TimeSeries ramp;
  for (int i = 0; i <= 60; ++i) ramp.Append(i, i * 100.0 / 60);
  const ChartSpec spec = Spec("CPU", "%", 0, 60, {{"cpu", &ramp, 2}});
  EXPECT_EQ(Draw(20, 6, spec), R"(┌ CPU (%) ─────────┐
│100%       ⢀⣀⡤⠤⠖⠒⠉│
│  0% ⣀⠤⠴⠒⠚⠉⠉      │
│     0s      1m00s│
│cpu 100%          │
└──────────────────┘)");
  EXPECT_EQ(Draw(30, 8, spec), R"(┌ CPU (%) ───────────────────┐
│100%                   ⣀⠤⠤⠒⠊│
│                ⢀⣀⠤⠴⠒⠋⠉     │
│          ⣀⣀⠤⠖⠒⠉⠉           │
│  0% ⣀⠤⠔⠒⠉                  │
│     0s                1m00s│
│cpu 100%                    │
└────────────────────────────┘)");
}

TEST(DrawLineChart, ShortAreasDropTheLegendThenTheXLabels) {
  runview::TimeSeries ramp;
  for (int i = 0; i <= 60; ++i) ramp.Append(i, i * 100.0 / 60);
  const ChartSpec spec = Spec("CPU", "%", 0, 60, {{"cpu", &ramp, 2}});
  EXPECT_EQ(Draw(20, 5, spec), R"(┌ CPU (%) ─────────┐
│100%       ⢀⣀⡤⠤⠖⠒⠉│
│  0% ⣀⠤⠴⠒⠚⠉⠉      │
│     0s      1m00s│
└──────────────────┘)");
  EXPECT_EQ(Draw(20, 4, spec), R"(┌ CPU (%) ─────────┐
│100%       ⢀⣀⡤⠤⠖⠒⠉│
│  0% ⣀⠤⠴⠒⠚⠉⠉      │
└──────────────────┘)");
  // Too narrow for the y labels: the plot takes the whole inner width.
  EXPECT_EQ(Draw(6, 4, spec), R"(┌ C… ┐
│  ⣠⠞│
│⡴⠋⠁ │
└────┘)");
}

TEST(DrawLineChart, TinyAreasShowTheTitleOnlyOrNothing) {
  runview::TimeSeries ramp;
  for (int i = 0; i <= 60; ++i) ramp.Append(i, i);
  const ChartSpec spec = Spec("Disk", "", 0, 60, {{"sda", &ramp, 2}});
  EXPECT_EQ(Draw(10, 3, spec), "┌ Disk ──┐\n│        │\n└────────┘");  // inner 8x1
  EXPECT_EQ(Draw(6, 3, spec), "┌ D… ┐\n│    │\n└────┘");               // inner 4x1
  EXPECT_EQ(Draw(5, 4, spec), "┌───┐\n│   │\n│   │\n└───┘");           // inner 3x2: no room for "D…" either
  EXPECT_EQ(Draw(2, 2, spec), "┌┐\n└┘");
  for (const auto& [width, height] : std::vector<std::pair<int, int>>{{1, 1}, {1, 5}, {5, 1}, {0, 0}}) {
    CellGrid grid(8, 8);
    grid.Fill(grid.bounds(), U'@');
    const std::string before = grid.ToString();
    DrawLineChart(grid, {1, 1, width, height}, spec);
    EXPECT_EQ(grid.ToString(), before) << width << "x" << height;
  }
}

TEST(DrawLineChart, SparsePointsAreJoinedGolden) {
  runview::TimeSeries sparse;
  sparse.Append(0, 10);
  sparse.Append(30, 50);
  sparse.Append(60, 20);
  EXPECT_EQ(Draw(24, 8, Spec("Sparse", "W", 0, 60, {{"gpu", &sparse, 2}})), R"(┌ Sparse (W) ──────────┐
│50 W       ⢀⠔⠊⠒⠤⣀     │
│        ⢀⠤⠊⠁     ⠑⠢⢄⡀ │
│     ⢀⡠⠊⠁           ⠈⠑│
│ 0 W ⠁                │
│     0s          1m00s│
│gpu 20 W              │
└──────────────────────┘)");
}

TEST(DrawLineChart, ZoomedPastTheSamplingIntervalStillDrawsALine) {
  runview::TimeSeries dense;
  for (int i = 0; i < 100; ++i) dense.Append(i, i % 7);
  // Two points (x = 11 and 12) in the window, 18 dot columns apart: every column between them has a dot.
  ChartSpec spec = Spec("Zoom", "", 10.5, 12.5, {{"d", &dense, 1}});
  CellGrid grid(24, 6);
  DrawLineChart(grid, grid.bounds(), spec);
  EXPECT_EQ(grid.ToString(), R"(┌ Zoom ────────────────┐
│5      ⠒⠒⠒⠒⠒⠉⠉⠉⠉⠉⠁    │
│0                     │
│  10.5s          12.5s│
│d 5                   │
└──────────────────────┘)");
  const auto dots = Dots(grid, {3, 1, 20, 2});
  int first = -1;
  int last = -1;
  for (size_t column = 0; column < dots[0].size(); ++column) {
    bool any = false;
    for (const auto& row : dots) any = any || row[column];
    if (any && first < 0) first = static_cast<int>(column);
    if (any) last = static_cast<int>(column);
  }
  ASSERT_GE(first, 0);
  EXPECT_GT(last - first, 10);
  for (int column = first; column <= last; ++column) {
    bool any = false;
    for (const auto& row : dots) any = any || row[static_cast<size_t>(column)];
    EXPECT_TRUE(any) << "gap at dot column " << column;
  }
  // A window between two samples holds no point: the series draws nothing.
  spec.x_start = 10.2;
  spec.x_end = 10.8;
  EXPECT_EQ(Draw(24, 6, spec), R"(┌ Zoom ────────────────┐
│       no data        │
│                      │
│10.2s            10.8s│
│d                     │
└──────────────────────┘)");
}

TEST(DrawLineChart, SteepJumpsAreJoinedWithoutGaps) {
  runview::TimeSeries steps;
  for (int i = 0; i < 8; ++i) steps.Append(i * 10, i % 2 == 0 ? 0 : 100);
  CellGrid grid(30, 12);
  DrawLineChart(grid, grid.bounds(), Spec("Steps", "%", 0, 70, {{"s", &steps, 1}}));
  // Plot: x 6..28 (after "100% "), y 1..8. Every dot column from the first point to the last has a dot,
  // and 8-connectivity holds: consecutive columns' dot rows touch.
  const auto dots = Dots(grid, {6, 1, 23, 8});
  const size_t columns = dots[0].size();
  int previous_top = -1;
  int previous_bottom = -1;
  for (size_t column = 0; column < columns; ++column) {
    int top = -1;
    int bottom = -1;
    for (size_t row = 0; row < dots.size(); ++row) {
      if (!dots[row][column]) continue;
      if (top < 0) top = static_cast<int>(row);
      bottom = static_cast<int>(row);
    }
    ASSERT_GE(top, 0) << "empty dot column " << column;
    if (previous_top >= 0) {
      EXPECT_LE(top, previous_bottom + 1) << column;
      EXPECT_GE(bottom, previous_top - 1) << column;
    }
    previous_top = top;
    previous_bottom = bottom;
  }
}

TEST(DrawLineChart, LogScaleGolden) {
  runview::TimeSeries loss;
  for (int i = 0; i <= 40; ++i) loss.Append(i, std::pow(10.0, i / 10.0));
  loss.Append(41, 0);  // not drawable on a log scale
  loss.Append(42, -5);
  ChartSpec spec = Spec("Loss", "", 0, 42, {{"loss", &loss, 3}});
  spec.log_scale = true;
  EXPECT_EQ(Draw(24, 8, spec), R"(┌ Loss ────────────────┐
│10k              ⣀⡠⠖⠊⠁│
│             ⡠⠤⠒⠋     │
│        ⣀⠤⠖⠊⠉         │
│  1 ⡠⠤⠒⠉              │
│    0s             42s│
│loss -5               │
└──────────────────────┘)");
  spec.log_scale = false;  // the same data on a linear scale
  EXPECT_EQ(Draw(24, 8, spec), R"(┌ Loss ────────────────┐
│10k                 ⢠⡇│
│                   ⢀⠎⡇│
│                  ⢀⠎ ⢸│
│ -5 ⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⠤⠔⠒⠁  ⢸│
│    0s             42s│
│loss -5               │
└──────────────────────┘)");
}

TEST(DrawLineChart, LogScaleSpacesDecadesEvenly) {
  runview::TimeSeries decades;
  for (int i = 0; i < 4; ++i) decades.Append(i, std::pow(10.0, i));  // 1, 10, 100, 1000
  ChartSpec spec = Spec("Rate", "count", 0, 3, {{"r", &decades, 1}});
  spec.log_scale = true;
  CellGrid grid(16, 6);  // plot: 2 rows, 8 dot rows
  DrawLineChart(grid, grid.bounds(), spec);
  // Plot: 11x2 cells, 22x8 dots; 1, 10, 100, 1000 at dot columns 0, 7, 14, 21 and rows 7, 5, 2, 0.
  EXPECT_EQ(grid.ToString(), R"(┌ Rate (count) ┐
│1k      ⢀⡠⠤⠒⠒⠉│
│ 1 ⣀⠤⠤⠒⠊⠁     │
│   0s       3s│
│r 1k          │
└──────────────┘)");
  const auto dots = Dots(grid, {4, 1, 11, 2});
  EXPECT_TRUE(dots[7][0]);
  EXPECT_TRUE(dots[5][7]);
  EXPECT_TRUE(dots[2][14]);
  EXPECT_TRUE(dots[0][21]);
}

TEST(DrawLineChart, LogScaleWithNothingPositiveShowsNoData) {
  runview::TimeSeries zeros;
  for (int i = 0; i < 10; ++i) zeros.Append(i, -i);
  ChartSpec spec = Spec("Loss", "", 0, 10, {{"z", &zeros, 1}});
  spec.log_scale = true;
  EXPECT_NE(Draw(20, 6, spec).find("no data"), std::string::npos);
  spec.log_scale = false;
  EXPECT_EQ(Draw(20, 6, spec).find("no data"), std::string::npos);
}

TEST(DrawLineChart, NegativeRangeAndSeveralSeriesGolden) {
  runview::TimeSeries wave;
  for (int i = 0; i <= 20; ++i) wave.Append(i * 100, std::sin(i / 3.0) * 5);
  runview::TimeSeries early;
  early.Append(0, 10);
  early.Append(30, 50);
  early.Append(60, 20);
  ChartSpec spec =
      Spec("Temp", "°C", 0, 2000,
           {{"a", &wave, 1}, {"b", &early, 2}, {"a very long name", &wave, 3}, {"d", nullptr, 4}});
  spec.x_axis = runview::XAxisKind::kStep;
  EXPECT_EQ(Draw(30, 8, spec), R"(┌ Temp (°C) ─────────────────┐
│   50 °C ⡇                  │
│         ⣿                  │
│         ⡏                  │
│-4.99 °C ⠔⠒⠉⠉⠉⠉⠒⠒⠒⠤⢄⣀⣀⣀⣀⡠⠤⠤⠔│
│         0                2k│
│a 1.87 °C  b 20 °C  +2 more │
└────────────────────────────┘)");
}

TEST(DrawLineChart, LegendFitsWhatItCanThenCountsTheRest) {
  runview::TimeSeries flat;
  for (int i = 0; i <= 10; ++i) flat.Append(i, 2);
  const ChartSpec three =
      Spec("Power", "W", 0, 10, {{"GPU 0", &flat, 1}, {"GPU 1", &flat, 2}, {"GPU 2", &flat, 3}});
  EXPECT_EQ(Draw(30, 6, three), R"(┌ Power (W) ─────────────────┐
│2 W ⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉│
│0 W                         │
│    0s                   10s│
│GPU 0 2 W  +2 more          │
└────────────────────────────┘)");
  // Wide enough for all three: no "+N more".
  const std::string wide = Draw(40, 6, three);
  EXPECT_NE(wide.find("│GPU 0 2 W  GPU 1 2 W  GPU 2 2 W       │"), std::string::npos) << wide;
  // A long first name is cut to leave room for the count, or to the row when it is alone.
  EXPECT_EQ(
      Draw(24, 6, Spec("Power", "W", 0, 10, {{"a rather long series name", &flat, 1}, {"GPU 1", &flat, 2}})),
      R"(┌ Power (W) ───────────┐
│2 W ⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉⠉│
│0 W                   │
│    0s             10s│
│a rather lon…  +1 more│
└──────────────────────┘)");
  EXPECT_NE(Draw(24, 6, Spec("Power", "W", 0, 10, {{"a rather long series name", &flat, 1}}))
                .find("│a rather long series …│"),
            std::string::npos);
  // Legend colours are the series colours.
  CellGrid grid(40, 6);
  DrawLineChart(grid, grid.bounds(), three);
  EXPECT_EQ(grid.at(1, 4).style.fg, 1);
  EXPECT_EQ(grid.at(12, 4).style.fg, 2);
  EXPECT_EQ(grid.at(23, 4).style.fg, 3);
}

TEST(DrawLineChart, YRangeRules) {
  const auto labels = [](const runview::TimeSeries& series, const std::string& unit) {
    CellGrid grid(24, 6);
    DrawLineChart(grid, grid.bounds(), Spec("T", unit, 0, 10, {{"s", &series, 1}}));
    // The first word of a row's ASCII text.
    const auto word = [&grid](int y) {
      std::string text;
      for (int x = 1; x < 23; ++x) {
        const char32_t code_point = grid.at(x, y).code_point;
        if (code_point == U' ' && !text.empty()) break;
        if (code_point != U' ') text += code_point < 0x80 ? static_cast<char>(code_point) : '?';
      }
      return text;
    };
    return word(1) + "|" + word(2);
  };
  runview::TimeSeries positive;  // all >= 0: the axis starts at 0
  positive.Append(0, 40);
  positive.Append(5, 60);
  EXPECT_EQ(labels(positive, ""), "60|0");
  runview::TimeSeries mixed;  // negative values: the axis starts at the minimum
  mixed.Append(0, -20);
  mixed.Append(5, 60);
  EXPECT_EQ(labels(mixed, ""), "60|-20");
  runview::TimeSeries zero;  // flat at 0: padded to [0, 1]
  zero.Append(0, 0);
  zero.Append(5, 0);
  EXPECT_EQ(labels(zero, ""), "1|0");
  runview::TimeSeries negative;  // flat below 0: padded up to 0
  negative.Append(0, -3);
  negative.Append(5, -3);
  EXPECT_EQ(labels(negative, ""), "0|-3");
  runview::TimeSeries outside;  // points outside the window do not count
  outside.Append(-5, 1000);
  outside.Append(2, 7);
  outside.Append(20, -1000);
  EXPECT_EQ(labels(outside, ""), "7|0");
}

TEST(DrawLineChart, SpikesSurviveDownsampling) {
  constexpr int kPoints = 86400;
  runview::TimeSeries spike;
  runview::TimeSeries dip;
  for (int i = 0; i < kPoints; ++i) {
    spike.Append(i, i == 43210 ? 100.0 : 10.0);
    dip.Append(i, i == 12345 ? -50.0 : 10.0);
  }
  CellGrid grid(40, 10);
  DrawLineChart(grid, grid.bounds(), Spec("Util", "%", 0, kPoints - 1, {{"spike", &spike, 1}}));
  // Plot rows 1..6 (legend and x labels below): the spike reaches the top row.
  bool top_row_has_dots = false;
  for (int x = 6; x < 39; ++x) top_row_has_dots = top_row_has_dots || IsBraille(grid.at(x, 1).code_point);
  EXPECT_TRUE(top_row_has_dots) << grid.ToString();
  DrawLineChart(grid, grid.bounds(), Spec("Util", "%", 0, kPoints - 1, {{"dip", &dip, 1}}));
  bool bottom_row_has_dots = false;
  for (int x = 6; x < 39; ++x)
    bottom_row_has_dots = bottom_row_has_dots || IsBraille(grid.at(x, 6).code_point);
  EXPECT_TRUE(bottom_row_has_dots) << grid.ToString();
}

TEST(DrawLineChart, DotsOrTogetherAndTheLastSeriesColoursTheCell) {
  runview::TimeSeries low;
  runview::TimeSeries high;
  for (int i = 0; i <= 10; ++i) {
    low.Append(i, 0);
    high.Append(i, 1);
  }
  CellGrid grid(12, 4);  // inner 10x2, plot 8x2 after "1 " labels: 16x8 dots
  DrawLineChart(grid, grid.bounds(), Spec("", "", 0, 10, {{"low", &low, 5}, {"high", &high, 6}}));
  EXPECT_EQ(grid.ToString(), R"(┌──────────┐
│1 ⠉⠉⠉⠉⠉⠉⠉⠉│
│0 ⣀⣀⣀⣀⣀⣀⣀⣀│
└──────────┘)");
  EXPECT_EQ(grid.at(3, 1).style.fg, 6);
  EXPECT_EQ(grid.at(3, 2).style.fg, 5);
  runview::TimeSeries mid;
  for (int i = 0; i <= 10; ++i) mid.Append(i, 0.5);
  CellGrid shared(12, 4);
  DrawLineChart(shared, shared.bounds(),
                Spec("", "", 0, 10, {{"low", &low, 5}, {"mid", &mid, 7}, {"high", &high, 6}}));
  // Dot rows 0..7: high at row 0, mid at row round(3.5) = 4 and low at row 7, so low and mid share the
  // bottom cells (their dots ORed: ⣉) and mid, drawn last there, colours them.
  EXPECT_EQ(shared.ToString(), R"(┌──────────┐
│1 ⠉⠉⠉⠉⠉⠉⠉⠉│
│0 ⣉⣉⣉⣉⣉⣉⣉⣉│
└──────────┘)");
  EXPECT_EQ(shared.at(3, 2).code_point, BrailleCodePoint(0x40 | 0x80 | 0x01 | 0x08));
  EXPECT_EQ(shared.at(3, 2).style.fg, 7);
  EXPECT_EQ(shared.at(3, 1).style.fg, 6);
}

TEST(DrawLineChart, FocusHighlightsBorderAndTitle) {
  runview::TimeSeries flat;
  flat.Append(0, 1);
  ChartSpec spec = Spec("GPU", "W", 0, 10, {{"g", &flat, 1}});
  CellGrid grid(20, 6);
  DrawLineChart(grid, grid.bounds(), spec);
  EXPECT_EQ(grid.at(0, 0).style, Style{});
  EXPECT_EQ(grid.at(2, 0).style, Style{});
  spec.focused = true;
  DrawLineChart(grid, grid.bounds(), spec);
  const Style corner = grid.at(0, 0).style;
  EXPECT_TRUE(corner.attributes & kBold);
  EXPECT_NE(corner.fg, kDefaultColor);
  EXPECT_EQ(grid.at(2, 0).style, corner);              // the title
  EXPECT_EQ(grid.at(0, 3).style, corner);              // the left edge
  EXPECT_EQ(grid.at(19, 5).style, corner);             // a corner
  EXPECT_TRUE(grid.at(1, 1).style.attributes & kDim);  // y labels are dim
}

TEST(DrawLineChart, NoData) {
  runview::TimeSeries empty;
  runview::TimeSeries late;
  late.Append(100, 5);
  for (const ChartSpec& spec :
       {Spec("Net", "bytes/s", 0, 60, {}), Spec("Net", "bytes/s", 0, 60, {{"eth0", &empty, 1}}),
        Spec("Net", "bytes/s", 0, 60, {{"eth0", nullptr, 1}}),
        Spec("Net", "bytes/s", 0, 60, {{"eth0", &late, 1}})}) {
    const std::string frame = Draw(24, 6, spec);
    EXPECT_NE(frame.find("│       no data        │"), std::string::npos) << frame;
    CellGrid grid(24, 6);
    DrawLineChart(grid, grid.bounds(), spec);
    for (int y = 0; y < 6; ++y) {
      for (int x = 0; x < 24; ++x) EXPECT_FALSE(IsBraille(grid.at(x, y).code_point)) << frame;
    }
  }
  EXPECT_EQ(Draw(24, 6, Spec("Net", "bytes/s", 0, 60, {{"eth0", &late, 1}})), R"(┌ Net (bytes/s) ───────┐
│       no data        │
│                      │
│0s               1m00s│
│eth0                  │
└──────────────────────┘)");
}

TEST(DrawLineChart, ClearsItsAreaAndHandlesOddWindows) {
  runview::TimeSeries series;
  for (int i = 0; i < 10; ++i) series.Append(i, i);
  CellGrid grid(20, 6);
  grid.Fill(grid.bounds(), U'#');
  ChartSpec spec = Spec("X", "", 5, 5, {{"s", &series, 1}});  // an empty window
  DrawLineChart(grid, grid.bounds(), spec);
  EXPECT_EQ(grid.ToString().find('#'), std::string::npos);
  spec.x_start = 9;
  spec.x_end = 0;  // reversed
  DrawLineChart(grid, grid.bounds(), spec);
  spec.x_start = std::nan("");
  DrawLineChart(grid, grid.bounds(), spec);
  EXPECT_NE(grid.ToString().find("no data"), std::string::npos);
  spec.x_start = -1e308;
  spec.x_end = 1e308;
  DrawLineChart(grid, grid.bounds(), spec);
}

TEST(DrawLineChart, NeverWritesOutsideItsArea) {
  std::mt19937 random(5);
  std::vector<runview::TimeSeries> series(3);
  for (size_t s = 0; s < series.size(); ++s) {
    for (int i = 0; i < 500; ++i) {
      series[s].Append(i * 0.5,
                       std::sin(i * 0.1 + static_cast<double>(s)) * 100 * static_cast<double>(s + 1));
    }
  }
  const std::vector<std::string> names = {"GPU 0", "中文名字很长的名字", "\x1b[2J\xFF evil"};
  const Style marker_style{9, 9, kReverse};
  for (int trial = 0; trial < 600; ++trial) {
    const int grid_width = static_cast<int>(random() % 50);
    const int grid_height = static_cast<int>(random() % 20);
    CellGrid grid(grid_width, grid_height);
    grid.Fill(grid.bounds(), U'@', marker_style);
    const Rect area{static_cast<int>(random() % 52) - 2, static_cast<int>(random() % 22) - 2,
                    static_cast<int>(random() % 45) - 1, static_cast<int>(random() % 18) - 1};
    ChartSpec spec = Spec(trial % 7 == 0 ? "中文标题" : "Title", trial % 3 == 0 ? "MiB" : "%",
                          static_cast<double>(random() % 100), static_cast<double>(100 + random() % 200), {});
    const size_t count = random() % 4;
    for (size_t s = 0; s < count; ++s) spec.series.push_back({names[s % names.size()], &series[s], 2});
    spec.log_scale = trial % 5 == 0;
    spec.focused = trial % 2 == 0;
    spec.x_axis = trial % 4 == 0 ? runview::XAxisKind::kStep : runview::XAxisKind::kElapsedSeconds;
    DrawLineChart(grid, area, spec);
    for (int y = 0; y < grid_height; ++y) {
      for (int x = 0; x < grid_width; ++x) {
        const bool inside = x >= area.x && x < area.x + area.width && y >= area.y && y < area.y + area.height;
        if (inside) continue;
        ASSERT_EQ(grid.at(x, y), (Cell{U'@', marker_style}))
            << "write at " << x << "," << y << " outside {" << area.x << "," << area.y << "," << area.width
            << "," << area.height << "} in " << grid_width << "x" << grid_height << "\n"
            << grid.ToString();
      }
    }
  }
}

TEST(DrawLineChart, CostDependsOnWidthNotPoints) {
  constexpr int kPoints = 86400;
  std::vector<runview::TimeSeries> series(4);
  std::mt19937 random(9);
  std::uniform_real_distribution<double> value(0, 100);
  for (auto& s : series) {
    for (int i = 0; i < kPoints; ++i) s.Append(i, value(random));
  }
  ChartSpec spec = Spec("GPU Utilization", "%", 0, kPoints - 1, {});
  for (size_t s = 0; s < series.size(); ++s) {
    spec.series.push_back({"GPU " + std::to_string(s), &series[s], static_cast<int16_t>(s + 1)});
  }
  CellGrid grid(40, 10);
  constexpr int kDraws = 200;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kDraws; ++i) DrawLineChart(grid, grid.bounds(), spec);
  const double micros =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / kDraws;
  std::cout << "DrawLineChart 40x10, 4 x " << kPoints << " points: " << micros << " us\n";
  // The 0.2 ms target is for Release; sanitized debug builds are many times slower, so only a scan of
  // every point (hundreds of microseconds even optimized) fails this bound.
  EXPECT_LT(micros, 20000.0);
}

}  // namespace
}  // namespace runmon::tui
