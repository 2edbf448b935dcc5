// The remote writer end to end over a real disk queue, with a fake transport: samples arrive in order and
// all of them; batches by size and by age; a 500 then a 200 resend the same bytes and log the outage and
// its end; a 429's Retry-After is waited; a 400 on a first send drops the batch with one message per
// status; "out of order" after an unknown outcome counts as delivered; "out of bounds" drops as too old
// with the receiver's setting named; the age cap drops unsent; values that cannot be sent are counted; a
// late lane's value is sent at its own tick; the destructor returns at once from a hung transport and from
// a backoff; a restart resends the batch in flight byte for byte and keeps the stored labels; Drain's
// deadline says how much is left.
#include "remote_write/remote_writer.hpp"

#include <snappy.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "remote_write/remote_write.pb.h"
#include "support/temp_dir.hpp"
#include "support/wait_until.hpp"

namespace runmon::remote_write {
namespace {

using Clock = std::chrono::steady_clock;
using runmon::testing::WaitUntil;
using namespace std::chrono_literals;

double Now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

PostResult Answer(long status, std::string body = "", std::optional<double> retry_after = std::nullopt) {
  PostResult result;
  result.status = status;
  result.body = std::move(body);
  result.retry_after_seconds = retry_after;
  result.request_sent = true;
  return result;
}

PostResult TimedOut() {
  PostResult result;
  result.request_sent = true;
  result.error = "POST http://127.0.0.1:9/api/v1/write: timed out after the request was sent";
  return result;
}

// Answers from a script, then 200s; keeps every body. With `hang`, waits for its deadline or Release().
class FakeReceiver {
 public:
  void Script(std::vector<PostResult> answers) {
    std::lock_guard lock(mutex_);
    for (PostResult& answer : answers) answers_.push_back(std::move(answer));
  }
  void Hang() {
    std::lock_guard lock(mutex_);
    hang_ = true;
  }
  void Release() {
    std::lock_guard lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }

  PostResult Post(const std::string& body, Clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    bodies_.push_back(body);
    times_.push_back(Clock::now());
    if (hang_) {
      changed_.wait_until(lock, deadline, [&] { return released_; });
      return TimedOut();
    }
    if (answers_.empty()) return Answer(200);
    PostResult answer = answers_.front();
    answers_.pop_front();
    return answer;
  }

  std::vector<std::string> bodies() const {
    std::lock_guard lock(mutex_);
    return bodies_;
  }
  std::vector<Clock::time_point> times() const {
    std::lock_guard lock(mutex_);
    return times_;
  }
  size_t requests() const {
    std::lock_guard lock(mutex_);
    return bodies_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<PostResult> answers_;
  std::vector<std::string> bodies_;
  std::vector<Clock::time_point> times_;
  bool hang_ = false;
  bool released_ = false;
};

class LogLines {
 public:
  void Add(const std::string& line) {
    std::lock_guard lock(mutex_);
    lines_.push_back(line);
  }
  std::vector<std::string> lines() const {
    std::lock_guard lock(mutex_);
    return lines_;
  }
  size_t Count(const std::string& words) const {
    size_t count = 0;
    for (const std::string& line : lines()) count += line.find(words) != std::string::npos;
    return count;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

// "name{label=value,...}" -> (timestamp ms, value) of every request in order.
using SeriesPoints = std::map<std::string, std::vector<std::pair<int64_t, double>>>;

SeriesPoints DecodeBody(const std::string& body, uint64_t* samples = nullptr) {
  std::string serialized;
  EXPECT_TRUE(snappy::Uncompress(body.data(), body.size(), &serialized));
  prometheus::WriteRequest request;
  EXPECT_TRUE(request.ParseFromString(serialized));
  SeriesPoints out;
  for (const prometheus::TimeSeries& series : request.timeseries()) {
    std::string id;
    for (const prometheus::Label& label : series.labels()) id += label.name() + "=" + label.value() + ",";
    for (const prometheus::Sample& sample : series.samples()) {
      out[id].emplace_back(sample.timestamp(), sample.value());
      if (samples != nullptr) ++*samples;
    }
  }
  return out;
}

SeriesPoints DecodeAll(const std::vector<std::string>& bodies) {
  SeriesPoints all;
  for (const std::string& body : bodies) {
    for (auto& [id, points] : DecodeBody(body)) all[id].insert(all[id].end(), points.begin(), points.end());
  }
  return all;
}

uint64_t SamplesIn(const std::string& body) {
  uint64_t samples = 0;
  DecodeBody(body, &samples);
  return samples;
}

// Five values of five series.
Sample Tick(double timestamp, double value = 1) {
  Sample sample;
  sample.timestamp = timestamp;
  sample.metrics.Add("cpu", value);
  sample.metrics.Add("memory_percent", value);
  sample.metrics.Add("gpu.0.temp", value);
  sample.metrics.Add("gpu.1.temp", value);
  sample.metrics.Add("proc.memory.rssMB", value);
  return sample;
}

SenderOptions FastOptions() {
  SenderOptions options;
  options.destination = "http://127.0.0.1:9/api/v1/write";
  options.batch_age_seconds = 0.02;
  options.min_backoff_seconds = 0.01;
  options.max_backoff_seconds = 0.05;
  options.request_timeout_seconds = 5;
  options.stop_grace_seconds = 0.2;
  return options;
}

class RemoteWriterTest : public ::testing::Test {
 protected:
  std::unique_ptr<RemoteWriter> Open(SenderOptions options = FastOptions(),
                                     ConstantLabels labels = {"node-1", "run-1", "", "0"}) {
    auto fake = fake_;
    auto log = log_;
    Result<std::unique_ptr<RemoteWriter>> writer = RemoteWriter::Open(
        dir_.path() / "queue", std::move(labels), QueueOptions{}, std::move(options),
        [fake](const std::string& body, Clock::time_point deadline) { return fake->Post(body, deadline); },
        [log](const std::string& line) { log->Add(line); });
    EXPECT_TRUE(writer.ok()) << (writer.ok() ? "" : writer.error());
    return writer.ok() ? std::move(*writer) : nullptr;
  }

  static void DrainOk(RemoteWriter& writer) {
    const Status drained = writer.Drain(Clock::now() + 20s);
    ASSERT_TRUE(drained.ok()) << drained.error();
  }

  // `count` ticks a second apart from `start`, each drained before the next: one batch each.
  static void SendEachAlone(RemoteWriter& writer, double start, int count) {
    for (int i = 0; i < count; ++i) {
      writer.Enqueue(Tick(start + i));
      DrainOk(writer);
    }
  }

  runmon::test::TempDir dir_{"runmon-rw-writer"};
  std::shared_ptr<FakeReceiver> fake_ = std::make_shared<FakeReceiver>();
  std::shared_ptr<LogLines> log_ = std::make_shared<LogLines>();
};

TEST_F(RemoteWriterTest, DeliversEverySampleInOrder) {
  auto writer = Open();
  const double start = Now();
  for (int i = 0; i < 50; ++i) writer->Enqueue(Tick(start + i * 0.1, i));
  DrainOk(*writer);
  const SeriesPoints all = DecodeAll(fake_->bodies());
  ASSERT_EQ(all.size(), 5u);
  for (const auto& [id, points] : all) {
    ASSERT_EQ(points.size(), 50u) << id;
    for (size_t i = 1; i < points.size(); ++i) EXPECT_LT(points[i - 1].first, points[i].first) << id;
    EXPECT_NE(id.find("host=node-1,"), std::string::npos) << id;
  }
  EXPECT_EQ(all.at("__name__=runmon_process_cpu_ratio,host=node-1,node_rank=0,run_id=run-1,")[7],
            (std::pair<int64_t, double>{std::llround((start + 7 * 0.1) * 1000), 0.07}));
  const RemoteWriteStats stats = writer->Stats();
  EXPECT_EQ(stats.sent_samples, 250u);
  EXPECT_EQ(stats.pending_samples, 0u);
  EXPECT_EQ(stats.oldest_pending_age_seconds, 0);
  EXPECT_EQ(stats.dropped_samples, 0u);
  EXPECT_EQ(stats.requests, fake_->requests());
  EXPECT_EQ(stats.retries, 0u);
  EXPECT_TRUE(stats.last_error.empty()) << stats.last_error;
}

TEST_F(RemoteWriterTest, AWholeBatchGoesAtOnceAndTheRestWaitsForItsAge) {
  SenderOptions options = FastOptions();
  options.max_samples_per_request = 10;
  options.batch_age_seconds = 60;
  auto writer = Open(options);
  const double start = Now();
  for (int i = 0; i < 20; ++i) writer->Enqueue(Tick(start + i * 0.1));
  ASSERT_TRUE(WaitUntil([&] { return writer->Stats().sent_samples == 100; }, 20s));
  for (const std::string& body : fake_->bodies()) EXPECT_EQ(SamplesIn(body), 10u);
  EXPECT_EQ(fake_->requests(), 10u);

  writer->Enqueue(Tick(start + 2.0));
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(fake_->requests(), 10u);  // one tick, far from a batch, 60 s from its age
  EXPECT_EQ(writer->Stats().pending_samples, 5u);
  DrainOk(*writer);
  EXPECT_EQ(fake_->requests(), 11u);
  EXPECT_EQ(SamplesIn(fake_->bodies().back()), 5u);
}

TEST_F(RemoteWriterTest, APartBatchIsSentOnceItsOldestSampleWaitedTheBatchAge) {
  SenderOptions options = FastOptions();
  options.batch_age_seconds = 0.5;
  auto writer = Open(options);
  const Clock::time_point enqueued = Clock::now();
  writer->Enqueue(Tick(Now()));
  std::this_thread::sleep_for(100ms);
  writer->Enqueue(Tick(Now()));
  std::this_thread::sleep_for(150ms);
  EXPECT_EQ(fake_->requests(), 0u);
  ASSERT_TRUE(WaitUntil([&] { return fake_->requests() == 1; }, 10s));
  EXPECT_GE(fake_->times().at(0) - enqueued, 450ms);
  EXPECT_EQ(SamplesIn(fake_->bodies().at(0)), 10u);
}

TEST_F(RemoteWriterTest, A500IsRetriedWithTheSameBytesNeverMergedWithNewerSamples) {
  fake_->Script({Answer(500, "internal error"), Answer(503, "unavailable")});
  auto writer = Open();
  const double start = Now();
  writer->Enqueue(Tick(start));
  ASSERT_TRUE(WaitUntil([&] { return fake_->requests() >= 1; }, 10s));
  writer->Enqueue(Tick(start + 0.1));  // queued while the first batch is retried
  DrainOk(*writer);
  const std::vector<std::string> bodies = fake_->bodies();
  ASSERT_GE(bodies.size(), 4u);
  EXPECT_EQ(bodies[1], bodies[0]);
  EXPECT_EQ(bodies[2], bodies[0]);
  EXPECT_EQ(SamplesIn(bodies[0]), 5u);
  for (size_t i = 3; i < bodies.size(); ++i) EXPECT_NE(bodies[i], bodies[0]);
  const RemoteWriteStats stats = writer->Stats();
  EXPECT_EQ(stats.sent_samples, 10u);
  EXPECT_EQ(stats.retries, 2u);
  EXPECT_EQ(stats.requests, bodies.size());
  EXPECT_EQ(log_->Count("HTTP 500: internal error"), 1u);
  EXPECT_EQ(log_->Count("HTTP 503: unavailable"), 1u);
  EXPECT_EQ(log_->Count(
                "remote write to http://127.0.0.1:9/api/v1/write: delivering again after 2 failed attempts"),
            1u);
}

TEST_F(RemoteWriterTest, AnOutageIsLoggedOnceAndAgainAfterItEnded) {
  fake_->Script({TimedOut(), TimedOut(), TimedOut()});
  auto writer = Open();
  const double start = Now();
  writer->Enqueue(Tick(start));
  DrainOk(*writer);
  EXPECT_EQ(log_->Count("no response: POST"), 1u);
  EXPECT_EQ(log_->Count("delivering again after 3 failed attempts"), 1u);
  fake_->Script({TimedOut()});
  writer->Enqueue(Tick(start + 1));
  DrainOk(*writer);
  EXPECT_EQ(log_->Count("no response: POST"), 2u);
  EXPECT_EQ(log_->Count("delivering again after 1 failed attempts"), 1u);
}

TEST_F(RemoteWriterTest, A429WaitsForItsRetryAfter) {
  fake_->Script({Answer(429, "slow down", 0.4)});
  SenderOptions options = FastOptions();
  options.max_backoff_seconds = 1;  // a Retry-After is honoured up to twice this
  auto writer = Open(options);
  writer->Enqueue(Tick(Now()));
  DrainOk(*writer);
  const std::vector<Clock::time_point> times = fake_->times();
  ASSERT_EQ(times.size(), 2u);
  EXPECT_GE(times[1] - times[0], 390ms);
  EXPECT_EQ(fake_->bodies()[0], fake_->bodies()[1]);
  EXPECT_EQ(log_->Count("HTTP 429, the receiver asks to slow down (Retry-After: 0.4 s)"), 1u);
}

TEST_F(RemoteWriterTest, A400OnAFirstSendDropsTheBatchWithOneMessagePerStatus) {
  fake_->Script({Answer(400, "invalid label: bad\n"), Answer(400, "invalid label again")});
  auto writer = Open();
  SendEachAlone(*writer, Now(), 3);
  const RemoteWriteStats stats = writer->Stats();
  EXPECT_EQ(stats.dropped_rejected, 10u);
  EXPECT_EQ(stats.dropped_samples, 10u);
  EXPECT_EQ(stats.sent_samples, 5u);
  EXPECT_EQ(stats.retries, 0u);
  EXPECT_EQ(fake_->requests(), 3u);
  ASSERT_EQ(log_->Count("refused a batch (HTTP 400: invalid label: bad); 5 samples dropped"), 1u)
      << ::testing::PrintToString(log_->lines());
  EXPECT_EQ(log_->Count("HTTP 400"), 1u);
  EXPECT_NE(stats.last_error.find("HTTP 400"), std::string::npos);
}

TEST_F(RemoteWriterTest, OutOfOrderAfterAnUnknownOutcomeCountsAsDelivered) {
  fake_->Script({TimedOut(), Answer(400, "out of order sample")});
  auto writer = Open();
  writer->Enqueue(Tick(Now()));
  DrainOk(*writer);
  const RemoteWriteStats stats = writer->Stats();
  EXPECT_EQ(stats.sent_samples, 5u);
  EXPECT_EQ(stats.dropped_samples, 0u);
  EXPECT_EQ(fake_->requests(), 2u);
  EXPECT_EQ(log_->Count("refused"), 0u);
}

TEST_F(RemoteWriterTest, OutOfOrderOnAFirstSendIsRejected) {
  fake_->Script({Answer(400, "out of order sample")});
  auto writer = Open();
  writer->Enqueue(Tick(Now()));
  DrainOk(*writer);
  EXPECT_EQ(writer->Stats().dropped_rejected, 5u);
  EXPECT_EQ(writer->Stats().sent_samples, 0u);
}

TEST_F(RemoteWriterTest, OutOfBoundsDropsAsTooOldNamingTheReceiversSetting) {
  fake_->Script({Answer(400, "out of bounds"), Answer(400, "out of bounds")});
  auto writer = Open();
  SendEachAlone(*writer, Now(), 2);
  const RemoteWriteStats stats = writer->Stats();
  EXPECT_EQ(stats.dropped_too_old, 10u);
  EXPECT_EQ(stats.dropped_rejected, 0u);
  EXPECT_EQ(log_->Count("storage.tsdb.out_of_order_time_window"), 1u);
}

TEST_F(RemoteWriterTest, TheAgeCapDropsWithoutSending) {
  SenderOptions options = FastOptions();
  options.max_sample_age_seconds = 60;
  auto writer = Open(options);
  const double now = Now();
  writer->Enqueue(Tick(now - 3600));
  writer->Enqueue(Tick(now - 3599));
  DrainOk(*writer);
  EXPECT_EQ(fake_->requests(), 0u);
  EXPECT_EQ(writer->Stats().dropped_too_old, 10u);
  EXPECT_EQ(log_->Count("older than 60 s (the age cap) were dropped without sending"), 1u);
  writer->Enqueue(Tick(now));
  DrainOk(*writer);
  EXPECT_EQ(fake_->requests(), 1u);
  EXPECT_EQ(writer->Stats().sent_samples, 5u);
}

TEST_F(RemoteWriterTest, WhatCannotBeSentIsCountedAndALateValueGoesAtItsOwnTick) {
  auto writer = Open();
  const double start = Now();
  Sample tick;
  tick.timestamp = start + 1;
  tick.metrics.Add("cpu", 10);
  tick.metrics.Add("openmetrics.dcgm.DCGM_FI_DEV_GPU_UTIL", 3);
  tick.metrics.Add("memory_percent", std::nan(""));
  tick.metrics.Add("gpu.0.temp", INFINITY);
  writer->Enqueue(tick);
  // A late lane's values for the tick before: the cpu value comes after a newer one and is left out, the
  // GPU's is sent with its own tick's time.
  Sample late;
  late.timestamp = start;
  late.late = true;
  late.metrics.Add("cpu", 9);
  late.metrics.Add("gpu.1.temp", 50);
  writer->Enqueue(late);
  DrainOk(*writer);
  const RemoteWriteStats stats = writer->Stats();
  EXPECT_EQ(stats.skipped_unmapped, 1u);
  EXPECT_EQ(stats.skipped_non_finite, 2u);
  EXPECT_EQ(stats.skipped_out_of_order, 1u);
  EXPECT_EQ(stats.sent_samples, 2u);
  const SeriesPoints all = DecodeAll(fake_->bodies());
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all.at("__name__=runmon_gpu_temperature_celsius,gpu=1,host=node-1,node_rank=0,run_id=run-1,"),
            (std::vector<std::pair<int64_t, double>>{{std::llround(start * 1000), 50}}));
}

TEST_F(RemoteWriterTest, TheDestructorReturnsAtOnceFromAHungTransport) {
  fake_->Hang();
  SenderOptions options = FastOptions();
  options.request_timeout_seconds = 30;
  auto writer = Open(options);
  writer->Enqueue(Tick(Now()));
  ASSERT_TRUE(WaitUntil([&] { return fake_->requests() == 1; }, 10s));
  const Clock::time_point start = Clock::now();
  writer.reset();
  EXPECT_LT(Clock::now() - start, 2s);
  const size_t lines = log_->lines().size();
  // The sender left inside the transport ends once it returns, logging nothing, and lets the transport go.
  fake_->Release();
  EXPECT_TRUE(WaitUntil([&] { return fake_.use_count() == 1; }, 10s));
  EXPECT_EQ(log_->lines().size(), lines);
}

TEST_F(RemoteWriterTest, TheDestructorEndsABackoffWait) {
  fake_->Script({Answer(503)});
  SenderOptions options = FastOptions();
  options.min_backoff_seconds = 20;
  options.max_backoff_seconds = 30;
  auto writer = Open(options);
  writer->Enqueue(Tick(Now()));
  ASSERT_TRUE(WaitUntil([&] { return fake_->requests() == 1; }, 10s));
  std::this_thread::sleep_for(50ms);
  const Clock::time_point start = Clock::now();
  writer.reset();
  EXPECT_LT(Clock::now() - start, 1s);
  EXPECT_EQ(fake_.use_count(), 1);
}

TEST_F(RemoteWriterTest, ARestartResendsTheBatchInFlightByteForByteUnderTheStoredLabels) {
  fake_->Hang();
  SenderOptions options = FastOptions();
  options.batch_age_seconds = 0.3;  // the three ticks make one batch
  options.request_timeout_seconds = 0.2;
  options.min_backoff_seconds = 10;
  options.max_backoff_seconds = 10;
  auto writer = Open(options, {"node-1", "run-1", "", "0"});
  const double start = Now();
  for (int i = 0; i < 3; ++i) writer->Enqueue(Tick(start + i * 0.1, i));
  ASSERT_TRUE(WaitUntil([&] { return writer->Stats().requests == 1; }, 10s));  // timed out: in backoff
  writer->Enqueue(Tick(start + 1, 7));
  ASSERT_TRUE(WaitUntil([&] { return writer->Stats().pending_samples == 20; }, 10s));
  writer.reset();
  const std::string in_flight = fake_->bodies().at(0);

  // The next run: other labels given, a receiver that stored the batch and says so.
  auto fake = std::make_shared<FakeReceiver>();
  fake_ = fake;
  fake->Script({Answer(400, "out of order sample")});
  auto reopened = Open(FastOptions(), {"node-2", "push", "job", "5"});
  EXPECT_EQ(reopened->labels(), (ConstantLabels{"node-1", "run-1", "", "0"}));
  reopened->Enqueue(Tick(start + 2, 8));
  DrainOk(*reopened);
  const std::vector<std::string> bodies = fake->bodies();
  ASSERT_GE(bodies.size(), 2u);
  EXPECT_EQ(bodies[0], in_flight);
  const SeriesPoints rest = DecodeAll(std::vector<std::string>(bodies.begin() + 1, bodies.end()));
  ASSERT_EQ(rest.size(), 5u);
  for (const auto& [id, points] : rest) {
    EXPECT_NE(id.find("host=node-1,"), std::string::npos) << id;
    EXPECT_EQ(points.size(), 2u) << id;
  }
  const RemoteWriteStats stats = reopened->Stats();
  EXPECT_EQ(stats.sent_samples, SamplesIn(in_flight) + 10);
  EXPECT_EQ(stats.dropped_samples, 0u);
}

TEST_F(RemoteWriterTest, WhatTheQueuesRecoveryFoundIsSaidAndTheRestSent) {
  fake_->Script(std::vector<PostResult>(1000, Answer(503)));
  auto writer = Open();
  const double start = Now();
  writer->Enqueue(Tick(start));
  writer->Enqueue(Tick(start + 0.1));
  ASSERT_TRUE(WaitUntil([&] { return writer->Stats().requests >= 1; }, 10s));
  writer.reset();
  // A write the process was killed in: bytes after the last whole record.
  size_t segments = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path() / "queue")) {
    if (entry.path().extension() != ".seg") continue;
    std::ofstream(entry.path(), std::ios::binary | std::ios::app) << "torn!";
    ++segments;
  }
  ASSERT_EQ(segments, 1u);

  fake_ = std::make_shared<FakeReceiver>();
  auto reopened = Open();
  DrainOk(*reopened);
  EXPECT_EQ(log_->Count("remote write to http://127.0.0.1:9/api/v1/write: the queue in " +
                        (dir_.path() / "queue").string() +
                        ": 00000000000000000001.seg: cut a torn tail of 5 bytes"),
            1u)
      << ::testing::PrintToString(log_->lines());
  EXPECT_EQ(log_->Count("HTTP 503 (retrying with backoff; the samples wait on disk)"), 1u);
  EXPECT_EQ(reopened->Stats().sent_samples, 10u);
}

TEST_F(RemoteWriterTest, DrainsDeadlineSaysWhatStaysOnDisk) {
  fake_->Script(std::vector<PostResult>(1000, Answer(503)));
  auto writer = Open();
  const double start = Now();
  writer->Enqueue(Tick(start));
  writer->Enqueue(Tick(start + 0.1));
  const Clock::time_point before = Clock::now();
  const Status drained = writer->Drain(before + 300ms);
  const auto took = Clock::now() - before;
  ASSERT_FALSE(drained.ok());
  EXPECT_GE(took, 290ms);
  EXPECT_LT(took, 3s);
  EXPECT_NE(drained.error().find("10 samples not delivered by the deadline stay queued in " +
                                 (dir_.path() / "queue").string()),
            std::string::npos)
      << drained.error();
  EXPECT_NE(drained.error().find("runmon push"), std::string::npos);
  const RemoteWriteStats stats = writer->Stats();
  EXPECT_EQ(stats.pending_samples, 10u);
  EXPECT_GT(stats.oldest_pending_age_seconds, 0);
  EXPECT_LT(stats.oldest_pending_age_seconds, 60);
}

TEST_F(RemoteWriterTest, EverySampleIsSentOrCountedAsDroppedUnderABurst) {
  SenderOptions options = FastOptions();
  options.memory_buffer_samples = 10;
  auto writer = Open(options);
  const double start = Now();
  for (int i = 0; i < 2000; ++i) writer->Enqueue(Tick(start + i * 0.001, i));
  DrainOk(*writer);
  const RemoteWriteStats stats = writer->Stats();
  EXPECT_EQ(stats.sent_samples + stats.dropped_queue_full, 10000u);
  EXPECT_EQ(stats.sent_samples, DecodeAll(fake_->bodies()).begin()->second.size() * 5);
  EXPECT_EQ(stats.pending_samples, 0u);
}

TEST(RemoteWriterOpen, RefusesBadOptionsAndASecondWriterOnOneQueue) {
  const runmon::test::TempDir dir("runmon-rw-open");
  const Transport transport = [](const std::string&, Clock::time_point) { return Answer(200); };
  SenderOptions options;
  options.max_samples_per_request = 0;
  Result<std::unique_ptr<RemoteWriter>> bad =
      RemoteWriter::Open(dir.path(), {}, {}, options, transport, nullptr);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), "remote write: max_samples_per_request must be at least 1");

  Result<std::unique_ptr<RemoteWriter>> first =
      RemoteWriter::Open(dir.path(), {}, {}, {}, transport, nullptr);
  ASSERT_TRUE(first.ok()) << first.error();
  Result<std::unique_ptr<RemoteWriter>> second =
      RemoteWriter::Open(dir.path(), {}, {}, {}, transport, nullptr);
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(second.error().starts_with("remote write: ")) << second.error();
}

}  // namespace
}  // namespace runmon::remote_write
