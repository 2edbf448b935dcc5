// runmon::Run (include/runmon/run.hpp) and its C interface (runmon.h): runs recorded inside the test
// process and read back with the run-log reader: history rows by step, the summary, system samples of this
// process without runmon's own cost, the exit record last; several threads logging while the run finishes
// (this test also runs under ThreadSanitizer, scripts/check-thread-sanitizer.sh); bad options; a forked
// child; the C interface's failures.
#include <runmon/runmon.h>
#include <runmon/run.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runlog/log_reader.hpp"
#include "runlog/record_reader.hpp"
#include "support/temp_dir.hpp"

namespace runmon {
namespace {

namespace fs = std::filesystem;

struct ReadBack {
  std::vector<wandb::Record> records;
  bool clean = false;  // the log ends after its last record, undamaged

  std::vector<const wandb::HistoryRecord*> History() const {
    std::vector<const wandb::HistoryRecord*> out;
    for (const auto& record : records)
      if (record.has_history()) out.push_back(&record.history());
    return out;
  }
  size_t Count(wandb::Record::RecordTypeCase type) const {
    size_t n = 0;
    for (const auto& record : records) n += record.record_type_case() == type ? 1 : 0;
    return n;
  }
};

ReadBack ReadRun(const fs::path& directory) {
  ReadBack out;
  fs::path log;
  for (const auto& entry : fs::directory_iterator(directory))
    if (entry.path().extension() == ".wandb") log = entry.path();
  auto fd = runlog::OpenLogForReading(log);
  if (!fd) return out;
  runlog::RecordReader reader(runlog::FileSource(*fd));
  runlog::ReadOutcome outcome;
  while ((outcome = reader.Next()) == runlog::ReadOutcome::kRecord) out.records.push_back(reader.record());
  out.clean = outcome == runlog::ReadOutcome::kEnd && reader.damage().empty();
  ::close(*fd);
  return out;
}

std::map<std::string, std::string> Items(const wandb::HistoryRecord& row) {
  std::map<std::string, std::string> items;
  for (const auto& item : row.item()) items[item.key()] = item.value_json();
  return items;
}

nlohmann::json ReadJson(const fs::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in, nullptr, false);
}

TEST(RunApi, RecordsStepsSummaryAndSamplesOfThisProcess) {
  test::TempDir dir("run-api");
  auto run = Run::start({.dir = (dir.path() / "wandb").string(), .name = "pretrain", .interval = 0.1});
  ASSERT_FALSE(run.id().empty());
  EXPECT_TRUE(fs::is_symlink(dir.path() / "wandb" / "latest-run"));
  for (int step = 0; step < 50; ++step) {
    ASSERT_TRUE(run.log({{"loss", 1.0 / (step + 1)}, {"lr", 3e-4}}, step));
  }
  ASSERT_TRUE(run.summary({{"best_loss", 0.02}}));
  std::this_thread::sleep_for(std::chrono::milliseconds(350));  // a few samples
  const fs::path directory = run.directory();
  ASSERT_TRUE(run.finish(0));
  EXPECT_FALSE(run.finish(0));             // once
  EXPECT_FALSE(run.log({{"loss", 1.0}}));  // after the end
  EXPECT_EQ(run.dropped(), 1u);

  const ReadBack back = ReadRun(directory);
  ASSERT_TRUE(back.clean);
  const auto rows = back.History();
  ASSERT_EQ(rows.size(), 50u);
  for (int step = 0; step < 50; ++step) {
    auto items = Items(*rows[step]);
    EXPECT_EQ(rows[step]->step().num(), step);
    EXPECT_EQ(items["_step"], std::to_string(step));
    EXPECT_EQ(items["lr"], "0.0003");
    EXPECT_TRUE(items.count("_runtime") && items.count("_timestamp"));
  }
  EXPECT_EQ(Items(*rows[1])["loss"], "0.5");

  ASSERT_GE(back.Count(wandb::Record::kStats), 2u);
  std::set<std::string> keys;
  for (const auto& record : back.records)
    if (record.has_stats())
      for (const auto& item : record.stats().item()) keys.insert(item.key());
  EXPECT_TRUE(keys.count("cpu")) << "host metrics";
  EXPECT_TRUE(keys.count("proc.memory.rssMB")) << "this process";
  EXPECT_FALSE(keys.count("runmon.cpuPercent")) << "runmon's own cost is the program's";
  EXPECT_FALSE(keys.count("runmon.rssMB"));

  // The exit record, then the final record, end the log; the summary comes before them.
  ASSERT_GE(back.records.size(), 3u);
  EXPECT_TRUE(back.records.back().has_final());
  const auto& exit = back.records[back.records.size() - 2];
  ASSERT_TRUE(exit.has_exit());
  EXPECT_EQ(exit.exit().exit_code(), 0);
  EXPECT_EQ(back.Count(wandb::Record::kSummary), 1u);
  EXPECT_EQ(back.records[0].record_type_case(), wandb::Record::kHeader);
  EXPECT_EQ(back.records[1].run().display_name(), "pretrain");

  const nlohmann::json summary = ReadJson(directory / "files" / "wandb-summary.json");
  EXPECT_EQ(summary["best_loss"], 0.02);
  EXPECT_EQ(summary["loss"], 0.02);
  EXPECT_EQ(summary["_step"], 49);
  const nlohmann::json metadata = ReadJson(directory / "files" / "wandb-metadata.json");
  EXPECT_TRUE(metadata.contains("program")) << metadata.dump();
  EXPECT_TRUE(metadata.contains("startedAt"));
}

TEST(RunApi, ThreadsLogWhileTheRunFinishes) {
  test::TempDir dir("run-api-threads");
  auto run = Run::start({.dir = dir.path().string(), .interval = 0.1});
  const fs::path directory = run.directory();
  std::atomic<bool> go{false};
  std::atomic<uint64_t> taken{0};
  std::atomic<uint64_t> refused{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&, t] {
      while (!go) std::this_thread::yield();
      const std::string key = "worker" + std::to_string(t) + ".loss";
      for (int i = 0; i < 20000; ++i) {
        const bool ok = i % 3 == 0 ? run.log_json("{\"nested\": {\"x\": 1}}")
                                   : run.log({{std::string_view(key), static_cast<double>(i)}});
        (ok ? taken : refused)++;
        if (i % 64 == 0) (void)run.dropped();
      }
    });
  }
  go = true;
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_TRUE(run.finish(3));  // while the writers go on
  for (auto& writer : writers) writer.join();
  EXPECT_EQ(taken + refused, 80000u);
  EXPECT_EQ(run.dropped(), refused.load());

  const ReadBack back = ReadRun(directory);
  ASSERT_TRUE(back.clean);
  // Every line taken is in a row (lines without a step are a row each), and nothing follows the exit.
  EXPECT_EQ(back.History().size(), taken.load());
  ASSERT_TRUE(back.records[back.records.size() - 2].has_exit());
  EXPECT_EQ(back.records[back.records.size() - 2].exit().exit_code(), 3);
  int64_t last_step = -1;
  for (const auto* row : back.History()) {
    EXPECT_EQ(row->step().num(), last_step + 1);
    last_step = row->step().num();
  }
}

TEST(RunApi, RefusesWhatCannotBeRecorded) {
  test::TempDir dir("run-api-refuses");
  auto run = Run::start({.dir = dir.path().string(), .interval = 0.5});
  EXPECT_TRUE(run.log({{"loss", 1.0}}, 5));
  EXPECT_FALSE(run.log({{"loss", 1.0}}, 2));   // behind step 5
  EXPECT_FALSE(run.log({{"loss", 1.0}}, -1));  // negative
  EXPECT_FALSE(run.log({{"", 1.0}}));          // no name
  EXPECT_FALSE(run.log({{"_runtime", 1.0}}));  // W&B's own
  EXPECT_FALSE(run.log({{std::string(2000, 'k'), 1.0}}));
  EXPECT_FALSE(run.log_json("{\"loss\": "));  // truncated
  EXPECT_FALSE(run.log_json("[1, 2]"));
  EXPECT_TRUE(run.log({{"loss", std::nan("")}, {"grad", 1.0 / 0.0}, {"", 2.0}}, 6));  // the bad key alone
  EXPECT_TRUE(run.log_json("{\"eval\": {\"acc\": 0.9, \"ok\": true}, \"_step\": 7}"));
  EXPECT_EQ(run.dropped(), 8u);
  const fs::path directory = run.directory();
  ASSERT_TRUE(run.finish());
  const auto back = ReadRun(directory);
  const auto rows = back.History();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(Items(*rows[1])["loss"], "NaN");
  EXPECT_EQ(Items(*rows[1])["grad"], "Infinity");
  EXPECT_EQ(Items(*rows[2])["eval.acc"], "0.9");
  EXPECT_EQ(Items(*rows[2])["eval.ok"], "true");
}

TEST(RunApi, BadOptionsSayWhyAndRecordNothing) {
  test::TempDir dir("run-api-options");
  const auto message = [](const RunOptions& options) -> std::string {
    try {
      Run::start(options);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "started";
  };
  EXPECT_EQ(message({.dir = dir.path().string(), .interval = 0.05}),
            "runmon: the sampling interval must be at least 0.1 s");
  EXPECT_EQ(message({.dir = dir.path().string(), .interval = std::nan("")}).rfind("runmon: ", 0), 0u);
  std::ofstream(dir.path() / "file") << "x";
  EXPECT_EQ(message({.dir = (dir.path() / "file").string()}),
            "runmon: " + (dir.path() / "file").string() + ": not a directory");
  EXPECT_EQ(message({.dir = dir.path().string(), .id = "../x"}).rfind("runmon: run id:", 0), 0u);
  EXPECT_EQ(message({.dir = dir.path().string(), .name = "\xff"}).rfind("runmon: ", 0), 0u);
  EXPECT_EQ(message({.dir = ""}).rfind("runmon: ", 0), 0u);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);  // "file" alone
  // A directory that cannot be created is not an option's fault.
  EXPECT_THROW(Run::start({.dir = (dir.path() / "file" / "below").string()}), std::runtime_error);
}

TEST(RunApi, TheDestructorFinishesWithTheUnwindingExitCode) {
  test::TempDir dir("run-api-destructor");
  fs::path normal;
  fs::path unwound;
  {
    auto run = Run::start({.dir = dir.path().string(), .interval = 1.0, .id = "normal1"});
    normal = run.directory();
  }
  try {
    auto run = Run::start({.dir = dir.path().string(), .interval = 1.0, .id = "unwound1"});
    unwound = run.directory();
    throw std::runtime_error("training failed");
  } catch (const std::runtime_error&) {
  }
  const auto exit_code = [](const fs::path& directory) {
    const auto back = ReadRun(directory);
    return back.records.size() >= 2 && back.records[back.records.size() - 2].has_exit()
               ? back.records[back.records.size() - 2].exit().exit_code()
               : -1;
  };
  EXPECT_EQ(exit_code(normal), 0);
  EXPECT_EQ(exit_code(unwound), 1);
  // Moved from: the moved-to run records, the moved-from one does nothing.
  auto first = Run::start({.dir = dir.path().string(), .interval = 1.0, .id = "moved1"});
  runmon::Run second = std::move(first);
  EXPECT_FALSE(first.log({{"loss", 1.0}}));  // NOLINT(bugprone-use-after-move): what this checks
  EXPECT_TRUE(second.log({{"loss", 1.0}}));
  EXPECT_TRUE(second.finish());
}

TEST(RunApi, AForkedChildRecordsNothingAndLeavesTheRunAlone) {
  test::TempDir dir("run-api-fork");
  auto run = Run::start({.dir = dir.path().string(), .interval = 0.1});
  ASSERT_TRUE(run.log({{"loss", 1.0}}, 0));
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const bool quiet = !run.log({{"loss", 2.0}}, 1) && !run.finish(9);
    { runmon::Run gone = std::move(run); }  // its destructor neither joins nor writes
    ::_exit(quiet ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  ASSERT_TRUE(run.log({{"loss", 3.0}}, 1));
  const fs::path directory = run.directory();
  ASSERT_TRUE(run.finish(0));
  const auto back = ReadRun(directory);
  ASSERT_TRUE(back.clean);
  const auto rows = back.History();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(Items(*rows[1])["loss"], "3");
  EXPECT_EQ(back.records[back.records.size() - 2].exit().exit_code(), 0);
}

TEST(RunApiC, StartLogFinish) {
  test::TempDir dir("run-api-c");
  const std::string where = dir.path().string();
  runmon_run_options options = RUNMON_RUN_OPTIONS_INIT;
  options.dir = where.c_str();
  options.name = "from C";
  options.interval = 0.2;
  runmon_run* run = runmon_run_start(&options);
  ASSERT_NE(run, nullptr) << runmon_last_error();
  EXPECT_STREQ(runmon_last_error(), "");
  const char* keys[] = {"loss", "lr"};
  const double values[] = {0.5, 1e-3};
  EXPECT_EQ(runmon_run_log(run, keys, values, 2, 0), 1);
  EXPECT_EQ(runmon_run_log(run, keys, values, 1, RUNMON_NO_STEP), 1);
  const char* null_key[] = {nullptr};
  EXPECT_EQ(runmon_run_log(run, null_key, values, 1, 2), 0);
  EXPECT_EQ(runmon_run_log(run, nullptr, nullptr, 1, 2), 0);
  const std::string line = R"({"acc": 0.75, "_step": 4})";
  EXPECT_EQ(runmon_run_log_json(run, line.data(), line.size()), 1);
  EXPECT_EQ(runmon_run_log_json(run, "{", 1), 0);
  EXPECT_EQ(runmon_run_summary(run, keys, values, 1), 1);
  EXPECT_EQ(runmon_run_dropped(run), 1u);
  const fs::path directory = runmon_run_directory(run);
  EXPECT_EQ(directory.filename().string().find("run-"), 0u);
  EXPECT_NE(std::string(runmon_run_id(run)), "");
  EXPECT_EQ(runmon_run_finish(run, 0), 1);
  const auto back = ReadRun(directory);
  ASSERT_TRUE(back.clean);
  // The call without a step joined step 0 and ended it; the line named step 4.
  const auto rows = back.History();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]->step().num(), 0);
  EXPECT_EQ(Items(*rows[0])["lr"], "0.001");
  EXPECT_EQ(Items(*rows[1])["acc"], "0.75");
  EXPECT_EQ(back.records[1].run().display_name(), "from C");
}

TEST(RunApiC, FailuresAreReturnedNotThrown) {
  test::TempDir dir("run-api-c-failures");
  runmon_run_options options = RUNMON_RUN_OPTIONS_INIT;
  const std::string where = dir.path().string();
  options.dir = where.c_str();
  options.interval = 0.01;
  EXPECT_EQ(runmon_run_start(&options), nullptr);
  EXPECT_STREQ(runmon_last_error(), "runmon: the sampling interval must be at least 0.1 s");
  runmon_run_options unsized = options;
  unsized.size = 0;
  EXPECT_EQ(runmon_run_start(&unsized), nullptr);
  EXPECT_NE(std::string(runmon_last_error()).find("RUNMON_RUN_OPTIONS_INIT"), std::string::npos);
  EXPECT_EQ(runmon_run_log(nullptr, nullptr, nullptr, 0, 0), 0);
  EXPECT_EQ(runmon_run_log_json(nullptr, "{}", 2), 0);
  EXPECT_EQ(runmon_run_summary(nullptr, nullptr, nullptr, 0), 0);
  EXPECT_EQ(runmon_run_finish(nullptr, 0), 0);
  EXPECT_EQ(runmon_run_dropped(nullptr), 0u);
  EXPECT_STREQ(runmon_run_id(nullptr), "");
}

}  // namespace
}  // namespace runmon
