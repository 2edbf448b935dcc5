// LeetView's colours (the schemes are color_scheme_test's) and the settings it keeps for the config: a run's
// logged metrics in the run's own colour or each chart its own (per_plot), system charts from
// system_color_scheme, heatmaps on french_fries_color_scheme's ramp, overlaid runs apart (and their markers
// in the runs list), tags in tag_color_scheme; and which of the user's changes settings() reports (the run
// view's panes, not a workspace's; guides, grid sizes, dragged sizes and their reset).
#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tui/color_scheme.hpp"
#include "tui/view.hpp"
#include "view_test_support.hpp"

namespace runmon::tui {
namespace {

RunLogBuilder WithHistory(RunLogBuilder builder) {
  for (int step = 0; step <= 60; ++step) {
    builder.History(step, {{"loss", std::to_string(2.0 * std::exp(-step / 30.0))},
                           {"accuracy", std::to_string(1 - std::exp(-step / 25.0))},
                           {"lr", std::to_string(0.001 * (1 + step % 7))}});
  }
  return builder;
}

bool IsBraille(char32_t c) {
  return c > 0x2800 && c <= 0x28FF;
}

// Where `title` starts in the frame (the first row holding it), or {-1, -1}.
std::pair<int, int> Find(const CellGrid& grid, std::u32string_view title) {
  for (int y = 0; y < grid.height(); ++y) {
    for (int x = 0; x + static_cast<int>(title.size()) <= grid.width(); ++x) {
      bool match = true;
      for (size_t i = 0; i < title.size() && match; ++i) {
        match = grid.at(x + static_cast<int>(i), y).code_point == title[i];
      }
      if (match) return {x, y};
    }
  }
  return {-1, -1};
}

// The colours of the cells holding `glyph` (braille dots when 0) inside the box of the chart titled
// `title`: from the box's corner left of the title to its right corner, down to its bottom border.
std::set<int16_t> ColorsUnder(const CellGrid& grid, std::u32string_view title, char32_t glyph = 0) {
  const auto [title_x, y0] = Find(grid, title);
  std::set<int16_t> colors;
  if (title_x < 0) return colors;
  int x0 = title_x;
  while (x0 > 0 && grid.at(x0, y0).code_point != U'┌') --x0;
  int x1 = title_x;
  while (x1 + 1 < grid.width() && grid.at(x1, y0).code_point != U'┐') ++x1;
  for (int y = y0 + 1; y < grid.height() && grid.at(x0, y).code_point != U'└'; ++y) {
    for (int x = x0 + 1; x < x1; ++x) {
      const Cell& cell = grid.at(x, y);
      if (glyph == 0 ? IsBraille(cell.code_point) : cell.code_point == glyph) colors.insert(cell.style.fg);
    }
  }
  return colors;
}

TEST_F(ViewTest, ARunsLoggedMetricsTakeTheRunsColourOrEachChartItsOwn) {
  const runview::RunModel model = Ingest(WithHistory(TrainingRun()));
  const auto palette = SchemeColors(kDefaultColorScheme);
  const int16_t run_color = palette[StableColorIndex("r3snet50", palette.size())];
  {
    LeetView view;
    const CellGrid frame = view.Render(SingleRun(model), 160, 48);
    EXPECT_EQ(ColorsUnder(frame, U"loss"), std::set<int16_t>{run_color});
    EXPECT_EQ(ColorsUnder(frame, U"accuracy"), std::set<int16_t>{run_color});
  }
  LeetViewSettings settings;
  settings.single_run_color_mode = ColorMode::kPerPlot;
  settings.per_plot_color_scheme = FindColorScheme("bootstrap-vibe");
  LeetView view(settings);
  const CellGrid frame = view.Render(SingleRun(model), 160, 48);
  // Each chart takes the next colour, in the charts' order (accuracy, loss, lr).
  const auto bootstrap = SchemeColors(settings.per_plot_color_scheme);
  EXPECT_EQ(ColorsUnder(frame, U"accuracy"), std::set<int16_t>{bootstrap[0]});
  EXPECT_EQ(ColorsUnder(frame, U"loss"), std::set<int16_t>{bootstrap[1]});
  EXPECT_EQ(ColorsUnder(frame, U"lr"), std::set<int16_t>{bootstrap[2]});
}

TEST_F(ViewTest, SystemChartsTakeTheSystemSchemeAndHeatmapsTheirRamp) {
  const runview::RunModel model = Ingest(TrainingRun());
  LeetViewSettings settings;
  settings.system_color_scheme = FindColorScheme("dusk-shore");
  settings.metrics_grid = {3, 3};
  LeetView view(settings);
  const CellGrid frame = view.Render(SingleRun(model), 160, 48);
  const auto dusk = SchemeColors(settings.system_color_scheme);
  // per_series: a one-series chart in the palette's first colour, two GPUs in its first two.
  EXPECT_EQ(ColorsUnder(frame, U"Process CPU"), std::set<int16_t>{dusk[0]});
  EXPECT_EQ(ColorsUnder(frame, U"GPU utilization"), (std::set<int16_t>{dusk[0], dusk[1]}));

  // Eight cores: a heatmap on the chosen ramp.
  RunLogBuilder cores;
  cores.Header().Run("c0res008", "cores", kStart);
  for (int i = 0; i < 30; ++i) {
    std::vector<std::pair<std::string, std::string>> items;
    for (int core = 0; core < 8; ++core) {
      items.emplace_back(fmt::format("cpu.{}.cpu_percent", core), std::to_string((core * 13 + i) % 100));
    }
    cores.Stats(kStart + i, items);
  }
  const runview::RunModel many = Ingest(cores);
  LeetViewSettings magma;
  magma.french_fries_color_scheme = FindColorScheme("magma");
  LeetView heat(magma);
  const CellGrid heat_frame = heat.Render(SingleRun(many), 160, 48);
  const std::set<int16_t> used = ColorsUnder(heat_frame, U"Core CPU", U'█');
  ASSERT_FALSE(used.empty());
  const auto ramp = SchemeColors(magma.french_fries_color_scheme);
  for (const int16_t color : used) {
    EXPECT_NE(std::find(ramp.begin(), ramp.end(), color), ramp.end()) << color;
  }
}

TEST_F(ViewTest, OverlaidRunsKeepApartAndTheirMarkersShowTheirColours) {
  RunLogBuilder a;
  a.Header().Run("runaaaa1", "a", kStart);
  RunLogBuilder b;
  b.Header().Run("runbbbb2", "b", kStart);
  for (int i = 0; i < 30; ++i) {
    a.Stats(kStart + i, {{"cpu", std::to_string(10 + i)}});
    b.Stats(kStart + i, {{"cpu", std::to_string(60 - i)}});
  }
  const runview::RunModel first = Ingest(a);
  const runview::RunModel second = Ingest(b);
  ViewModel vm;
  vm.mode = LeetMode::kWorkspace;
  vm.location = "wandb";
  vm.runs = {{"a", "2026-05-28 20:26", runview::RunState::kFinished, true, true, false, "runaaaa1"},
             {"b", "2026-05-28 20:26", runview::RunState::kFinished, true, true, false, "runbbbb2"}};
  vm.chart_runs = {&first, &second};
  vm.chart_run_labels = {"a", "b"};
  vm.now_seconds = kStart + 100;
  // A scheme of one colour would let them share it: two colours of wandb-vibe-10 whichever the hashes.
  LeetView view;
  const CellGrid frame = view.Render(vm, 160, 48);
  const std::set<int16_t> colors = ColorsUnder(frame, U"Process CPU");
  EXPECT_EQ(colors.size(), 2u);
  const auto [marker_x, marker_y] = Find(frame, U"● a");
  ASSERT_GE(marker_x, 0);
  const auto [second_x, second_y] = Find(frame, U"● b");
  ASSERT_GE(second_x, 0);
  const std::set<int16_t> markers = {frame.at(marker_x, marker_y).style.fg,
                                     frame.at(second_x, second_y).style.fg};
  EXPECT_EQ(markers, colors);
  const auto palette = SchemeColors(kDefaultColorScheme);
  EXPECT_EQ(frame.at(marker_x, marker_y).style.fg, palette[StableColorIndex("runaaaa1", palette.size())]);
}

TEST_F(ViewTest, TagsAreEachInTheirColour) {
  runview::RunModel model = Ingest(TrainingRun());
  wandb::Record record;
  auto* run = record.mutable_run();
  run->set_run_id("r3snet50");
  run->add_tags("baseline");
  run->add_tags("fp16");
  model.Ingest(record);
  LeetViewSettings settings;
  settings.tag_color_scheme = FindColorScheme("wandb-vibe-20");
  LeetView view(settings);
  const CellGrid frame = view.Render(SingleRun(model), 160, 48);
  const auto palette = SchemeColors(settings.tag_color_scheme);
  const auto [x, y] = Find(frame, U"baseline");
  ASSERT_GE(x, 0);
  EXPECT_EQ(frame.at(x, y).style.fg, palette[StableColorIndex("baseline", palette.size())]);
  const auto [fx, fy] = Find(frame, U"fp16");
  ASSERT_GE(fx, 0);
  EXPECT_EQ(fy, y);
  EXPECT_EQ(frame.at(fx, fy).style.fg, palette[StableColorIndex("fp16", palette.size())]);
}

TEST_F(ViewTest, SettingsFollowWhatTheUserChangesForTheConfig) {
  const runview::RunModel model = Ingest(WithHistory(TrainingRun()));
  LeetView view;
  const ViewModel single = SingleRun(model);
  view.Render(single, 160, 48);
  const LeetViewSettings started = view.settings();
  EXPECT_EQ(started, LeetViewSettings{});
  Press(view, "1[");
  view.Handle(CharacterEvent(U'4'));
  view.Handle(CharacterEvent(U'g'));
  EXPECT_FALSE(view.settings().metrics_grid_visible);
  EXPECT_FALSE(view.settings().left_sidebar_visible);
  EXPECT_TRUE(view.settings().console_logs_visible);
  EXPECT_EQ(view.settings().chart_guides, 1);
  Press(view, "14[");
  view.Render(single, 160, 48);
  Press(view, "r2c5");
  EXPECT_EQ(view.settings().metrics_grid, (LeetViewSettings::Grid{2, 5}));
  EXPECT_TRUE(view.settings().metrics_grid_visible);
  EXPECT_TRUE(view.settings().left_sidebar_visible);
  EXPECT_FALSE(view.settings().console_logs_visible);

  // A workspace's panes are its own: toggling them there changes nothing kept.
  ViewModel workspace;
  workspace.mode = LeetMode::kWorkspace;
  workspace.location = "wandb";
  workspace.runs = {{"resnet-50", "2026-05-28 20:26", runview::RunState::kFinished, false, true}};
  workspace.now_seconds = kStart + 200;
  LeetView list;
  list.Render(workspace, 160, 48);
  Press(list, "[1");
  EXPECT_TRUE(list.settings().left_sidebar_visible);
  EXPECT_TRUE(list.settings().metrics_grid_visible);
  EXPECT_FALSE(list.left_visible());
}

}  // namespace
}  // namespace runmon::tui
