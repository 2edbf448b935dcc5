// Writes a run's records from a thread of its own, so a slow or full disk never delays the sampler (or
// the child). Add() numbers a record (num = 1, 2, ... as W&B's core does), stamps it with the run id
// (_info.stream_id), serializes it and queues it; the writer thread appends what is queued with one write
// as soon as it arrives (so each sample reaches the file when it is taken) and fdatasyncs every
// sync_interval while there is new data, and at Close().
// When a write fails (disk full, a file size limit, an I/O error) nothing already in the file is harmed
// (LogWriter cuts a partial write off); the records stay queued and are retried every retry_interval one
// at a time (what fits is written; a retry never holds more than one record's worth of the disk), the
// failure is logged once and its end is logged too. At Close a record that does not fit is passed over,
// so the small exit record after it is still written when it fits. Past max_queued_bytes the oldest stats
// records are dropped (counted and logged); the run, environment and exit records never are. The writer
// thread also writes the log's summary index as it writes (index_writer.hpp); a failing index is logged once
// and given up, never the log.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>

#include "runlog/index_writer.hpp"
#include "runlog/log_writer.hpp"
#include "runlog/wandb_record.pb.h"

namespace runmon::runlog {

struct RecorderOptions {
  // Writes the summary index (index_writer.hpp) beside the log, as `<log>.idx`.
  bool write_index = true;
  double sync_interval_seconds = 2.0;
  double retry_interval_seconds = 1.0;
  size_t max_queued_bytes = 64u << 20;
};

struct RecorderCounts {
  uint64_t records_written = 0;
  uint64_t records_dropped = 0;
  uint64_t records_queued = 0;  // waiting to be written
  uint64_t bytes = 0;           // size of the log
  uint64_t write_failures = 0;
};

class RunRecorder {
 public:
  using Logger = std::function<void(const std::string&)>;

  RunRecorder(LogWriter writer, std::string stream_id, RecorderOptions options, Logger log);
  ~RunRecorder();
  RunRecorder(const RunRecorder&) = delete;
  RunRecorder& operator=(const RunRecorder&) = delete;

  // Thread-safe. The record is numbered and stamped here (its num and _info are overwritten).
  void Add(wandb::Record& record);
  // Adds the record unless more than `max_queued_bytes` wait to be written (the writer is behind): for
  // records that may be lost (console output), so they never push samples out of the queue. False: the
  // record was not added.
  bool AddUnlessBehind(wandb::Record& record, size_t max_queued_bytes);
  // The same for many records at once, already serialised without their num and _info
  // (EncodeHistoryRecord): both are appended to each payload here, as Add sets them. One lock and one wake
  // of the writer; those that fit before the queue holds `max_queued_bytes` are added, in order; returns how
  // many. Never dropped for samples once queued.
  size_t AddEncodedUnlessBehind(std::span<std::string> payloads, size_t max_queued_bytes);
  // A stats record serialised without its num and _info (EncodeStatsRecord), queued as Add queues one:
  // always taken, and the first to go when the queue is full. With `encoded` (EncodeStatsRecord's), the
  // summary index takes the record's values from it instead of reading the payload back.
  void AddEncodedStats(std::string payload, std::optional<EncodedStatsItems> encoded = std::nullopt);
  // Writes what is queued (one last try), syncs and stops the thread. Idempotent. Errors when records
  // could not be written.
  Status Close();
  RecorderCounts counts() const;

 private:
  struct Queued {
    std::string payload;
    bool droppable;
    std::optional<EncodedStatsItems> encoded;  // an encoded stats record's, for the index
  };
  void Enqueue(wandb::Record& record);  // with mutex_ held
  void Seal(std::string& payload);      // appends num and _info to an encoded record, with mutex_ held
  void WriterLoop();
  void DropOldestStats();  // with mutex_ held
  // Notes records appended at `before` (the log's size then) in the index, when there is one.
  void IndexWritten(uint64_t before, std::span<const std::string> payloads,
                    std::span<const std::optional<EncodedStatsItems>> encoded);

  LogWriter writer_;
  std::optional<IndexWriter> index_;  // used by the writer thread only
  const std::string stream_id_;
  std::string info_;  // _info (Record field 200) with the stream_id, serialised: the same for every record
  const RecorderOptions options_;
  const Logger log_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Queued> queue_;
  size_t queued_bytes_ = 0;
  size_t writing_bytes_ = 0;  // taken from the queue by the writer, not written yet
  int64_t next_num_ = 1;
  bool closing_ = false;
  RecorderCounts counts_;
  std::string close_error_;
  bool closed_ = false;
  std::thread thread_;
};

}  // namespace runmon::runlog
