// The command's metrics channel: a Unix stream socket (`runmon run` puts it in the run directory and gives
// its path to the command as RUNMON_RUN_SOCKET) that any process of the run may connect to, several at
// once (DataLoader workers, ranks), each writing one JSON object a line (metric_line.hpp). A thread of its
// own reads every connection as fast as the lines come (epoll, 64 KiB reads), parses them and assembles
// history rows (history_rows.hpp), which it hands to the sink as they close: the sink (the run log's
// recorder) must not block for long, and never makes a writer wait.
//   - A bad line (not JSON, a step that goes back, a line longer than max_line_bytes, which is skipped to
//     its end) is counted and passed over; the first one is reported through `warn`, once.
//   - Past max_connections a connection is closed at once (counted): a writer then drops its lines.
//   - The socket file is 0600 and removed when the channel goes; an old socket file at the path (a run
//     directory reused) is replaced, anything else there is an error.
//   - Finish(grace), once the command exited: no new connection is taken, what the open ones hold is read
//     until each closes or the grace time is over (a descendant that keeps its connection open does not
//     hold the run up), the open row is closed, and the thread stops.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "user_metrics/history_rows.hpp"

namespace runmon::user_metrics {

struct MetricChannelOptions {
  size_t max_line_bytes = size_t{1} << 20;
  size_t max_connections = 512;
  double idle_row_seconds = 2.0;  // an open row with no line for this long is closed (history_rows.hpp)
};

struct MetricChannelCounts {
  uint64_t lines = 0;      // read, good or bad
  uint64_t bad_lines = 0;  // passed over
  uint64_t rows = 0;       // handed to the sink
  uint64_t values_dropped = 0;
  uint64_t connections = 0;
  uint64_t connections_refused = 0;  // past max_connections
};

class MetricChannel {
 public:
  // The rows closed since the last call, in order (taken by the sink: it may move them out).
  using RowSink = std::function<void(std::vector<HistoryRow>& rows)>;
  using Warn = std::function<void(const std::string&)>;

  // A path longer than a socket address holds (107 bytes) is an error that says so.
  static Result<std::unique_ptr<MetricChannel>> Open(const std::filesystem::path& path,
                                                     MetricChannelOptions options = {});
  ~MetricChannel();  // stops the thread if Finish was not called, removes the socket file
  MetricChannel(const MetricChannel&) = delete;
  MetricChannel& operator=(const MetricChannel&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // Starts the thread. `sink` and `warn` are called on it.
  void Start(RowSink sink, Warn warn);
  void Finish(std::chrono::milliseconds grace);
  // Each key's last value and what summary lines set (after Finish: complete).
  std::vector<MetricItem> Summary() const;
  MetricChannelCounts counts() const;

  struct State;  // shared with the thread

 private:
  MetricChannel(std::filesystem::path path, std::shared_ptr<State> state)
      : path_(std::move(path)), state_(std::move(state)) {}
  std::filesystem::path path_;
  std::shared_ptr<State> state_;
};

}  // namespace runmon::user_metrics
