// Builds summary index segments from a run log that lacks them (W&B's logs, a runmon log whose index is
// missing, stale or damaged), on background threads, and reads the records that are not stats out of
// indexed segments (a viewer needs the run, environment, history and console records in full). A segment is
// read on its own: the reader starts at its first block, passes over the end of a record begun in the
// segment before, and reads on past the segment's end to finish the last record begun in it. A segment is
// only summarised once it is settled (a record starts past it, or the data ends cleanly past it); the first
// one that is not ends the work, and its records are the caller's to read at full resolution.
//
// The work goes in an order that refines: first a spread of segments across the whole log (a coarse picture
// of the whole run within a few percent of the time), then the rest in log order, by `threads` workers.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "runlog/stats_values.hpp"
#include "runlog/summary_index.hpp"

namespace runmon::runlog {

// A KeyTable for several threads.
class SharedKeyTable {
 public:
  explicit SharedKeyTable(std::vector<std::string> names = {});
  uint32_t Id(std::string_view name);
  std::vector<std::string> names() const;

 private:
  mutable std::mutex mutex_;
  KeyTable table_;
};

struct OtherRecord {
  uint64_t offset = 0;
  std::string payload;
};

struct SegmentRead {
  uint64_t segment = 0;
  bool settled = false;  // false: the log does not yet hold all of the segment (nothing else is set)
  bool failed = false;   // the log could not be read (error says why) or is not a run log
  std::string error;
  SegmentSummary summary;           // when summarised
  std::vector<OtherRecord> others;  // the records that are not stats, in log order, when kept
};

enum class SegmentWork {
  kSummarise,   // the summary and the other records
  kOthersOnly,  // the other records only (the summary comes from the index)
};

// Reads one segment of the open log `fd`; `stats` is the caller's (it remembers keys by item position).
SegmentRead ReadSegment(int fd, uint64_t segment, SegmentWork work, SharedKeyTable& keys,
                        StatsValueReader& stats);

class IndexBuilder {
 public:
  struct Job {
    uint64_t segment;
    SegmentWork work;
  };
  // `jobs` in segment order; `fd` stays the caller's (open while the builder runs).
  IndexBuilder(int fd, std::vector<Job> jobs, SharedKeyTable& keys, int threads);
  ~IndexBuilder();  // stops the workers (what they were reading is dropped)
  IndexBuilder(const IndexBuilder&) = delete;
  IndexBuilder& operator=(const IndexBuilder&) = delete;

  // The segments read since the last call, in no particular order.
  std::vector<SegmentRead> Take();
  // Every job is done (or the work ended at an unsettled segment or a failure).
  bool finished() const { return finished_.load(); }
  // Jobs done and in all, for progress.
  uint64_t done() const { return done_.load(); }
  uint64_t total() const { return jobs_.size(); }
  // How many jobs the spread handed out first has (RefiningOrder): once done() reaches it, the picture
  // spans the whole run. 0 for a list too short to spread.
  size_t preview_jobs() const { return preview_jobs_; }
  // Waits until something was read or the work finished, at most `timeout`.
  void Wait(std::chrono::milliseconds timeout);
  // Waits until the work finished, at most `timeout` (segments read meanwhile do not wake it).
  void WaitFinished(std::chrono::milliseconds timeout);

 private:
  void Work();

  int fd_;
  static constexpr size_t kPreviewJobs = 64;
  std::vector<Job> jobs_;  // in the order they are handed out
  size_t preview_jobs_ = 0;
  SharedKeyTable& keys_;
  std::atomic<size_t> next_{0};
  std::atomic<uint64_t> done_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> finished_{false};
  std::atomic<int> running_{0};
  // Segments at or past this one are not read: one was not settled (the log ends inside it).
  std::atomic<uint64_t> end_segment_{UINT64_MAX};
  std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<SegmentRead> results_;
  std::vector<std::thread> threads_;
};

// The order IndexBuilder hands jobs out in: up to `preview` jobs spread evenly over the list, its first and
// its last included, then the rest in order. Returns positions into the list.
std::vector<size_t> RefiningOrder(size_t jobs, size_t preview);

}  // namespace runmon::runlog
