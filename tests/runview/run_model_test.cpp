// RunModel (records -> overview and series), ParseJsonNumber, RunRuntime, ShortName, and RunLoader reading
// logs and judging them
// in slices, following growth, torn tails and damage.
#include "runview/run_model.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include <gtest/gtest.h>

#include "runview/run_loader.hpp"
#include "support/run_log_builder.hpp"
#include "support/temp_dir.hpp"

namespace runmon::runview {
namespace {

using test::RunLogBuilder;
using test::TempDir;
constexpr double kStart = 1'780'000'000;
constexpr auto kPlenty = std::chrono::seconds(10);

RunModel Build(const RunLogBuilder& builder) {
  RunModel model;
  for (const auto& record : builder.records()) model.Ingest(record);
  return model;
}

TEST(ParseJsonNumber, TakesJsonNumbersOnly) {
  EXPECT_EQ(ParseJsonNumber("12.5"), 12.5);
  EXPECT_EQ(ParseJsonNumber("-4"), -4);
  EXPECT_EQ(ParseJsonNumber("1e+21"), 1e21);
  EXPECT_EQ(ParseJsonNumber("0"), 0);
  for (const char* bad : {"", "\"12\"", "NaN", "Infinity", "-Infinity", "inf", "nan", "true", "null", "+1",
                          "0x10", "12abc", "{}", "[1]", "-", "1e999", " 1"}) {
    EXPECT_FALSE(ParseJsonNumber(bad).has_value()) << bad;
  }
}

TEST(RunModel, OverviewFromRunEnvironmentAndExit) {
  RunModel model = Build(RunLogBuilder()
                             .Header()
                             .Run("abc123", "resnet", kStart, "vision", "gpu-node")
                             .Environment("train.py")
                             .Stats(kStart + 1, {{"cpu", "10"}})
                             .Exit(3, 42));
  const auto& overview = model.overview();
  EXPECT_EQ(overview.id, "abc123");
  EXPECT_EQ(overview.name, "resnet");
  EXPECT_EQ(overview.project, "vision");
  EXPECT_EQ(overview.host, "gpu-node");
  EXPECT_EQ(overview.producer, "runmon 0.1.0");
  EXPECT_TRUE(model.progress().runmon_writer());
  ASSERT_TRUE(overview.start_time.has_value());
  EXPECT_DOUBLE_EQ(*overview.start_time, kStart);
  EXPECT_EQ(overview.exit_code, 3);
  EXPECT_EQ(overview.exit_runtime, 42);
  bool has_command = false;
  for (const auto& [label, value] : overview.environment) {
    if (label == "Command") has_command = value == "train.py";
  }
  EXPECT_TRUE(has_command);
}

TEST(RunModel, JobIdentityFromTheEnvironmentRecord) {
  // W&B's environment record first (no job), then runmon's with the job: the job stays when a later
  // record lacks one.
  RunModel model = Build(RunLogBuilder()
                             .Run("r", "n", kStart, "p", "")
                             .Environment("train.py")
                             .Job("4711", "3", "gpu-d", "slurm")
                             .Environment("train.py"));
  const auto& overview = model.overview();
  EXPECT_EQ(overview.job_id, "4711");
  EXPECT_EQ(overview.node_rank, "3");
  EXPECT_EQ(overview.job_launcher, "slurm");
  EXPECT_EQ(overview.host, "node-1");  // the first environment record's host
  bool has_job_fact = false;
  for (const auto& [label, value] : overview.environment)
    has_job_fact = has_job_fact || (label == "Job" && value == "4711");
  EXPECT_TRUE(has_job_fact);

  const RunModel plain = Build(RunLogBuilder().Run("r", "n", kStart).Environment("train.py"));
  EXPECT_TRUE(plain.overview().job_id.empty());
  EXPECT_TRUE(plain.overview().node_rank.empty());
  // A job record whose id is empty is no job (a launcher that gave ranks only).
  const RunModel no_id = Build(RunLogBuilder().Job("", "2", "h"));
  EXPECT_TRUE(no_id.overview().job_id.empty());
  EXPECT_TRUE(no_id.overview().node_rank.empty());
}

TEST(NodeName, RankAndHostWhenKnown) {
  EXPECT_EQ(NodeName("1", "gpu-b"), "node 1 (gpu-b)");
  EXPECT_EQ(NodeName("0", ""), "node 0");
  EXPECT_EQ(NodeName("", "gpu-c"), "node ? (gpu-c)");
  EXPECT_EQ(NodeName(std::string(1000, '7'), "").size(),
            std::string("node ").size() + 64 + std::string("…").size());
}

TEST(RunModel, StatsBecomeSeriesOverSecondsSinceStart) {
  RunModel model = Build(RunLogBuilder()
                             .Run("r", "n", kStart)
                             .Stats(kStart + 2, {{"cpu", "10"}, {"gpu.0.gpu", "50"}})
                             .Stats(kStart + 4, {{"cpu", "20"}, {"gpu.0.gpu", "60"}})
                             .Stats(kStart + 6, {{"gpu.0.gpu", "70"}, {"cpu", "30"}}));  // keys reordered
  ASSERT_EQ(model.system_series().size(), 2u);
  const TimeSeries& cpu = model.system_series().at("cpu");
  ASSERT_EQ(cpu.size(), 3u);
  EXPECT_DOUBLE_EQ(cpu.x(0), 2);
  EXPECT_DOUBLE_EQ(cpu.x(2), 6);
  EXPECT_FLOAT_EQ(cpu.y(2), 30);
  EXPECT_FLOAT_EQ(model.system_series().at("gpu.0.gpu").y(2), 70);
  EXPECT_EQ(model.stats_records(), 3u);
}

TEST(RunModel, TimeOriginIsTheFirstSampleWithoutARunRecordFirst) {
  RunModel model =
      Build(RunLogBuilder().Stats(kStart + 10, {{"cpu", "1"}}).Stats(kStart + 11, {{"cpu", "2"}}));
  EXPECT_DOUBLE_EQ(*model.time_origin(), kStart + 10);
  EXPECT_DOUBLE_EQ(model.system_series().at("cpu").x(1), 1);
}

TEST(RunModel, NonNumericValuesAreCountedNotStoredAndUnknownKeysKept) {
  RunModel model = Build(RunLogBuilder().Stats(
      kStart, {{"cpu", "\"busy\""}, {"weird.key", "NaN"}, {"vendor.thing.7", "3"}, {"cpu", "5"}}));
  EXPECT_EQ(model.skipped_values(), 2u);
  EXPECT_EQ(model.system_series().at("cpu").size(), 1u);
  EXPECT_EQ(model.system_series().at("vendor.thing.7").size(), 1u);
  EXPECT_EQ(model.system_series().count("weird.key"), 0u);
}

TEST(RunModel, HistoryBecomesSeriesOverSteps) {
  RunModel model = Build(RunLogBuilder()
                             .History(0, {{"loss", "2.5"}, {"_runtime", "1"}})
                             .History(10, {{"loss", "1.5"}, {"acc", "0.5"}}));
  ASSERT_EQ(model.history_series().size(), 2u);  // _runtime is W&B's own
  EXPECT_DOUBLE_EQ(model.history_series().at("loss").x(1), 10);
  EXPECT_FLOAT_EQ(model.history_series().at("acc").y(0), 0.5f);
}

TEST(RunModel, VersionsTrackNewKeysAndNewData) {
  RunModel model;
  RunLogBuilder builder;
  builder.Stats(kStart, {{"cpu", "1"}})
      .Stats(kStart + 1, {{"cpu", "2"}})
      .Stats(kStart + 2, {{"cpu", "2"}, {"x", "1"}});
  model.Ingest(builder.records()[0]);
  const auto keys = model.keys_version();
  const auto data = model.data_version();
  model.Ingest(builder.records()[1]);
  EXPECT_EQ(model.keys_version(), keys);
  EXPECT_GT(model.data_version(), data);
  model.Ingest(builder.records()[2]);
  EXPECT_GT(model.keys_version(), keys);
}

TEST(RunRuntime, TenthsBeyondTheExitRecordsWholeSeconds) {
  // A 3.7 s run: W&B's exit record keeps whole seconds (3); its last sample is at 3.7 s.
  RunLogBuilder builder;
  builder.Header().Run("r", "n", kStart);
  for (int i = 0; i <= 37; ++i) builder.Stats(kStart + i / 10.0, {{"cpu", "1"}});
  const RunModel short_run = Build(builder.Exit(0, 3.7));
  ASSERT_EQ(short_run.overview().exit_runtime, 3);
  EXPECT_NEAR(*RunRuntime(short_run.overview(), RunState::kFinished, kStart + 100), 3.7, 1e-6);
  // A W&B run whose last sample came well before its end: the exit record's runtime.
  const RunModel long_run = Build(RunLogBuilder().Run("r", "n", kStart).Stats(kStart + 5, {}).Exit(1, 20));
  EXPECT_DOUBLE_EQ(*RunRuntime(long_run.overview(), RunState::kFailed, kStart + 100), 20);
  // Running: the time since the start; crashed: the span of the records; no start: unknown.
  const RunModel open = Build(RunLogBuilder().Run("r", "n", kStart).Stats(kStart + 5, {}));
  EXPECT_DOUBLE_EQ(*RunRuntime(open.overview(), RunState::kRunning, kStart + 8.5), 8.5);
  EXPECT_DOUBLE_EQ(*RunRuntime(open.overview(), RunState::kCrashed, kStart + 100), 5);
  EXPECT_FALSE(RunRuntime(Build(RunLogBuilder().Stats(kStart, {})).overview(), RunState::kCrashed, kStart));
}

TEST(ShortName, CutsLongNamesAtACharacter) {
  EXPECT_EQ(ShortName("resnet"), "resnet");
  const std::string long_name(200 << 10, 'x');
  EXPECT_EQ(ShortName(long_name), std::string(kMaxShownNameBytes, 'x') + "…");
  // "é" is two bytes: a cut between them backs up to before the character.
  EXPECT_EQ(ShortName("ab\xc3\xa9"
                      "cd",
                      3),
            "ab…");
  EXPECT_EQ(ShortName("ab\xc3\xa9"
                      "cd",
                      4),
            "ab\xc3\xa9…");
}

TEST(RunLoader, ReadsAWholeLogAndFollowsItsGrowth) {
  TempDir dir("leet-loader");
  const auto path = dir.path() / "run-a.wandb";
  RunLogBuilder first;
  first.Header().Run("a", "grow", kStart);
  for (int i = 0; i < 100; ++i) first.Stats(kStart + i, {{"cpu", std::to_string(i)}});
  auto writer = runlog::LogWriter::Create(path);
  ASSERT_TRUE(writer.ok());
  for (const auto& record : first.records()) ASSERT_TRUE(writer->Append(record.SerializeAsString()).ok());

  auto loader = RunLoader::Open(path);
  ASSERT_TRUE(loader.ok()) << loader.error();
  RunModel model;
  EXPECT_TRUE((*loader)->Read(model, kPlenty));
  EXPECT_EQ(model.stats_records(), 100u);
  EXPECT_FALSE((*loader)->HasNewData());
  EXPECT_TRUE((*loader)->WriterLockHeld());

  wandb::Record more = RunLogBuilder().Stats(kStart + 100, {{"cpu", "100"}}).records()[0];
  ASSERT_TRUE(writer->Append(more.SerializeAsString()).ok());
  EXPECT_TRUE((*loader)->HasNewData());
  EXPECT_TRUE((*loader)->Read(model, kPlenty));
  EXPECT_EQ(model.stats_records(), 101u);
  EXPECT_FLOAT_EQ(model.system_series().at("cpu").last_y(), 100);
  EXPECT_TRUE((*loader)->Warnings().empty());
  auto other = runlog::LogWriter::Create(dir.path() / "other.wandb");
  ASSERT_TRUE(other.ok());
  writer.value() = std::move(other.value());  // closes the first log
  EXPECT_FALSE((*loader)->WriterLockHeld());
}

TEST(RunLoader, StopsWhenItsBudgetIsSpentAndResumes) {
  TempDir dir("leet-loader");
  const auto path = dir.path() / "run-b.wandb";
  RunLogBuilder builder;
  builder.Header().Run("b", "big", kStart);
  for (int i = 0; i < 20000; ++i) builder.Stats(kStart + i, {{"cpu", "1"}, {"memory_percent", "2"}});
  builder.WriteTo(path);
  auto loader = RunLoader::Open(path);
  ASSERT_TRUE(loader.ok());
  RunModel model;
  EXPECT_FALSE((*loader)->Read(model, std::chrono::nanoseconds(1)));
  EXPECT_GT(model.records(), 0u);
  EXPECT_LT(model.records(), 20002u);
  while (!(*loader)->Read(model, std::chrono::milliseconds(1))) {
  }
  EXPECT_EQ(model.records(), 20002u);
}

TEST(RunLoader, TornTailIsAWarningAndIsReadOnceWhole) {
  TempDir dir("leet-loader");
  const auto path = dir.path() / "run-c.wandb";
  RunLogBuilder builder;
  builder.Header()
      .Run("c", "torn", kStart)
      .Stats(kStart + 1, {{"cpu", "1"}})
      .Stats(kStart + 2, {{"cpu", "2"}});
  builder.WriteTo(path);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::filesystem::resize_file(path, bytes.size() - 5);
  auto loader = RunLoader::Open(path);
  ASSERT_TRUE(loader.ok());
  RunModel model;
  EXPECT_TRUE((*loader)->Read(model, kPlenty));
  EXPECT_EQ(model.stats_records(), 1u);
  ASSERT_EQ((*loader)->Warnings().size(), 1u);
  EXPECT_NE((*loader)->Warnings()[0].find("ends inside a record"), std::string::npos);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  EXPECT_TRUE((*loader)->HasNewData());
  EXPECT_TRUE((*loader)->Read(model, kPlenty));
  EXPECT_EQ(model.stats_records(), 2u);
  EXPECT_TRUE((*loader)->Warnings().empty());
}

TEST(RunLoader, DamageIsSkippedAndReported) {
  TempDir dir("leet-loader");
  const auto path = dir.path() / "run-d.wandb";
  RunLogBuilder builder;
  builder.Header().Run("d", "damaged", kStart);
  for (int i = 0; i < 3000; ++i) builder.Stats(kStart + i, {{"cpu", std::to_string(i % 100)}});
  builder.WriteTo(path);
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(40000);
    file.write("\xff\xff\xff\xff\xff\xff\xff\xff", 8);
  }
  auto loader = RunLoader::Open(path);
  ASSERT_TRUE(loader.ok());
  RunModel model;
  EXPECT_TRUE((*loader)->Read(model, kPlenty));
  EXPECT_GT(model.stats_records(), 2000u);
  EXPECT_LT(model.stats_records(), 3000u);
  ASSERT_FALSE((*loader)->Warnings().empty());
  EXPECT_NE((*loader)->Warnings()[0].find("damaged log"), std::string::npos);
}

TEST(RunLoader, RefusesWhatIsNotARegularFileAndReportsNonLogs) {
  TempDir dir("leet-loader");
  EXPECT_FALSE(RunLoader::Open(dir.path()).ok());
  EXPECT_FALSE(RunLoader::Open(dir.path() / "missing.wandb").ok());
  const auto fifo = dir.path() / "fifo.wandb";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto refused = RunLoader::Open(fifo);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("not a regular file"), std::string::npos);

  const auto text = dir.path() / "text.wandb";
  std::ofstream(text) << "this is not a run log at all, just some text\n";
  auto loader = RunLoader::Open(text);
  ASSERT_TRUE(loader.ok());
  RunModel model;
  // Known at once, before anything is read into a model, and the same after.
  EXPECT_EQ((*loader)->Verdict(model, kStart).state, RunState::kNotARunLog);
  EXPECT_FALSE((*loader)->Read(model, kPlenty));
  EXPECT_FALSE((*loader)->error().empty());
  EXPECT_FALSE((*loader)->HasNewData());
  const auto verdict = (*loader)->Verdict(model, kStart);
  EXPECT_EQ(verdict.state, RunState::kNotARunLog);
  EXPECT_EQ(verdict.reason, (*loader)->error());
}

}  // namespace
}  // namespace runmon::runview
