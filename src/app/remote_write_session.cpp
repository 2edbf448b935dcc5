// The remote write of a run, and `runmon push` (remote_write_session.hpp).
#include "app/remote_write_session.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <fstream>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "app/cli_common.hpp"
#include "core/wall_clock.hpp"
#include "http_client/http_post.hpp"
#include "remote_write/remote_writer.hpp"
#include "runlog/log_reader.hpp"
#include "runlog/record_reader.hpp"
#include "runlog/run_directory.hpp"
#include "runview/metric_groups.hpp"

namespace runmon {
namespace {

using Clock = std::chrono::steady_clock;

// Authorization: Bearer <token>, from the token file at every request; when the file cannot be read (a
// sidecar rewriting it) the last token read is sent and that is said once.
class BearerToken {
 public:
  explicit BearerToken(std::string path) : path_(std::move(path)) {}

  std::optional<std::string> Header() {
    std::lock_guard lock(mutex_);
    std::ifstream file(path_, std::ios::binary);
    std::string token;
    if (file) {
      token.assign(64 * 1024, '\0');
      file.read(token.data(), static_cast<std::streamsize>(token.size()));
      token.resize(static_cast<size_t>(file.gcount()));
      while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' '))
        token.pop_back();
    }
    if (token.empty() || token.find_first_of("\r\n") != std::string::npos) {
      if (!warned_)
        Warn(fmt::format("--remote-write-bearer-token-file {}: cannot be read; the last token goes", path_));
      warned_ = true;
      return last_.empty() ? std::nullopt : std::optional(last_);
    }
    warned_ = false;
    last_ = "Bearer " + token;
    return last_;
  }

 private:
  std::mutex mutex_;
  std::string path_;
  std::string last_;
  bool warned_ = false;
};

remote_write::Transport MakeTransport(const RemoteWriteDestination& destination) {
  std::vector<http::HttpHeader> headers = {{"Content-Encoding", "snappy"},
                                           {"Content-Type", "application/x-protobuf"},
                                           {"X-Prometheus-Remote-Write-Version", "0.1.0"},
                                           {"User-Agent", fmt::format("runmon/{}", RUNMON_VERSION)}};
  for (const auto& [name, value] : destination.headers) headers.push_back({name, value});
  auto poster = std::make_shared<http::HttpPoster>(destination.url, headers);
  std::shared_ptr<BearerToken> token;
  if (!destination.bearer_token_file.empty())
    token = std::make_shared<BearerToken>(destination.bearer_token_file);
  return [poster, token](const std::string& body, Clock::time_point deadline) {
    std::vector<http::HttpHeader> extra;
    if (token) {
      if (auto header = token->Header()) extra.push_back({"Authorization", *header});
    }
    http::PostResult posted = poster->Post(body, extra, deadline);
    remote_write::PostResult result;
    result.status = posted.status;
    result.body = std::move(posted.body);
    result.retry_after_seconds = posted.retry_after_seconds;
    result.request_sent = posted.request_sent;
    result.error = std::move(posted.error);
    return result;
  };
}

remote_write::ConstantLabels ToConstantLabels(const RemoteWriteLabels& labels) {
  return {
      .host = labels.host, .run_id = labels.run_id, .job_id = labels.job_id, .node_rank = labels.node_rank};
}

Result<std::unique_ptr<remote_write::RemoteWriter>> OpenWriter(const RemoteWriteSetup& setup,
                                                               const RemoteWriteDestination& destination,
                                                               const std::filesystem::path& run_directory,
                                                               const RemoteWriteLabels& labels) {
  remote_write::QueueOptions queue;
  queue.max_bytes = setup.queue_max_bytes;
  // Whole segments go when the bound is reached: small ones keep the most of the newest samples.
  queue.segment_bytes = std::clamp<uint64_t>(setup.queue_max_bytes / 16, 4096, uint64_t{8} << 20);
  remote_write::SenderOptions sender;
  sender.destination = destination.url;  // messages begin "remote write to URL: "
  return remote_write::RemoteWriter::Open(QueueDirectory(run_directory, destination),
                                          ToConstantLabels(labels), queue, sender, MakeTransport(destination),
                                          [](const std::string& message) { Warn(message); });
}

bool HoldsSegments(const std::filesystem::path& directory) {
  std::error_code error;
  for (std::filesystem::directory_iterator it(directory, error), end; !error && it != end;
       it.increment(error)) {
    if (it->path().extension() == ".seg") return true;
  }
  return false;
}

}  // namespace

struct RemoteWriteSession::Queue {
  std::string url;
  std::filesystem::path run_directory;
  std::unique_ptr<remote_write::RemoteWriter> writer;
};

namespace {

// "remote write to URL: N samples sent, M dropped (...)[, L left in the queue (runmon push ...)]".
bool Report(const RemoteWriteSession::Queue& queue, const Status& drained) {
  const remote_write::RemoteWriteStats stats = queue.writer->Stats();
  std::string line = fmt::format("remote write to {}: {} samples sent, {} dropped", queue.url,
                                 stats.sent_samples, stats.dropped_samples);
  if (stats.dropped_samples > 0) {
    line += fmt::format(" ({} refused, {} too old, {} for the queue's bound)", stats.dropped_rejected,
                        stats.dropped_too_old, stats.dropped_queue_full);
  }
  if (stats.pending_samples > 0) {
    line += fmt::format(", {} left in the queue (runmon push {} --remote-write {})", stats.pending_samples,
                        queue.run_directory.string(), queue.url);
    if (!drained) line += ": " + drained.error();
  }
  Warn(line);
  return stats.pending_samples == 0 && stats.dropped_samples == 0;
}

}  // namespace

Result<std::unique_ptr<RemoteWriteSession>> RemoteWriteSession::Start(
    const RemoteWriteSetup& setup, const std::filesystem::path& run_directory,
    const std::filesystem::path& logdir, const RemoteWriteLabels& labels) {
  std::unique_ptr<RemoteWriteSession> session(new RemoteWriteSession());
  session->setup_ = setup;
  for (const auto& destination : setup.destinations) {
    auto writer = OpenWriter(setup, destination, run_directory, labels);
    if (!writer) return Error{fmt::format("remote write to {}: {}", destination.url, writer.error())};
    session->own_.push_back(
        std::make_unique<Queue>(Queue{destination.url, run_directory, std::move(*writer)}));
  }
  std::error_code error;
  for (std::filesystem::directory_iterator it(logdir, error), end; !error && it != end; it.increment(error)) {
    const std::filesystem::path earlier = it->path();
    if (earlier == run_directory || earlier.filename().string().rfind("run-", 0) != 0) continue;
    for (const auto& destination : setup.destinations) {
      const auto directory = QueueDirectory(earlier, destination);
      if (!HoldsSegments(directory)) continue;
      // The labels the queue stored when it was made are kept: the samples are the earlier run's.
      auto writer = OpenWriter(setup, destination, earlier, {});
      if (!writer) continue;  // another runmon holds it (that run is alive and sends it itself)
      const uint64_t pending = (*writer)->Stats().pending_samples;
      if (pending == 0) continue;
      Warn(fmt::format("remote write to {}: sending the {} samples {} left in its queue", destination.url,
                       pending, earlier.filename().string()));
      session->leftover_.push_back(
          std::make_unique<Queue>(Queue{destination.url, earlier, std::move(*writer)}));
    }
  }
  return session;
}

RemoteWriteSession::~RemoteWriteSession() = default;

void RemoteWriteSession::Enqueue(const Sample& sample) {
  for (auto& queue : own_) queue->writer->Enqueue(sample);
}

std::vector<RemoteWriteCounts> RemoteWriteSession::Counts() const {
  std::vector<RemoteWriteCounts> counts;
  counts.reserve(own_.size());
  for (const auto& queue : own_) {
    const remote_write::RemoteWriteStats stats = queue->writer->Stats();
    counts.push_back({.pending_samples = stats.pending_samples,
                      .oldest_pending_age_seconds = stats.oldest_pending_age_seconds,
                      .sent_samples = stats.sent_samples,
                      .dropped_samples = stats.dropped_samples});
  }
  return counts;
}

void RemoteWriteSession::Finish() {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(setup_.drain_timeout_seconds));
  std::vector<Status> drained;
  for (auto* queues : {&own_, &leftover_}) {
    for (auto& queue : *queues) drained.push_back(queue->writer->Drain(deadline));
  }
  size_t i = 0;
  for (auto* queues : {&own_, &leftover_}) {
    for (auto& queue : *queues) Report(*queue, drained[i++]);
  }
}

namespace {

// The run's labels, from its run record (id, host) and environment records (job identity).
RemoteWriteLabels ReadLabels(const std::filesystem::path& log) {
  RemoteWriteLabels labels;
  auto fd = runlog::OpenLogForReading(log);
  if (!fd) return labels;
  runlog::RecordReader reader(runlog::FileSource(*fd));
  while (reader.Next() == runlog::ReadOutcome::kRecord) {
    const auto& record = reader.record();
    if (record.has_run()) {
      labels.run_id = record.run().run_id();
      labels.host = record.run().host();
    } else if (record.has_environment() && record.environment().has_job()) {
      if (!record.environment().job().job_id().empty()) labels.job_id = record.environment().job().job_id();
      if (!record.environment().job().node_rank().empty())
        labels.node_rank = record.environment().job().node_rank();
    }
  }
  ::close(*fd);
  return labels;
}

// Queues every stats record of the log, sending as it goes; the number of records queued.
const uint64_t kPushBufferedValues = remote_write::SenderOptions{}.memory_buffer_samples / 2;

Result<uint64_t> QueueLoggedSamples(const std::filesystem::path& log, remote_write::RemoteWriter& writer,
                                    Clock::time_point deadline) {
  auto fd = runlog::OpenLogForReading(log);
  if (!fd) return Error{fd.error()};
  runlog::RecordReader reader(runlog::FileSource(*fd));
  uint64_t queued = 0;
  Sample sample;
  runlog::ReadOutcome outcome;
  while ((outcome = reader.Next()) == runlog::ReadOutcome::kRecord) {
    const auto& record = reader.record();
    if (!record.has_stats() || !record.stats().has_timestamp()) continue;
    const auto& stamp = record.stats().timestamp();
    // Through milliseconds, so that the value lands where a backfill of the same log puts it.
    sample.timestamp = static_cast<double>(EpochMillis(EpochTime{stamp.seconds(), stamp.nanos()})) / 1000.0;
    sample.metrics.items().clear();
    for (const auto& item : record.stats().item()) {
      double value = 0;
      const std::string& text = item.value_json();
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (error != std::errc() || end != text.data() + text.size()) continue;  // strings, NaN as text
      // A run recorded with --label (W&B's x_label) has keys ending in /l:LABEL: the series is the key's.
      sample.metrics.Add(std::string(runview::SplitKeyLabel(item.key()).base), value);
    }
    if (sample.metrics.empty()) continue;
    // Enqueue never waits and its buffer in memory is bounded: a log is read much faster than it is sent,
    // so the queue is drained whenever the buffer is half full.
    if (writer.Stats().pending_samples + sample.metrics.items().size() > kPushBufferedValues) {
      if (auto drained = writer.Drain(deadline); !drained) return Error{drained.error()};
    }
    writer.Enqueue(sample);
    ++queued;
  }
  ::close(*fd);
  if (outcome == runlog::ReadOutcome::kFailed) return Error{reader.error()};
  return queued;
}

}  // namespace

int RunPushCommand(const PushOptions& options) {
  auto setup = ResolveRemoteWrite(options.remote_write);
  if (!setup) {
    Warn(setup.error());
    return 2;
  }
  if (setup->destinations.empty()) {
    Warn("push: where to? --remote-write URL");
    return 2;
  }
  const std::filesystem::path run_directory(options.run_directory);
  auto log = runlog::FindRunLog(run_directory);
  std::error_code error;
  if (!std::filesystem::is_directory(run_directory, error) || !log || log->parent_path() != run_directory) {
    Warn(fmt::format("push {}: not a run directory (run-YYYYMMDD_HHMMSS-<id>/ with its .wandb log)",
                     options.run_directory));
    return 2;
  }
  setup->drain_timeout_seconds = options.timeout_seconds;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(options.timeout_seconds));
  bool complete = true;
  for (const auto& destination : setup->destinations) {
    const bool queued_before = HoldsSegments(QueueDirectory(run_directory, destination)) ||
                               std::filesystem::exists(QueueDirectory(run_directory, destination), error);
    auto writer = OpenWriter(*setup, destination, run_directory,
                             queued_before ? RemoteWriteLabels{} : ReadLabels(*log));
    if (!writer) {
      Warn(fmt::format("remote write to {}: {}", destination.url, writer.error()));
      complete = false;
      continue;
    }
    RemoteWriteSession::Queue queue{destination.url, run_directory, std::move(*writer)};
    if (queued_before) {
      if (queue.writer->Stats().pending_samples == 0) {
        Warn(fmt::format("remote write to {}: nothing left to send from {}", destination.url,
                         run_directory.string()));
        continue;
      }
    } else {
      auto queued = QueueLoggedSamples(*log, *queue.writer, deadline);
      if (!queued) {
        Warn(fmt::format("push {}: {}", log->string(), queued.error()));
        complete = false;
      }
    }
    const Status drained = queue.writer->Drain(deadline);
    complete = Report(queue, drained) && complete;
  }
  return complete ? 0 : 1;
}

}  // namespace runmon
