// Finding runs: listing a wandb directory, its latest run (the latest-run link, else the newest run), its
// own files written atomically, and run summaries from a log's head and tail (large logs, running and
// crashed runs, W&B's own files, damage).
#include "runview/workspace.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "support/run_log_builder.hpp"
#include "support/temp_dir.hpp"

namespace runmon::runview {
namespace {

namespace fs = std::filesystem;
using test::RunLogBuilder;
using test::TempDir;
using test::WriteTestRun;
constexpr double kStart = test::kTestRunStart;

TEST(ScanRuns, NewestFirstSkippingWhatIsNotARun) {
  TempDir dir("leet-ws");
  const fs::path wandb = dir.path();
  WriteTestRun(wandb, "20260101_000000", "aaa", true);
  WriteTestRun(wandb, "20260301_000000", "ccc", true);
  fs::create_directories(wandb / "offline-run-20260201_000000-bbb");
  fs::create_directories(wandb / "run-garbage");
  fs::create_directories(wandb / "something-else");
  std::ofstream(wandb / "run-20260401_000000-file") << "a file, not a directory";
  fs::create_directory_symlink(wandb / "run-20260101_000000-aaa", wandb / "latest-run");
  fs::create_directory_symlink(wandb / "run-20260101_000000-aaa", wandb / "run-20260501_000000-link");
  auto runs = ScanRuns(wandb);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 3u);
  EXPECT_EQ((*runs)[0].id, "ccc");
  EXPECT_EQ((*runs)[1].id, "bbb");
  EXPECT_TRUE((*runs)[1].log.empty());
  EXPECT_EQ((*runs)[2].id, "aaa");
  EXPECT_EQ((*runs)[2].stamp, "20260101_000000");
  EXPECT_FALSE((*runs)[2].log.empty());
  EXPECT_FALSE(ScanRuns(dir.path() / "missing").ok());
}

TEST(LatestRunLog, TheLinkElseTheNewestRun) {
  TempDir dir("leet-latest");
  const fs::path wandb = dir.path();
  EXPECT_FALSE(LatestRunLog(wandb).ok());  // no runs
  const fs::path old_log = WriteTestRun(wandb, "20260101_000000", "aaa", true);
  const fs::path new_log = WriteTestRun(wandb, "20260301_000000", "ccc", true);
  auto latest = LatestRunLog(wandb);
  ASSERT_TRUE(latest.ok()) << latest.error();
  EXPECT_EQ(fs::canonical(*latest), fs::canonical(new_log));
  fs::create_directory_symlink(wandb / "run-20260101_000000-aaa", wandb / "latest-run");
  latest = LatestRunLog(wandb);
  ASSERT_TRUE(latest.ok()) << latest.error();
  EXPECT_EQ(fs::canonical(*latest), fs::canonical(old_log));
}

TEST(WriteWorkspaceFile, ReplacesTheFileWhole) {
  TempDir dir("leet-file");
  ASSERT_TRUE(WriteWorkspaceFile(dir.path(), ".layout.json", "{\"a\":1}\n").ok());
  ASSERT_TRUE(WriteWorkspaceFile(dir.path(), ".layout.json", "{}\n").ok());
  std::ifstream in(dir.path() / ".layout.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "{}\n");
  size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1u);  // no temporary file left beside it
  EXPECT_FALSE(WriteWorkspaceFile(dir.path() / "missing", ".layout.json", "{}").ok());
}

TEST(SummarizeRun, ReadsHeadAndTailOfALargeLog) {
  TempDir dir("leet-ws");
  const auto log = WriteTestRun(dir.path(), "20260101_000000", "big", true, 20000);
  ASSERT_GT(fs::file_size(log), 8u * 32768);
  const auto summary = SummarizeRun(log, kStart + 1e6);
  EXPECT_TRUE(summary.verdict.reason.empty()) << summary.verdict.reason;
  EXPECT_EQ(summary.overview.id, "big");
  EXPECT_EQ(summary.overview.name, "name-big");
  EXPECT_EQ(summary.verdict.state, RunState::kFinished);
  EXPECT_TRUE(summary.warning.empty()) << summary.warning;  // the head/tail junction is not damage
  ASSERT_TRUE(summary.overview.last_time.has_value());
  EXPECT_DOUBLE_EQ(*summary.overview.last_time, kStart + 19999);
}

TEST(SummarizeRun, DamageInTheHeadOrTailIsAWarning) {
  TempDir dir("leet-ws");
  for (const bool in_tail : {false, true}) {
    const auto log = WriteTestRun(dir.path(), in_tail ? "20260101_000000" : "20260102_000000",
                                  in_tail ? "tail" : "head", true, 20000);
    const auto size = fs::file_size(log);
    {
      std::fstream file(log, std::ios::in | std::ios::out | std::ios::binary);
      file.seekp(static_cast<std::streamoff>(in_tail ? size - 20000 : 2000));
      file.write("\xff\xff\xff\xff\xff\xff\xff\xff", 8);
    }
    const auto summary = SummarizeRun(log, kStart + 1e6);
    EXPECT_TRUE(summary.verdict.reason.empty());
    EXPECT_TRUE(summary.verdict.damaged);
    EXPECT_NE(summary.warning.find("damaged log"), std::string::npos) << (in_tail ? "tail" : "head");
  }
}

TEST(SummarizeRun, RunningCrashedAndUnreadable) {
  TempDir dir("leet-ws");
  // A runmon log without an exit record whose writer is gone: crashed.
  const auto crashed = WriteTestRun(dir.path(), "20260101_000000", "gone", false);
  EXPECT_EQ(SummarizeRun(crashed, kStart + 10).verdict.state, RunState::kCrashed);
  // One whose writer still holds it: running.
  const fs::path open_log = dir.path() / "run-20260102_000000-live" / "run-live.wandb";
  fs::create_directories(open_log.parent_path());
  auto writer = runlog::LogWriter::Create(open_log);
  ASSERT_TRUE(writer.ok());
  RunLogBuilder builder;
  builder.Header().Run("live", "live", kStart).Stats(kStart + 1, {{"cpu", "1"}});
  for (const auto& record : builder.records()) ASSERT_TRUE(writer->Append(record.SerializeAsString()).ok());
  EXPECT_EQ(SummarizeRun(open_log, kStart + 1e6).verdict.state, RunState::kRunning);
  // Not a log: said so with the reason, never crashed.
  std::ofstream(dir.path() / "junk.wandb") << std::string(100000, 'x');
  const fs::path zeros = dir.path() / "zeros.wandb";
  std::ofstream(zeros).close();
  fs::resize_file(zeros, 2ull << 30);  // 2 GB, sparse
  for (const auto& path : {dir.path() / "junk.wandb", zeros, dir.path() / "missing.wandb", dir.path()}) {
    const auto summary = SummarizeRun(path, kStart);
    EXPECT_EQ(summary.verdict.state, RunState::kNotARunLog) << path;
    EXPECT_FALSE(summary.verdict.reason.empty()) << path;
  }
  EXPECT_NE(SummarizeRun(zeros, kStart).verdict.reason.find("not a W&B run log"), std::string::npos);
}

// A run record longer than a block (a name of 200 KiB, of 2 MiB) is read whole from the head, so the runs
// lists show the run's name, not its id.
TEST(SummarizeRun, ARunRecordLongerThanABlockIsReadWhole) {
  TempDir dir("leet-ws");
  for (const size_t name_bytes : {size_t{200} << 10, size_t{2} << 20}) {
    const std::string name = "long-" + std::string(name_bytes, 'n');
    const std::string id = "long" + std::to_string(name_bytes);
    RunLogBuilder builder;
    builder.Header().Run(id, name, kStart);
    for (int i = 0; i < 20000; ++i) builder.Stats(kStart + i, {{"cpu", "1"}});
    const fs::path log = dir.path() / (id + ".wandb");
    builder.Exit(0, 20000).WriteTo(log);
    const auto summary = SummarizeRun(log, kStart + 1e6);
    EXPECT_EQ(summary.overview.name, name) << name_bytes;
    EXPECT_EQ(summary.overview.id, id);
    EXPECT_EQ(summary.verdict.state, RunState::kFinished);
    EXPECT_TRUE(summary.warning.empty()) << summary.warning;
    ASSERT_TRUE(summary.overview.last_time.has_value());
    EXPECT_DOUBLE_EQ(*summary.overview.last_time, kStart + 19999);  // the tail is still read
  }
}

TEST(SummarizeRun, WandbsOwnFile) {
  const fs::path fixture = fs::path(RUNMON_FIXTURES_DIR) / "runlog" / "sample-stats.wandb";
  const auto summary = SummarizeRun(fixture, 0);
  EXPECT_TRUE(summary.verdict.reason.empty()) << summary.verdict.reason;
  EXPECT_EQ(summary.overview.id, "smpl0001");
  EXPECT_EQ(summary.overview.name, "sample-stats");
  EXPECT_EQ(summary.overview.host, "fixture-host");
}

}  // namespace
}  // namespace runmon::runview
