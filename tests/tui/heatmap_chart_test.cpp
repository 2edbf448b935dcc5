// Unit tests of the heatmap chart: an exact small frame (bands, labels, the time row), the colour ramp's
// ends and clamping, bucket means, blank buckets where a series has no point, more series than rows ("N of
// M" in the title), and never a write outside the area (random rects, 0 and 1 included).
#include "tui/heatmap_chart.hpp"
#include "tui/color_scheme.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace runmon::tui {
namespace {

ChartSpec Spec(std::vector<ChartSeries> series, double x_start, double x_end) {
  ChartSpec spec;
  spec.title = "Cores";
  spec.unit = "%";
  spec.x_start = x_start;
  spec.x_end = x_end;
  spec.series = std::move(series);
  return spec;
}

TEST(HeatmapChart, BandsLabelsAndTimeRow) {
  runview::TimeSeries low;
  runview::TimeSeries high;
  for (int i = 0; i <= 60; ++i) {
    low.Append(i, 0);
    high.Append(i, 100);
  }
  CellGrid grid(24, 6);
  DrawHeatmapChart(grid, grid.bounds(), Spec({{"c0", &low}, {"c1", &high}}, 0, 60));
  EXPECT_EQ(grid.ToString(),
            "┌ Cores (%) ───────────┐\n"
            "│c0 ███████████████████│\n"
            "│   ███████████████████│\n"
            "│c1 ███████████████████│\n"
            "│   0s            1m00s│\n"
            "└──────────────────────┘");
  // c0 takes rows 1-2 (the first band gets the odd row), c1 row 3; the colours are the ramp's ends.
  EXPECT_EQ(grid.at(4, 1).code_point, U'█');
  EXPECT_EQ(grid.at(4, 1).style.fg, HeatmapColor(0));
  EXPECT_EQ(grid.at(4, 2).style.fg, HeatmapColor(0));
  EXPECT_EQ(grid.at(4, 3).style.fg, HeatmapColor(100));
  EXPECT_EQ(grid.at(1, 1).code_point, U'c');
  EXPECT_EQ(grid.at(1, 3).code_point, U'c');
  EXPECT_NE(grid.ToString().find("0s"), std::string::npos);
}

TEST(HeatmapChart, RampClampsAndNaNHasNoColour) {
  EXPECT_EQ(HeatmapColor(-50), HeatmapColor(0));
  EXPECT_EQ(HeatmapColor(250), HeatmapColor(100));
  EXPECT_NE(HeatmapColor(0), HeatmapColor(100));
  EXPECT_EQ(HeatmapColor(std::numeric_limits<double>::quiet_NaN()), kDefaultColor);
  // Monotone steps: the default ramp (viridis) in its order, no colour coming back once left.
  std::vector<int16_t> steps;
  for (int p = 0; p <= 100; ++p) {
    if (steps.empty() || steps.back() != HeatmapColor(p)) steps.push_back(HeatmapColor(p));
  }
  const auto viridis = SchemeColors(kDefaultFrenchFriesColorScheme);
  std::vector<int16_t> distinct;
  for (const int16_t color : viridis) {
    if (distinct.empty() || distinct.back() != color) distinct.push_back(color);
  }
  EXPECT_EQ(steps, distinct);
  EXPECT_EQ(std::set<int16_t>(steps.begin(), steps.end()).size(), steps.size());
  // A ramp of the caller's: its first colour at 0 %, its last at 100 %.
  const std::vector<int16_t> ramp = {17, 18, 19};
  EXPECT_EQ(HeatmapColor(0, ramp), 17);
  EXPECT_EQ(HeatmapColor(49, ramp), 18);
  EXPECT_EQ(HeatmapColor(100, ramp), 19);
}

TEST(HeatmapChart, BucketsAreMeansAndEmptyBucketsStayBlank) {
  // Points only in the first half of the window: the second half is blank.
  runview::TimeSeries half;
  for (int i = 0; i < 30; ++i) half.Append(i, i % 2 == 0 ? 0 : 100);
  CellGrid grid(14, 4);
  DrawHeatmapChart(grid, grid.bounds(), Spec({{"", &half}}, 0, 60));
  // 12 plot columns over 60 s: buckets of 5 s; the first holds 0, 100, 0, 100, 0 (mean 40), the second
  // 100, 0, 100, 0, 100 (mean 60).
  EXPECT_EQ(grid.at(1, 1).code_point, U'█');
  EXPECT_EQ(grid.at(1, 1).style.fg, HeatmapColor(40));
  EXPECT_EQ(grid.at(2, 1).style.fg, HeatmapColor(60));
  EXPECT_EQ(grid.at(12, 1).code_point, U' ');
}

TEST(HeatmapChart, MoreSeriesThanRowsSaysHowMany) {
  std::vector<runview::TimeSeries> data(12);
  std::vector<ChartSeries> series;
  for (size_t i = 0; i < data.size(); ++i) {
    data[i].Append(0, 10);
    data[i].Append(10, 20);
    series.push_back({"core " + std::to_string(i), &data[i]});
  }
  CellGrid grid(40, 8);  // 5 band rows
  DrawHeatmapChart(grid, grid.bounds(), Spec(series, 0, 10));
  EXPECT_NE(grid.ToString().find("Cores (%) · 5 of 12"), std::string::npos);
  EXPECT_NE(grid.ToString().find("core 4"), std::string::npos);
  EXPECT_EQ(grid.ToString().find("core 5"), std::string::npos);
}

TEST(HeatmapChart, NeverWritesOutsideItsArea) {
  runview::TimeSeries data;
  for (int i = 0; i < 500; ++i) data.Append(i, std::fmod(i * 7.3, 130) - 15);
  std::mt19937 random(7);
  for (int trial = 0; trial < 2000; ++trial) {
    CellGrid grid(30, 12);
    const Rect area{static_cast<int>(random() % 34) - 2, static_cast<int>(random() % 16) - 2,
                    static_cast<int>(random() % 34), static_cast<int>(random() % 16)};
    ChartSpec spec = Spec({{"a", &data}, {"b", &data}, {"c", nullptr}}, 0, 499);
    if (trial % 7 == 0) spec.x_end = std::numeric_limits<double>::quiet_NaN();
    DrawHeatmapChart(grid, area, spec);
    for (int y = 0; y < grid.height(); ++y) {
      for (int x = 0; x < grid.width(); ++x) {
        const bool inside = x >= area.x && x < area.x + area.width && y >= area.y && y < area.y + area.height;
        if (!inside) ASSERT_EQ(grid.at(x, y).code_point, U' ') << trial << " at " << x << "," << y;
      }
    }
  }
}

}  // namespace
}  // namespace runmon::tui
