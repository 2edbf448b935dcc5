// What the TUI knows about one run, built record by record from its run log (W&B's or runmon's): the
// overview (run record, environment, exit), the system metrics of its stats records as series over seconds
// since the run started, and its logged metrics (history records) as series over steps. Ingesting is pure
// (records in, state out) so it is tested without files; run_loader.hpp feeds it from a log.
//
// Odd cases: a record may come before the run record (W&B writes stats as they come), so the time origin is
// the run's start_time when known before the first sample, else the first sample's time; values that are not
// JSON numbers (strings, NaN, objects) are counted and skipped, never stored as zero; keys are never dropped:
// a key the catalog does not know is kept and shown under "Other".
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runlog/run_state.hpp"
#include "runlog/summary_index.hpp"
#include "runlog/wandb_record.pb.h"
#include "runview/console_log.hpp"
#include "runview/media_log.hpp"
#include "runview/time_series.hpp"

namespace runmon::runview {

// Runs read for display take their states from runlog's one decision (run_state.hpp).
using runlog::ParseJsonNumber;
using runlog::RunState;
using runlog::RunStateName;
using runlog::RunVerdict;

struct RunOverview {
  std::string id;
  std::string name;
  std::string project;
  std::string entity;
  std::string host;
  std::string notes;
  std::vector<std::string> tags;
  std::string producer;                // the header's producer ("runmon 0.1.0", W&B's version)
  std::optional<double> start_time;    // seconds since the epoch
  std::optional<double> last_time;     // the newest record timestamp seen
  std::optional<int> exit_code;        // from the exit record
  std::optional<double> exit_runtime;  // whole seconds, from the exit record
  std::string command;                 // program and arguments, from the environment record
  std::string gpu_type;                // "NVIDIA H100 80GB HBM3"
  uint32_t gpu_count = 0;
  // The distributed job the run is one node of (the environment record's `job`); job_id is empty for a run
  // of no job. node_rank is as the launcher gave it ("0", "3"), a string: empty when it did not say.
  std::string job_id;
  std::string node_rank;
  std::string job_launcher;  // "slurm", "torchelastic", "mpi", "kubernetes", "flag"
  std::string job_name;
  // Environment facts in display order ("OS", "Linux-6.1 ..."), ("Command", "python train.py"), ...
  std::vector<std::pair<std::string, std::string>> environment;
  std::vector<std::pair<std::string, std::string>> config;  // key, value_json
};

class DetailReader;

class RunModel {
 public:
  void Ingest(const wandb::Record& record);
  // Replaces the system series with the summary index's points for `summaries` (in segment order; keys by
  // id into `key_names`): per key and segment its extremes in the order they came and its last value, so a
  // chart of the whole run draws its envelope from a few points per segment. Stats records read later
  // (the log's tail) are ingested at full resolution after them.
  void SetSystemSummaries(const std::vector<std::string>& key_names,
                          const std::vector<const runlog::SegmentSummary*>& summaries);
  // Where the summaries end (x of the last summarised sample); nullopt when the series are all points.
  std::optional<double> summary_end_x() const { return summary_end_x_; }
  // Reads the summarised part at full resolution for zoomed charts; null when the series are all points.
  const std::shared_ptr<const DetailReader>& detail() const { return detail_; }
  void set_detail(std::shared_ptr<const DetailReader> detail) { detail_ = std::move(detail); }

  const RunOverview& overview() const { return overview_; }
  // System metrics: key -> points (x = seconds since the run started).
  const std::map<std::string, TimeSeries, std::less<>>& system_series() const { return system_; }
  // Logged metrics: key -> points (x = step).
  const std::map<std::string, TimeSeries, std::less<>>& history_series() const { return history_; }
  // The command's console output (OutputRawRecords), as lines.
  const ConsoleLog& console() const { return console_; }
  // The images it logged (history items of W&B's image types), read from files/ under the run directory.
  const MediaLog& media() const { return media_; }
  void set_run_directory(std::filesystem::path directory) { media_.set_run_directory(std::move(directory)); }
  // Where x = 0 is, in seconds since the epoch (nullopt before the first sample).
  std::optional<double> time_origin() const { return time_origin_; }

  uint64_t records() const { return records_; }
  uint64_t stats_records() const { return stats_records_ + summarised_stats_records_; }
  uint64_t skipped_values() const { return skipped_values_; }
  // Bumped when a key appears (charts must be regrouped) and on every change (charts must be redrawn).
  uint64_t keys_version() const { return keys_version_; }
  uint64_t data_version() const { return data_version_; }
  // The labels of a scraped OpenMetrics series ("cpu=0,mode=idle"), from the index -> labels table runmon
  // writes into the run; nullptr when unknown or empty.
  const std::string* SeriesLabels(std::string_view key) const;
  // What the records say about the run's state (its writer, exit record, newest record time).
  const runlog::RunProgress& progress() const { return progress_; }
  size_t MemoryBytes() const;

 private:
  void IngestRun(const wandb::RunRecord& run);
  void IngestEnvironment(const wandb::EnvironmentRecord& environment);
  void IngestStats(const wandb::StatsRecord& stats);
  void IngestHistory(const wandb::HistoryRecord& history);
  void IngestOpenMetricsTable(std::string_view value_json);
  void SetFact(std::string label, std::string value);
  TimeSeries& SystemSeries(std::string_view key, size_t position);

  RunOverview overview_;
  runlog::RunProgress progress_;
  std::map<std::string, TimeSeries, std::less<>> system_;
  std::map<std::string, TimeSeries, std::less<>> history_;
  ConsoleLog console_;
  MediaLog media_;
  // The keys of the previous stats record, by position: records repeat their keys in the same order, so a
  // string compare finds the series without a map lookup.
  std::vector<std::pair<std::string, TimeSeries*>> recent_keys_;
  std::optional<double> time_origin_;
  std::optional<double> summary_end_x_;
  uint64_t summarised_stats_records_ = 0;
  std::shared_ptr<const DetailReader> detail_;
  std::map<std::string, std::string, std::less<>> series_labels_;  // openmetrics key -> "k=v,k=v"
  double history_step_ = -1;
  uint64_t records_ = 0;
  uint64_t stats_records_ = 0;
  uint64_t skipped_values_ = 0;
  uint64_t keys_version_ = 0;
  uint64_t data_version_ = 0;
};

// The config item runmon writes the OpenMetrics index -> labels table under.
inline constexpr std::string_view kOpenMetricsTableKey = "_runmon.openmetrics";

// The runtime shown for a run (leet and the dashboard alike): for a run that exited, the exit record's
// runtime, which W&B's format keeps in whole seconds, or the span of its records when that is longer (a
// 3.7 s run's exit record says 3); for a running run, the time since its start; otherwise the span of its
// records. nullopt without a start time (and no exit runtime).
std::optional<double> RunRuntime(const RunOverview& overview, RunState state, double now_seconds);

// The name of a job's node as the dashboard shows it: "node <rank>", with the host when known
// ("node 1 (gpu-b)"); "node ?" when the launcher gave no rank.
std::string NodeName(std::string_view node_rank, std::string_view host);

// A run's name as lists, overviews and labels show it: at most `max_bytes` (cut before a character, then
// "…"), since a run's name may be megabytes long. The whole name stays in RunOverview.
inline constexpr size_t kMaxShownNameBytes = 256;
std::string ShortName(std::string_view name, size_t max_bytes = kMaxShownNameBytes);

}  // namespace runmon::runview
