// `runmon run`'s metrics channel: the socket's place, rows into the run log, the summary at the end. See
// run_metrics_channel.hpp.
#include "app/run_metrics_channel.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include <fmt/format.h>

#include "app/cli_common.hpp"

namespace runmon {
namespace {

constexpr auto kGrace = std::chrono::seconds(2);

}  // namespace

RunMetricsChannel::RunMetricsChannel(std::unique_ptr<user_metrics::MetricChannel> channel,
                                     std::filesystem::path private_dir)
    : channel_(std::move(channel)), private_dir_(std::move(private_dir)) {}

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
  history_ = std::make_shared<user_metrics::HistoryLog>(recorder, start_time);
  channel_->Start(
      [history = history_](std::vector<user_metrics::HistoryRow>& closed) { history->Write(closed); },
      [](const std::string& warning) { Warn(warning); });
}

void RunMetricsChannel::Finish(const std::filesystem::path& files_directory) {
  channel_->Finish(kGrace);
  if (!history_) return;
  auto summary = channel_->Summary();
  const size_t keys = summary.size();
  const auto counts = channel_->counts();
  if (auto written = history_->WriteSummary(std::move(summary), files_directory); !written) {
    Warn(written.error());
  }
  if (counts.lines == 0 && keys == 0) return;
  const auto count = [](uint64_t n, const char* one, const char* many) {
    return fmt::format("{} {}", n, n == 1 ? one : many);
  };
  std::string said = fmt::format("the command's metrics: {}, {}",
                                 count(history_->rows_written(), "row", "rows"), count(keys, "key", "keys"));
  if (counts.bad_lines > 0) said += ", " + count(counts.bad_lines, "line", "lines") + " passed over";
  if (history_->rows_dropped() > 0) {
    said += ", " + count(history_->rows_dropped(), "row", "rows") + " dropped (the log's writer was behind)";
  }
  if (counts.values_dropped > 0)
    said += ", " + count(counts.values_dropped, "value", "values") + " past the key limit";
  if (counts.connections_refused > 0) {
    said += ", " + count(counts.connections_refused, "connection", "connections") + " refused";
  }
  Warn(said);
}

}  // namespace runmon
