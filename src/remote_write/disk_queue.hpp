// The remote-write queue on disk: every sample goes here first, before any network, so that a receiver that
// is down, a full network or a `kill -9` of runmon loses nothing. It lives in one directory under the run
// directory (`<run dir>/remote-write/<destination>/`) and is a sequence of records, numbered 1, 2, ... with
// no gaps, in segment files of about `segment_bytes` each, named after their first record's sequence.
//
// Each record is framed with its length and a CRC-32C of its header and payload, so that a torn tail (the
// process killed inside a write) or a damaged block is found when the queue is opened again: a torn tail is
// cut off, a damaged record is skipped (the records after it in its segment are still read; formats in
// queue_format.hpp), and both are counted, never a crash. Appends are plain write(2)s without fsync: what a
// killed process wrote is in the page cache and survives it (a power loss may cost the last seconds, which
// the run log's fdatasync covers).
//
// The cursor file says how far the sender got: every record up to `acked` is delivered (or given up), and
// (acked, inflight_end] is the batch being sent, which may already have reached the receiver. It is written
// atomically (a new file renamed over the old) before a batch is first sent and after it is acknowledged,
// so that after a restart the same batch is resent unchanged (a receiver rejects a request that mixes
// samples it stored with new ones) and is known to be possibly stored.
//
// The queue is bounded: an append that takes it past `max_bytes` deletes the oldest segments once its record
// is written (their pending records are counted as dropped), so a failed append drops nothing. Segments
// whose records are all acknowledged are deleted (all but the active one, which appends still go to).
// One appender thread and one reader (the sender) may use a queue at once; every method is thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace runmon::remote_write {

struct QueueOptions {
  uint64_t max_bytes = uint64_t{256} << 20;    // all segments together
  uint64_t segment_bytes = uint64_t{8} << 20;  // a new segment is started past this size
};

struct QueueRecord {
  uint64_t sequence = 0;
  uint32_t samples = 0;      // values in the payload (for batch sizes and the queue-length self-metric)
  int64_t timestamp_ms = 0;  // the sample's tick, for the oldest-pending-age self-metric and the age cap
  std::string payload;       // opaque to the queue
};

struct QueueCursor {
  uint64_t acked = 0;         // every record with sequence <= acked is done
  uint64_t inflight_end = 0;  // > acked: the records (acked, inflight_end] are the batch in flight
};

struct QueueCounts {
  uint64_t pending_records = 0;  // after the cursor's acked
  uint64_t pending_samples = 0;
  int64_t oldest_pending_ms = 0;  // timestamp of the first pending record; 0 when none is pending
  uint64_t dropped_records = 0;   // deleted unsent to keep the bound, since Open
  uint64_t dropped_samples = 0;
  uint64_t damaged_records = 0;  // found torn or damaged when the queue was opened (and by Read)
  // At Open the cursor file was damaged, or missing while segments were there: every record left was taken
  // as pending, so records delivered before may be sent again.
  bool cursor_lost = false;
};

class DiskQueue {
 public:
  // Opens the queue in `directory`, creating it when missing, and recovers what an earlier process left:
  // the cursor, the segments (a torn tail is cut off). Errors when the directory cannot be created or read,
  // or another live process holds the queue (an exclusive flock on a lock file in the directory).
  static Result<std::unique_ptr<DiskQueue>> Open(const std::filesystem::path& directory,
                                                 QueueOptions options = {});
  ~DiskQueue();
  DiskQueue(const DiskQueue&) = delete;
  DiskQueue& operator=(const DiskQueue&) = delete;

  // Appends one record as the next sequence. When it passes max_bytes, the oldest whole segments are
  // deleted after it is written (a record that cannot fit in max_bytes with its segment's header is
  // refused with an error). A write error (disk full, an I/O error, the file size limit) leaves the queue
  // as it was before the call and returns the error.
  Status Append(uint32_t samples, int64_t timestamp_ms, std::string_view payload);

  // The records after sequence `after`, in order: at least one when any exists, then more while their
  // samples together stay within `max_samples`. Records deleted to keep the bound, and damaged ones, are
  // skipped (the first returned may then come later than after + 1). Empty when nothing follows `after`.
  Result<std::vector<QueueRecord>> Read(uint64_t after, size_t max_samples) const;

  QueueCursor cursor() const;
  // Records that (acked, inflight_end] is about to be sent; persisted before it returns. An end before
  // acked or beyond the last record is an error.
  Status SetInflight(uint64_t inflight_end);
  // Everything up to `through` is done (delivered or given up); persisted, and the segments that hold only
  // acknowledged records are deleted. `through` beyond the last record, or before acked, is an error; the
  // in-flight end moves up to `through` when it was below.
  Status Ack(uint64_t through);

  QueueCounts counts() const;
  // What Open found and did that a reader of the log should know (a torn tail cut, damaged records, a
  // lost cursor, a segment deleted because nothing in it checked out), one line each; empty when the queue
  // was found intact.
  std::vector<std::string> open_notes() const;
  uint64_t last_sequence() const;  // 0 when the queue has never held a record
  uint64_t size_bytes() const;     // of all segments

  struct Impl;

 private:
  explicit DiskQueue(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace runmon::remote_write
