// RunRecorder: records are numbered and stamped in the order they are added and reach the file without
// waiting for Close; a write that fails (a file size limit stands in for a full disk) harms nothing
// already written, keeps the records queued and retries them once writing works again, in order; a queue
// that outgrows its bound drops the oldest samples but never the run or exit records; Close reports what
// could not be written.
#include "runlog/run_recorder.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

#include "runlog/record_reader.hpp"
#include "runlog/records.hpp"

namespace runmon::runlog {
namespace {

namespace fs = std::filesystem;

using test::TempDir;

struct Messages {
  std::mutex mutex;
  std::vector<std::string> lines;
  RunRecorder::Logger Logger() {
    return [this](const std::string& line) {
      std::lock_guard lock(mutex);
      lines.push_back(line);
    };
  }
  size_t Count(std::string_view part) {
    std::lock_guard lock(mutex);
    size_t n = 0;
    for (const auto& line : lines) n += line.find(part) != std::string::npos;
    return n;
  }
};

// The records in a log file, decoded.
std::vector<wandb::Record> ReadAll(const fs::path& path, bool* clean = nullptr) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  RecordReader reader(MemorySource(bytes));
  std::vector<wandb::Record> records;
  ReadOutcome outcome;
  while ((outcome = reader.Next()) == ReadOutcome::kRecord) records.push_back(reader.record());
  if (clean != nullptr) *clean = outcome == ReadOutcome::kEnd && reader.damage().empty();
  return records;
}

wandb::Record Stats(double value) {
  Sample sample;
  sample.timestamp = 1735689600 + value;
  sample.metrics.Add("cpu", value);
  sample.metrics.Add("x_padding", 1e300);
  wandb::Record record;
  EXPECT_TRUE(FillStatsRecord(sample, record));
  return record;
}

template <typename Predicate>
bool Eventually(Predicate predicate) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (predicate()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return predicate();
}

// Lowers RLIMIT_FSIZE for the test's duration; SIGXFSZ is ignored so writes fail with EFBIG instead.
class FileSizeLimit {
 public:
  FileSizeLimit() {
    ::getrlimit(RLIMIT_FSIZE, &original_);
    previous_handler_ = ::signal(SIGXFSZ, SIG_IGN);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &original_);
    ::signal(SIGXFSZ, previous_handler_);
  }
  void Set(rlim_t bytes) {
    rlimit limit = original_;
    limit.rlim_cur = bytes;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  }
  void Lift() { ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &original_), 0); }

 private:
  rlimit original_{};
  sighandler_t previous_handler_ = SIG_DFL;
};

// EncodeHistoryRecord's bytes, with the num and _info the recorder appends, are the record MakeHistoryRecord
// makes: the same fields, whatever their order on the wire.
TEST(RunRecorder, EncodedHistoryRecordsAreNumberedStampedAndReadAsMadeOnes) {
  TempDir tmp;
  const fs::path path = tmp.path() / "run-abc.wandb";
  auto writer = LogWriter::Create(path);
  ASSERT_TRUE(writer.ok());
  Messages messages;
  RunRecorder recorder(std::move(*writer), "abc", {}, messages.Logger());
  auto stats = Stats(1);
  recorder.Add(stats);
  const std::vector<JsonItemView> items = {{"loss", "0.31"}, {"train.acc", "[1,2]"}, {"name", "\"é\""}};
  const std::string long_key(300, 'k');  // lengths past one varint byte
  const std::string long_value(200, '1');
  const std::vector<JsonItemView> wide = {{long_key, long_value}};
  std::vector<std::string> payloads = {EncodeHistoryRecord(0, 0.5, 1735689600.25, items),
                                       EncodeHistoryRecord(300, 1e6, 1735689600, wide),
                                       EncodeHistoryRecord(7, std::nan(""), 1735689607, {})};
  EXPECT_EQ(recorder.AddEncodedUnlessBehind(payloads, 1u << 20), 3u);
  ASSERT_TRUE(recorder.Close().ok());
  std::vector<std::string> closed = {EncodeHistoryRecord(9, 1, 2, items)};
  EXPECT_EQ(recorder.AddEncodedUnlessBehind(closed, 1u << 20), 0u);

  const auto records = ReadAll(path);
  ASSERT_EQ(records.size(), 4u);
  const auto expect = [&](const wandb::Record& read, int64_t num, int64_t step, double runtime,
                          double timestamp, const std::vector<JsonItemView>& made_items) {
    JsonItems pairs;
    for (const auto& item : made_items) pairs.emplace_back(item.key, item.value_json);
    wandb::Record made = MakeHistoryRecord(step, runtime, timestamp, pairs);
    made.set_num(num);
    made.mutable__info()->set_stream_id("abc");
    EXPECT_EQ(read.SerializeAsString(), made.SerializeAsString()) << read.DebugString();
  };
  expect(records[1], 2, 0, 0.5, 1735689600.25, items);
  expect(records[2], 3, 300, 1e6, 1735689600, wide);
  expect(records[3], 4, 7, std::nan(""), 1735689607, {});  // a runtime that is not finite is left out
  EXPECT_EQ(records[3].history().item_size(), 2);
}

// EncodeStatsRecord's bytes, with the num and _info the recorder appends, read back as the record Add
// writes for the same sample; encoded stats go first when the queue is full, as added ones do.
TEST(RunRecorder, EncodedStatsRecordsAreNumberedStampedAndReadAsAddedOnes) {
  TempDir tmp;
  const fs::path path = tmp.path() / "run-enc.wandb";
  auto writer = LogWriter::Create(path);
  ASSERT_TRUE(writer.ok());
  Messages messages;
  RunRecorder recorder(std::move(*writer), "enc", {}, messages.Logger());
  Sample sample;
  sample.timestamp = 1735689600.25;
  sample.metrics.Add("cpu", 12.5);
  sample.metrics.Add("gpu.0.powerWatts", 301.25);
  wandb::Record added;
  ASSERT_TRUE(FillStatsRecord(sample, added, "node1"));
  recorder.Add(added);
  recorder.AddEncodedStats(EncodeStatsRecord(sample, "node1"));
  ASSERT_TRUE(recorder.Close().ok());
  recorder.AddEncodedStats(EncodeStatsRecord(sample));  // after Close: not written
  const auto records = ReadAll(path);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].num(), 1);
  EXPECT_EQ(records[1].num(), 2);
  wandb::Record expected = records[0];
  expected.set_num(2);
  EXPECT_EQ(records[1].SerializeAsString(), expected.SerializeAsString()) << records[1].DebugString();
  EXPECT_EQ(records[1]._info().stream_id(), "enc");
  EXPECT_EQ(records[1].stats().item(1).key(), "gpu.0.powerWatts/l:node1");
}

TEST(RunRecorder, AnOverfullQueueDropsTheOldestEncodedSamplesToo) {
  TempDir tmp;
  const fs::path path = tmp.path() / "run-drop2.wandb";
  auto writer = LogWriter::Create(path);
  ASSERT_TRUE(writer.ok());
  FileSizeLimit limit;
  limit.Set(fs::file_size(path));  // nothing more fits
  Messages messages;
  RunRecorder recorder(std::move(*writer), "", {.retry_interval_seconds = 0.02, .max_queued_bytes = 2000},
                       messages.Logger());
  RunInfo info;
  info.run_id = "drop2";
  info.start_time = 1735689600;
  auto run = MakeRunRecord(info);
  recorder.Add(run);
  for (int i = 1; i <= 100; ++i) {
    Sample sample;
    sample.timestamp = 1735689600 + i;
    sample.metrics.Add("cpu", i);
    sample.metrics.Add("memory_percent", 40.5);
    recorder.AddEncodedStats(EncodeStatsRecord(sample));
  }
  auto exit = MakeExitRecord(0, 100);
  recorder.Add(exit);
  ASSERT_TRUE(Eventually([&] { return recorder.counts().records_dropped > 0; }));
  limit.Lift();
  ASSERT_TRUE(recorder.Close().ok());
  const auto records = ReadAll(path);
  ASSERT_GE(records.size(), 3u);
  EXPECT_TRUE(records.front().has_run());
  EXPECT_TRUE(records.back().has_exit());
  const auto counts = recorder.counts();
  EXPECT_EQ(counts.records_written + counts.records_dropped, 102u);
  EXPECT_EQ(records[records.size() - 2].stats().item(0).value_json(), "100");  // the newest survive
  EXPECT_FALSE(records[1].has__info());                                        // no stream id: no _info
}

TEST(RunRecorder, NumbersStampsAndWritesEachRecordWithoutWaitingForClose) {
  TempDir tmp;
  const fs::path path = tmp.path() / "run-abc.wandb";
  auto writer = LogWriter::Create(path);
  ASSERT_TRUE(writer.ok());
  Messages messages;
  RunRecorder recorder(std::move(*writer), "abc", {}, messages.Logger());
  RunInfo info;
  info.run_id = "abc";
  info.start_time = 1735689600;
  auto run = MakeRunRecord(info);
  recorder.Add(run);
  for (int i = 0; i < 3; ++i) {
    auto stats = Stats(i);
    recorder.Add(stats);
  }
  ASSERT_TRUE(Eventually([&] { return ReadAll(path).size() == 4; }));  // before Close
  auto exit = MakeExitRecord(0, 3);
  recorder.Add(exit);
  ASSERT_TRUE(recorder.Close().ok());
  EXPECT_TRUE(recorder.Close().ok());  // idempotent

  bool clean = false;
  const auto records = ReadAll(path, &clean);
  EXPECT_TRUE(clean);
  ASSERT_EQ(records.size(), 5u);
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i].num(), static_cast<int64_t>(i + 1));
    EXPECT_EQ(records[i]._info().stream_id(), "abc");
  }
  EXPECT_TRUE(records[0].has_run());
  EXPECT_EQ(records[2].stats().item(0).value_json(), "1");
  EXPECT_EQ(records[1].stats().item_size(), 2);
  EXPECT_TRUE(records[4].has_exit());
  const auto counts = recorder.counts();
  EXPECT_EQ(counts.records_written, 5u);
  EXPECT_EQ(counts.bytes, fs::file_size(path));
  EXPECT_EQ(counts.records_dropped, 0u);
  EXPECT_EQ(messages.Count(""), 0u);
}

TEST(RunRecorder, AFullDiskKeepsRecordsQueuedAndRetriesThemInOrder) {
  TempDir tmp;
  const fs::path path = tmp.path() / "run-full.wandb";
  auto writer = LogWriter::Create(path);
  ASSERT_TRUE(writer.ok());
  FileSizeLimit limit;
  Messages messages;
  RunRecorder recorder(std::move(*writer), "full",
                       {.sync_interval_seconds = 0.05, .retry_interval_seconds = 0.02}, messages.Logger());
  auto first = Stats(1);
  recorder.Add(first);
  ASSERT_TRUE(Eventually([&] { return recorder.counts().records_written == 1; }));
  const auto size_before = fs::file_size(path);
  limit.Set(size_before + 10);  // the next record does not fit
  for (int i = 2; i <= 6; ++i) {
    auto stats = Stats(i);
    recorder.Add(stats);
  }
  ASSERT_TRUE(Eventually([&] { return recorder.counts().write_failures >= 2; }));
  EXPECT_EQ(messages.Count("the run continues"), 1u);  // logged once, not at every retry
  EXPECT_EQ(fs::file_size(path), size_before);         // the partial write was cut off
  bool clean = false;
  EXPECT_EQ(ReadAll(path, &clean).size(), 1u);
  EXPECT_TRUE(clean);

  limit.Lift();
  ASSERT_TRUE(Eventually([&] { return recorder.counts().records_written == 6; }));
  EXPECT_EQ(messages.Count("works again"), 1u);
  ASSERT_TRUE(recorder.Close().ok());
  const auto records = ReadAll(path, &clean);
  EXPECT_TRUE(clean);
  ASSERT_EQ(records.size(), 6u);
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i].num(), static_cast<int64_t>(i + 1));
    EXPECT_EQ(records[i].stats().item(0).value_json(), std::to_string(i + 1));
  }
}

TEST(RunRecorder, AnOverfullQueueDropsTheOldestSamplesButNeverRunOrExit) {
  TempDir tmp;
  const fs::path path = tmp.path() / "run-drop.wandb";
  auto writer = LogWriter::Create(path);
  ASSERT_TRUE(writer.ok());
  FileSizeLimit limit;
  limit.Set(fs::file_size(path));  // nothing more fits
  Messages messages;
  RunRecorder recorder(std::move(*writer), "drop", {.retry_interval_seconds = 0.02, .max_queued_bytes = 2000},
                       messages.Logger());
  RunInfo info;
  info.run_id = "drop";
  info.start_time = 1735689600;
  auto run = MakeRunRecord(info);
  recorder.Add(run);
  for (int i = 1; i <= 100; ++i) {
    auto stats = Stats(i);
    recorder.Add(stats);
  }
  auto exit = MakeExitRecord(0, 100);
  recorder.Add(exit);
  ASSERT_TRUE(Eventually([&] { return recorder.counts().records_dropped > 0; }));
  EXPECT_EQ(messages.Count("dropping the oldest samples"), 1u);
  limit.Lift();
  ASSERT_TRUE(recorder.Close().ok());

  bool clean = false;
  const auto records = ReadAll(path, &clean);
  EXPECT_TRUE(clean);
  ASSERT_GE(records.size(), 3u);
  EXPECT_TRUE(records.front().has_run());
  EXPECT_TRUE(records.back().has_exit());
  const auto counts = recorder.counts();
  EXPECT_EQ(counts.records_written + counts.records_dropped, 102u);
  // The newest samples survive, in order.
  EXPECT_EQ(records[records.size() - 2].stats().item(0).value_json(), "100");
  for (size_t i = 2; i + 1 < records.size(); ++i) EXPECT_GT(records[i].num(), records[i - 1].num());
}

TEST(RunRecorder, ConsoleOutputIsRefusedWhileTheWriterIsBehindAndNeverPushesSamplesOut) {
  TempDir tmp;
  const fs::path path = tmp.path() / "run-behind.wandb";
  auto writer = LogWriter::Create(path);
  ASSERT_TRUE(writer.ok());
  FileSizeLimit limit;
  limit.Set(fs::file_size(path));  // nothing more fits: the queue only grows
  Messages messages;
  RunRecorder recorder(std::move(*writer), "behind", {.retry_interval_seconds = 0.02}, messages.Logger());
  auto output = MakeOutputRawRecord(false, std::string(600, 'x') + "\n", 1735689600);
  EXPECT_TRUE(recorder.AddUnlessBehind(output, 1000));
  auto more = MakeOutputRawRecord(true, "late\n", 1735689601);
  EXPECT_TRUE(recorder.AddUnlessBehind(more, 1000));  // 600 bytes wait: still room
  auto refused = MakeOutputRawRecord(true, std::string(600, 'y'), 1735689602);
  EXPECT_FALSE(recorder.AddUnlessBehind(refused, 600));
  auto stats = Stats(1);
  recorder.Add(stats);  // samples are always taken
  limit.Lift();
  ASSERT_TRUE(recorder.Close().ok());
  const auto records = ReadAll(path);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].output_raw().output_type(), wandb::OutputRawRecord::STDOUT);
  EXPECT_EQ(records[1].output_raw().line(), "late\n");
  EXPECT_EQ(records[1].output_raw().output_type(), wandb::OutputRawRecord::STDERR);
  EXPECT_EQ(records[1].output_raw().timestamp().seconds(), 1735689601);
  EXPECT_TRUE(records[2].has_stats());
  EXPECT_EQ(records[2].num(), 3);  // a refused record takes no number
}

TEST(RunRecorder, CloseReportsRecordsThatCouldNotBeWritten) {
  TempDir tmp;
  const fs::path path = tmp.path() / "run-never.wandb";
  auto writer = LogWriter::Create(path);
  ASSERT_TRUE(writer.ok());
  FileSizeLimit limit;
  limit.Set(fs::file_size(path));
  Messages messages;
  RunRecorder recorder(std::move(*writer), "never", {.retry_interval_seconds = 0.02}, messages.Logger());
  auto stats = Stats(1);
  recorder.Add(stats);
  auto exit = MakeExitRecord(0, 1);
  recorder.Add(exit);
  const Status closed = recorder.Close();
  ASSERT_FALSE(closed.ok());
  EXPECT_NE(closed.error().find("2 records could not be written"), std::string::npos) << closed.error();
  EXPECT_EQ(fs::file_size(path), 7u);  // still a valid, empty log
}

TEST(RunRecorder, ClosingPassesOverARecordThatDoesNotFitToWriteTheExitRecord) {
  TempDir tmp;
  const fs::path path = tmp.path() / "run-exit.wandb";
  auto writer = LogWriter::Create(path);
  ASSERT_TRUE(writer.ok());
  FileSizeLimit limit;
  limit.Set(fs::file_size(path) + 100);  // room for the exit record, not for a big sample
  Messages messages;
  RunRecorder recorder(std::move(*writer), "exit", {.retry_interval_seconds = 0.02}, messages.Logger());
  Sample big;
  big.timestamp = 1735689600;
  for (int i = 0; i < 50; ++i) big.metrics.Add("gpu." + std::to_string(i) + ".powerWatts", 123.456 + i);
  wandb::Record stats;
  ASSERT_TRUE(FillStatsRecord(big, stats));
  recorder.Add(stats);
  auto exit = MakeExitRecord(3, 9);
  recorder.Add(exit);
  const Status closed = recorder.Close();
  ASSERT_FALSE(closed.ok());
  EXPECT_NE(closed.error().find("1 records could not be written"), std::string::npos) << closed.error();
  EXPECT_NE(closed.error().find("(1 samples)"), std::string::npos) << closed.error();
  bool clean = false;
  const auto records = ReadAll(path, &clean);
  EXPECT_TRUE(clean);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].exit().exit_code(), 3);
  EXPECT_LE(fs::file_size(path), 107u);
}

TEST(RunRecorder, RetriesAfterAFailureWriteWhatFitsOneRecordAtATime) {
  TempDir tmp;
  const fs::path path = tmp.path() / "run-fits.wandb";
  auto writer = LogWriter::Create(path);
  ASSERT_TRUE(writer.ok());
  FileSizeLimit limit;
  Messages messages;
  RunRecorder recorder(std::move(*writer), "fits", {.retry_interval_seconds = 0.02}, messages.Logger());
  // Each record is about 50 bytes framed: the first batch of 10 fails as a whole, the retries then write
  // records one by one until the limit.
  limit.Set(fs::file_size(path) + 260);
  for (int i = 1; i <= 10; ++i) {
    auto stats = Stats(i);
    recorder.Add(stats);
  }
  ASSERT_TRUE(Eventually([&] { return recorder.counts().records_written >= 4; }));
  const auto counts = recorder.counts();
  EXPECT_LT(counts.records_written, 10u);
  EXPECT_EQ(counts.records_written + counts.records_queued, 10u);
  bool clean = false;
  const auto records = ReadAll(path, &clean);
  EXPECT_TRUE(clean);
  EXPECT_EQ(records.size(), counts.records_written);
  for (size_t i = 0; i < records.size(); ++i) EXPECT_EQ(records[i].num(), static_cast<int64_t>(i + 1));
  limit.Lift();
  ASSERT_TRUE(recorder.Close().ok());
  EXPECT_EQ(ReadAll(path).size(), 10u);
}

// Rows are dropped, not queued, while what waits is past the bound (a disk that does not take them).
TEST(RunRecorder, EncodedRecordsPastTheBoundAreNotQueued) {
  TempDir tmp;
  const fs::path path = tmp.path() / "run-bound.wandb";
  auto writer = LogWriter::Create(path);
  ASSERT_TRUE(writer.ok());
  FileSizeLimit limit;
  Messages messages;
  RunRecorder recorder(std::move(*writer), "bound", {.retry_interval_seconds = 0.02}, messages.Logger());
  limit.Set(fs::file_size(path));  // nothing more fits
  const std::vector<JsonItemView> items = {{"loss", "0.5"}};
  std::vector<std::string> first = {EncodeHistoryRecord(0, 1, 2, items), EncodeHistoryRecord(1, 1, 2, items)};
  EXPECT_EQ(recorder.AddEncodedUnlessBehind(first, 1u << 20), 2u);
  ASSERT_TRUE(Eventually([&] { return recorder.counts().write_failures > 0; }));
  // Both wait (queued, or taken for the next try): a bound of 10 bytes is passed.
  std::vector<std::string> more = {EncodeHistoryRecord(2, 1, 2, items)};
  EXPECT_EQ(recorder.AddEncodedUnlessBehind(more, 10), 0u);
  EXPECT_EQ(recorder.AddEncodedUnlessBehind(more, 1u << 20), 1u);
  limit.Lift();
  ASSERT_TRUE(recorder.Close().ok());
  const auto records = ReadAll(path);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[2].history().step().num(), 2);
}

}  // namespace
}  // namespace runmon::runlog
