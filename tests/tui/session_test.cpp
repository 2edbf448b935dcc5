// LeetSession: what `runmon leet` has open. A run loads in slices and is followed as it grows; a workspace
// lists its runs with their state, opens one and goes back, and overlays the selected ones.
#include "tui/session.hpp"

#include <chrono>
#include <fstream>

#include <gtest/gtest.h>

#include "support/run_log_builder.hpp"
#include "support/temp_dir.hpp"

namespace runmon::tui {
namespace {

namespace fs = std::filesystem;
using test::RunLogBuilder;
using test::TempDir;
using Clock = std::chrono::steady_clock;
constexpr double kStart = 1'780'000'000;

fs::path WriteRun(const fs::path& wandb, const std::string& stamp, const std::string& id, int exit_code,
                  int samples = 5) {
  const fs::path log = wandb / ("run-" + stamp + "-" + id) / ("run-" + id + ".wandb");
  RunLogBuilder builder;
  builder.Header().Run(id, "run " + id, kStart);
  for (int i = 0; i < samples; ++i)
    builder.Stats(kStart + i, {{"cpu", std::to_string(i)}, {"gpu.0.gpu", "50"}});
  builder.Exit(exit_code, samples);
  builder.WriteTo(log);
  return log;
}

void WorkUntilLoaded(LeetSession& session) {
  for (int i = 0; i < 100 && (session.Work(Clock::now(), std::chrono::milliseconds(50)), session.loading());
       ++i) {
  }
}

TEST(LeetSession, SingleRunLoadsAndFollowsGrowth) {
  TempDir dir("leet-session");
  const fs::path log = dir.path() / "run-20260101_000000-live" / "run-live.wandb";
  fs::create_directories(log.parent_path());
  auto writer = runlog::LogWriter::Create(log);
  ASSERT_TRUE(writer.ok());
  RunLogBuilder start;
  start.Header().Run("live", "live run", kStart).Stats(kStart + 1, {{"cpu", "10"}});
  for (const auto& record : start.records()) ASSERT_TRUE(writer->Append(record.SerializeAsString()).ok());

  auto session = LeetSession::Open({LeetMode::kSingleRun, dir.path(), log});
  ASSERT_TRUE(session.ok()) << session.error();
  EXPECT_TRUE((*session)->loading());
  EXPECT_TRUE((*session)->Work(Clock::now(), std::chrono::seconds(1)));
  EXPECT_FALSE((*session)->loading());
  LeetView view;
  ViewModel model = (*session)->BuildViewModel(view, kStart + 2);
  ASSERT_EQ(model.chart_runs.size(), 1u);
  EXPECT_EQ(model.overview_state, runview::RunState::kRunning);  // the writer holds its lock
  EXPECT_EQ(model.chart_runs[0]->stats_records(), 1u);
  EXPECT_TRUE(model.can_go_back);

  // Nothing new: nothing changes.
  EXPECT_FALSE((*session)->Work(Clock::now(), std::chrono::milliseconds(10)));
  RunLogBuilder more;
  more.Stats(kStart + 2, {{"cpu", "20"}}).Exit(0, 2);
  for (const auto& record : more.records()) ASSERT_TRUE(writer->Append(record.SerializeAsString()).ok());
  EXPECT_TRUE((*session)->Work(Clock::now(), std::chrono::milliseconds(10)));
  model = (*session)->BuildViewModel(view, kStart + 3);
  EXPECT_EQ(model.chart_runs[0]->stats_records(), 2u);
  EXPECT_EQ(model.overview_state, runview::RunState::kFinished);
}

TEST(LeetSession, OpenFailsClearly) {
  TempDir dir("leet-session");
  auto missing = LeetSession::Open({LeetMode::kSingleRun, {}, dir.path() / "run-x.wandb"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("cannot open"), std::string::npos);
  auto no_workspace = LeetSession::Open({LeetMode::kWorkspace, dir.path() / "absent", {}});
  EXPECT_FALSE(no_workspace.ok());
}

TEST(LeetSession, WorkspaceListsOpensGoesBackAndOverlays) {
  TempDir dir("leet-session");
  WriteRun(dir.path(), "20260101_000000", "first", 0);
  WriteRun(dir.path(), "20260102_000000", "second", 1);
  const auto third = WriteRun(dir.path(), "20260103_000000", "third", 0);
  fs::create_directories(dir.path() / "run-20260104_000000-empty");  // no log yet

  auto opened = LeetSession::Open({LeetMode::kWorkspace, dir.path(), {}});
  ASSERT_TRUE(opened.ok()) << opened.error();
  LeetSession& session = **opened;
  session.Work(Clock::now(), std::chrono::seconds(1));
  WorkUntilLoaded(session);
  LeetView view;
  ViewModel model = session.BuildViewModel(view, kStart + 100);
  ASSERT_EQ(model.runs.size(), 4u);
  EXPECT_EQ(model.runs[0].name, "empty");
  EXPECT_EQ(model.runs[0].state, runview::RunState::kNotARunLog);
  EXPECT_EQ(model.runs[1].name, "run third");
  EXPECT_EQ(model.runs[1].state, runview::RunState::kFinished);
  EXPECT_EQ(model.runs[2].state, runview::RunState::kFailed);
  EXPECT_EQ(model.runs[3].started, "2026-01-01 00:00");
  EXPECT_TRUE(model.chart_runs.empty());  // the cursor's run has no log

  // The cursor's run is charted; selected runs are overlaid instead.
  view.set_run_cursor(1);
  model = session.BuildViewModel(view, kStart + 100);
  WorkUntilLoaded(session);
  model = session.BuildViewModel(view, kStart + 100);
  ASSERT_EQ(model.chart_runs.size(), 1u);
  EXPECT_EQ(model.chart_runs[0]->overview().id, "third");
  EXPECT_TRUE(session.Apply(ViewAction::kToggleSelection, view));
  view.set_run_cursor(3);
  EXPECT_TRUE(session.Apply(ViewAction::kToggleSelection, view));
  model = session.BuildViewModel(view, kStart + 100);
  WorkUntilLoaded(session);
  model = session.BuildViewModel(view, kStart + 100);
  ASSERT_EQ(model.chart_runs.size(), 2u);
  EXPECT_EQ(model.chart_run_labels[0], "run third");
  EXPECT_EQ(model.chart_run_labels[1], "run first");
  EXPECT_TRUE(model.runs[1].selected && model.runs[3].selected);

  // Enter opens the run at the cursor; esc comes back to the list with the cursor on it.
  view.set_run_cursor(1);
  EXPECT_TRUE(session.Apply(ViewAction::kOpenRun, view));
  EXPECT_EQ(session.mode(), LeetMode::kSingleRun);
  WorkUntilLoaded(session);
  model = session.BuildViewModel(view, kStart + 100);
  ASSERT_NE(model.overview_run, nullptr);
  EXPECT_EQ(model.overview_run->overview().id, "third");
  EXPECT_EQ(model.location, third.string());
  view.set_run_cursor(0);
  EXPECT_TRUE(session.Apply(ViewAction::kBack, view));
  EXPECT_EQ(session.mode(), LeetMode::kWorkspace);
  EXPECT_EQ(view.run_cursor(), 1u);
  EXPECT_FALSE(session.Apply(ViewAction::kQuit, view));
}

TEST(LeetSession, NewRunsAppearOnTheNextScan) {
  TempDir dir("leet-session");
  WriteRun(dir.path(), "20260101_000000", "first", 0);
  auto opened = LeetSession::Open({LeetMode::kWorkspace, dir.path(), {}});
  ASSERT_TRUE(opened.ok());
  LeetSession& session = **opened;
  session.Work(Clock::now(), std::chrono::seconds(1));
  LeetView view;
  EXPECT_EQ(session.BuildViewModel(view, kStart).runs.size(), 1u);
  WriteRun(dir.path(), "20260105_000000", "newer", 0);
  // Scans are due every two seconds: pretend the time has come.
  EXPECT_TRUE(session.Work(Clock::now() + std::chrono::seconds(3), std::chrono::seconds(1)));
  const auto model = session.BuildViewModel(view, kStart);
  ASSERT_EQ(model.runs.size(), 2u);
  EXPECT_EQ(model.runs[0].name, "run newer");
}

// A file that is not a run log (bad magic, 2 GB of zeros) is refused as `runmon dump` refuses it, never
// opened as a crashed run.
TEST(LeetSession, AFileThatIsNotARunLogIsRefused) {
  TempDir dir("leet-session");
  const fs::path junk = dir.path() / "run-20260101_000000-junk" / "run-junk.wandb";
  fs::create_directories(junk.parent_path());
  std::ofstream(junk) << "not a run log";
  const fs::path zeros = dir.path() / "run-20260102_000000-zeros" / "run-zeros.wandb";
  fs::create_directories(zeros.parent_path());
  std::ofstream(zeros).close();
  fs::resize_file(zeros, 2ull << 30);  // sparse
  for (const auto& log : {junk, zeros}) {
    auto session = LeetSession::Open({LeetMode::kSingleRun, dir.path(), log});
    ASSERT_FALSE(session.ok()) << log;
    EXPECT_EQ(session.error(),
              log.string() + ": not a W&B run log (the file does not start with \":W&B\" and magic 0xBEE1)");
  }
}

// Among real runs, a file that is not a run log is listed as one (the reason in the status bar while the
// cursor is on it), never as crashed, and is neither charted nor opened.
TEST(LeetSession, AWorkspaceListsWhatIsNotARunLogAsSuch) {
  TempDir dir("leet-session");
  WriteRun(dir.path(), "20260101_000000", "real", 0);
  const fs::path zeros = dir.path() / "run-20260102_000000-zeros" / "run-zeros.wandb";
  fs::create_directories(zeros.parent_path());
  std::ofstream(zeros).close();
  fs::resize_file(zeros, 2ull << 30);
  auto opened = LeetSession::Open({LeetMode::kWorkspace, dir.path(), {}});
  ASSERT_TRUE(opened.ok()) << opened.error();
  LeetSession& session = **opened;
  session.Work(Clock::now(), std::chrono::seconds(1));
  LeetView view;
  ViewModel model = session.BuildViewModel(view, kStart + 100);
  WorkUntilLoaded(session);
  model = session.BuildViewModel(view, kStart + 100);
  ASSERT_EQ(model.runs.size(), 2u);
  EXPECT_EQ(model.runs[0].name, "zeros");
  EXPECT_EQ(model.runs[0].state, runview::RunState::kNotARunLog);
  EXPECT_EQ(model.runs[1].state, runview::RunState::kFinished);
  EXPECT_TRUE(model.chart_runs.empty());
  ASSERT_FALSE(model.warnings.empty());
  EXPECT_NE(model.warnings[0].find("zeros: not a W&B run log"), std::string::npos) << model.warnings[0];
  EXPECT_TRUE(session.Apply(ViewAction::kOpenRun, view));
  EXPECT_EQ(session.mode(), LeetMode::kWorkspace);  // not opened
}

// A run whose name is megabytes long is listed under its name (its run record read whole), shortened.
TEST(LeetSession, AWorkspaceNamesRunsWithVeryLongNames) {
  TempDir dir("leet-session");
  for (const size_t bytes : {size_t{200} << 10, size_t{2} << 20}) {
    const std::string id = "long" + std::to_string(bytes);
    RunLogBuilder builder;
    builder.Header().Run(id, std::string(bytes, 'n'), kStart).Stats(kStart, {{"cpu", "1"}}).Exit(0, 1);
    builder.WriteTo(dir.path() / ("run-20260101_00000" + std::to_string(bytes % 7) + "-" + id) /
                    ("run-" + id + ".wandb"));
  }
  auto opened = LeetSession::Open({LeetMode::kWorkspace, dir.path(), {}});
  ASSERT_TRUE(opened.ok()) << opened.error();
  (*opened)->Work(Clock::now(), std::chrono::seconds(5));
  LeetView view;
  const ViewModel model = (*opened)->BuildViewModel(view, kStart + 100);
  ASSERT_EQ(model.runs.size(), 2u);
  for (const auto& run : model.runs) {
    EXPECT_EQ(run.name, std::string(runview::kMaxShownNameBytes, 'n') + "…");
    EXPECT_EQ(run.state, runview::RunState::kFinished);
  }
}

}  // namespace
}  // namespace runmon::tui
