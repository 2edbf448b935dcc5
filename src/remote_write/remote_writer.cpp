// The remote writer's facade and its writer thread: Open, Enqueue, the buffer's way to the disk queue,
// Drain and Stats. The sender thread is batch_sender.cpp. See remote_writer.hpp for the rules.
#include "remote_write/remote_writer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "remote_write/sample_codec.hpp"
#include "remote_write/series_mapper.hpp"
#include "remote_write/writer_state.hpp"

namespace runmon::remote_write {
namespace {

int64_t WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Status ValidateOptions(const SenderOptions& options) {
  const auto positive = [](double value) { return std::isfinite(value) && value > 0; };
  const auto non_negative = [](double value) { return std::isfinite(value) && value >= 0; };
  if (options.max_samples_per_request == 0) return Error{"max_samples_per_request must be at least 1"};
  if (options.memory_buffer_samples == 0) return Error{"memory_buffer_samples must be at least 1"};
  if (!non_negative(options.batch_age_seconds)) return Error{"batch_age_seconds must be 0 or more"};
  if (!positive(options.request_timeout_seconds)) return Error{"request_timeout_seconds must be positive"};
  if (!non_negative(options.min_backoff_seconds) || !positive(options.max_backoff_seconds) ||
      options.min_backoff_seconds > options.max_backoff_seconds) {
    return Error{"the backoff must satisfy 0 <= min_backoff_seconds <= max_backoff_seconds, max positive"};
  }
  if (!positive(options.max_sample_age_seconds)) return Error{"max_sample_age_seconds must be positive"};
  if (!non_negative(options.stop_grace_seconds)) return Error{"stop_grace_seconds must be 0 or more"};
  return OkStatus();
}

// The writer thread's filter: what of one tick goes to the queue. A value at or before its series' newest
// queued one is left out, so the queue holds each series in time order and a batch never holds a sample
// the receiver has a newer one for (which would make it refuse the whole request); two values of one
// series in one tick keep the later.
class TickFilter {
 public:
  explicit TickFilter(const ConstantLabels& labels) : mapper_(labels) {}

  struct Counts {
    uint64_t unmapped = 0;
    uint64_t non_finite = 0;
    uint64_t out_of_order = 0;
  };

  // The values to queue, valid while `tick` is and until the next call; Commit() once they are on disk.
  std::span<const TickValue> Filter(const DecodedTick& tick, Counts* counts) {
    kept_.clear();
    kept_series_.clear();
    for (size_t position = 0; position < tick.values.size(); ++position) {
      const TickValue& metric = tick.values[position];
      const Series* series = mapper_.Map(metric.key, position);
      if (series == nullptr) {
        ++counts->unmapped;
        continue;
      }
      if (!std::isfinite(metric.value)) {
        ++counts->non_finite;
        continue;
      }
      if (newest_ms_.size() <= series->id) {
        newest_ms_.resize(series->id + 1, std::numeric_limits<int64_t>::min());
        slot_in_tick_.resize(series->id + 1, -1);
      }
      if (tick.timestamp_ms <= newest_ms_[series->id]) {
        ++counts->out_of_order;
        continue;
      }
      int32_t& slot = slot_in_tick_[series->id];
      if (slot >= 0) {
        ++counts->out_of_order;  // the earlier of two values of one series at one timestamp
        kept_[static_cast<size_t>(slot)] = metric;
        continue;
      }
      slot = static_cast<int32_t>(kept_.size());
      kept_.push_back(metric);
      kept_series_.push_back(series->id);
    }
    for (const uint32_t id : kept_series_) slot_in_tick_[id] = -1;
    timestamp_ms_ = tick.timestamp_ms;
    return kept_;
  }

  void Commit() {
    for (const uint32_t id : kept_series_) newest_ms_[id] = timestamp_ms_;
  }

 private:
  SeriesMapper mapper_;
  std::vector<int64_t> newest_ms_;     // by series id
  std::vector<int32_t> slot_in_tick_;  // by series id: index into kept_, -1 when not in this tick
  std::vector<TickValue> kept_;
  std::vector<uint32_t> kept_series_;
  int64_t timestamp_ms_ = 0;
};

void RunWriter(RemoteWriter::State& state) {
  TickFilter filter(state.labels);
  DecodedTick decoded;
  std::string payload;
  uint64_t reported_queue_drops = 0;
  uint64_t reported_buffer_drops = 0;
  std::unique_lock lock(state.mutex);
  for (;;) {
    state.writer_wake.wait(lock, [&] { return state.stopping || !state.buffer.empty(); });
    if (state.buffer.empty()) return;  // stopping, and everything buffered is on disk
    BufferedTick tick = std::move(state.buffer.front());
    state.buffer.pop_front();
    state.buffered_samples -= tick.values;
    state.writing_samples = tick.values;
    state.writing_timestamp_ms = tick.timestamp_ms;
    const uint64_t buffer_drops = state.dropped_from_buffer;
    lock.unlock();

    TickFilter::Counts counts;
    std::span<const TickValue> values;
    // Enqueue encoded the tick; decoding gives its keys back as views into the payload, without a copy.
    Status appended = DecodeTick(tick.payload, &decoded);
    if (appended.ok()) values = filter.Filter(decoded, &counts);
    if (!values.empty()) {
      EncodeTick(tick.timestamp_ms, values, &payload);
      appended = state.queue->Append(static_cast<uint32_t>(values.size()), tick.timestamp_ms, payload);
      if (appended.ok()) filter.Commit();
    }
    const QueueCounts queue_counts = state.queue->counts();
    const uint64_t last_sequence = state.queue->last_sequence();
    if (!appended.ok()) {
      state.Log("append",
                fmt::format("{}: cannot queue samples on disk in {}: {} (they are dropped and counted)",
                            state.Subject(), state.directory.string(), appended.error()));
    }
    if (queue_counts.dropped_samples > reported_queue_drops) {
      reported_queue_drops = queue_counts.dropped_samples;
      state.Log(
          "queue-bound",
          fmt::format("{}: the queue in {} reached its bound of {} bytes: its oldest unsent samples were "
                      "dropped (counted; a larger bound keeps a longer outage)",
                      state.Subject(), state.directory.string(), state.queue_options.max_bytes));
    }
    if (buffer_drops > reported_buffer_drops) {
      reported_buffer_drops = buffer_drops;
      state.Log("buffer-bound", fmt::format("{}: the disk queue falls behind the sampler: the oldest samples "
                                            "waiting in memory were dropped (counted)",
                                            state.Subject()));
    }

    lock.lock();
    ++state.handled_ticks;
    state.writing_samples = 0;
    state.counters.skipped_unmapped += counts.unmapped;
    state.counters.skipped_non_finite += counts.non_finite;
    state.counters.skipped_out_of_order += counts.out_of_order;
    if (!appended.ok()) state.counters.dropped_write_failed += values.empty() ? tick.values : values.size();
    state.queue_counts = queue_counts;
    if (last_sequence > state.last_sequence) {
      state.last_sequence = last_sequence;
      // The sender waits for the first record after a batch (its age counts from it), a whole batch, or
      // Drain; it is not woken for each record in between.
      const bool due = !state.unbatched_since ||
                       queue_counts.pending_samples >= state.options.max_samples_per_request ||
                       state.drain_through > state.done_through;
      if (!state.unbatched_since) state.unbatched_since = tick.enqueued_at;
      if (due) state.sender_wake.notify_all();
    }
    state.progress.notify_all();
  }
}

}  // namespace

void RemoteWriter::State::Log(const std::string& kind, const std::string& message, bool error) {
  {
    std::lock_guard guard(mutex);
    if (error) counters.last_error = message;
    if (!kind.empty() && !logged_kinds.insert(kind).second) return;
  }
  std::lock_guard guard(log_mutex);
  if (!log_closed && log) log(message);
}

void RemoteWriter::State::ForgetKinds(const std::string& prefix) {
  std::lock_guard guard(mutex);
  std::erase_if(logged_kinds, [&](const std::string& kind) { return kind.starts_with(prefix); });
}

void RemoteWriter::State::CloseLog() {
  std::lock_guard guard(log_mutex);
  log_closed = true;
}

Result<std::unique_ptr<RemoteWriter>> RemoteWriter::Open(std::filesystem::path queue_dir,
                                                         ConstantLabels labels, QueueOptions queue,
                                                         SenderOptions sender, Transport transport,
                                                         std::function<void(const std::string&)> log) {
  if (Status valid = ValidateOptions(sender); !valid.ok()) return Error{"remote write: " + valid.error()};
  if (!transport) return Error{"remote write: no transport"};
  Result<std::unique_ptr<DiskQueue>> opened = DiskQueue::Open(queue_dir, queue);
  if (!opened.ok()) return Error{"remote write: " + opened.error()};
  std::string damaged_labels;
  Result<ConstantLabels> stored = LoadOrStoreConstantLabels(queue_dir, labels, &damaged_labels);
  if (!stored.ok()) return Error{"remote write: " + stored.error()};

  auto state = std::make_shared<State>();
  state->options = std::move(sender);
  state->queue_options = queue;
  state->labels = std::move(*stored);
  state->directory = std::move(queue_dir);
  state->queue = std::move(*opened);
  state->transport = std::move(transport);
  state->log = std::move(log);
  const QueueCursor cursor = state->queue->cursor();
  state->done_through = cursor.acked;
  state->last_sequence = state->queue->last_sequence();
  state->resume_after = cursor.acked;
  state->resume_end = std::min(cursor.inflight_end, state->last_sequence);
  state->queue_counts = state->queue->counts();
  // What an earlier run left is sent at once: it has waited long enough.
  if (state->last_sequence > cursor.acked) state->unbatched_since = Clock::time_point::min();

  if (!damaged_labels.empty()) {
    state->Log("", fmt::format("{}: the queue's labels file was damaged ({}); stored this run's labels again",
                               state->Subject(), damaged_labels));
  }
  // What recovery found (a torn tail cut, damaged records, a lost cursor: samples may be sent again).
  for (const std::string& note : state->queue->open_notes()) {
    state->Log("", fmt::format("{}: the queue in {}: {}", state->Subject(), state->directory.string(), note));
  }
  return std::unique_ptr<RemoteWriter>(new RemoteWriter(std::move(state)));
}

RemoteWriter::RemoteWriter(std::shared_ptr<State> state) : state_(std::move(state)) {
  writer_ = std::thread([state = state_] { RunWriter(*state); });
  sender_ = std::thread([state = state_] {
    RunSender(state);
    std::lock_guard guard(state->mutex);
    state->sender_exited = true;
    state->progress.notify_all();
  });
}

RemoteWriter::~RemoteWriter() {
  {
    std::lock_guard guard(state_->mutex);
    state_->stopping = true;
  }
  state_->Notify();
  writer_.join();
  bool exited = false;
  {
    std::unique_lock lock(state_->mutex);
    exited =
        state_->progress.wait_for(lock, std::chrono::duration<double>(state_->options.stop_grace_seconds),
                                  [&] { return state_->sender_exited; });
  }
  state_->CloseLog();
  if (exited) {
    sender_.join();
  } else {
    sender_.detach();  // inside a hung transport: it returns by its deadline and ends on its own
  }
}

void RemoteWriter::Enqueue(const Sample& sample) {
  const std::vector<Metric>& items = sample.metrics.items();
  if (items.empty()) return;
  const double timestamp_ms = std::round(sample.timestamp * 1000);
  // A tick time no int64 of milliseconds holds (no real clock gives one) cannot be sent.
  if (!std::isfinite(timestamp_ms) || std::fabs(timestamp_ms) >= 9e18) {
    std::lock_guard guard(state_->mutex);
    state_->counters.skipped_non_finite += items.size();
    return;
  }
  // A key too long for the tick's encoding has no Prometheus name either (series_mapper.hpp).
  std::vector<TickValue> values;
  values.reserve(items.size());
  for (const Metric& metric : items) {
    if (metric.key.size() <= kMaxTickKeyBytes) values.push_back({metric.key, metric.value});
  }
  BufferedTick tick{static_cast<int64_t>(timestamp_ms), values.size(), {}, Clock::now()};
  EncodeTick(tick.timestamp_ms, values, &tick.payload);
  {
    std::lock_guard guard(state_->mutex);
    if (state_->stopping) return;
    state_->counters.skipped_unmapped += items.size() - values.size();
    state_->buffered_samples += tick.values;
    state_->buffer.push_back(std::move(tick));
    ++state_->enqueued_ticks;
    // Over the bound, the oldest ticks go (the newest one always stays, however large).
    while (state_->buffered_samples > state_->options.memory_buffer_samples && state_->buffer.size() > 1) {
      const uint64_t dropped = state_->buffer.front().values;
      state_->buffer.pop_front();
      state_->buffered_samples -= dropped;
      state_->dropped_from_buffer += dropped;
      ++state_->handled_ticks;
    }
  }
  state_->writer_wake.notify_one();
}

Status RemoteWriter::Drain(std::chrono::steady_clock::time_point deadline) {
  State& state = *state_;
  std::unique_lock lock(state.mutex);
  const uint64_t ticks = state.enqueued_ticks;
  state.progress.wait_until(lock, deadline, [&] { return state.handled_ticks >= ticks; });
  const uint64_t through = state.last_sequence;
  if (state.handled_ticks >= ticks) {
    state.drain_through = std::max(state.drain_through, through);
    state.sender_wake.notify_all();
    state.progress.wait_until(lock, deadline, [&] { return state.done_through >= through; });
    if (state.done_through >= through) return OkStatus();
  }
  const uint64_t left = state.queue_counts.pending_samples + state.buffered_samples + state.writing_samples;
  return Error{
      fmt::format("{}: {} samples not delivered by the deadline stay queued in {} (`runmon push` sends "
                  "them)",
                  state.Subject(), left, state.directory.string())};
}

RemoteWriteStats RemoteWriter::Stats() const {
  const State& state = *state_;
  std::lock_guard guard(state.mutex);
  RemoteWriteStats stats = state.counters;
  stats.dropped_queue_full = state.queue_counts.dropped_samples + state.dropped_from_buffer;
  stats.dropped_samples =
      stats.dropped_rejected + stats.dropped_too_old + stats.dropped_queue_full + stats.dropped_write_failed;
  stats.damaged_records = state.queue_counts.damaged_records + state.undecodable_records;
  stats.pending_samples = state.queue_counts.pending_samples + state.buffered_samples + state.writing_samples;
  std::optional<int64_t> oldest_ms;
  const auto consider = [&](int64_t timestamp_ms) {
    oldest_ms = oldest_ms ? std::min(*oldest_ms, timestamp_ms) : timestamp_ms;
  };
  if (state.queue_counts.pending_records > 0) consider(state.queue_counts.oldest_pending_ms);
  if (state.writing_samples > 0) consider(state.writing_timestamp_ms);
  if (!state.buffer.empty()) consider(state.buffer.front().timestamp_ms);
  if (oldest_ms) {
    stats.oldest_pending_age_seconds = std::max(0.0, static_cast<double>(WallClockMs() - *oldest_ms) / 1000);
  }
  return stats;
}

const ConstantLabels& RemoteWriter::labels() const {
  return state_->labels;
}

}  // namespace runmon::remote_write
