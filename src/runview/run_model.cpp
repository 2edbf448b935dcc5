// Builds a RunModel from W&B records. See run_model.hpp for the odd cases (time origin, non-numeric values).
#include "runview/run_model.hpp"

#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace runmon::runview {
namespace {

double TimestampSeconds(const google::protobuf::Timestamp& timestamp) {
  return static_cast<double>(timestamp.seconds()) + static_cast<double>(timestamp.nanos()) * 1e-9;
}

std::string FormatBytes(uint64_t bytes) {
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / kGiB);
}

std::string JoinArgs(const google::protobuf::RepeatedPtrField<std::string>& args) {
  std::string joined;
  for (const auto& arg : args) {
    if (!joined.empty()) joined += ' ';
    joined += arg;
  }
  return joined;
}

}  // namespace

std::string_view RunStateName(RunState state) {
  switch (state) {
    case RunState::kRunning:
      return "running";
    case RunState::kFinished:
      return "finished";
    case RunState::kFailed:
      return "failed";
    case RunState::kCrashed:
      return "crashed";
  }
  return "unknown";
}

std::optional<double> ParseJsonNumber(std::string_view value_json) {
  // JSON numbers only: no leading '+', no hex, no "inf"/"nan" (from_chars would take those).
  if (value_json.empty()) return std::nullopt;
  const char first = value_json.front();
  if (first != '-' && (first < '0' || first > '9')) return std::nullopt;
  if (value_json.size() > 1 && first == '-' && (value_json[1] < '0' || value_json[1] > '9')) {
    return std::nullopt;
  }
  double value = 0;
  const auto [end, error] = std::from_chars(value_json.data(), value_json.data() + value_json.size(), value);
  if (error != std::errc() || end != value_json.data() + value_json.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

bool RunModel::written_by_runmon() const {
  return overview_.producer.starts_with("runmon");
}

void RunModel::Ingest(const wandb::Record& record) {
  ++records_;
  switch (record.record_type_case()) {
    case wandb::Record::kStats:
      IngestStats(record.stats());
      break;
    case wandb::Record::kHistory:
      IngestHistory(record.history());
      break;
    case wandb::Record::kRun:
      IngestRun(record.run());
      break;
    case wandb::Record::kEnvironment:
      IngestEnvironment(record.environment());
      break;
    case wandb::Record::kHeader:
      overview_.producer = record.header().version_info().producer();
      break;
    case wandb::Record::kExit:
      overview_.exit_code = record.exit().exit_code();
      overview_.exit_runtime = record.exit().runtime();
      break;
    case wandb::Record::kConfig:
      for (const auto& item : record.config().update()) {
        if (item.key() == kOpenMetricsTableKey) {
          IngestOpenMetricsTable(item.value_json());
          continue;
        }
        overview_.config.emplace_back(item.key(), item.value_json());
      }
      break;
    default:
      break;
  }
  ++data_version_;
}

void RunModel::IngestRun(const wandb::RunRecord& run) {
  if (!run.run_id().empty()) overview_.id = run.run_id();
  if (!run.display_name().empty()) overview_.name = run.display_name();
  if (!run.project().empty()) overview_.project = run.project();
  if (!run.entity().empty()) overview_.entity = run.entity();
  if (!run.host().empty()) overview_.host = run.host();
  if (!run.notes().empty()) overview_.notes = run.notes();
  if (run.tags_size() > 0) overview_.tags.assign(run.tags().begin(), run.tags().end());
  if (run.has_start_time()) {
    overview_.start_time = TimestampSeconds(run.start_time());
    if (!time_origin_) time_origin_ = overview_.start_time;
  }
  for (const auto& item : run.config().update()) overview_.config.emplace_back(item.key(), item.value_json());
}

void RunModel::SetFact(std::string label, std::string value) {
  if (value.empty()) return;
  for (auto& [existing_label, existing_value] : overview_.environment) {
    if (existing_label == label) {
      existing_value = std::move(value);
      return;
    }
  }
  overview_.environment.emplace_back(std::move(label), std::move(value));
}

void RunModel::IngestEnvironment(const wandb::EnvironmentRecord& environment) {
  // W&B writes one environment record per writer and runmon a second one with GPU facts: merge them.
  std::string command = environment.program();
  if (environment.args_size() > 0) command += (command.empty() ? "" : " ") + JoinArgs(environment.args());
  SetFact("Command", command);
  if (!command.empty()) overview_.command = command;
  if (!environment.gpu_type().empty()) overview_.gpu_type = environment.gpu_type();
  if (environment.gpu_count() > 0) overview_.gpu_count = environment.gpu_count();
  SetFact("Host", environment.host());
  if (overview_.host.empty()) overview_.host = environment.host();
  SetFact("User", environment.username());
  SetFact("OS", environment.os());
  SetFact("Python", environment.python());
  SetFact("Executable", environment.executable());
  SetFact("Directory", environment.root());
  if (environment.cpu_count() > 0 || environment.cpu_count_logical() > 0) {
    SetFact("CPUs",
            fmt::format("{} cores, {} logical", environment.cpu_count(), environment.cpu_count_logical()));
  }
  if (environment.has_memory() && environment.memory().total() > 0) {
    SetFact("Memory", FormatBytes(environment.memory().total()));
  }
  if (environment.gpu_count() > 0) {
    SetFact("GPUs", fmt::format("{} x {}", environment.gpu_count(), environment.gpu_type()));
  }
  SetFact("CUDA", environment.cuda_version());
  SetFact("Docker", environment.docker());
  for (const auto& [key, value] : environment.slurm()) SetFact("SLURM " + key, value);
  if (environment.has_started_at() && !overview_.start_time) {
    overview_.start_time = TimestampSeconds(environment.started_at());
  }
}

void RunModel::NoteTime(double seconds) {
  if (!overview_.last_time || seconds > *overview_.last_time) overview_.last_time = seconds;
}

TimeSeries& RunModel::SystemSeries(std::string_view key, size_t position) {
  if (position < recent_keys_.size() && recent_keys_[position].first == key) {
    return *recent_keys_[position].second;
  }
  auto it = system_.find(key);
  if (it == system_.end()) {
    it = system_.emplace(std::string(key), TimeSeries()).first;
    ++keys_version_;
  }
  if (position >= recent_keys_.size()) recent_keys_.resize(position + 1);
  recent_keys_[position] = {std::string(key), &it->second};
  return it->second;
}

void RunModel::IngestStats(const wandb::StatsRecord& stats) {
  ++stats_records_;
  const double time = TimestampSeconds(stats.timestamp());
  NoteTime(time);
  if (!time_origin_) time_origin_ = time;
  const double x = time - *time_origin_;
  for (int position = 0; position < stats.item_size(); ++position) {
    const auto& item = stats.item(position);
    const auto value = ParseJsonNumber(item.value_json());
    if (!value) {
      ++skipped_values_;
      continue;
    }
    SystemSeries(item.key(), static_cast<size_t>(position)).Append(x, *value);
  }
}

void RunModel::IngestHistory(const wandb::HistoryRecord& history) {
  // The step: the record's step, else its _step item, else one past the previous row.
  std::optional<double> step;
  if (history.has_step()) step = static_cast<double>(history.step().num());
  for (const auto& item : history.item()) {
    if (item.key() == "_step" ||
        (item.key().empty() && item.nested_key_size() == 1 && item.nested_key(0) == "_step")) {
      if (auto value = ParseJsonNumber(item.value_json())) step = *value;
    }
    if (item.key() == "_timestamp") {
      if (auto value = ParseJsonNumber(item.value_json())) NoteTime(*value);
    }
  }
  history_step_ = step ? *step : history_step_ + 1;
  for (const auto& item : history.item()) {
    std::string key = item.key();
    if (key.empty()) {
      for (const auto& part : item.nested_key()) key += (key.empty() ? "" : ".") + part;
    }
    if (key.empty() || key.front() == '_') continue;  // _step, _runtime, _timestamp, W&B's own keys
    const auto value = ParseJsonNumber(item.value_json());
    if (!value) {
      ++skipped_values_;
      continue;
    }
    auto it = history_.find(key);
    if (it == history_.end()) {
      it = history_.emplace(std::move(key), TimeSeries()).first;
      ++keys_version_;
    }
    it->second.Append(history_step_, *value);
  }
}

void RunModel::IngestOpenMetricsTable(std::string_view value_json) {
  // {"<endpoint>": {"<metric>": [{label: value, ...} for index 0, 1, ...]}}; each record holds the whole
  // table, so it replaces what was known. Anything else is ignored (the keys still chart, as "#<index>").
  const auto table = nlohmann::json::parse(value_json, nullptr, false);
  if (!table.is_object()) return;
  for (const auto& [endpoint, metrics] : table.items()) {
    if (!metrics.is_object()) continue;
    for (const auto& [metric, series] : metrics.items()) {
      if (!series.is_array()) continue;
      for (size_t index = 0; index < series.size(); ++index) {
        if (!series[index].is_object()) continue;
        std::string labels;
        for (const auto& [name, value] : series[index].items()) {
          if (!value.is_string()) continue;
          labels += (labels.empty() ? "" : ",") + name + "=" + value.get<std::string>();
        }
        series_labels_[fmt::format("openmetrics.{}.{}.{}", endpoint, metric, index)] = labels;
      }
    }
  }
  ++keys_version_;
}

const std::string* RunModel::SeriesLabels(std::string_view key) const {
  const auto it = series_labels_.find(key);
  return it == series_labels_.end() || it->second.empty() ? nullptr : &it->second;
}

size_t RunModel::MemoryBytes() const {
  size_t bytes = sizeof(*this);
  for (const auto& [key, series] : system_) bytes += key.capacity() + series.MemoryBytes() + 64;
  for (const auto& [key, series] : history_) bytes += key.capacity() + series.MemoryBytes() + 64;
  return bytes;
}

RunState DeriveRunState(const RunModel& model, std::optional<bool> writer_lock_held, double now_seconds,
                        double quiet_limit_seconds) {
  const auto& overview = model.overview();
  if (overview.exit_code) return *overview.exit_code == 0 ? RunState::kFinished : RunState::kFailed;
  if (writer_lock_held && *writer_lock_held) return RunState::kRunning;
  // runmon's writer holds its lock until the exit record is written: without it, the writer is gone.
  if (writer_lock_held && model.written_by_runmon()) return RunState::kCrashed;
  const auto last = overview.last_time ? overview.last_time : overview.start_time;
  if (last && now_seconds - *last <= quiet_limit_seconds) return RunState::kRunning;
  return RunState::kCrashed;
}

}  // namespace runmon::runview
