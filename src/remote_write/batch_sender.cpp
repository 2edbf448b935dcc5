// The remote writer's sender thread: forms batches from the disk queue, posts them through the transport
// and acts on the answers by send_policy.hpp's rules; see remote_writer.hpp for the whole picture. Only this
// thread reads the queue, moves its cursor and calls the transport.
#include <chrono>
#include <exception>
#include <random>

#include <fmt/format.h>

#include "remote_write/batch_encoder.hpp"
#include "remote_write/writer_state.hpp"

namespace runmon::remote_write {
namespace {

using Seconds = std::chrono::duration<double>;

int64_t WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// "HTTP 400: <the start of the body>", or "HTTP 503" for an empty body.
std::string Answered(const PostResult& result) {
  const std::string excerpt = BodyExcerpt(result.body);
  if (excerpt.empty()) return fmt::format("HTTP {}", result.status);
  return fmt::format("HTTP {}: {}", result.status, excerpt);
}

struct Batch {
  uint64_t end = 0;  // the sequence of its last record
  int64_t newest_ms = 0;
  EncodedBatch encoded;
  bool maybe_stored = false;       // an earlier try (or an earlier run) may have reached the receiver
  bool inflight_recorded = false;  // the queue's cursor says it is in flight
  unsigned tries = 0;
};

enum class Dropped { kNo, kRejected, kTooOld };

class Sender {
 public:
  explicit Sender(RemoteWriter::State& state)
      : state_(state), mapper_(state.labels), encoder_(mapper_), random_(std::random_device{}()) {}

  void Run() {
    if (state_.resume_end > state_.resume_after) {
      // The batch an earlier run had in flight, exactly as it was: it may be stored already.
      Batch batch;
      while (!Load(state_.resume_after, state_.resume_end, &batch)) {
        if (!WaitBackoff(std::nullopt)) return;
      }
      batch.maybe_stored = true;
      batch.inflight_recorded = true;
      Send(batch);
    }
    while (WaitForBatch()) {
      uint64_t after = 0;
      {
        std::lock_guard guard(state_.mutex);
        after = state_.done_through;
      }
      Batch batch;
      if (!Load(after, 0, &batch)) {
        if (!WaitBackoff(std::nullopt)) return;
        continue;
      }
      {
        std::lock_guard guard(state_.mutex);
        if (state_.last_sequence > batch.end) {
          state_.unbatched_since = Clock::now();
        } else {
          state_.unbatched_since.reset();
        }
      }
      Send(batch);
    }
  }

 private:
  // Until a batch is due (true) or the writer stops (false).
  bool WaitForBatch() {
    const auto age = std::chrono::duration_cast<Clock::duration>(Seconds(state_.options.batch_age_seconds));
    std::unique_lock lock(state_.mutex);
    for (;;) {
      if (state_.stopping) return false;
      if (state_.last_sequence <= state_.done_through) {
        state_.sender_wake.wait(lock);
        continue;
      }
      if (state_.drain_through > state_.done_through) return true;
      if (state_.queue_counts.pending_samples >= state_.options.max_samples_per_request) return true;
      if (!state_.unbatched_since) state_.unbatched_since = Clock::now();
      const Clock::time_point due = *state_.unbatched_since + age;
      if (Clock::now() >= due) return true;
      state_.sender_wake.wait_until(lock, due);
    }
  }

  // The records after `after`: one Read's worth, or (`end` > 0) exactly those up to `end`. False when the
  // queue could not be read (said once).
  bool Load(uint64_t after, uint64_t end, Batch* batch) {
    std::vector<QueueRecord> records;
    uint64_t position = after;
    for (;;) {
      Result<std::vector<QueueRecord>> read =
          state_.queue->Read(position, state_.options.max_samples_per_request);
      if (!read.ok()) {
        state_.Log("read", fmt::format("{}: cannot read the queue in {}: {}", state_.Subject(),
                                       state_.directory.string(), read.error()));
        return false;
      }
      bool complete = end == 0 || read->empty();
      for (QueueRecord& record : *read) {
        if (end > 0 && record.sequence > end) {
          complete = true;
          break;
        }
        position = record.sequence;
        records.push_back(std::move(record));
      }
      if (complete || position >= end) break;
    }
    batch->end = position;
    if (records.empty() && end == 0) {
      // Nothing readable follows `after` (records the bound deleted): what is known to exist is done.
      std::lock_guard guard(state_.mutex);
      batch->end = std::max(state_.last_sequence, after);
    }
    batch->newest_ms = 0;
    for (const QueueRecord& record : records)
      batch->newest_ms = std::max(batch->newest_ms, record.timestamp_ms);
    batch->encoded = encoder_.Encode(records);
    const EncodedBatch& encoded = batch->encoded;
    if (encoded.undecodable_records > 0) {
      state_.Log("undecodable",
                 fmt::format("{}: records in the queue in {} do not decode and were left out ({})",
                             state_.Subject(), state_.directory.string(), encoded.first_decode_error));
    }
    std::lock_guard guard(state_.mutex);
    state_.undecodable_records += encoded.undecodable_records;
    state_.counters.skipped_unmapped += encoded.unmapped;
    state_.counters.skipped_non_finite += encoded.non_finite;
    state_.counters.skipped_out_of_order += encoded.duplicates;
    return true;
  }

  void Send(Batch& batch) {
    if (batch.encoded.samples == 0) {
      Done(batch, Dropped::kNo, 0);
      return;
    }
    for (;;) {
      {
        std::lock_guard guard(state_.mutex);
        if (state_.stopping) return;
      }
      if (static_cast<double>(WallClockMs() - batch.newest_ms) >
          state_.options.max_sample_age_seconds * 1000) {
        state_.Log(
            "too-old-cap",
            fmt::format("{}: {} samples older than {} s (the age cap) were dropped without sending; later "
                        "ones are dropped and counted without a message",
                        state_.Subject(), batch.encoded.samples, state_.options.max_sample_age_seconds));
        Done(batch, Dropped::kTooOld, 0);
        return;
      }
      if (!batch.inflight_recorded) {
        if (Status recorded = state_.queue->SetInflight(batch.end); !recorded.ok()) {
          state_.Log("inflight",
                     fmt::format("{}: cannot record the batch in flight ({}); sending it anyway (a "
                                 "restart would send it as new)",
                                 state_.Subject(), recorded.error()));
        }
        batch.inflight_recorded = true;
      }
      const PostResult result = Post(batch.encoded.body);
      const Outcome outcome = Classify(result, batch.maybe_stored);
      if (MayHaveStored(result)) batch.maybe_stored = true;
      {
        std::lock_guard guard(state_.mutex);
        ++state_.counters.requests;
        if (batch.tries++ > 0) ++state_.counters.retries;
      }
      switch (outcome) {
        case Outcome::kDelivered:
        case Outcome::kAlreadyDelivered:
          if (failures_ > 0) {
            state_.Log(
                "", fmt::format("{}: delivering again after {} failed attempts", state_.Subject(), failures_),
                false);
            state_.ForgetKinds("retry:");
            failures_ = 0;
          }
          Done(batch, Dropped::kNo, batch.encoded.samples);
          return;
        case Outcome::kTooOld:
          state_.Log(
              "too-old-receiver",
              fmt::format(
                  "{}: the receiver refuses samples this old ({}); {} samples dropped. "
                  "Prometheus takes samples older than a series' newest only within its "
                  "storage.tsdb.out_of_order_time_window (off by default; set it in the storage: tsdb: "
                  "section of its configuration to at least the longest outage to bridge); later "
                  "batches refused as too old are dropped and counted without a message",
                  state_.Subject(), Answered(result), batch.encoded.samples));
          Done(batch, Dropped::kTooOld, 0);
          return;
        case Outcome::kRejected:
          state_.Log(fmt::format("rejected:{}", result.status),
                     fmt::format("{}: the receiver refused a batch ({}); {} samples dropped; later batches "
                                 "refused with HTTP {} are dropped and counted without a message",
                                 state_.Subject(), Answered(result), batch.encoded.samples, result.status));
          Done(batch, Dropped::kRejected, 0);
          return;
        case Outcome::kRetry:
          ++failures_;
          LogRetry(result);
          if (!WaitBackoff(result.retry_after_seconds)) return;
          break;
      }
    }
  }

  PostResult Post(const std::string& body) {
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             Seconds(state_.options.request_timeout_seconds));
    PostResult failed;
    failed.request_sent = true;  // nothing is known of what the transport did
    try {
      return state_.transport(body, deadline);
    } catch (const std::exception& e) {
      failed.error = fmt::format("the transport failed: {}", e.what());
    } catch (...) {
      failed.error = "the transport failed";
    }
    return failed;
  }

  void LogRetry(const PostResult& result) {
    const std::string wait = " (retrying with backoff; the samples wait on disk)";
    if (result.status == 0) {
      state_.Log("retry:no-response",
                 fmt::format("{}: no response: {}{}", state_.Subject(),
                             result.error.empty() ? "no error given" : result.error, wait));
    } else if (result.status == 429) {
      state_.Log("retry:429",
                 fmt::format("{}: HTTP 429, the receiver asks to slow down{}{}", state_.Subject(),
                             result.retry_after_seconds
                                 ? fmt::format(" (Retry-After: {} s)", *result.retry_after_seconds)
                                 : "",
                             wait));
    } else {
      state_.Log(fmt::format("retry:{}", result.status),
                 fmt::format("{}: {}{}", state_.Subject(), Answered(result), wait));
    }
  }

  // The backoff before the next try (false: stopping). Drain does not shorten it.
  bool WaitBackoff(std::optional<double> retry_after_seconds) {
    const unsigned failures = std::max(failures_, 1u);
    const double seconds =
        BackoffSeconds({state_.options.min_backoff_seconds, state_.options.max_backoff_seconds}, failures,
                       std::uniform_real_distribution<double>(0, 1)(random_), retry_after_seconds);
    std::unique_lock lock(state_.mutex);
    return !state_.sender_wake.wait_for(lock, Seconds(seconds), [&] { return state_.stopping; });
  }

  // The batch is delivered (`sent` samples) or dropped: the queue moves past it.
  void Done(const Batch& batch, Dropped dropped, uint64_t sent) {
    uint64_t done_through = 0;
    {
      std::lock_guard guard(state_.mutex);
      done_through = state_.done_through;
    }
    // An in-flight batch whose records are gone has nothing to acknowledge.
    if (batch.end > done_through) {
      if (Status acked = state_.queue->Ack(batch.end); !acked.ok()) {
        state_.Log("ack",
                   fmt::format("{}: cannot record delivery in the queue's cursor ({}); a restart would "
                               "send these samples again",
                               state_.Subject(), acked.error()));
      }
    }
    const QueueCounts counts = state_.queue->counts();
    std::lock_guard guard(state_.mutex);
    state_.done_through = std::max(state_.done_through, batch.end);
    state_.queue_counts = counts;
    state_.counters.sent_samples += sent;
    if (dropped == Dropped::kRejected) state_.counters.dropped_rejected += batch.encoded.samples;
    if (dropped == Dropped::kTooOld) state_.counters.dropped_too_old += batch.encoded.samples;
    state_.progress.notify_all();
  }

  RemoteWriter::State& state_;
  SeriesMapper mapper_;
  BatchEncoder encoder_;
  std::mt19937_64 random_;
  unsigned failures_ = 0;  // tries that failed since the last delivery (an outage), across batches
};

}  // namespace

void RunSender(const std::shared_ptr<RemoteWriter::State>& state) {
  Sender(*state).Run();
}

}  // namespace runmon::remote_write
