// LeetView: golden frames (80x24 and 160x48) of fixed runs, and what each key does. Frames are pure
// functions of the view model, so the runs here are built from records in memory with fixed values, the
// clock is fixed and times print in UTC.
#include "tui/view.hpp"

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include <gtest/gtest.h>

#include "runlog/record_reader.hpp"
#include "support/golden.hpp"
#include "support/run_log_builder.hpp"
#include "view_test_support.hpp"

namespace runmon::tui {
namespace {

TEST_F(ViewTest, SingleRunGoldens) {
  const runview::RunModel model = Ingest(TrainingRun());
  LeetView view;
  test::ExpectGolden(Golden("single-run-80x24"), view.Render(SingleRun(model), 80, 24).ToString());
  test::ExpectGolden(Golden("single-run-160x48"), view.Render(SingleRun(model), 160, 48).ToString());
}

TEST_F(ViewTest, HelpGolden) {
  const runview::RunModel model = Ingest(TrainingRun());
  LeetView view;
  Press(view, "h");
  EXPECT_TRUE(view.help_visible());
  test::ExpectGolden(Golden("help-80x24"), view.Render(SingleRun(model), 80, 24).ToString());
  view.Handle(KeyEvent(KeyCode::kEscape));
  EXPECT_FALSE(view.help_visible());
}

TEST_F(ViewTest, FilterNarrowsTheChartsLive) {
  const runview::RunModel model = Ingest(TrainingRun());
  LeetView view;
  const std::string before = view.Render(SingleRun(model), 160, 48).ToString();
  EXPECT_NE(before.find("System metrics · 10 charts"), std::string::npos);
  Press(view, "/");
  EXPECT_TRUE(view.filter_editing());
  Press(view, "gpu");
  const std::string typing = view.Render(SingleRun(model), 160, 48).ToString();
  EXPECT_NE(typing.find("System metrics · 4 charts"), std::string::npos);
  EXPECT_NE(typing.find("/gpu"), std::string::npos);  // the prompt
  view.Handle(KeyEvent(KeyCode::kEnter));
  EXPECT_FALSE(view.filter_editing());
  test::ExpectGolden(Golden("filter-gpu-160x48"), view.Render(SingleRun(model), 160, 48).ToString());

  // esc while editing restores the filter that was applied before.
  Press(view, "/");
  view.Handle(KeyEvent(KeyCode::kBackspace));
  view.Handle(KeyEvent(KeyCode::kBackspace));
  view.Handle(KeyEvent(KeyCode::kBackspace));
  Press(view, "temp");
  EXPECT_NE(view.Render(SingleRun(model), 160, 48).ToString().find("System metrics · 1 chart"),
            std::string::npos);
  view.Handle(KeyEvent(KeyCode::kEscape));
  // The centre shows system charts (the run logged no metrics): `/` edits the system filter.
  EXPECT_EQ(view.system_filter().pattern(), "gpu");
  EXPECT_TRUE(view.filter().empty());
  // esc outside editing clears it.
  view.Handle(KeyEvent(KeyCode::kEscape));
  EXPECT_TRUE(view.system_filter().empty());

  // A regex, a glob (tab toggles), a filter matching nothing.
  Press(view, "/");
  Press(view, "^gpu\\.0\\.temp$");
  EXPECT_NE(view.Render(SingleRun(model), 160, 48).ToString().find("System metrics · 1 chart"),
            std::string::npos);
  view.Handle(KeyEvent(KeyCode::kCtrlL));
  Press(view, "net*traffic");
  view.Handle(KeyEvent(KeyCode::kTab));
  EXPECT_TRUE(view.system_filter().glob());
  EXPECT_NE(view.Render(SingleRun(model), 160, 48).ToString().find("System metrics · 1 chart"),
            std::string::npos);
  view.Handle(KeyEvent(KeyCode::kCtrlL));
  Press(view, "zzz");
  view.Handle(KeyEvent(KeyCode::kEnter));
  EXPECT_NE(view.Render(SingleRun(model), 160, 48).ToString().find("no charts match \"zzz\""),
            std::string::npos);
}

TEST_F(ViewTest, SidebarsToggle) {
  const runview::RunModel model = Ingest(TrainingRun());
  LeetView view;
  // The run logged no metrics: its system charts are in the centre, no sidebar repeats them, and ] has
  // nothing to show or hide.
  const std::string no_right = view.Render(SingleRun(model), 80, 24).ToString();
  EXPECT_EQ(no_right.find(" System · "), std::string::npos);
  EXPECT_EQ(view.Handle(CharacterEvent(U']')), ViewAction::kNone);
  EXPECT_TRUE(view.right_visible());
  Press(view, "[");
  EXPECT_FALSE(view.left_visible());
  test::ExpectGolden(Golden("no-sidebars-80x24"), view.Render(SingleRun(model), 80, 24).ToString());
  Press(view, "[");
  EXPECT_NE(view.Render(SingleRun(model), 80, 24).ToString().find("Run overview"), std::string::npos);
}

TEST_F(ViewTest, PagesFocusLogScaleAndGridSize) {
  const runview::RunModel model = Ingest(TrainingRun());
  LeetView view;
  const ViewModel vm = SingleRun(model);
  const std::string page1 = view.Render(vm, 160, 48).ToString();
  EXPECT_EQ(page1.find("[1/"), std::string::npos);  // 10 charts fit one 4x3 page
  Press(view, "r1c2");                              // 1 row, 2 columns: 5 pages
  std::string frame = view.Render(vm, 160, 48).ToString();
  EXPECT_NE(frame.find("[1/5]"), std::string::npos);
  Press(view, "n");
  frame = view.Render(vm, 160, 48).ToString();
  EXPECT_NE(frame.find("[2/5]"), std::string::npos);
  Press(view, "N");
  view.Handle(KeyEvent(KeyCode::kPageDown));
  view.Handle(KeyEvent(KeyCode::kEnd));
  EXPECT_NE(view.Render(vm, 160, 48).ToString().find("[5/5]"), std::string::npos);
  view.Handle(KeyEvent(KeyCode::kHome));
  frame = view.Render(vm, 160, 48).ToString();
  EXPECT_NE(frame.find("[1/5]"), std::string::npos);
  // Moving right past the page's last chart goes to the next page.
  Press(view, "dd");
  EXPECT_NE(view.Render(vm, 160, 48).ToString().find("[2/5]"), std::string::npos);
  Press(view, "a");
  view.Handle(KeyEvent(KeyCode::kLeft));
  EXPECT_NE(view.Render(vm, 160, 48).ToString().find("[1/5]"), std::string::npos);

  // y: the focused chart (Process CPU, a percentage) goes linear, log, heatmap and back to linear.
  const std::string linear = view.Render(vm, 160, 48).ToString();
  Press(view, "y");
  const std::string logarithmic = view.Render(vm, 160, 48).ToString();
  EXPECT_NE(linear, logarithmic);
  EXPECT_EQ(logarithmic.find("█"), std::string::npos);
  Press(view, "y");
  const std::string heatmap = view.Render(vm, 160, 48).ToString();
  EXPECT_NE(heatmap.find("█"), std::string::npos);
  Press(view, "y");
  ExpectSameFrame(view.Render(vm, 160, 48).ToString(), linear);
  // Tab moves focus through the panes (no right sidebar: the centre shows the system charts); r with a
  // non-digit changes nothing.
  EXPECT_EQ(view.focus(), Pane::kCentre);
  view.Handle(KeyEvent(KeyCode::kTab));
  EXPECT_EQ(view.focus(), Pane::kLeft);
  view.Handle(KeyEvent(KeyCode::kTab));
  EXPECT_EQ(view.focus(), Pane::kCentre);
  view.Handle(KeyEvent(KeyCode::kBackTab));
  EXPECT_EQ(view.focus(), Pane::kLeft);
  Press(view, "rx");
  ExpectSameFrame(view.Render(vm, 160, 48).ToString(), view.Render(vm, 160, 48).ToString());
}

TEST_F(ViewTest, WheelZoomsTheChartUnderThePointerAndFollowsTheTail) {
  const runview::RunModel model = Ingest(TrainingRun());
  LeetView view;
  const ViewModel vm = SingleRun(model);
  const std::string whole = view.Render(vm, 160, 48).ToString();
  // The first centre chart starts below the header row, right of the left sidebar.
  InputEvent wheel{KeyCode::kWheelUp, 0, 50, 5};
  EXPECT_EQ(view.Handle(wheel), ViewAction::kRedraw);
  const std::string zoomed = view.Render(vm, 160, 48).ToString();
  EXPECT_NE(zoomed, whole);
  // The x axis no longer starts at 0s; zooming back out restores the whole run.
  wheel.code = KeyCode::kWheelDown;
  for (int i = 0; i < 10; ++i) view.Handle(wheel);
  ExpectSameFrame(view.Render(vm, 160, 48).ToString(), whole);
  // Keyboard zoom of the focused chart.
  Press(view, "+");
  EXPECT_NE(view.Render(vm, 160, 48).ToString(), whole);
  Press(view, "-----");
  ExpectSameFrame(view.Render(vm, 160, 48).ToString(), whole);
  // A wheel event outside any chart does nothing.
  EXPECT_EQ(view.Handle({KeyCode::kWheelUp, 0, 2, 2}), ViewAction::kNone);
}

TEST_F(ViewTest, LoggedMetricsFillTheCentreAndSystemChartsTheSidebar) {
  RunLogBuilder builder = TrainingRun();
  for (int step = 0; step <= 100; ++step) {
    builder.History(step, {{"loss", std::to_string(2.0 * std::exp(-step / 30.0))},
                           {"accuracy", std::to_string(1 - std::exp(-step / 25.0))},
                           {"lr", std::to_string(step < 10 ? 1e-4 * step : 1e-3)}});
  }
  const runview::RunModel model = Ingest(builder);
  LeetView view;
  const std::string frame = view.Render(SingleRun(model), 160, 48).ToString();
  EXPECT_NE(frame.find("Metrics · 3 charts"), std::string::npos);
  test::ExpectGolden(Golden("history-160x48"), frame);
}

TEST_F(ViewTest, WorkspaceListsRunsAndOverlaysTheSelected) {
  const runview::RunModel first = Ingest(TrainingRun());
  RunLogBuilder other_builder = TrainingRun(false);
  const runview::RunModel second = Ingest(other_builder);
  ViewModel vm;
  vm.mode = LeetMode::kWorkspace;
  vm.location = "wandb";
  vm.runs = {{"resnet-50", "2026-05-28 20:26", runview::RunState::kRunning, true, true},
             {"bert-large", "2026-05-27 09:00", runview::RunState::kFailed, true, true},
             {"old-run", "2026-05-01 12:00", runview::RunState::kCrashed, false, true},
             {"broken", "2026-04-01 12:00", runview::RunState::kNotARunLog, false, true},
             {"scratched", "2026-03-15 12:00", runview::RunState::kFinished, false, true, true},
             {"pending", "2026-03-01 12:00", runview::RunState::kCrashed, false, false}};
  vm.chart_runs = {&first, &second};
  vm.chart_run_labels = {"resnet-50", "bert-large"};
  vm.now_seconds = kStart + 200;
  LeetView view;
  test::ExpectGolden(Golden("workspace-160x48"), view.Render(vm, 160, 48).ToString());
  test::ExpectGolden(Golden("workspace-80x24"), view.Render(vm, 80, 24).ToString());

  // The runs list has the focus in a workspace: move, select, open.
  EXPECT_EQ(view.focus(), Pane::kLeft);
  view.Handle(KeyEvent(KeyCode::kDown));
  EXPECT_EQ(view.run_cursor(), 1u);
  EXPECT_EQ(view.Handle(CharacterEvent(U' ')), ViewAction::kToggleSelection);
  EXPECT_EQ(view.Handle(KeyEvent(KeyCode::kEnter)), ViewAction::kOpenRun);
  Press(view, "sssssss");
  EXPECT_EQ(view.run_cursor(), 5u);
  view.Handle(KeyEvent(KeyCode::kHome));
  EXPECT_EQ(view.run_cursor(), 0u);
  view.Handle(KeyEvent(KeyCode::kEnd));
  EXPECT_EQ(view.run_cursor(), 5u);
  EXPECT_EQ(view.Handle(KeyEvent(KeyCode::kEscape)), ViewAction::kBack);
}

TEST_F(ViewTest, WandbWrittenRunGolden) {
  const std::filesystem::path fixture =
      std::filesystem::path(RUNMON_FIXTURES_DIR) / "runlog" / "sample-stats.wandb";
  std::ifstream in(fixture, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  runlog::RecordReader reader(runlog::MemorySource(bytes));
  runview::RunModel model;
  while (reader.Next() == runlog::ReadOutcome::kRecord) model.Ingest(reader.record());
  ASSERT_GT(model.stats_records(), 0u);
  LeetView view;
  test::ExpectGolden(Golden("wandb-sample-80x24"), view.Render(SingleRun(model), 80, 24).ToString());
}

TEST_F(ViewTest, TinyTerminalsGetAMessage) {
  const runview::RunModel model = Ingest(TrainingRun());
  LeetView view;
  test::ExpectGolden(Golden("tiny-30x10"), view.Render(SingleRun(model), 30, 10).ToString());
  for (int width = 0; width <= 200; width += 7) {
    for (int height = 0; height <= 60; height += 5) {
      const CellGrid grid = view.Render(SingleRun(model), width, height);
      EXPECT_EQ(grid.width(), std::max(width, 0));
      EXPECT_EQ(grid.height(), std::max(height, 0));
    }
  }
  Press(view, "h");
  (void)view.Render(SingleRun(model), 1, 1);
  (void)view.Render(SingleRun(model), 41, 12);
}

TEST_F(ViewTest, WarningsRunningStateAndHostileNames) {
  RunLogBuilder builder;
  builder.Header().Run("evil", "\x1b[2J\x1b]0;pwned\x07name\xff\xfe", kStart).Environment("rm -rf /\r\n");
  for (int i = 0; i < 30; ++i) {
    builder.Stats(kStart + i, {{"cpu", std::to_string(i)}, {"\x1b[31mweird key", "1"}, {"text", "\"str\""}});
  }
  const runview::RunModel model = Ingest(builder);
  ViewModel vm = SingleRun(model, runview::RunState::kRunning);
  vm.warnings = {"damaged log: 4096 bytes skipped in 1 place (first at offset 32768: bad checksum)"};
  vm.loading = true;
  vm.loaded_fraction = 0.42;
  LeetView view;
  const CellGrid grid = view.Render(vm, 80, 24);
  for (int y = 0; y < grid.height(); ++y) {
    for (int x = 0; x < grid.width(); ++x) {
      const char32_t c = grid.at(x, y).code_point;
      EXPECT_FALSE(c != 0 && (c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0)))
          << "control at " << x << "," << y;
    }
  }
  test::ExpectGolden(Golden("running-warnings-80x24"), grid.ToString());
}

TEST_F(ViewTest, StylesMarkStateFocusAndStatus) {
  const runview::RunModel model = Ingest(TrainingRun());
  LeetView view;
  const CellGrid grid = view.Render(SingleRun(model, runview::RunState::kFailed), 80, 24);
  // "State     failed": the state in red and bold.
  EXPECT_EQ(grid.at(12, 1).code_point, U'f');
  EXPECT_EQ(grid.at(12, 1).style.fg, 203);
  EXPECT_TRUE(grid.at(12, 1).style.attributes & kBold);
  // The focused chart (the centre's first) has a bold border; the next one does not.
  EXPECT_TRUE(grid.at(26, 1).style.attributes & kBold);
  EXPECT_FALSE(grid.at(26, 9).style.attributes & kBold);
  // The status bar is one coloured line.
  for (int x = 0; x < grid.width(); ++x) EXPECT_EQ(grid.at(x, 23).style.bg, 236) << x;
  // Tab moves the focus highlight to the overview (no right sidebar: the centre shows the system charts).
  EXPECT_FALSE(grid.at(0, 1).style.attributes & kBold);
  view.Handle(KeyEvent(KeyCode::kTab));
  const CellGrid after = view.Render(SingleRun(model, runview::RunState::kFailed), 80, 24);
  EXPECT_FALSE(after.at(26, 1).style.attributes & kBold);
  EXPECT_TRUE(after.at(0, 1).style.attributes & kBold);
}

TEST_F(ViewTest, QuitKeysAndHelpKeys) {
  LeetView view;
  EXPECT_EQ(view.Handle(CharacterEvent(U'q')), ViewAction::kQuit);
  EXPECT_EQ(view.Handle(KeyEvent(KeyCode::kCtrlC)), ViewAction::kQuit);
  EXPECT_EQ(view.Handle(CharacterEvent(U'?')), ViewAction::kRedraw);
  EXPECT_TRUE(view.help_visible());
  EXPECT_EQ(view.Handle(CharacterEvent(U'x')), ViewAction::kRedraw);
  EXPECT_FALSE(view.help_visible());
  Press(view, "h");
  EXPECT_EQ(view.Handle(CharacterEvent(U'q')), ViewAction::kQuit);
  // Typing q into the filter is text, not quit.
  LeetView typing;
  Press(typing, "/q");
  EXPECT_EQ(typing.filter_target(), FilterTarget::kSystem);  // no logged metrics: the centre's system charts
  EXPECT_EQ(typing.system_filter().pattern(), "q");
  EXPECT_EQ(typing.Handle(KeyEvent(KeyCode::kCtrlC)), ViewAction::kQuit);
}

TEST_F(ViewTest, ConsoleLogsPaneFollowsScrollsAndHides) {
  RunLogBuilder builder = TrainingRun(false);
  for (int i = 0; i < 40; ++i) {
    builder.Output(kStart + i, false, "epoch " + std::to_string(i) + " \x1b[32mloss\x1b[0m 0.31\n");
  }
  builder.Output(kStart + 41, true, "Traceback (most recent call last):\n");
  builder.Output(kStart + 42, false, "\r 50%\r100%|\x1b]0;title\x07\u2588\u2588\u2588\u2588\n");
  const runview::RunModel model = Ingest(builder);
  ViewModel view_model = SingleRun(model, runview::RunState::kRunning);
  view_model.console = &model.console();
  view_model.console_label = "resnet-50";
  LeetView view;
  EXPECT_EQ(view.Render(view_model, 160, 48).ToString().find("Console Logs"), std::string::npos);
  Press(view, "4");
  const std::string shown = view.Render(view_model, 160, 48).ToString();
  test::ExpectGolden(Golden("console-logs-160x48"), shown);
  EXPECT_NE(shown.find("Console Logs • resnet-50"), std::string::npos);
  EXPECT_NE(shown.find("100%|\u2588\u2588\u2588\u2588"), std::string::npos);  // the bar's last state
  EXPECT_EQ(shown.find("title"), std::string::npos);                          // an OSC title: dropped
  EXPECT_NE(shown.find("of 42 · following"), std::string::npos);
  // Tab reaches the pane; scrolling up stops following, end follows again.
  for (int i = 0; i < 4 && view.focus() != Pane::kConsole; ++i) view.Handle(KeyEvent(KeyCode::kTab));
  ASSERT_EQ(view.focus(), Pane::kConsole);
  view.Handle(KeyEvent(KeyCode::kUp));
  const std::string scrolled = view.Render(view_model, 160, 48).ToString();
  EXPECT_EQ(scrolled.find("100%|"), std::string::npos);
  EXPECT_EQ(scrolled.find("following"), std::string::npos);
  EXPECT_FALSE(view.console_pane().following());
  view.Handle(KeyEvent(KeyCode::kHome));
  EXPECT_NE(view.Render(view_model, 160, 48).ToString().find("[1-"), std::string::npos);
  view.Handle(KeyEvent(KeyCode::kEnd));
  EXPECT_NE(view.Render(view_model, 160, 48).ToString().find("100%|"), std::string::npos);
  // The wheel over the pane scrolls it.
  const Rect area = view.console_pane().area();
  view.Handle({KeyCode::kWheelUp, 0, area.x + 5, area.y + 3});
  EXPECT_FALSE(view.console_pane().following());
  Press(view, "4");
  EXPECT_EQ(view.Render(view_model, 160, 48).ToString().find("Console Logs"), std::string::npos);
  EXPECT_NE(view.focus(), Pane::kConsole);
}

TEST_F(ViewTest, ConsoleLogsPaneWithoutOutput) {
  const runview::RunModel model = Ingest(TrainingRun());
  ViewModel view_model = SingleRun(model);
  view_model.console = &model.console();
  LeetView view;
  Press(view, "4");
  EXPECT_NE(view.Render(view_model, 80, 24).ToString().find("no console output"), std::string::npos);
  // At the smallest size the pane still leaves the charts a row.
  const std::string smallest = view.Render(view_model, 80, 12).ToString();
  EXPECT_NE(smallest.find("Console Logs"), std::string::npos);
  EXPECT_NE(smallest.find("System metrics"), std::string::npos);
}

}  // namespace
}  // namespace runmon::tui
