// LeetView's LEET keys and layout: the key table and the help that lists it, the metrics-grid toggle, the
// three filters and their clears, chart modes (linear, log, heatmap) and guides, restart, pane drags and
// the reset, and the right sidebar that does not repeat the centre's system charts.
#include <filesystem>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "media/image_decode.hpp"
#include "runview/media_log.hpp"
#include "tui/key_table.hpp"
#include "tui/view.hpp"
#include "view_test_support.hpp"

namespace runmon::tui {
namespace {

RunLogBuilder WithHistory(RunLogBuilder builder) {
  for (int step = 0; step <= 100; ++step) {
    builder.History(step, {{"loss", std::to_string(2.0 * std::exp(-step / 30.0))},
                           {"accuracy", std::to_string(1 - std::exp(-step / 25.0))}});
  }
  return builder;
}

// Counts the cells of a frame holding `glyph`.
size_t Count(const std::string& frame, std::string_view glyph) {
  size_t count = 0;
  for (size_t at = frame.find(glyph); at != std::string::npos; at = frame.find(glyph, at + glyph.size())) {
    ++count;
  }
  return count;
}

TEST(KeyTable, EveryBoundKeyGivesOneCommandAndNoChordIsBoundTwice) {
  std::set<std::pair<int, char32_t>> seen;
  for (const KeyBinding& binding : KeyBindings()) {
    for (const KeyChord& chord : binding.chords) {
      if (chord.code == KeyCode::kNone) continue;
      EXPECT_TRUE(seen.insert({static_cast<int>(chord.code), chord.character}).second)
          << binding.keys << " binds a chord bound before";
      const InputEvent event{chord.code, chord.character, 0, 0};
      for (const Screen screen : {kRunScreen, kWorkspaceScreen, kSymonScreen}) {
        const auto command = FindCommand(event, screen);
        EXPECT_EQ(command.has_value(), (binding.screens & screen) != 0) << binding.keys;
      }
    }
  }
  EXPECT_EQ(FindCommand(CharacterEvent(U'-'), kRunScreen), Command::kZoomOut);
  EXPECT_EQ(FindCommand(CharacterEvent(U'c'), kRunScreen), Command::kGridColumns);
  EXPECT_EQ(FindCommand(CharacterEvent(U'x'), kRunScreen), std::nullopt);
  EXPECT_EQ(FindCommand({KeyCode::kAltCharacter, U'r', 0, 0}, kSymonScreen), Command::kRestart);
  EXPECT_EQ(FindCommand({KeyCode::kAltCharacter, U'x', 0, 0}, kRunScreen), std::nullopt);
}

TEST_F(ViewTest, TheHelpListsEveryKeyOfTheTableAndScrolls) {
  const runview::RunModel model = Ingest(TrainingRun());
  LeetView view;
  Press(view, "h");
  std::string all;
  std::string previous;
  for (int i = 0; i < 60; ++i) {  // scroll to the end, keeping every frame
    const std::string frame = view.Render(SingleRun(model), 80, 24).ToString();
    if (frame == previous) break;
    all += frame;
    previous = frame;
    view.Handle(KeyEvent(KeyCode::kDown));
  }
  EXPECT_TRUE(view.help_visible());  // scrolling does not close it
  for (const KeyBinding& binding : KeyBindings()) {
    if (binding.keys.empty() || (binding.screens & kRunScreen) == 0) continue;
    EXPECT_NE(all.find(std::string(binding.keys)), std::string::npos) << binding.keys;
  }
  EXPECT_EQ(all.find("open the run (runs list)"), std::string::npos);  // a workspace's key
  test::ExpectGolden(Golden("help-scrolled-80x24"), previous);
  view.Handle(KeyEvent(KeyCode::kEscape));
  EXPECT_FALSE(view.help_visible());
}

TEST_F(ViewTest, TheRightSidebarDoesNotRepeatTheCentresSystemCharts) {
  const runview::RunModel system_only = Ingest(TrainingRun());
  LeetView view;
  const std::string frame = view.Render(SingleRun(system_only), 160, 48).ToString();
  EXPECT_NE(frame.find("System metrics · 10 charts"), std::string::npos);
  EXPECT_EQ(frame.find(" System · "), std::string::npos);
  // A run that logged metrics: the centre has them and the sidebar the system charts.
  const runview::RunModel logged = Ingest(WithHistory(TrainingRun()));
  LeetView other;
  const std::string both = other.Render(SingleRun(logged), 160, 48).ToString();
  EXPECT_NE(both.find("Metrics · 2 charts"), std::string::npos);
  EXPECT_NE(both.find(" System · 10 charts"), std::string::npos);
  // 1 hides the metrics grid: the centre is empty, so the sidebar shows; 1 again brings it back.
  Press(other, "1");
  EXPECT_FALSE(other.metrics_visible());
  const std::string hidden = other.Render(SingleRun(logged), 160, 48).ToString();
  EXPECT_EQ(hidden.find("Metrics · 2 charts"), std::string::npos);
  EXPECT_NE(hidden.find("metrics grid hidden (1 shows it)"), std::string::npos);
  Press(other, "1");
  EXPECT_NE(other.Render(SingleRun(logged), 160, 48).ToString().find("Metrics · 2 charts"),
            std::string::npos);
  // 2 is ] : the system sidebar.
  Press(other, "2");
  EXPECT_FALSE(other.right_visible());
  EXPECT_EQ(other.Render(SingleRun(logged), 160, 48).ToString().find(" System · "), std::string::npos);
}

TEST_F(ViewTest, HidingTheMetricsGridGivesTheConsoleTheColumn) {
  RunLogBuilder builder = TrainingRun(false);
  for (int i = 0; i < 5; ++i) builder.Output(kStart + i, false, "line " + std::to_string(i) + "\n");
  const runview::RunModel model = Ingest(builder);
  ViewModel vm = SingleRun(model, runview::RunState::kRunning);
  vm.console = &model.console();
  vm.console_label = "resnet-50";
  LeetView view;
  Press(view, "41");
  const std::string frame = view.Render(vm, 120, 40).ToString();
  EXPECT_EQ(frame.find("System metrics"), std::string::npos);
  EXPECT_NE(frame.find("Console Logs"), std::string::npos);
  EXPECT_EQ(view.focus(), Pane::kConsole);  // the only centre pane
  EXPECT_EQ(view.console_pane().area().height, 39);
}

TEST_F(ViewTest, SystemAndOverviewFiltersAndTheirClears) {
  const runview::RunModel model = Ingest(WithHistory(TrainingRun()));
  LeetView view;
  const ViewModel vm = SingleRun(model);
  view.Render(vm, 160, 48);
  // `/` filters the logged metrics, `\` the system sidebar: each its own.
  Press(view, "/loss");
  EXPECT_EQ(view.filter_target(), FilterTarget::kMetrics);
  view.Handle(KeyEvent(KeyCode::kEnter));
  Press(view, "\\gpu");
  EXPECT_EQ(view.filter_target(), FilterTarget::kSystem);
  const std::string typing = view.Render(vm, 160, 48).ToString();
  EXPECT_NE(typing.find("\\gpu"), std::string::npos);  // the prompt
  view.Handle(KeyEvent(KeyCode::kEnter));
  const std::string both = view.Render(vm, 160, 48).ToString();
  EXPECT_NE(both.find("Metrics · 1 chart · filter: loss"), std::string::npos);
  EXPECT_NE(both.find("System · 4 charts · filter: gpu"), std::string::npos);
  // `o` narrows the overview to the lines whose label or value matches, headings kept.
  Press(view, "ovision");
  view.Handle(KeyEvent(KeyCode::kEnter));
  EXPECT_EQ(view.overview_filter().pattern(), "vision");
  const std::string overview = view.Render(vm, 160, 48).ToString();
  EXPECT_NE(overview.find("Run overview · filter: vision"), std::string::npos);
  EXPECT_NE(overview.find("Project   vision"), std::string::npos);
  EXPECT_EQ(overview.find("Host      gpu-node-1"), std::string::npos);
  test::ExpectGolden(Golden("filters-160x48"), overview);
  // ctrl+o, ctrl+\ and ctrl+/ each clear their own.
  view.Handle(KeyEvent(KeyCode::kCtrlO));
  EXPECT_TRUE(view.overview_filter().empty());
  EXPECT_FALSE(view.system_filter().empty());
  view.Handle(KeyEvent(KeyCode::kCtrlBackslash));
  EXPECT_TRUE(view.system_filter().empty());
  EXPECT_FALSE(view.filter().empty());
  view.Handle(KeyEvent(KeyCode::kCtrlSlash));
  EXPECT_TRUE(view.filter().empty());
  // An overview filter that matches nothing says so.
  Press(view, "ozzz");
  view.Handle(KeyEvent(KeyCode::kEnter));
  EXPECT_NE(view.Render(vm, 160, 48).ToString().find("nothing matches \"zzz\""), std::string::npos);
  // esc clears every filter before it goes back.
  EXPECT_EQ(view.Handle(KeyEvent(KeyCode::kEscape)), ViewAction::kRedraw);
  EXPECT_TRUE(view.overview_filter().empty());
  EXPECT_EQ(view.Handle(KeyEvent(KeyCode::kEscape)), ViewAction::kBack);
}

TEST_F(ViewTest, GuidesCycleOffDotsLines) {
  const runview::RunModel model = Ingest(TrainingRun());
  LeetView view;
  const ViewModel vm = SingleRun(model);
  const std::string off = view.Render(vm, 160, 48).ToString();
  Press(view, "g");
  EXPECT_EQ(view.guides(), ChartSpec::Guides::kDots);
  const std::string dots = view.Render(vm, 160, 48).ToString();
  EXPECT_GT(Count(dots, "·"), Count(off, "·") + 100);
  Press(view, "g");
  EXPECT_EQ(view.guides(), ChartSpec::Guides::kLines);
  const std::string lines = view.Render(vm, 160, 48).ToString();
  EXPECT_GT(Count(lines, "─"), Count(off, "─") + 100);
  test::ExpectGolden(Golden("guides-lines-80x24"), view.Render(vm, 80, 24).ToString());
  Press(view, "g");
  ExpectSameFrame(view.Render(vm, 160, 48).ToString(), off);
  // The settings start a view with guides on.
  LeetViewSettings settings;
  settings.chart_guides = 1;
  LeetView configured(settings);
  ExpectSameFrame(configured.Render(vm, 160, 48).ToString(), dots);
}

TEST_F(ViewTest, ManySeriesPercentChartsStartAsHeatmaps) {
  RunLogBuilder builder;
  builder.Header().Run("cores", "cores", kStart, "p", "h");
  for (int i = 0; i < 60; ++i) {
    std::vector<std::pair<std::string, std::string>> values;
    for (int core = 0; core < 16; ++core) {
      values.emplace_back(fmt::format("cpu.{}.cpu_percent", core), std::to_string((core * 7 + i) % 100));
    }
    builder.Stats(kStart + i, values);
  }
  const runview::RunModel model = Ingest(builder);
  LeetView view;
  const std::string frame = view.Render(SingleRun(model), 120, 40).ToString();
  EXPECT_GT(Count(frame, "█"), 500u);
  test::ExpectGolden(Golden("heatmap-cores-120x40"), frame);
  // y: linear next, then log, then the heatmap again.
  Press(view, "y");
  EXPECT_EQ(Count(view.Render(SingleRun(model), 120, 40).ToString(), "█"), 0u);
  Press(view, "yy");
  EXPECT_EQ(view.Render(SingleRun(model), 120, 40).ToString(), frame);
}

TEST_F(ViewTest, KeyThreeShowsTheMediaPaneBelowTheGrid) {
  const runview::RunModel model = Ingest(WithHistory(TrainingRun()));
  runview::MediaLog media;
  media.set_run_directory(std::filesystem::path(RUNMON_FIXTURES_DIR) / "media" /
                          "run-20261203_142000-media01");
  media.Add("samples", 0, {.path = "media/images/samples_0_e40d23d80e21c838f507.png", .format = "png"});
  media.Add(
      "samples", 5,
      {.path = "media/images/samples_5_585cae9f560701e69aa4.png", .format = "png", .caption = "checker"});
  media.Add("masks", 5, {.path = "media/images/masks_5_3769d2d11e5cfad7aa14.png", .format = "png"});
  ViewModel vm = SingleRun(model);
  vm.media = &media;
  LeetView without_decoder;  // the image module not loaded: each tile says why
  Press(without_decoder, "3");
  EXPECT_NE(without_decoder.Render(vm, 160, 48).ToString().find("images are not shown"), std::string::npos);
  LeetView view;
  view.SetImageDecoder(&media::DecodeImage, {});
  EXPECT_FALSE(view.media_pane().visible());
  Press(view, "3");
  ASSERT_TRUE(view.media_pane().visible());
  const std::string frame = view.Render(vm, 160, 48).ToString();
  EXPECT_NE(frame.find("Metrics · 2 charts"), std::string::npos);
  EXPECT_GT(Count(frame, "▀"), 100u);  // images as half-block cells
  test::ExpectGolden(Golden("media-in-view-160x48"), frame);
  const Rect area = view.media_pane().area();
  EXPECT_GT(area.height, 10);
  EXPECT_EQ(area.y + area.height, 47);  // the bottom of the centre column
  // Tab reaches it; its keys then scrub instead of moving the chart focus; the status bar says the step.
  for (int i = 0; i < 5 && view.focus() != Pane::kMedia; ++i) view.Handle(KeyEvent(KeyCode::kTab));
  ASSERT_EQ(view.focus(), Pane::kMedia);
  EXPECT_NE(view.Render(vm, 160, 48).ToString().find("Media: masks • step 5"), std::string::npos);
  EXPECT_EQ(view.Handle(CharacterEvent(U'd')), ViewAction::kRedraw);  // the next tile, not the next chart
  view.Render(vm, 160, 48);
  EXPECT_EQ(view.Handle(KeyEvent(KeyCode::kLeft)), ViewAction::kRedraw);
  EXPECT_NE(view.Render(vm, 160, 48).ToString().find("Media: samples • step 0"), std::string::npos);
  // The pane's top edge drags: up to a 40 % share of the body.
  view.Handle({KeyCode::kMouseClick, 0, area.x + 10, area.y});
  view.Handle({KeyCode::kMouseDrag, 0, area.x + 10, 47 - 19});
  view.Handle({KeyCode::kMouseRelease, 0, area.x + 10, 47 - 19});
  EXPECT_DOUBLE_EQ(view.settings().media_fraction, 19.0 / 47);
  view.Render(vm, 160, 48);
  EXPECT_EQ(view.media_pane().area().y, 47 - 19);
  // With the console too, the grid keeps its room and the console goes below the media.
  Press(view, "0");
  Press(view, "4");
  view.Render(vm, 160, 48);
  EXPECT_LT(view.media_pane().area().y, view.console_pane().area().y);
  EXPECT_EQ(view.media_pane().area().y + view.media_pane().area().height, view.console_pane().area().y);
  // 3 again hides it and the focus leaves it.
  Press(view, "3");
  view.Render(vm, 160, 48);
  EXPECT_TRUE(view.media_pane().area().empty());
  EXPECT_NE(view.focus(), Pane::kMedia);
}

TEST_F(ViewTest, SymonShowsItsChartsOverTheGpuProcessTable) {
  RunLogBuilder builder;
  builder.Header().Run("symon", "gpu-node-1", kStart, "", "gpu-node-1");
  for (int i = 0; i < 60; ++i) {
    std::vector<std::pair<std::string, std::string>> values = {{"cpu", std::to_string(20 + i % 30)},
                                                               {"memory_percent", "41.5"},
                                                               {"gpu.0.gpu", std::to_string(90 - i % 20)}};
    for (int core = 0; core < 12; ++core) {
      values.emplace_back(fmt::format("cpu.{}.cpu_percent", core), std::to_string((core * 9 + i) % 100));
    }
    builder.Stats(kStart + i, values);
  }
  const runview::RunModel model = Ingest(builder);
  GpuProcessSnapshot processes;
  processes.available = true;
  processes.rows = {
      {0, 4242, "ada", uint64_t{8} << 30, 87.0, 99.5, uint64_t{3} << 30, "python train.py --epochs 90", true,
       4242, "python train.py --epochs 90"},
      {0, 5151, "bob", uint64_t{1} << 30, 3.0, 12.0, uint64_t{900} << 20, "jupyter-lab", false, 0, ""},
      {1, 6161, "", std::nullopt, std::nullopt, 0.5, std::nullopt, "[unknown]", false, 0, ""},
  };
  ViewModel vm = SingleRun(model, runview::RunState::kRunning);
  vm.symon = true;
  vm.gpu_processes = &processes;
  LeetView view;
  const std::string frame = view.Render(vm, 160, 48).ToString();
  EXPECT_EQ(frame.find(" System · "), std::string::npos);  // no sidebar repeating the charts
  EXPECT_NE(frame.find("train.py"), std::string::npos);
  EXPECT_NE(frame.find("jupyter-lab"), std::string::npos);
  EXPECT_GT(Count(frame, "█"), 100u);  // the 12 cores as a heatmap
  test::ExpectGolden(Golden("symon-processes-160x48"), frame);
  // Tab reaches the table; its keys sort it; the centre's keys still move the charts' focus elsewhere.
  for (int i = 0; i < 5 && view.focus() != Pane::kProcesses; ++i) view.Handle(KeyEvent(KeyCode::kTab));
  ASSERT_EQ(view.focus(), Pane::kProcesses);
  EXPECT_EQ(view.Handle(CharacterEvent(U'>')), ViewAction::kRedraw);
  EXPECT_EQ(view.process_table().sort_column(), ProcessColumn::kPid);
  EXPECT_EQ(view.Handle(CharacterEvent(U'v')), ViewAction::kRedraw);
  const std::string sorted = view.Render(vm, 160, 48).ToString();
  EXPECT_LT(sorted.find("jupyter-lab"), sorted.find("train.py"));  // PID descending: 6161, 5151, 4242
  // The help of symon lists the table's keys and not the panes symon does not have.
  Press(view, "h");
  std::string help;
  for (int i = 0; i < 8; ++i) {
    help += view.Render(vm, 160, 48).ToString();
    view.Handle(KeyEvent(KeyCode::kPageDown));
  }
  EXPECT_NE(help.find("table < >"), std::string::npos);
  EXPECT_EQ(help.find("console logs"), std::string::npos);
  EXPECT_NE(help.find("runmon leet symon"), std::string::npos);
  // Without GPUs the table is a few rows saying so, and the charts keep the column.
  GpuProcessSnapshot none;
  none.unavailable_reason = "no NVIDIA GPU";
  vm.gpu_processes = &none;
  LeetView other;
  const std::string without = other.Render(vm, 160, 48).ToString();
  EXPECT_NE(without.find("no NVIDIA GPU"), std::string::npos);
  EXPECT_EQ(other.process_table().area().height, 5);
}

TEST_F(ViewTest, AltRRestarts) {
  LeetView view;
  EXPECT_EQ(view.Handle({KeyCode::kAltCharacter, U'r', 0, 0}), ViewAction::kRestart);
  EXPECT_EQ(view.Handle({KeyCode::kAltCharacter, U'z', 0, 0}), ViewAction::kNone);
}

TEST_F(ViewTest, DraggingEdgesResizesPanesAndZeroResets) {
  RunLogBuilder builder = WithHistory(TrainingRun(false));
  for (int i = 0; i < 5; ++i) builder.Output(kStart + i, false, "line " + std::to_string(i) + "\n");
  const runview::RunModel model = Ingest(builder);
  ViewModel vm = SingleRun(model, runview::RunState::kRunning);
  vm.console = &model.console();
  vm.console_label = "resnet-50";
  LeetView view;
  Press(view, "4");
  const std::string before = view.Render(vm, 160, 48).ToString();
  // The left sidebar's right border is at column 34 (22 % of 160, clamped): drag it to column 59.
  EXPECT_EQ(view.Handle({KeyCode::kMouseClick, 0, 34, 10}), ViewAction::kRedraw);
  EXPECT_EQ(view.Handle({KeyCode::kMouseDrag, 0, 59, 12}), ViewAction::kRedraw);
  EXPECT_EQ(view.Handle({KeyCode::kMouseRelease, 0, 59, 12}), ViewAction::kRedraw);
  EXPECT_DOUBLE_EQ(view.settings().left_sidebar_fraction, 60.0 / 160);
  CellGrid grid = view.Render(vm, 160, 48);
  EXPECT_EQ(grid.at(59, 0).code_point, U'┐');  // the overview's box now ends there
  // A drag after the release moves nothing.
  EXPECT_EQ(view.Handle({KeyCode::kMouseDrag, 0, 80, 12}), ViewAction::kNone);
  // The right sidebar's left edge, dragged out to 30 % of the width.
  const int right_edge = [&] {
    for (int x = 159; x > 0; --x) {
      if (grid.at(x, 0).code_point == U'S' && grid.at(x + 1, 0).code_point == U'y') return x - 1;
    }
    return -1;
  }();
  ASSERT_GT(right_edge, 100);
  view.Handle({KeyCode::kMouseClick, 0, right_edge, 5});
  view.Handle({KeyCode::kMouseDrag, 0, 112, 5});
  view.Handle({KeyCode::kMouseRelease, 0, 112, 5});
  EXPECT_DOUBLE_EQ(view.settings().right_sidebar_fraction, 48.0 / 160);
  // The console's top edge, dragged up to half the body.
  grid = view.Render(vm, 160, 48);
  const int console_top = view.console_pane().area().y;
  view.Handle({KeyCode::kMouseClick, 0, 70, console_top});
  view.Handle({KeyCode::kMouseDrag, 0, 70, 23});
  view.Handle({KeyCode::kMouseRelease, 0, 70, 23});
  view.Render(vm, 160, 48);
  EXPECT_EQ(view.console_pane().area().y, 23);
  // Drags are clamped: the sidebar keeps 5 % at least, 90 % at most.
  view.Handle({KeyCode::kMouseClick, 0, 59, 10});
  view.Handle({KeyCode::kMouseDrag, 0, -5, 10});
  view.Handle({KeyCode::kMouseRelease, 0, -5, 10});
  EXPECT_DOUBLE_EQ(view.settings().left_sidebar_fraction, 0.05);
  // 0 puts every size back.
  Press(view, "0");
  EXPECT_EQ(view.settings().left_sidebar_fraction, 0);
  EXPECT_EQ(view.settings().right_sidebar_fraction, 0);
  EXPECT_EQ(view.settings().console_logs_fraction, 0);
  ExpectSameFrame(view.Render(vm, 160, 48).ToString(), before);
}

TEST_F(ViewTest, DragsStopWhereTheNeighboursKeepTheirSmallestSizes) {
  RunLogBuilder builder = WithHistory(TrainingRun(false));
  for (int i = 0; i < 5; ++i) builder.Output(kStart + i, false, "line " + std::to_string(i) + "\n");
  const runview::RunModel model = Ingest(builder);
  ViewModel vm = SingleRun(model, runview::RunState::kRunning);
  vm.console = &model.console();
  LeetView view;
  Press(view, "4");
  CellGrid grid = view.Render(vm, 160, 48);
  // The left edge dragged nearly to the right: the centre keeps 28 columns beside the right sidebar (41
  // columns: 26 % of 160), and both sidebars stay.
  view.Handle({KeyCode::kMouseClick, 0, 34, 10});
  view.Handle({KeyCode::kMouseDrag, 0, 150, 10});
  view.Handle({KeyCode::kMouseRelease, 0, 150, 10});
  const std::string frame = view.Render(vm, 160, 48).ToString();
  EXPECT_NE(frame.find(" System · "), std::string::npos);
  EXPECT_NE(frame.find("Run overview"), std::string::npos);
  EXPECT_DOUBLE_EQ(view.settings().left_sidebar_fraction, (160.0 - 41 - 28) / 160);
  // The console's edge dragged to the top: the grid keeps a chart's height and the pane stays drawn.
  Press(view, "0");
  view.Render(vm, 160, 48);
  const int top = view.console_pane().area().y;
  view.Handle({KeyCode::kMouseClick, 0, 70, top});
  view.Handle({KeyCode::kMouseDrag, 0, 70, 0});
  view.Handle({KeyCode::kMouseRelease, 0, 70, 0});
  view.Render(vm, 160, 48);
  EXPECT_EQ(view.console_pane().area().y, 7);  // a 6-row chart under the grid's header row
  // A config's 0.9 share does not hide the pane either: it shrinks to fit.
  LeetViewSettings settings;
  settings.console_logs_visible = true;
  settings.console_logs_fraction = 0.9;
  LeetView configured(settings);
  configured.Render(vm, 160, 48);
  EXPECT_EQ(configured.console_pane().area().y, 7);
}

TEST_F(ViewTest, ADragEndsOnItsReleaseWhereverItComes) {
  const runview::RunModel model = Ingest(WithHistory(TrainingRun()));
  const ViewModel vm = SingleRun(model);
  LeetView view;
  view.Render(vm, 160, 48);
  // A press on the left edge, the help opened, the release over it: the drag is over.
  view.Handle({KeyCode::kMouseClick, 0, 34, 10});
  Press(view, "h");
  EXPECT_EQ(view.Handle({KeyCode::kMouseRelease, 0, 40, 10}), ViewAction::kRedraw);
  view.Handle(KeyEvent(KeyCode::kEscape));
  EXPECT_EQ(view.Handle({KeyCode::kMouseDrag, 0, 80, 10}), ViewAction::kNone);
  EXPECT_EQ(view.settings().left_sidebar_fraction, 0);
  // The same while a filter is typed; and a lost release is forgotten at the next press.
  view.Handle({KeyCode::kMouseClick, 0, 34, 10});
  Press(view, "/");
  view.Handle({KeyCode::kMouseRelease, 0, 40, 10});
  view.Handle(KeyEvent(KeyCode::kEnter));
  EXPECT_EQ(view.Handle({KeyCode::kMouseDrag, 0, 80, 10}), ViewAction::kNone);
  view.Handle({KeyCode::kMouseClick, 0, 34, 10});
  view.Handle({KeyCode::kMouseClick, 0, 90, 20});  // the release was lost; a press elsewhere
  EXPECT_EQ(view.Handle({KeyCode::kMouseDrag, 0, 80, 10}), ViewAction::kNone);
  EXPECT_EQ(view.settings().left_sidebar_fraction, 0);
}

TEST_F(ViewTest, TheHelpOfEachScreenListsItsRows) {
  const runview::RunModel model;  // no charts behind the help: its rows are all the text there is
  for (const Screen screen : {kRunScreen, kWorkspaceScreen, kSymonScreen}) {
    ViewModel vm = SingleRun(model);
    vm.mode = screen == kWorkspaceScreen ? LeetMode::kWorkspace : LeetMode::kSingleRun;
    vm.symon = screen == kSymonScreen;
    LeetView view;
    view.Render(vm, 100, 30);
    Press(view, "h");
    std::string all;
    for (int i = 0; i < 8; ++i) {
      all += view.Render(vm, 100, 30).ToString();
      view.Handle(KeyEvent(KeyCode::kPageDown));
    }
    for (const KeyBinding& binding : KeyBindings()) {
      if (binding.keys.empty()) continue;
      const bool listed = all.find("│ " + std::string(binding.keys) + " ") != std::string::npos;
      EXPECT_EQ(listed, (binding.screens & screen) != 0) << binding.keys << " on screen " << int{screen};
    }
  }
}

TEST_F(ViewTest, TabFromAPaneOutsideTheCycleGoesToTheFirst) {
  const runview::RunModel model = Ingest(WithHistory(TrainingRun()));
  const ViewModel vm = SingleRun(model);
  LeetView view;
  Press(view, "1");  // the grid hidden: the centre is not in the cycle
  view.Render(vm, 160, 48);
  view.Handle(KeyEvent(KeyCode::kTab));
  EXPECT_EQ(view.focus(), Pane::kLeft);
  Press(view, "1");
  view.Render(vm, 160, 48);
  Press(view, "1");
  view.Render(vm, 160, 48);
  view.Handle(KeyEvent(KeyCode::kBackTab));
  EXPECT_EQ(view.focus(), Pane::kRight);
}

TEST_F(ViewTest, SettingsStartTheViewAndGridKeysAreKeptInThem) {
  const runview::RunModel model = Ingest(WithHistory(TrainingRun()));
  LeetViewSettings settings;
  settings.metrics_grid = {1, 1};
  settings.system_grid = {2, 1};
  settings.left_sidebar_visible = false;
  settings.console_logs_visible = true;
  LeetView view(settings);
  const std::string frame = view.Render(SingleRun(model), 160, 48).ToString();
  EXPECT_NE(frame.find("Metrics [1/2]"), std::string::npos);
  EXPECT_NE(frame.find("System [1/5]"), std::string::npos);
  EXPECT_EQ(frame.find("Run overview"), std::string::npos);
  EXPECT_TRUE(view.console_pane().visible());
  Press(view, "c2");
  EXPECT_EQ(view.settings().metrics_grid.columns, 2);
}

}  // namespace
}  // namespace runmon::tui
