// The recorder's writer thread (see run_recorder.hpp).
#include "runlog/run_recorder.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include <fmt/format.h>

#include "runlog/log_format.hpp"

namespace runmon::runlog {
namespace {
using Clock = std::chrono::steady_clock;

Clock::duration Seconds(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}
}  // namespace

RunRecorder::RunRecorder(LogWriter writer, std::string stream_id, RecorderOptions options, Logger log)
    : writer_(std::move(writer)), stream_id_(std::move(stream_id)), options_(options), log_(std::move(log)) {
  counts_.bytes = writer_.size();
  if (!stream_id_.empty()) {
    wandb::Record record;
    record.mutable__info()->set_stream_id(stream_id_);
    info_ = record.SerializeAsString();
  }
  if (options_.write_index) {
    auto index = IndexWriter::Create(IndexPathFor(writer_.path()), writer_.path());
    if (index) {
      index_.emplace(std::move(*index));
    } else {
      log_(fmt::format("run log: no summary index ({}); viewers build it when they open the run",
                       index.error()));
    }
  }
  thread_ = std::thread([this] { WriterLoop(); });
}

void RunRecorder::IndexWritten(uint64_t before, std::span<const std::string> payloads,
                               std::span<const std::optional<EncodedStatsItems>> encoded) {
  if (!index_) return;
  uint64_t offset = before;
  for (size_t i = 0; i < payloads.size(); ++i) {
    const std::string& payload = payloads[i];
    const uint64_t start = FramedRecordStart(offset);
    offset = FramedRecordEnd(offset, payload.size());
    const bool known = encoded[i].has_value() && !encoded[i]->items.empty();
    if (auto status = known ? index_->NoteStats(start, offset, payload, *encoded[i])
                            : index_->Note(start, offset, payload);
        !status) {
      log_(fmt::format("run log: the summary index is no longer written ({}); viewers rebuild it",
                       status.error()));
      index_.reset();
      return;
    }
  }
}

RunRecorder::~RunRecorder() {
  (void)Close();
}

void RunRecorder::Add(wandb::Record& record) {
  if (!stream_id_.empty()) record.mutable__info()->set_stream_id(stream_id_);
  std::lock_guard lock(mutex_);
  if (closing_) return;
  Enqueue(record);
}

bool RunRecorder::AddUnlessBehind(wandb::Record& record, size_t max_queued_bytes) {
  if (!stream_id_.empty()) record.mutable__info()->set_stream_id(stream_id_);
  std::lock_guard lock(mutex_);
  if (closing_ || queued_bytes_ + writing_bytes_ > max_queued_bytes) return false;
  Enqueue(record);
  return true;
}

void RunRecorder::Seal(std::string& payload) {
  wandb::Record num;
  num.set_num(next_num_++);
  payload += num.SerializeAsString();
  payload += info_;
}

void RunRecorder::AddEncodedStats(std::string payload, std::optional<EncodedStatsItems> encoded) {
  std::lock_guard lock(mutex_);
  if (closing_) return;
  Seal(payload);
  queued_bytes_ += payload.size();
  queue_.push_back({std::move(payload), true, std::move(encoded)});
  if (queued_bytes_ > options_.max_queued_bytes) DropOldestStats();
  counts_.records_queued = queue_.size();
  wake_.notify_one();
}

size_t RunRecorder::AddEncodedUnlessBehind(std::span<std::string> payloads, size_t max_queued_bytes) {
  std::lock_guard lock(mutex_);
  size_t added = 0;
  for (std::string& payload : payloads) {
    if (closing_ || queued_bytes_ + writing_bytes_ > max_queued_bytes) break;
    Seal(payload);
    queued_bytes_ += payload.size();
    queue_.push_back({std::move(payload), false, std::nullopt});
    ++added;
  }
  if (queued_bytes_ > options_.max_queued_bytes) DropOldestStats();
  counts_.records_queued = queue_.size();
  if (added > 0) wake_.notify_one();
  return added;
}

void RunRecorder::Enqueue(wandb::Record& record) {
  record.set_num(next_num_++);
  Queued queued{record.SerializeAsString(), record.has_stats(), std::nullopt};
  queued_bytes_ += queued.payload.size();
  queue_.push_back(std::move(queued));
  if (queued_bytes_ > options_.max_queued_bytes) DropOldestStats();
  counts_.records_queued = queue_.size();
  wake_.notify_one();
}

void RunRecorder::DropOldestStats() {
  uint64_t dropped = 0;
  for (auto it = queue_.begin(); it != queue_.end() && queued_bytes_ > options_.max_queued_bytes;) {
    if (it->droppable) {
      queued_bytes_ -= it->payload.size();
      it = queue_.erase(it);
      ++dropped;
    } else {
      ++it;
    }
  }
  if (dropped > 0 && counts_.records_dropped == 0) {
    log_(fmt::format("run log: more than {} MiB wait to be written; dropping the oldest samples",
                     options_.max_queued_bytes >> 20));
  }
  counts_.records_dropped += dropped;
}

void RunRecorder::WriterLoop() {
  std::vector<std::string> batch;
  std::vector<bool> droppable;
  std::vector<std::optional<EncodedStatsItems>> encoded;
  auto last_sync = Clock::now();
  bool unsynced = false;
  bool failing = false;
  auto retry_at = Clock::now();
  std::unique_lock lock(mutex_);
  for (;;) {
    // Wake for new records (unless waiting to retry), for a due sync, or to close.
    auto deadline = Clock::time_point::max();
    if (unsynced) deadline = last_sync + Seconds(options_.sync_interval_seconds);
    if (failing && !queue_.empty()) deadline = std::min(deadline, retry_at);
    wake_.wait_until(lock, deadline, [&] {
      return closing_ || (!queue_.empty() && (!failing || Clock::now() >= retry_at)) ||
             (unsynced && Clock::now() >= last_sync + Seconds(options_.sync_interval_seconds));
    });
    const bool closing = closing_;
    if (!queue_.empty() && (!failing || closing || Clock::now() >= retry_at)) {
      batch.clear();
      droppable.clear();
      encoded.clear();
      for (auto& queued : queue_) {
        batch.push_back(std::move(queued.payload));
        droppable.push_back(queued.droppable);
        encoded.push_back(std::move(queued.encoded));
      }
      const size_t taken = queue_.size();
      queue_.clear();
      writing_bytes_ = queued_bytes_;
      queued_bytes_ = 0;
      lock.unlock();
      // Normally one write for everything queued. After a failure, one record at a time: a full disk takes
      // what fits, and a retry never fills the disk with more than one record that is then cut off again.
      // Closing, a record that does not fit is passed over so that a smaller one after it (the exit
      // record) still gets its chance.
      size_t written = 0;
      Status status = OkStatus();
      std::vector<bool> done(taken, false);
      if (!failing) {
        const uint64_t before = writer_.size();
        status = writer_.Append(batch);
        if (status) {
          std::fill(done.begin(), done.end(), true);
          IndexWritten(before, batch, encoded);
        }
      }
      if (failing || (!status && closing)) {
        for (size_t i = 0; i < taken; ++i) {
          if (done[i]) continue;
          const uint64_t before = writer_.size();
          const Status one = writer_.Append(batch[i]);
          if (one) {
            done[i] = true;
            IndexWritten(before, std::span(&batch[i], 1), std::span(&encoded[i], 1));
          } else {
            status = one;
            if (!closing) break;
          }
        }
      }
      for (bool d : done) written += d ? 1 : 0;
      lock.lock();
      writing_bytes_ = 0;
      counts_.records_written += written;
      counts_.bytes = writer_.size();
      if (written > 0) unsynced = true;
      if (written == taken) {
        if (failing) {
          log_(fmt::format("run log: writing works again ({} records written after waiting)", taken));
          failing = false;
        }
      } else {
        // Put the rest back in front of anything added meanwhile, in order.
        for (size_t i = taken; i-- > 0;) {
          if (done[i]) continue;
          queued_bytes_ += batch[i].size();
          queue_.push_front({std::move(batch[i]), droppable[i], std::move(encoded[i])});
        }
        ++counts_.write_failures;
        if (!failing) {
          log_(fmt::format("run log: {}; the run continues, samples wait in memory and are retried",
                           status.error()));
        }
        failing = true;
        retry_at = Clock::now() + Seconds(options_.retry_interval_seconds);
        if (queued_bytes_ > options_.max_queued_bytes) DropOldestStats();
      }
      counts_.records_queued = queue_.size();
    }
    if (unsynced && (closing || Clock::now() >= last_sync + Seconds(options_.sync_interval_seconds))) {
      lock.unlock();
      const Status status = writer_.Sync();
      lock.lock();
      if (!status) log_(fmt::format("run log: {}", status.error()));
      unsynced = false;
      last_sync = Clock::now();
    }
    if (closing) {
      if (!queue_.empty()) {
        size_t samples = 0;
        for (const auto& queued : queue_) samples += queued.droppable ? 1 : 0;
        close_error_ = fmt::format(
            "{} records could not be written to {} ({} samples{})", queue_.size(), writer_.path().string(),
            samples, samples < queue_.size() ? ", and the run's own records such as its exit" : "");
      }
      return;
    }
  }
}

Status RunRecorder::Close() {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return close_error_.empty() ? OkStatus() : Status(Error{close_error_});
    closed_ = true;
    closing_ = true;
    wake_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  if (!close_error_.empty()) return Error{close_error_};
  return OkStatus();
}

RecorderCounts RunRecorder::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

}  // namespace runmon::runlog
