// What the remote writer's three threads share (remote_writer.hpp): the queue, the memory buffer between
// Enqueue and the writer thread, the sender's progress, the counters and the once-per-kind log. One mutex
// guards all of it and is never held across a disk or network call; the log has a lock of its own, so that a
// slow stderr never holds up Enqueue, and it is closed by the destructor, after which a sender left inside a
// hung transport logs nothing.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "remote_write/remote_writer.hpp"

namespace runmon::remote_write {

using Clock = std::chrono::steady_clock;

// One sample on its way from Enqueue to the writer thread, already in the queue's tick encoding (one
// allocation, where a copy of the sample's metrics takes one per key).
struct BufferedTick {
  int64_t timestamp_ms = 0;
  uint64_t values = 0;
  std::string payload;  // sample_codec.hpp
  Clock::time_point enqueued_at;
};

struct RemoteWriter::State {
  // Constant after Open.
  SenderOptions options;
  QueueOptions queue_options;
  ConstantLabels labels;
  std::filesystem::path directory;
  std::unique_ptr<DiskQueue> queue;
  Transport transport;

  mutable std::mutex mutex;
  std::condition_variable writer_wake;  // a tick was enqueued; stopping
  std::condition_variable sender_wake;  // a record was appended; Drain; stopping
  std::condition_variable
      progress;  // ticks written, records done, the sender's exit: Drain and ~RemoteWriter
  bool stopping = false;
  bool sender_exited = false;

  std::deque<BufferedTick> buffer;
  uint64_t buffered_samples = 0;
  uint64_t writing_samples = 0;  // the tick the writer took from the buffer and is appending
  int64_t writing_timestamp_ms = 0;
  uint64_t enqueued_ticks = 0;
  uint64_t handled_ticks = 0;  // appended, left out whole or dropped from the buffer

  uint64_t last_sequence = 0;  // the queue's, as of the writer's latest append
  QueueCounts queue_counts;    // as of the latest append or acknowledgement
  // When the oldest record not in a batch yet was enqueued; unset when every record is in one.
  std::optional<Clock::time_point> unbatched_since;
  // The batch an earlier run had in flight, (resume_after, resume_end]: what of it the queue still holds
  // when it is opened (the writer may append after that).
  uint64_t resume_after = 0;
  uint64_t resume_end = 0;
  uint64_t drain_through = 0;  // Drain: send without waiting while done_through is below this
  uint64_t done_through = 0;   // every record up to it is delivered or given up

  RemoteWriteStats counters;  // the counting fields; pending ones are computed by Stats()
  uint64_t dropped_from_buffer = 0;
  uint64_t undecodable_records = 0;  // records the queue read whole whose payload did not decode

  void Notify() {
    writer_wake.notify_all();
    sender_wake.notify_all();
    progress.notify_all();
  }

  // "remote write to <destination>" for messages.
  std::string Subject() const {
    return options.destination.empty() ? "remote write" : "remote write to " + options.destination;
  }

  // Logs `message` unless a message of `kind` was logged already (an empty kind: always), and makes it
  // the last error when `error` is set. Takes the mutex: call without it.
  void Log(const std::string& kind, const std::string& message, bool error = true);
  // Lets messages of `kind` be logged again (a retryable failure, once its outage has ended).
  void ForgetKinds(const std::string& prefix);
  void CloseLog();

  std::function<void(const std::string&)> log;
  std::set<std::string> logged_kinds;  // under mutex
  std::mutex log_mutex;                // held while `log` runs
  bool log_closed = false;             // under log_mutex
};

// The sender thread's body (batch_sender.cpp).
void RunSender(const std::shared_ptr<RemoteWriter::State>& state);

}  // namespace runmon::remote_write
