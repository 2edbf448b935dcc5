// `runmon run`'s metrics channel: the socket's place, rows into the run log, the summary at the end. See
// run_metrics_channel.hpp.
#include "app/run_metrics_channel.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli_common.hpp"
#include "runlog/records.hpp"

namespace runmon {
namespace {

constexpr size_t kMaxQueuedHistoryBytes = 64u << 20;
constexpr auto kGrace = std::chrono::seconds(2);

runlog::JsonItems ToJsonItems(std::vector<user_metrics::MetricItem>&& items) {
  runlog::JsonItems out;
  out.reserve(items.size());
  for (auto& item : items) out.emplace_back(std::move(item.key), std::move(item.value_json));
  return out;
}

// wandb-summary.json: the summary's keys and values as a JSON object. A value that is not JSON to
// nlohmann (Python's NaN) is written as W&B writes it, as a string.
std::string SummaryJson(const std::vector<user_metrics::MetricItem>& items) {
  nlohmann::ordered_json summary = nlohmann::ordered_json::object();
  for (const auto& item : items) {
    nlohmann::ordered_json value = nlohmann::ordered_json::parse(item.value_json, nullptr, false);
    summary[item.key] = value.is_discarded() ? nlohmann::ordered_json(item.value_json) : value;
  }
  return summary.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace

// Written by the channel's thread (the sink), read after it stopped.
struct RunMetricsChannel::Rows {
  std::atomic<uint64_t> written{0};
  std::atomic<uint64_t> dropped{0};
  std::optional<user_metrics::HistoryRow> last;  // its step and time, without items
};

RunMetricsChannel::RunMetricsChannel(std::unique_ptr<user_metrics::MetricChannel> channel,
                                     std::filesystem::path private_dir)
    : channel_(std::move(channel)), private_dir_(std::move(private_dir)), rows_(std::make_shared<Rows>()) {}

RunMetricsChannel::~RunMetricsChannel() {
  channel_.reset();  // removes the socket
  if (!private_dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove(private_dir_, ignored);
  }
}

std::unique_ptr<RunMetricsChannel> RunMetricsChannel::Open(const runlog::RunPaths& paths,
                                                           const std::string& run_id) {
  auto opened = user_metrics::MetricChannel::Open(paths.directory / "runmon.sock");
  std::filesystem::path private_dir;
  if (!opened) {
    // Too long a path (or a file system without sockets): a directory of this user's own under the
    // temporary directory.
    std::error_code error;
    private_dir =
        std::filesystem::temp_directory_path(error) / fmt::format("runmon-{}-{}", ::getuid(), run_id);
    if (!error && ::mkdir(private_dir.c_str(), 0700) == 0) {
      auto fallback = user_metrics::MetricChannel::Open(private_dir / "runmon.sock");
      if (fallback) {
        opened = std::move(fallback);
      } else {
        ::rmdir(private_dir.c_str());
      }
    }
    if (!opened) {
      Warn(fmt::format("the command's metrics are not taken: {}", opened.error()));
      return nullptr;
    }
  }
  return std::unique_ptr<RunMetricsChannel>(
      new RunMetricsChannel(std::move(*opened), std::move(private_dir)));
}

std::string RunMetricsChannel::EnvironmentEntry() const {
  return std::string(kEnvironmentName) + "=" + channel_->path().string();
}

void RunMetricsChannel::Start(runlog::RunRecorder& recorder, double start_time) {
  start_time_ = start_time;
  channel_->Start(
      [&recorder, start_time, rows = rows_, payloads = std::vector<std::string>(),
       views = std::vector<runlog::JsonItemView>()](std::vector<user_metrics::HistoryRow>& closed) mutable {
        payloads.resize(closed.size());
        for (size_t i = 0; i < closed.size(); ++i) {
          const user_metrics::HistoryRow& row = closed[i];
          views.clear();
          for (const auto& item : row.items) views.push_back({item.key, item.value_json});
          payloads[i] =
              runlog::EncodeHistoryRecord(row.step, row.timestamp - start_time, row.timestamp, views);
        }
        rows->last = user_metrics::HistoryRow{closed.back().step, closed.back().timestamp, {}};
        const size_t added = recorder.AddEncodedUnlessBehind(payloads, kMaxQueuedHistoryBytes);
        rows->written += added;
        rows->dropped += closed.size() - added;
      },
      [](const std::string& warning) { Warn(warning); });
}

void RunMetricsChannel::Finish(runlog::RunRecorder& recorder, const std::filesystem::path& files_directory) {
  channel_->Finish(kGrace);
  auto summary = channel_->Summary();
  const size_t keys = summary.size();
  const auto counts = channel_->counts();
  // As W&B's core ends a summary: the last row's step and times.
  if (rows_->last) {
    summary.push_back({"_step", std::to_string(rows_->last->step)});
    summary.push_back({"_runtime", runlog::FormatValueJson(rows_->last->timestamp - start_time_)});
    summary.push_back({"_timestamp", runlog::FormatValueJson(rows_->last->timestamp)});
  }
  if (!summary.empty()) {
    auto record = runlog::MakeSummaryRecord(ToJsonItems(std::vector(summary)));
    recorder.Add(record);
    std::ofstream file(files_directory / "wandb-summary.json", std::ios::binary | std::ios::trunc);
    file << SummaryJson(summary);
    if (!file) Warn(fmt::format("{}: cannot be written", (files_directory / "wandb-summary.json").string()));
  }
  if (counts.lines == 0 && summary.empty()) return;
  const auto count = [](uint64_t n, const char* one, const char* many) {
    return fmt::format("{} {}", n, n == 1 ? one : many);
  };
  std::string said = fmt::format("the command's metrics: {}, {}", count(rows_->written, "row", "rows"),
                                 count(keys, "key", "keys"));
  if (counts.bad_lines > 0) said += ", " + count(counts.bad_lines, "line", "lines") + " passed over";
  if (rows_->dropped > 0) {
    said += ", " + count(rows_->dropped, "row", "rows") + " dropped (the log's writer was behind)";
  }
  if (counts.values_dropped > 0)
    said += ", " + count(counts.values_dropped, "value", "values") + " past the key limit";
  if (counts.connections_refused > 0) {
    said += ", " + count(counts.connections_refused, "connection", "connections") + " refused";
  }
  Warn(said);
}

}  // namespace runmon
