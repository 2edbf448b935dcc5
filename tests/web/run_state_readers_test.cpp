// One verdict per file, whoever reads it: the runs lists' summaries (leet's workspace, the dashboard's runs
// table), a run read whole (leet's single-run view, the dashboard's run page) and runlog's reader as
// `runmon dump` uses it, on one logdir of finished, failed (exit 3), killed (its lock let go without an exit
// record) and live (its lock held) runs beside files that are not run logs (bad magic, 2 GB of zeros, a
// cut-off header, an empty file). The end-to-end test (tests/e2e/leet_test.py) compares the commands.
#include <unistd.h>

#include <fstream>
#include <map>

#include <fmt/format.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/wall_clock.hpp"
#include "runlog/record_reader.hpp"
#include "runlog/run_state.hpp"
#include "support/run_log_builder.hpp"
#include "support/temp_dir.hpp"
#include "tui/session.hpp"
#include "web/api.hpp"

namespace runmon {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using runview::RunState;
using test::RunLogBuilder;

fs::path LogPath(const fs::path& logdir, int index, const std::string& id) {
  const fs::path log = logdir / fmt::format("run-20260101_00000{}-{}", index, id) / ("run-" + id + ".wandb");
  fs::create_directories(log.parent_path());
  return log;
}

RunLogBuilder Records(const std::string& id, double start) {
  RunLogBuilder builder;
  builder.Header().Run(id, id, start);
  for (int i = 0; i < 5; ++i) builder.Stats(start + i, {{"cpu", "1"}});
  return builder;
}

// What `runmon dump` reads: runlog's reader to the end, then the verdict.
RunState DumpReaderState(const fs::path& log, double now) {
  auto fd = runlog::OpenLogForReading(log);
  if (!fd) return RunState::kNotARunLog;
  runlog::RecordReader reader(runlog::FileSource(*fd));
  runlog::RunProgress progress;
  runlog::ReadOutcome outcome;
  while ((outcome = reader.Next()) == runlog::ReadOutcome::kRecord) progress.Note(reader.record());
  const auto state =
      runlog::JudgeRun(runlog::GatherEvidence(reader.log(), outcome, *fd), progress, now).state;
  ::close(*fd);
  return state;
}

TEST(RunStateReaders, EveryReaderGivesAFileTheSameState) {
  test::TempDir dir("run-state-readers");
  const fs::path logdir = dir.path();
  const double start = WallSeconds() - 60;
  std::map<std::string, std::pair<fs::path, RunState>> files;
  const auto add = [&](const std::string& id, RunState expected) {
    const fs::path log = LogPath(logdir, static_cast<int>(files.size()), id);
    files[id] = {log, expected};
    return log;
  };
  Records("finished", start).Exit(0, 5).WriteTo(add("finished", RunState::kFinished));
  Records("failed", start).Exit(3, 5).WriteTo(add("failed", RunState::kFailed));
  Records("killed", start).WriteTo(add("killed", RunState::kCrashed));  // the writer closed: lock let go
  auto live = runlog::LogWriter::Create(add("live", RunState::kRunning));
  ASSERT_TRUE(live.ok());
  const RunLogBuilder live_records = Records("live", start);
  for (const auto& record : live_records.records()) {
    ASSERT_TRUE(live->Append(record.SerializeAsString()).ok());
  }
  std::ofstream(add("badmagic", RunState::kNotARunLog)) << std::string(100000, 'x');
  const fs::path zeros = add("zeros", RunState::kNotARunLog);
  std::ofstream(zeros).close();
  fs::resize_file(zeros, 2ull << 30);  // sparse
  std::ofstream(add("truncated", RunState::kNotARunLog)) << ":W&";
  std::ofstream(add("empty", RunState::kNotARunLog)).close();

  const double now = WallSeconds();
  // leet's workspace.
  auto workspace = tui::LeetSession::Open({tui::LeetMode::kWorkspace, logdir, {}});
  ASSERT_TRUE(workspace.ok()) << workspace.error();
  (*workspace)->Work(std::chrono::steady_clock::now(), std::chrono::seconds(10));
  tui::LeetView view;
  const tui::ViewModel listed = (*workspace)->BuildViewModel(view, now);
  std::map<std::string, RunState> leet_list;
  for (const auto& run : listed.runs) leet_list[run.name] = run.state;
  // The dashboard's runs table and run pages.
  web::RunStore store(logdir);
  store.Start();
  std::map<std::string, std::string> table;
  const json runs = json::parse(web::ListRuns(store, {}).body);
  for (const auto& row : runs["runs"]) table[row["id"]] = row["state"];

  for (const auto& [id, file] : files) {
    const auto& [log, expected] = file;
    SCOPED_TRACE(id);
    const std::string name(runview::RunStateName(expected));
    EXPECT_EQ(DumpReaderState(log, now), expected);
    EXPECT_EQ(runview::SummarizeRun(log, now).verdict.state, expected);
    EXPECT_EQ(leet_list[id], expected);
    EXPECT_EQ(table[id], name);
    const json page = json::parse(web::DescribeRun(store, log.parent_path().filename().string()).body);
    EXPECT_EQ(page["state"], name);
    // leet's single-run view: opened with that state, or refused like dump refuses it.
    auto single = tui::LeetSession::Open({tui::LeetMode::kSingleRun, logdir, log});
    if (expected == RunState::kNotARunLog) {
      EXPECT_FALSE(single.ok());
      continue;
    }
    ASSERT_TRUE(single.ok()) << single.error();
    for (int i = 0; i < 100 && (*single)->loading(); ++i) {
      (*single)->Work(std::chrono::steady_clock::now(), std::chrono::milliseconds(50));
    }
    EXPECT_EQ((*single)->BuildViewModel(view, now).overview_state, expected);
  }
  store.Stop();
}

}  // namespace
}  // namespace runmon
