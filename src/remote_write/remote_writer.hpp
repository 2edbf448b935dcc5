// Prometheus remote write for `runmon run --remote-write URL` (and `runmon push` of a queue a run left):
// every sample goes to the on-disk queue (disk_queue.hpp) first, then a sender thread posts it, in order,
// to a remote-write receiver (Prometheus with --web.enable-remote-write-receiver, Mimir, VictoriaMetrics).
//
// Three threads meet here. The sampler's calls Enqueue, which copies the sample into a bounded buffer in
// memory and returns: it never waits for the disk or the network (when even that buffer overflows, the
// oldest ticks in it are dropped and counted). A writer thread maps each value to its series
// (series_mapper.hpp), leaves out what cannot be sent (keys without a Prometheus name, values that are not
// finite, a value at or before its series' newest queued one: a late lane's value that arrives after a newer
// one of its series, or a wall clock stepped back) and appends one record per tick (sample_codec.hpp). The
// sender thread forms batches and posts them through the Transport, by the rules of send_policy.hpp:
//  - in order; a batch is the records that follow the last one done, up to max_samples_per_request, sent
//    once the oldest unsent record waited batch_age_seconds, at once when a whole batch is waiting, when
//    Drain asks or when the queue held records at Open;
//  - before a batch is first sent the queue records it as in flight; every retry posts the same bytes, never
//    merged with newer records (a receiver refuses a whole request when one sample in it is at or before its
//    series' newest), and after a restart the batch that was in flight is sent first, byte for byte as
//    before (batch_encoder.hpp), and known to be possibly stored;
//  - no answer, a 5xx and a 429 are retried with exponential backoff and jitter (Retry-After honoured);
//    other 4xx drop the batch (counted) except a receiver saying it has the samples after an unknown
//    outcome (delivered); a batch whose newest sample is older than max_sample_age_seconds is dropped
//    without sending.
// Each kind of error is logged once (retryable ones once per outage, with the outage's end: "delivering
// again after N failed attempts"). Nothing here throws into the caller; a transport that throws counts as
// no answer.
//
// The destructor stops both threads without draining: the writer puts what the buffer holds on disk, and
// the sender is waited for up to stop_grace_seconds. A sender still inside a hung transport call then is
// left to return on its own (the transport has its deadline), holding the queue and the transport alive and
// logging nothing more; what it had in flight stays on disk and is resent by the next Open. The transport
// must therefore own what it uses (capture shared state by shared_ptr, not references to the caller's stack).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "core/result.hpp"
#include "core/sample.hpp"
#include "remote_write/constant_labels.hpp"
#include "remote_write/disk_queue.hpp"
#include "remote_write/send_policy.hpp"

namespace runmon::remote_write {

// POSTs one request body (snappy-compressed protobuf) to the receiver, with remote write's headers
// (Content-Encoding: snappy, Content-Type: application/x-protobuf, X-Prometheus-Remote-Write-Version:
// 0.1.0), and returns by `deadline`.
using Transport = std::function<PostResult(const std::string& compressed_body,
                                           std::chrono::steady_clock::time_point deadline)>;

struct SenderOptions {
  std::string destination = {};  // how messages name the receiver: its URL, without credentials
  size_t max_samples_per_request = 10000;
  double batch_age_seconds = 5;
  double request_timeout_seconds = 30;
  double min_backoff_seconds = 0.1;
  double max_backoff_seconds = 30;
  double max_sample_age_seconds = 6 * 3600;
  uint64_t memory_buffer_samples = 200000;  // values Enqueue holds for the writer thread
  double stop_grace_seconds = 1;            // how long the destructor waits for a sender inside the transport
};

struct RemoteWriteStats {
  uint64_t pending_samples = 0;           // enqueued, not yet delivered or given up (memory and disk)
  double oldest_pending_age_seconds = 0;  // of the oldest of them by its tick's time; 0 when none
  uint64_t sent_samples = 0;              // delivered (a 2xx, or the receiver said it has them)
  uint64_t dropped_samples = 0;           // the four reasons below together
  uint64_t dropped_rejected = 0;          // refused by the receiver (a 4xx)
  uint64_t dropped_too_old = 0;           // past max_sample_age_seconds, or the receiver's "out of bounds"
  uint64_t dropped_queue_full = 0;        // the disk queue's bound, or the memory buffer's
  uint64_t dropped_write_failed = 0;      // the disk queue could not append them (disk full, I/O error)
  uint64_t skipped_unmapped = 0;          // values whose key has no Prometheus name (never queued)
  uint64_t skipped_non_finite = 0;        // NaN and infinities (never queued)
  uint64_t skipped_out_of_order = 0;      // at or before their series' newest queued sample (never queued)
  uint64_t damaged_records = 0;           // found in the queue when it was opened or read
  uint64_t requests = 0;                  // POSTs made
  uint64_t retries = 0;                   // of them, batches posted again
  std::string last_error;                 // the latest failure's message; empty before any
};

class RemoteWriter {
 public:
  // Opens (or recovers) the queue in `queue_dir`; `labels` are stored there on first open, and a reopen
  // keeps the stored ones. `log` gets one line per message (without a "runmon:" prefix) from the
  // writer's threads, never after the destructor returns.
  static Result<std::unique_ptr<RemoteWriter>> Open(std::filesystem::path queue_dir, ConstantLabels labels,
                                                    QueueOptions queue, SenderOptions sender,
                                                    Transport transport,
                                                    std::function<void(const std::string&)> log);
  ~RemoteWriter();
  RemoteWriter(const RemoteWriter&) = delete;
  RemoteWriter& operator=(const RemoteWriter&) = delete;

  // The sampler's sink. Thread-safe; never blocks on disk or network.
  void Enqueue(const Sample& sample);
  // Sends without waiting for batches to fill until everything enqueued before the call is delivered or
  // given up, or until `deadline`: then an error saying how many samples stay on disk for `runmon push`.
  Status Drain(std::chrono::steady_clock::time_point deadline);
  // Thread-safe and cheap (no disk access): for the self-metrics read every tick.
  RemoteWriteStats Stats() const;
  // The labels the queue's series carry (those stored at its first Open).
  const ConstantLabels& labels() const;

  struct State;

 private:
  explicit RemoteWriter(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
  std::thread writer_;
  std::thread sender_;
};

}  // namespace runmon::remote_write
