// Reading log segments into summaries, and the workers that do it in the background (see index_builder.hpp).
#include "runlog/index_builder.hpp"

#include <algorithm>

#include "runlog/index_file.hpp"
#include "runlog/log_format.hpp"
#include "runlog/log_reader.hpp"

namespace runmon::runlog {

SharedKeyTable::SharedKeyTable(std::vector<std::string> names) {
  for (const std::string& name : names) table_.Id(name);
}

uint32_t SharedKeyTable::Id(std::string_view name) {
  std::lock_guard lock(mutex_);
  return table_.Id(name);
}

std::vector<std::string> SharedKeyTable::names() const {
  std::lock_guard lock(mutex_);
  return table_.names();
}

SegmentRead ReadSegment(int fd, uint64_t segment, SegmentWork work, SharedKeyTable& keys,
                        StatsValueReader& stats) {
  SegmentRead read;
  read.segment = segment;
  LogReader reader(FileSource(fd));
  if (const ReadOutcome header = reader.ReadHeader(); header != ReadOutcome::kEnd) {
    read.failed = header == ReadOutcome::kFailed;
    read.error = reader.error();
    return read;
  }
  const uint64_t start = segment * kSegmentBytes;
  const uint64_t end = SegmentEnd(segment);
  if (segment > 0) reader.SeekToBlock(start);
  SegmentAccumulator accumulator(segment);
  RawRecord raw;
  for (;;) {
    const ReadOutcome outcome = reader.Next(raw);
    if (outcome == ReadOutcome::kFailed) {
      read.failed = true;
      read.error = reader.error();
      return read;
    }
    // Not settled: the log ends inside a record, or its data ends inside the segment (more may come).
    // What was read so far is not given out; the segment is read again once the log holds it.
    if (outcome == ReadOutcome::kIncomplete || (outcome == ReadOutcome::kEnd && reader.position() < end)) {
      read.others.clear();
      return read;
    }
    if (outcome == ReadOutcome::kEnd) break;
    if (raw.offset >= end) break;
    if (work == SegmentWork::kOthersOnly) {
      const WireRecordKind kind = PeekRecordKind(raw.payload);
      if (kind == WireRecordKind::kOther) read.others.push_back({raw.offset, std::string(raw.payload)});
      continue;
    }
    double time = 0;
    const WireRecordKind kind =
        stats.Read(raw.payload, time, [&keys](std::string_view name) { return keys.Id(name); });
    switch (kind) {
      case WireRecordKind::kStats:
        accumulator.AddStats(raw.end, time, stats.values().data(), stats.values().size());
        break;
      case WireRecordKind::kOther:
        accumulator.AddOther(raw.end);
        read.others.push_back({raw.offset, std::string(raw.payload)});
        break;
      case WireRecordKind::kMalformed:
        reader.ReportDamage(raw.offset, raw.end - raw.offset, "a record that does not decode");
        break;
    }
  }
  // Damage ranges are final once a record past the segment (or the clean end) is reached: a range grows
  // while the reader skips on.
  read.settled = true;
  if (work == SegmentWork::kSummarise) {
    const auto crc = BoundaryCrc(fd, segment);
    read.summary = accumulator.Finish(crc ? *crc : 0);
    for (const LogDamage& damage : reader.damage()) {
      const uint64_t from = std::max(damage.offset, start);
      const uint64_t to = std::min(damage.offset + damage.length, end);
      if (to > from) read.summary.damaged_bytes += to - from;
    }
  }
  return read;
}

std::vector<size_t> RefiningOrder(size_t jobs, size_t preview) {
  std::vector<size_t> order;
  order.reserve(jobs);
  std::vector<bool> taken(jobs, false);
  if (jobs > 2 * preview && preview > 0) {
    // From the first job to the last: the preview spans the whole run.
    for (size_t i = 0; i < preview; ++i) {
      const size_t at = preview == 1 ? 0 : i * (jobs - 1) / (preview - 1);
      if (!taken[at]) {
        taken[at] = true;
        order.push_back(at);
      }
    }
  }
  for (size_t at = 0; at < jobs; ++at) {
    if (!taken[at]) order.push_back(at);
  }
  return order;
}

IndexBuilder::IndexBuilder(int fd, std::vector<Job> jobs, SharedKeyTable& keys, int threads)
    : fd_(fd), keys_(keys) {
  for (const size_t at : RefiningOrder(jobs.size(), kPreviewJobs)) jobs_.push_back(jobs[at]);
  preview_jobs_ = jobs_.size() > 2 * kPreviewJobs ? kPreviewJobs : 0;
  if (jobs_.empty()) {
    finished_ = true;
    return;
  }
  const int workers = std::clamp(threads, 1, 16);
  running_ = workers;
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { Work(); });
}

IndexBuilder::~IndexBuilder() {
  stop_ = true;
  for (std::thread& thread : threads_) thread.join();
}

void IndexBuilder::Work() {
  StatsValueReader stats;
  for (;;) {
    const size_t at = next_.fetch_add(1);
    if (stop_ || at >= jobs_.size()) break;
    const Job& job = jobs_[at];
    if (job.segment >= end_segment_.load()) {
      ++done_;
      continue;
    }
    SegmentRead read = ReadSegment(fd_, job.segment, job.work, keys_, stats);
    if (!read.settled || read.failed) {
      uint64_t seen = end_segment_.load();
      while (job.segment < seen && !end_segment_.compare_exchange_weak(seen, job.segment)) {
      }
    }
    {
      std::lock_guard lock(mutex_);
      results_.push_back(std::move(read));
    }
    ++done_;
    ready_.notify_all();
  }
  if (--running_ == 0) {
    {
      std::lock_guard lock(mutex_);  // a waiter between its check and its sleep still sees it
      finished_ = true;
    }
    ready_.notify_all();
  }
}

std::vector<SegmentRead> IndexBuilder::Take() {
  std::lock_guard lock(mutex_);
  std::vector<SegmentRead> taken = std::move(results_);
  results_.clear();
  return taken;
}

void IndexBuilder::Wait(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  ready_.wait_for(lock, timeout, [this] { return !results_.empty() || finished_.load(); });
}

void IndexBuilder::WaitFinished(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  ready_.wait_for(lock, timeout, [this] { return finished_.load(); });
}

}  // namespace runmon::runlog
