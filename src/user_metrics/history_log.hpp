// A run's own metrics (history rows and the summary, history_rows.hpp) into its run log, as W&B writes
// them: each closed row one HistoryRecord (its items, _step, _runtime from the run's start, _timestamp); at
// the end one SummaryRecord and files/wandb-summary.json with each key's last value, then the last row's
// _step, _runtime and _timestamp, as W&B's core ends a summary. Rows are dropped (and counted) only when the
// log's writer is far behind (a stuck disk must not grow the process without bound). Shared by `runmon
// run`'s metrics channel and the in-process API (<runmon/run.hpp>).
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "runlog/records.hpp"
#include "runlog/run_recorder.hpp"
#include "user_metrics/history_rows.hpp"

namespace runmon::user_metrics {

class HistoryLog {
 public:
  // Queued history past this many bytes waits for nobody: the rows are dropped.
  static constexpr size_t kMaxQueuedBytes = 64u << 20;

  HistoryLog(runlog::RunRecorder& recorder, double start_time)
      : recorder_(recorder), start_time_(start_time) {}

  // Records the rows (emptied). One caller at a time.
  void Write(std::vector<HistoryRow>& closed);
  // The SummaryRecord and `files_directory`/wandb-summary.json, once no row is written any more. Nothing
  // when there is no summary and no row. An error: the file could not be written (the record was queued).
  Status WriteSummary(std::vector<MetricItem> summary, const std::filesystem::path& files_directory);

  uint64_t rows_written() const { return written_; }
  uint64_t rows_dropped() const { return dropped_; }

 private:
  runlog::RunRecorder& recorder_;
  const double start_time_;
  std::vector<std::string> payloads_;
  std::vector<runlog::JsonItemView> views_;
  std::atomic<uint64_t> written_{0};
  std::atomic<uint64_t> dropped_{0};
  std::optional<HistoryRow> last_;  // its step and time, without items
};

}  // namespace runmon::user_metrics
