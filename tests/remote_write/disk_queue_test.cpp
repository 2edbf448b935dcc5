// The remote-write queue as its users see it: records come back in order byte for byte, batches follow
// max_samples, the cursor persists across a reopen (with the in-flight batch), the bound drops the oldest
// segments and counts them, acknowledged segments are deleted, oversized records and out-of-range cursor
// moves are refused, a second opener is refused, an appender and a reader thread work side by side, and
// a one-hour backlog (36,000 records of 2 KB) goes in and out quickly. What happens to damaged files,
// kill -9 and failed writes is in disk_queue_recovery_test.cpp.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include <gtest/gtest.h>

#include "queue_test_support.hpp"
#include "remote_write/disk_queue.hpp"
#include "support/temp_dir.hpp"

namespace runmon::remote_write {
namespace {

using namespace testing;
using runmon::test::TempDir;

std::unique_ptr<DiskQueue> MustOpen(const std::filesystem::path& directory, QueueOptions options = {}) {
  auto queue = DiskQueue::Open(directory, options);
  EXPECT_TRUE(queue) << queue.error();
  return queue ? std::move(*queue) : nullptr;
}

uint64_t FileSizes(const std::filesystem::path& directory) {
  uint64_t total = 0;
  for (const auto& path : SegmentFiles(directory)) total += std::filesystem::file_size(path);
  return total;
}

TEST(DiskQueue, RoundTrip) {
  TempDir dir("rwq");
  auto queue = MustOpen(dir.path() / "queue");
  ASSERT_TRUE(queue);
  EXPECT_EQ(queue->last_sequence(), 0u);
  EXPECT_TRUE(queue->Read(0, 100)->empty());
  uint64_t samples = 0;
  for (int i = 0; i < 200; ++i) {
    AppendNext(*queue);
    samples += SamplesFor(queue->last_sequence());
  }
  EXPECT_EQ(queue->last_sequence(), 200u);
  const auto records = ReadAll(*queue);
  EXPECT_EQ(Sequences(records), Range(1, 200));
  for (const auto& record : records) EXPECT_TRUE(IsIntact(record));

  const QueueCounts counts = queue->counts();
  EXPECT_EQ(counts.pending_records, 200u);
  EXPECT_EQ(counts.pending_samples, samples);
  EXPECT_EQ(counts.oldest_pending_ms, TimestampFor(1));
  EXPECT_EQ(counts.dropped_records, 0u);
  EXPECT_EQ(counts.damaged_records, 0u);
  EXPECT_FALSE(counts.cursor_lost);
  EXPECT_TRUE(queue->open_notes().empty());
  EXPECT_EQ(queue->size_bytes(), FileSizes(dir.path() / "queue"));
  EXPECT_EQ(queue->cursor().acked, 0u);
  EXPECT_EQ(queue->cursor().inflight_end, 0u);
  // An empty payload is a record too.
  ASSERT_TRUE(queue->Append(0, 5, ""));
  auto last = queue->Read(200, 10);
  ASSERT_TRUE(last);
  ASSERT_EQ(last->size(), 1u);
  EXPECT_EQ(last->front().payload, "");
  EXPECT_EQ(last->front().timestamp_ms, 5);
}

TEST(DiskQueue, BatchesStayWithinMaxSamplesButHoldAtLeastOneRecord) {
  TempDir dir("rwq");
  auto queue = MustOpen(dir.path());
  ASSERT_TRUE(queue);
  for (uint32_t samples : {3u, 4u, 2u, 10u, 1u}) ASSERT_TRUE(queue->Append(samples, 0, "x"));
  EXPECT_EQ(Sequences(*queue->Read(0, 7)), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(Sequences(*queue->Read(0, 9)), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(Sequences(*queue->Read(3, 5)), (std::vector<uint64_t>{4}));  // more than max alone
  EXPECT_EQ(Sequences(*queue->Read(3, 0)), (std::vector<uint64_t>{4}));
  EXPECT_EQ(Sequences(*queue->Read(3, 11)), (std::vector<uint64_t>{4, 5}));
  EXPECT_TRUE(queue->Read(5, 100)->empty());
  EXPECT_TRUE(queue->Read(99, 100)->empty());
}

TEST(DiskQueue, ReopenResumesAtTheCursor) {
  TempDir dir("rwq");
  {
    auto queue = MustOpen(dir.path());
    ASSERT_TRUE(queue);
    for (int i = 0; i < 10; ++i) AppendNext(*queue);
    ASSERT_TRUE(queue->SetInflight(6));
    ASSERT_TRUE(queue->Ack(6));
    EXPECT_EQ(queue->counts().pending_records, 4u);
    EXPECT_EQ(queue->counts().oldest_pending_ms, TimestampFor(7));
  }
  auto queue = MustOpen(dir.path());
  ASSERT_TRUE(queue);
  EXPECT_EQ(queue->cursor().acked, 6u);
  EXPECT_EQ(queue->cursor().inflight_end, 6u);
  EXPECT_EQ(queue->last_sequence(), 10u);
  EXPECT_EQ(queue->counts().pending_records, 4u);
  EXPECT_TRUE(queue->open_notes().empty());
  EXPECT_EQ(Sequences(ReadAll(*queue, queue->cursor().acked)), Range(7, 10));
  AppendNext(*queue);
  EXPECT_EQ(queue->last_sequence(), 11u);
  const auto records = ReadAll(*queue, 6);
  EXPECT_EQ(Sequences(records), Range(7, 11));
  for (const auto& record : records) EXPECT_TRUE(IsIntact(record));
}

TEST(DiskQueue, TheInflightBatchIsReportedAfterReopen) {
  TempDir dir("rwq");
  {
    auto queue = MustOpen(dir.path());
    ASSERT_TRUE(queue);
    for (int i = 0; i < 10; ++i) AppendNext(*queue);
    ASSERT_TRUE(queue->Ack(3));
    ASSERT_TRUE(queue->SetInflight(7));
  }
  auto queue = MustOpen(dir.path());
  ASSERT_TRUE(queue);
  EXPECT_EQ(queue->cursor().acked, 3u);
  EXPECT_EQ(queue->cursor().inflight_end, 7u);
  EXPECT_EQ(queue->counts().pending_records, 7u);
  // The same batch can be read again.
  auto batch = queue->Read(3, 1000);
  ASSERT_TRUE(batch);
  EXPECT_EQ(Sequences(*batch), Range(4, 10));
  // Acknowledging part of the batch keeps the rest in flight.
  ASSERT_TRUE(queue->Ack(5));
  EXPECT_EQ(queue->cursor().acked, 5u);
  EXPECT_EQ(queue->cursor().inflight_end, 7u);
  ASSERT_TRUE(queue->Ack(9));
  EXPECT_EQ(queue->cursor().inflight_end, 9u);
}

TEST(DiskQueue, CursorMovesOutsideTheQueueAreErrors) {
  TempDir dir("rwq");
  auto queue = MustOpen(dir.path());
  ASSERT_TRUE(queue);
  EXPECT_FALSE(queue->Ack(1));  // nothing there yet
  for (int i = 0; i < 5; ++i) AppendNext(*queue);
  const Status beyond = queue->Ack(6);
  ASSERT_FALSE(beyond);
  EXPECT_NE(beyond.error().find("through 6"), std::string::npos) << beyond.error();
  EXPECT_FALSE(queue->SetInflight(6));
  ASSERT_TRUE(queue->Ack(4));
  EXPECT_FALSE(queue->Ack(3));  // backwards
  EXPECT_FALSE(queue->SetInflight(3));
  EXPECT_TRUE(queue->Ack(4));  // again: nothing changes
  EXPECT_TRUE(queue->SetInflight(4));
  EXPECT_TRUE(queue->Ack(5));
  EXPECT_EQ(queue->cursor().acked, 5u);
  EXPECT_EQ(queue->counts().pending_records, 0u);
  EXPECT_EQ(queue->counts().oldest_pending_ms, 0);
}

TEST(DiskQueue, RotatesSegmentsAndDeletesThemOnceAcknowledged) {
  TempDir dir("rwq");
  const QueueOptions options{.max_bytes = 1 << 20, .segment_bytes = 4096};
  auto queue = MustOpen(dir.path(), options);
  ASSERT_TRUE(queue);
  for (int i = 0; i < 100; ++i) AppendNext(*queue);
  const auto files = SegmentFiles(dir.path());
  ASSERT_GT(files.size(), 5u);
  EXPECT_EQ(files.front().filename(), SegmentFileName(1));
  for (const auto& file : files) EXPECT_LE(std::filesystem::file_size(file), options.segment_bytes);
  EXPECT_EQ(queue->size_bytes(), FileSizes(dir.path()));

  // Acknowledging into the third segment deletes the first two, nothing else.
  const uint64_t third_first = *ParseSegmentFileName(files[2].filename().string());
  ASSERT_TRUE(queue->Ack(third_first));
  auto left = SegmentFiles(dir.path());
  ASSERT_EQ(left.size(), files.size() - 2);
  EXPECT_EQ(left.front(), files[2]);
  EXPECT_EQ(queue->size_bytes(), FileSizes(dir.path()));
  EXPECT_EQ(Sequences(ReadAll(*queue, third_first)), Range(third_first + 1, 100));

  // Everything acknowledged: only the active segment stays, and appends go on in it.
  ASSERT_TRUE(queue->Ack(100));
  left = SegmentFiles(dir.path());
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left.front(), files.back());
  AppendNext(*queue);
  EXPECT_EQ(SegmentFiles(dir.path()).size(), 1u);
  EXPECT_EQ(queue->counts().pending_records, 1u);
  queue.reset();

  auto reopened = MustOpen(dir.path(), options);
  ASSERT_TRUE(reopened);
  EXPECT_EQ(reopened->cursor().acked, 100u);
  EXPECT_EQ(Sequences(ReadAll(*reopened, 100)), Range(101, 101));
  EXPECT_EQ(reopened->counts().damaged_records, 0u);
}

TEST(DiskQueue, SequencesGoOnAfterEveryRecordWasAcknowledgedAndDeleted) {
  TempDir dir("rwq");
  const QueueOptions options{.max_bytes = 1 << 20, .segment_bytes = 2048};
  {
    auto queue = MustOpen(dir.path(), options);
    ASSERT_TRUE(queue);
    for (int i = 0; i < 40; ++i) AppendNext(*queue);
    ASSERT_TRUE(queue->Ack(40));
  }
  // Even with the segments gone, the cursor keeps the numbering: no sequence is handed out twice.
  for (const auto& file : SegmentFiles(dir.path())) std::filesystem::remove(file);
  auto queue = MustOpen(dir.path(), options);
  ASSERT_TRUE(queue);
  EXPECT_EQ(queue->last_sequence(), 40u);
  AppendNext(*queue);
  EXPECT_EQ(Sequences(ReadAll(*queue, 40)), Range(41, 41));
  EXPECT_EQ(SegmentFiles(dir.path()).front().filename(), SegmentFileName(41));
}

TEST(DiskQueue, TheBoundDropsTheOldestSegmentsAndKeepsTheNewest) {
  TempDir dir("rwq");
  const QueueOptions options{.max_bytes = 20000, .segment_bytes = 4000};
  auto queue = MustOpen(dir.path(), options);
  ASSERT_TRUE(queue);
  uint64_t samples = 0;
  for (int i = 0; i < 300; ++i) {
    AppendNext(*queue);
    samples += SamplesFor(queue->last_sequence());
    ASSERT_LE(queue->size_bytes(), options.max_bytes);
    ASSERT_LE(FileSizes(dir.path()), options.max_bytes);
  }
  const QueueCounts counts = queue->counts();
  EXPECT_GT(counts.dropped_records, 0u);
  EXPECT_EQ(counts.dropped_records + counts.pending_records, 300u);
  EXPECT_EQ(counts.dropped_samples + counts.pending_samples, samples);

  // The records left are the newest, contiguous up to the last; a read from the start skips the dropped.
  const auto records = ReadAll(*queue);
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(Sequences(records), Range(counts.dropped_records + 1, 300));
  for (const auto& record : records) EXPECT_TRUE(IsIntact(record));
  EXPECT_EQ(counts.oldest_pending_ms, TimestampFor(counts.dropped_records + 1));
  // Dropped records were never acknowledged, and acknowledging through them is fine.
  ASSERT_TRUE(queue->Ack(counts.dropped_records + 2));
  EXPECT_EQ(queue->counts().pending_records, counts.pending_records - 2);
}

TEST(DiskQueue, AcknowledgedRecordsAreNotCountedAsDropped) {
  TempDir dir("rwq");
  const QueueOptions options{.max_bytes = 10000, .segment_bytes = 2000};
  auto queue = MustOpen(dir.path(), options);
  ASSERT_TRUE(queue);
  for (int i = 0; i < 200; ++i) {
    AppendNext(*queue);
    // The sender keeps up to ten records behind.
    if (queue->last_sequence() > 10) {
      ASSERT_TRUE(queue->Ack(queue->last_sequence() - 10));
    }
  }
  EXPECT_EQ(queue->counts().dropped_records, 0u);
  EXPECT_EQ(queue->counts().pending_records, 10u);
}

TEST(DiskQueue, ARecordOverTheBoundIsRefused) {
  TempDir dir("rwq");
  const QueueOptions options{.max_bytes = 10000, .segment_bytes = 5000};
  auto queue = MustOpen(dir.path(), options);
  ASSERT_TRUE(queue);
  AppendNext(*queue);
  const uint64_t size = queue->size_bytes();
  const Status refused = queue->Append(1, 0, std::string(options.max_bytes, 'x'));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("bound"), std::string::npos) << refused.error();
  EXPECT_EQ(queue->last_sequence(), 1u);
  EXPECT_EQ(queue->size_bytes(), size);
  EXPECT_EQ(FileSizes(dir.path()), size);
  // The largest record that fits is taken, alone in a segment of its own, and the bound holds.
  const size_t largest = options.max_bytes - kSegmentHeaderSize - kRecordHeaderSize;
  ASSERT_TRUE(queue->Append(1, 0, std::string(largest, 'y')));
  EXPECT_EQ(queue->size_bytes(), options.max_bytes);
  EXPECT_EQ(queue->counts().dropped_records, 1u);
  EXPECT_EQ(Sequences(ReadAll(*queue)), Range(2, 2));
}

TEST(DiskQueue, OptionsThatCannotWorkAreRefused) {
  TempDir dir("rwq");
  EXPECT_FALSE(DiskQueue::Open(dir.path(), {.max_bytes = 1000, .segment_bytes = 0}));
  EXPECT_FALSE(DiskQueue::Open(dir.path(), {.max_bytes = 1000, .segment_bytes = 2000}));
}

TEST(DiskQueue, ASecondOpenerIsRefusedWhileTheFirstLives) {
  TempDir dir("rwq");
  auto first = MustOpen(dir.path());
  ASSERT_TRUE(first);
  auto second = DiskQueue::Open(dir.path());
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().find("in use"), std::string::npos) << second.error();

  // Another process is refused the same way.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(DiskQueue::Open(dir.path()) ? 1 : 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  first.reset();
  EXPECT_TRUE(DiskQueue::Open(dir.path()));
}

TEST(DiskQueue, AnAppenderAndAReaderThreadSideBySide) {
  TempDir dir("rwq");
  auto queue = MustOpen(dir.path(), {.max_bytes = 1 << 20, .segment_bytes = 8192});
  ASSERT_TRUE(queue);
  constexpr uint64_t kRecords = 3000;
  std::thread appender([&] {
    for (uint64_t i = 0; i < kRecords; ++i) AppendNext(*queue);
  });
  // The reader sends what it finds as a sender would: in flight, then acknowledged.
  uint64_t acked = 0;
  bool intact = true;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (acked < kRecords && std::chrono::steady_clock::now() < until) {
    auto batch = queue->Read(acked, 40);
    ASSERT_TRUE(batch) << batch.error();
    if (batch->empty()) {
      std::this_thread::yield();
      continue;
    }
    for (const auto& record : *batch) {
      intact = intact && record.sequence == ++acked && IsIntact(record);
    }
    ASSERT_TRUE(queue->SetInflight(acked));
    ASSERT_TRUE(queue->Ack(acked));
  }
  appender.join();
  EXPECT_TRUE(intact);
  EXPECT_EQ(acked, kRecords);
  EXPECT_EQ(queue->counts().pending_records, 0u);
  EXPECT_EQ(queue->counts().dropped_records, 0u);
  EXPECT_EQ(SegmentFiles(dir.path()).size(), 1u);
}

// The process's CPU time (user and system) and the wall clock, for timing on a busy machine.
struct Clocks {
  double cpu_ms = 0;
  std::chrono::steady_clock::time_point wall;
  static Clocks Now() {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    const auto ms = [](const timeval& t) {
      return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3;
    };
    return {ms(usage.ru_utime) + ms(usage.ru_stime), std::chrono::steady_clock::now()};
  }
};

void PrintTime(const char* what, const Clocks& start, const Clocks& end) {
  std::printf("%s: %.1f ms (CPU %.1f ms)\n", what,
              std::chrono::duration<double, std::milli>(end.wall - start.wall).count(),
              end.cpu_ms - start.cpu_ms);
}

TEST(DiskQueue, AnHourOfBacklogGoesInAndOutQuickly) {
  // 36,000 records of about 2 KB: an hour of samples at 0.1 s. The times are printed for the record; the
  // sanitizer build's own speed says nothing about the release build's.
  TempDir dir("rwq");
  auto queue = MustOpen(dir.path());
  ASSERT_TRUE(queue);
  constexpr uint64_t kRecords = 36000;
  std::vector<std::string> payloads;
  for (uint64_t s = 1; s <= 64; ++s) payloads.push_back(PayloadFor(s, 2048));
  const Clocks start = Clocks::Now();
  for (uint64_t s = 1; s <= kRecords; ++s) {
    const Status status = queue->Append(30, static_cast<int64_t>(s), payloads[s % payloads.size()]);
    ASSERT_TRUE(status) << status.error();
  }
  const Clocks appended = Clocks::Now();
  uint64_t after = 0;
  bool intact = true;
  for (;;) {
    auto batch = queue->Read(after, 2000);
    ASSERT_TRUE(batch) << batch.error();
    if (batch->empty()) break;
    for (const auto& record : *batch) {
      intact = intact && record.sequence == after + 1 && record.payload == payloads[record.sequence % 64];
      after = record.sequence;
    }
  }
  const Clocks read = Clocks::Now();
  EXPECT_TRUE(intact);
  EXPECT_EQ(after, kRecords);
  PrintTime("36000 appends of 2 KB", start, appended);
  PrintTime("read back in batches of 2000 samples", appended, read);
  // Reopening scans and checks all of it.
  queue.reset();
  const Clocks reopen = Clocks::Now();
  queue = MustOpen(dir.path());
  ASSERT_TRUE(queue);
  PrintTime("reopen (a scan of 75 MB)", reopen, Clocks::Now());
  EXPECT_EQ(queue->counts().pending_records, kRecords);
  EXPECT_EQ(queue->counts().damaged_records, 0u);
}

}  // namespace
}  // namespace runmon::remote_write
