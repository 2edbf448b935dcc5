// The command's own metrics for `runmon run` (user_metrics/metric_channel.hpp): the socket is made in the
// run directory (runmon.sock; where that path is too long for a socket, 107 bytes, in a private directory
// under the temporary directory instead) and its path goes to the command as RUNMON_RUN_SOCKET. Rows go to
// the run log as HistoryRecords as they close (dropped, and counted, only when the log's writer is far
// behind: a stuck disk must not grow runmon without bound). After the command exited and before the exit
// record: the last rows, the SummaryRecord and files/wandb-summary.json (each key's last value, then the
// last row's _step, _runtime and _timestamp, as W&B's core ends it), and a line saying what was taken
// when anything was.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "runlog/run_directory.hpp"
#include "runlog/run_recorder.hpp"
#include "user_metrics/history_log.hpp"
#include "user_metrics/metric_channel.hpp"

namespace runmon {

class RunMetricsChannel {
 public:
  static constexpr const char* kEnvironmentName = "RUNMON_RUN_SOCKET";

  // Null (and a warning) when no socket can be made: the run goes on without the channel.
  static std::unique_ptr<RunMetricsChannel> Open(const runlog::RunPaths& paths, const std::string& run_id);
  ~RunMetricsChannel();

  // "RUNMON_RUN_SOCKET=<path>", for the command's environment.
  std::string EnvironmentEntry() const;
  void Start(runlog::RunRecorder& recorder, double start_time);
  void Finish(const std::filesystem::path& files_directory);

 private:
  RunMetricsChannel(std::unique_ptr<user_metrics::MetricChannel> channel, std::filesystem::path private_dir);
  std::unique_ptr<user_metrics::MetricChannel> channel_;
  std::filesystem::path private_dir_;  // the fallback's directory, removed at the end ("" when unused)
  std::shared_ptr<user_metrics::HistoryLog> history_;  // shared with the channel's thread
};

}  // namespace runmon
