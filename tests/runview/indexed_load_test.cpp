// Loading runs through their summary index (runview/indexed_load.hpp, detail_reader.hpp): the same run
// as a full read (overview, history, console, every system key's extent and last value), coarse first and
// then refined, full-resolution zoom windows, the index written beside a log that had none and reused,
// every kind of staleness and damage (a damaged entry, a cut index, a grown log, a replaced log, a log cut
// short) detected and repaired, a log written while it is read (runmon's recorder holding its lock), and
// W&B's own records.
#include "runview/indexed_load.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "runlog/index_file.hpp"
#include "runlog/log_format.hpp"
#include "runlog/record_reader.hpp"
#include "runlog/run_recorder.hpp"
#include "runview/detail_reader.hpp"
#include "runview/run_loader.hpp"
#include "support/run_log_builder.hpp"
#include "support/temp_dir.hpp"

namespace runmon::runview {
namespace {

using test::RunLogBuilder;
using test::TempDir;
namespace fs = std::filesystem;
constexpr double kStart = 1'780'000'000;
constexpr int kKeys = 20;

IndexedLoadOptions Indexed() {
  IndexedLoadOptions options;
  options.min_log_bytes = 0;
  return options;
}

IndexedLoadOptions Full() {
  IndexedLoadOptions options;
  options.min_log_bytes = UINT64_MAX;
  return options;
}

std::string Value(int record, int key) {
  // Smooth with spikes, integers and fractions: extremes land anywhere in a segment.
  const double v =
      50 + 40 * std::sin(record * 0.01 * (key + 1)) + ((record * 7919 + key) % 997 == 0 ? 500 : 0);
  return key % 3 == 0 ? std::to_string(static_cast<int>(v)) : fmt::format("{:.3f}", v);
}

std::vector<std::pair<std::string, std::string>> Items(int record) {
  std::vector<std::pair<std::string, std::string>> items;
  for (int key = 0; key < kKeys; ++key)
    items.emplace_back(fmt::format("gpu.{}.metric{}", key % 8, key), Value(record, key));
  if (record % 10 == 0) items.emplace_back("proc.memory.rssMB", "\"not a number\"");  // skipped everywhere
  return items;
}

// A run of `records` seconds: stats every second, history every 50, console output every 100.
RunLogBuilder MakeRun(const std::string& id, int records, int first = 0, bool exit = true) {
  RunLogBuilder builder;
  if (first == 0) builder.Header().Run(id, "indexed " + id, kStart).Environment("train.py");
  for (int i = first; i < first + records; ++i) {
    builder.Stats(kStart + i + 0.25, Items(i));
    if (i % 50 == 0) builder.History(i / 50, {{"loss", fmt::format("{}", 1.0 / (1 + i))}});
    if (i % 100 == 0) builder.Output(kStart + i, i % 200 == 0, fmt::format("step {}\n", i));
  }
  if (exit) builder.Exit(0, first + records);
  return builder;
}

void Append(const RunLogBuilder& builder, runlog::LogWriter& writer) {
  for (const auto& record : builder.records()) ASSERT_TRUE(writer.Append(record.SerializeAsString()).ok());
}

RunModel LoadAll(const fs::path& log, const IndexedLoadOptions& options,
                 std::vector<std::string>* warnings = nullptr, int* reads = nullptr) {
  auto loader = RunLoader::Open(log, options);
  EXPECT_TRUE(loader.ok()) << loader.error();
  RunModel model;
  if (!loader.ok()) return model;
  int count = 1;
  while (!(*loader)->Read(model, std::chrono::milliseconds(50))) ++count;
  if (warnings != nullptr) *warnings = (*loader)->Warnings();
  if (reads != nullptr) *reads = count;
  // The model outlives the loader here: its detail reader keeps its own descriptor.
  return model;
}

void ExpectSameRun(const RunModel& full, const RunModel& indexed) {
  EXPECT_EQ(indexed.overview().id, full.overview().id);
  EXPECT_EQ(indexed.overview().name, full.overview().name);
  EXPECT_EQ(indexed.overview().command, full.overview().command);
  EXPECT_EQ(indexed.overview().exit_code, full.overview().exit_code);
  EXPECT_EQ(indexed.overview().start_time, full.overview().start_time);
  EXPECT_EQ(indexed.overview().last_time, full.overview().last_time);
  EXPECT_EQ(indexed.time_origin(), full.time_origin());
  EXPECT_EQ(indexed.stats_records(), full.stats_records());
  EXPECT_EQ(indexed.console().size(), full.console().size());
  ASSERT_EQ(indexed.history_series().size(), full.history_series().size());
  for (const auto& [key, series] : full.history_series()) {
    const TimeSeries& other = indexed.history_series().at(key);
    ASSERT_EQ(other.size(), series.size()) << key;
    for (size_t i = 0; i < series.size(); ++i) EXPECT_EQ(other.y(i), series.y(i)) << key << " " << i;
  }
  ASSERT_EQ(indexed.system_series().size(), full.system_series().size());
  for (const auto& [key, series] : full.system_series()) {
    const auto found = indexed.system_series().find(key);
    ASSERT_NE(found, indexed.system_series().end()) << key;
    const TimeSeries& other = found->second;
    ASSERT_FALSE(other.empty()) << key;
    const Extent a = series.YExtent();
    const Extent b = other.YExtent();
    EXPECT_EQ(b.min, a.min) << key;  // every spike survives the summaries
    EXPECT_EQ(b.max, a.max) << key;
    EXPECT_EQ(other.last_y(), series.last_y()) << key;
    EXPECT_NEAR(other.first_x(), series.first_x(), 1e-3) << key;
    EXPECT_NEAR(other.last_x(), series.last_x(), 1e-3) << key;
    EXPECT_LE(other.size(), series.size()) << key;
  }
}

TEST(IndexedLoad, BuildsTheIndexAndLoadsTheSameRunAsAFullRead) {
  TempDir dir("indexed-load");
  const fs::path log = dir.path() / "run-a.wandb";
  MakeRun("a", 10000).WriteTo(log);
  ASSERT_FALSE(fs::exists(runlog::IndexPathFor(log)));
  const RunModel full = LoadAll(log, Full());
  EXPECT_EQ(full.detail(), nullptr);
  EXPECT_EQ(full.stats_records(), 10000u);

  std::vector<std::string> warnings;
  const RunModel built = LoadAll(log, Indexed(), &warnings);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  ExpectSameRun(full, built);
  EXPECT_NE(built.detail(), nullptr);
  // Three points a segment at most, not one a sample.
  EXPECT_LT(built.system_series().at("gpu.0.metric0").size(),
            full.system_series().at("gpu.0.metric0").size() / 4);

  // Written beside the log, whole and checked; a second load reads it instead of the log.
  const int log_fd = ::open(log.c_str(), O_RDONLY);
  ASSERT_GE(log_fd, 0);
  const auto checked = runlog::LoadCheckedIndex(runlog::IndexPathFor(log), log_fd, fs::file_size(log));
  ::close(log_fd);
  EXPECT_TRUE(checked.problem.empty()) << checked.problem;
  EXPECT_EQ(checked.index.covered_segments(), fs::file_size(log) / runlog::kSegmentBytes);
  ASSERT_GE(checked.index.levels.size(), 2u);  // more than 16 segments: a pyramid level above them
  EXPECT_FALSE(checked.index.levels[1].empty());

  const auto index_time = fs::last_write_time(runlog::IndexPathFor(log));
  const RunModel reused = LoadAll(log, Indexed(), &warnings);
  EXPECT_TRUE(warnings.empty());
  ExpectSameRun(full, reused);
  EXPECT_EQ(fs::last_write_time(runlog::IndexPathFor(log)), index_time);  // not rewritten
  for (const auto& [key, series] : built.system_series()) {
    const TimeSeries& other = reused.system_series().at(key);
    ASSERT_EQ(other.size(), series.size()) << key;
    for (size_t i = 0; i < series.size(); ++i) ASSERT_EQ(other.y(i), series.y(i)) << key;
  }
}

TEST(IndexedLoad, ShowsTheCoarseLevelFirstThenRefines) {
  TempDir dir("indexed-load");
  const fs::path log = dir.path() / "run-c.wandb";
  MakeRun("c", 10000).WriteTo(log);
  LoadAll(log, Indexed());  // writes the index
  auto loader = RunLoader::Open(log, Indexed());
  ASSERT_TRUE(loader.ok());
  RunModel model;
  EXPECT_FALSE((*loader)->Read(model, std::chrono::seconds(5)));  // the first frame: the pyramid's level
  const size_t coarse = model.system_series().at("gpu.1.metric1").size();
  EXPECT_GT(coarse, 0u);
  EXPECT_GT(model.stats_records(),
            9000u);  // the whole run but its tail, from nodes and the segments after them
  while (!(*loader)->Read(model, std::chrono::seconds(5))) {
  }
  EXPECT_GT(model.system_series().at("gpu.1.metric1").size(), coarse);
  ExpectSameRun(LoadAll(log, Full()), model);
}

TEST(IndexedLoad, ReadsWhileTheIndexIsBuiltWaitForItInsteadOfReturningAtOnce) {
  TempDir dir("indexed-load");
  const fs::path log = dir.path() / "run-w.wandb";
  MakeRun("w", 10000).WriteTo(log);
  // A caller looping on Read with a 50 ms budget: a Read returns when its budget is spent or when it has
  // something new to show (the first frame, a refresh at most every 300 ms, the end), never at once with
  // nothing, which would spin a core the index's workers need.
  const auto started = std::chrono::steady_clock::now();
  int reads = 0;
  const RunModel model = LoadAll(log, Indexed(), nullptr, &reads);
  const double elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(model.stats_records(), 10000u);
  EXPECT_LE(reads, 8 + static_cast<int>(elapsed_ms / 50) + static_cast<int>(elapsed_ms / 300)) << elapsed_ms;
}

TEST(IndexedLoad, ZoomWindowsReadEverySampleBack) {
  TempDir dir("indexed-load");
  const fs::path log = dir.path() / "run-z.wandb";
  MakeRun("z", 10000).WriteTo(log);
  const RunModel full = LoadAll(log, Full());
  const RunModel indexed = LoadAll(log, Indexed());
  ASSERT_NE(indexed.detail(), nullptr);
  const std::vector<std::string> keys = {"gpu.2.metric2", "gpu.3.metric11", "no.such.key"};
  // Windows at the start, in the middle, across segment boundaries and in the tail read in full.
  for (const double x0 : {0.0, 1234.5, 5000.0, 7777.0, 9950.0}) {
    const auto window = indexed.detail()->Window(x0, x0 + 60, keys, indexed);
    if (x0 >= indexed.summary_end_x().value_or(0)) {
      EXPECT_EQ(window, nullptr) << "the tail is in the model already";
      continue;
    }
    ASSERT_NE(window, nullptr) << x0;
    for (const std::string& key : {keys[0], keys[1]}) {
      const TimeSeries& all = full.system_series().at(key);
      const auto [first, last] = all.IndexRange(x0, x0 + 60);
      const TimeSeries& got = window->series.at(key);
      const auto [got_first, got_last] = got.IndexRange(x0, x0 + 60);
      ASSERT_EQ(got_last - got_first, last - first) << key << " at " << x0;
      for (size_t i = 0; i < last - first; ++i) {
        EXPECT_EQ(got.y(got_first + i), all.y(first + i));
        EXPECT_NEAR(got.x(got_first + i), all.x(first + i), 1e-2);
      }
    }
    EXPECT_TRUE(window->series.at("no.such.key").empty());
  }
  // A second look at a window comes from the cache; a window wider than the limit gets none.
  const auto again = indexed.detail()->Window(1234.5, 1294.5, keys, indexed);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->segments_read, 0u);
  EXPECT_EQ(indexed.detail()->Window(0, 1e9, keys, indexed, 2), nullptr);
}

TEST(IndexedLoad, AGrowingLogIsIndexedFurtherAndItsTailFollowed) {
  TempDir dir("indexed-load");
  const fs::path log = dir.path() / "run-g.wandb";
  auto writer = runlog::LogWriter::Create(log);
  ASSERT_TRUE(writer.ok());
  Append(MakeRun("g", 6000, 0, false), *writer);
  const RunModel first = LoadAll(log, Indexed());
  EXPECT_FALSE(fs::exists(runlog::IndexPathFor(log)))
      << "a runmon writer holds the log: its recorder indexes it";
  ExpectSameRun(LoadAll(log, Full()), first);

  // The writer is gone (W&B's take no lock): the index is written, then the log grows past it.
  { runlog::LogWriter closing = std::move(writer.value()); }
  LoadAll(log, Indexed());
  ASSERT_TRUE(fs::exists(runlog::IndexPathFor(log)));
  const uint64_t indexed_size = fs::file_size(runlog::IndexPathFor(log));
  {
    // Reopened for appending as W&B's writer would (no lock), with more records.
    std::ofstream out(log, std::ios::binary | std::ios::app);
    std::string framed;
    uint64_t offset = fs::file_size(log);
    const RunLogBuilder more = MakeRun("g", 6000, 6000);
    for (const auto& record : more.records()) {
      offset = runlog::AppendFramedRecord(offset, record.SerializeAsString(), framed);
    }
    out << framed;
  }
  std::vector<std::string> warnings;
  const RunModel grown = LoadAll(log, Indexed(), &warnings);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  ExpectSameRun(LoadAll(log, Full()), grown);
  EXPECT_EQ(grown.stats_records(), 12000u);
  EXPECT_GT(fs::file_size(runlog::IndexPathFor(log)), indexed_size);

  // Following: a loaded run reads what is appended at full resolution.
  auto loader = RunLoader::Open(log, Indexed());
  ASSERT_TRUE(loader.ok());
  RunModel model;
  while (!(*loader)->Read(model, std::chrono::seconds(1))) {
  }
  {
    std::ofstream out(log, std::ios::binary | std::ios::app);
    std::string framed;
    RunLogBuilder one;
    one.Stats(kStart + 20000, {{"gpu.0.metric0", "-7"}});
    runlog::AppendFramedRecord(fs::file_size(log), one.records()[0].SerializeAsString(), framed);
    out << framed;
  }
  EXPECT_TRUE((*loader)->HasNewData());
  EXPECT_TRUE((*loader)->Read(model, std::chrono::seconds(1)));
  EXPECT_EQ(model.system_series().at("gpu.0.metric0").last_y(), -7);
  EXPECT_EQ(model.stats_records(), 12001u);
}

// Damages the index file in place by `edit`, then checks the load repairs it.
template <typename Edit>
void ExpectRepaired(const std::string& what, Edit edit, bool warns = true) {
  SCOPED_TRACE(what);
  TempDir dir("indexed-load");
  const fs::path log = dir.path() / "run-d.wandb";
  MakeRun("d", 10000).WriteTo(log);
  const RunModel full = LoadAll(log, Full());
  LoadAll(log, Indexed());
  const fs::path index = runlog::IndexPathFor(log);
  ASSERT_TRUE(fs::exists(index));
  edit(log, index);
  std::vector<std::string> warnings;
  const RunModel repaired = LoadAll(log, Indexed(), &warnings);
  ExpectSameRun(full, repaired);
  if (warns) {
    ASSERT_FALSE(warnings.empty());
    EXPECT_NE(warnings.front().find("summary index"), std::string::npos) << warnings.front();
  } else {
    EXPECT_TRUE(warnings.empty()) << warnings.front();  // an index that covers nothing yet is only stale
  }
  // Rewritten whole: the next load finds nothing wrong.
  const RunModel again = LoadAll(log, Indexed(), &warnings);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  ExpectSameRun(full, again);
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteFile(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

TEST(IndexedLoad, EveryKindOfDamagedIndexIsDetectedAndRebuilt) {
  ExpectRepaired("a flipped byte", [](const fs::path&, const fs::path& index) {
    std::string bytes = ReadFile(index);
    bytes[bytes.size() / 2] ^= 0x40;
    WriteFile(index, bytes);
  });
  ExpectRepaired("cut mid-entry (a crash while appending)", [](const fs::path&, const fs::path& index) {
    fs::resize_file(index, fs::file_size(index) - 5);
  });
  ExpectRepaired(
      "cut to its header", [](const fs::path&, const fs::path& index) { fs::resize_file(index, 8); }, false);
  ExpectRepaired("not an index at all",
                 [](const fs::path&, const fs::path& index) { WriteFile(index, std::string(4096, 'x')); });
  ExpectRepaired("another version", [](const fs::path&, const fs::path& index) {
    std::string bytes = ReadFile(index);
    bytes[4] = 9;
    WriteFile(index, bytes);
  });
  ExpectRepaired("garbage appended", [](const fs::path&, const fs::path& index) {
    std::ofstream(index, std::ios::binary | std::ios::app)
        << std::string("\x05\x00\x00\x00zzzzz", 9) << "junk";
  });
}

TEST(IndexedLoad, AnIndexOfAnotherLogIsNotUsed) {
  TempDir dir("indexed-load");
  const fs::path log = dir.path() / "run-r.wandb";
  MakeRun("r", 10000).WriteTo(log);
  LoadAll(log, Indexed());
  const std::string index = ReadFile(runlog::IndexPathFor(log));
  // The log is replaced by another run of the same length (other values), the old index left beside it.
  fs::remove(log);
  RunLogBuilder other = MakeRun("s", 10000);
  other.Stats(kStart + 1e6, {{"gpu.0.metric0", "123456"}});
  other.WriteTo(log);
  WriteFile(runlog::IndexPathFor(log), index);
  std::vector<std::string> warnings;
  const RunModel model = LoadAll(log, Indexed(), &warnings);
  ExpectSameRun(LoadAll(log, Full()), model);
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings.front().find("differ"), std::string::npos) << warnings.front();
  EXPECT_EQ(model.system_series().at("gpu.0.metric0").YExtent().max, 123456);
}

TEST(IndexedLoad, ALogCutShorterThanItsIndexIsReadAgain) {
  TempDir dir("indexed-load");
  const fs::path log = dir.path() / "run-t.wandb";
  MakeRun("t", 10000).WriteTo(log);
  LoadAll(log, Indexed());
  fs::resize_file(log, fs::file_size(log) / 2 + 1234);  // a torn record at the end too
  std::vector<std::string> warnings;
  const RunModel model = LoadAll(log, Indexed(), &warnings);
  const RunModel full = LoadAll(log, Full());
  ExpectSameRun(full, model);
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings.front().find("shorter"), std::string::npos) << warnings.front();
}

TEST(IndexedLoad, DamageInTheLogIsSkippedAndCounted) {
  TempDir dir("indexed-load");
  const fs::path log = dir.path() / "run-x.wandb";
  MakeRun("x", 10000).WriteTo(log);
  {
    std::fstream file(log, std::ios::binary | std::ios::in | std::ios::out);
    file.seekp(static_cast<std::streamoff>(5 * runlog::kSegmentBytes + 3 * runlog::kBlockSize + 100));
    file << std::string(64, '\0');
  }
  std::vector<std::string> full_warnings;
  const RunModel full = LoadAll(log, Full(), &full_warnings);
  std::vector<std::string> warnings;
  const RunModel indexed = LoadAll(log, Indexed(), &warnings);
  ExpectSameRun(full, indexed);
  ASSERT_FALSE(full_warnings.empty());
  bool said = false;
  for (const auto& warning : warnings) said = said || warning.find("damaged log") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(IndexedLoad, ALogTheRecorderIsWritingUsesItsIndexAsFarAsItGoes) {
  TempDir dir("indexed-load");
  const fs::path log = dir.path() / "run-w.wandb";
  auto writer = runlog::LogWriter::Create(log);
  ASSERT_TRUE(writer.ok());
  runlog::RunRecorder recorder(std::move(*writer), "w", {}, [](const std::string&) {});
  RunLogBuilder run = MakeRun("w", 8000, 0, false);
  for (auto record : run.records()) recorder.Add(record);
  // Wait until the writer thread has written everything.
  for (int i = 0; i < 500 && recorder.counts().records_written < run.records().size(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(recorder.counts().records_written, run.records().size());
  const uint64_t index_bytes = fs::file_size(runlog::IndexPathFor(log));
  EXPECT_GT(index_bytes, runlog::kIndexHeaderSize);
  const RunModel live = LoadAll(log, Indexed());
  ExpectSameRun(LoadAll(log, Full()), live);
  EXPECT_EQ(fs::file_size(runlog::IndexPathFor(log)), index_bytes) << "the recorder's index is left to it";
  ASSERT_TRUE(recorder.Close().ok());
}

TEST(IndexedLoad, WandbsOwnRecordsLoadTheSame) {
  // W&B's reference logs (written by its own writers), as they are and repeated into a multi-segment log
  // with their times moved on, as a long W&B run would be: no index, no lock.
  TempDir dir("indexed-load");
  for (const std::string name : {"sample-stats.wandb", "sample-multiblock.wandb"}) {
    const fs::path fixture = fs::path(RUNMON_FIXTURES_DIR) / "runlog" / name;
    ExpectSameRun(LoadAll(fixture, Full()), LoadAll(fixture, [] {
                    IndexedLoadOptions options = Indexed();
                    options.write_index = false;  // the fixture directory stays as it is
                    return options;
                  }()));
  }
  const fs::path fixture = fs::path(RUNMON_FIXTURES_DIR) / "runlog" / "sample-multiblock.wandb";
  auto fd = runlog::OpenLogForReading(fixture);
  ASSERT_TRUE(fd.ok());
  runlog::RecordReader reader(runlog::FileSource(*fd));
  std::vector<wandb::Record> records;
  while (reader.Next() == runlog::ReadOutcome::kRecord) records.push_back(reader.record());
  ::close(*fd);
  ASSERT_GT(records.size(), 5u);
  const fs::path log = dir.path() / "run-wandb.wandb";
  auto writer = runlog::LogWriter::Create(log);
  ASSERT_TRUE(writer.ok());
  for (int copy = 0; copy < 60; ++copy) {
    for (wandb::Record record : records) {
      if (copy > 0 && !record.has_stats() && !record.has_history() && !record.has_output_raw()) continue;
      if (record.has_stats()) {
        auto* timestamp = record.mutable_stats()->mutable_timestamp();
        timestamp->set_seconds(timestamp->seconds() + copy * 3600);
      }
      ASSERT_TRUE(writer->Append(record.SerializeAsString()).ok());
    }
  }
  { runlog::LogWriter closing = std::move(writer.value()); }  // W&B's writers take no lock
  ASSERT_GT(fs::file_size(log), 4 * runlog::kSegmentBytes);
  ExpectSameRun(LoadAll(log, Full()), LoadAll(log, Indexed()));
  EXPECT_TRUE(fs::exists(runlog::IndexPathFor(log)));
}

}  // namespace
}  // namespace runmon::runview
