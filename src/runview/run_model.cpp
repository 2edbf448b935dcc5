// Builds a RunModel from W&B records. See run_model.hpp for the odd cases (time origin, non-numeric values).
#include "runview/run_model.hpp"

#include <algorithm>
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

void RunModel::Ingest(const wandb::Record& record) {
  ++records_;
  progress_.Note(record);
  overview_.last_time = progress_.last_time();
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
    case wandb::Record::kOutputRaw: {
      const auto& output = record.output_raw();
      const double timestamp =
          static_cast<double>(output.timestamp().seconds()) + output.timestamp().nanos() * 1e-9;
      console_.Add(output.output_type() == wandb::OutputRawRecord::STDERR ? ConsoleStream::kStderr
                                                                          : ConsoleStream::kStdout,
                   output.line(), timestamp);
      break;
    }
    case wandb::Record::kHeader:
      overview_.producer = record.header().version_info().producer();
      break;
    case wandb::Record::kExit:
      overview_.exit_code = progress_.exit_code();
      overview_.exit_runtime = progress_.exit_runtime();
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

void RunModel::SetSystemSummaries(const std::vector<std::string>& key_names,
                                  const std::vector<const runlog::SegmentSummary*>& summaries) {
  for (auto& [key, series] : system_) series.Clear();
  recent_keys_.clear();
  summarised_stats_records_ = 0;
  summary_end_x_.reset();
  std::vector<TimeSeries*> by_id(key_names.size(), nullptr);
  for (const runlog::SegmentSummary* summary : summaries) {
    if (summary->stats_records == 0) continue;
    if (!time_origin_) time_origin_ = summary->first_time;
    summarised_stats_records_ += summary->stats_records;
    const double first = summary->first_time - *time_origin_;
    const double last = summary->last_time - *time_origin_;
    const double middle = (first + last) / 2;
    for (const runlog::KeySummary& key : summary->keys) {
      if (key.key >= by_id.size()) continue;
      TimeSeries*& series = by_id[key.key];
      if (series == nullptr) {
        auto it = system_.find(key_names[key.key]);
        if (it == system_.end()) {
          it = system_.emplace(key_names[key.key], TimeSeries()).first;
          ++keys_version_;
        }
        series = &it->second;
      }
      if (key.count == 1) {
        series->Append(last, key.last);
        continue;
      }
      const float second_extreme = key.min_first ? key.max : key.min;
      // At the segment's start, middle and end: the whole run's span stays that of its samples.
      series->Append(first, key.min_first ? key.min : key.max);
      series->Append(middle, second_extreme);
      if (key.last != second_extreme) series->Append(last, key.last);
    }
    summary_end_x_ = last;
    progress_.NoteSampleTime(summary->last_time);
  }
  overview_.last_time = progress_.last_time();
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
  if (environment.has_job() && !environment.job().job_id().empty()) {
    const auto& job = environment.job();
    overview_.job_id = job.job_id();
    overview_.node_rank = job.node_rank();
    overview_.job_launcher = job.launcher();
    overview_.job_name = job.job_name();
    SetFact("Job", job.job_id());
    SetFact("Job name", job.job_name());
    SetFact("Node rank", job.node_rank());
    SetFact("Launcher", job.launcher());
  }
  if (environment.has_started_at() && !overview_.start_time) {
    overview_.start_time = TimestampSeconds(environment.started_at());
  }
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
  }
  history_step_ = step ? *step : history_step_ + 1;
  // Images (and W&B's other media values) are not metrics: the media log takes them. Most rows hold none:
  // only a row with a "_type" leaf or an object value is read for them.
  const bool may_hold_media = std::any_of(history.item().begin(), history.item().end(), [](const auto& item) {
    const size_t first = item.value_json().find_first_not_of(" \t\r\n");
    return (item.nested_key_size() > 1 && item.nested_key(item.nested_key_size() - 1) == "_type") ||
           (first != std::string::npos && item.value_json()[first] == '{');
  });
  RowImages images;
  if (may_hold_media) {
    std::vector<std::string_view> parts;
    for (const auto& item : history.item()) {
      if (item.nested_key_size() == 0) parts.push_back(item.key());
      for (const auto& part : item.nested_key()) parts.push_back(part);
    }
    std::vector<HistoryField> fields;
    size_t offset = 0;
    for (const auto& item : history.item()) {
      const size_t count = std::max<size_t>(1, static_cast<size_t>(item.nested_key_size()));
      fields.push_back({std::span<const std::string_view>(parts).subspan(offset, count), item.value_json()});
      offset += count;
    }
    images = ParseRowImages(fields);
    for (const auto& [key, image] : images.images) media_.Add(key, history_step_, image);
    for (const auto& error : images.errors) media_.NoteRejected(error);
  }
  for (int index = 0; index < history.item_size(); ++index) {
    if (may_hold_media && images.media_items[static_cast<size_t>(index)]) continue;
    const auto& item = history.item(index);
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
  return bytes + console_.MemoryBytes() + media_.MemoryBytes();
}

std::optional<double> RunRuntime(const RunOverview& overview, RunState state, double now_seconds) {
  if (state == RunState::kRunning && overview.start_time)
    return std::max(0.0, now_seconds - *overview.start_time);
  std::optional<double> span;
  if (overview.start_time && overview.last_time)
    span = std::max(0.0, *overview.last_time - *overview.start_time);
  if (overview.exit_runtime && *overview.exit_runtime > 0)
    return std::max(*overview.exit_runtime, span.value_or(0));
  return span;
}

std::string NodeName(std::string_view node_rank, std::string_view host) {
  std::string name = "node " + (node_rank.empty() ? std::string("?") : ShortName(node_rank, 64));
  if (!host.empty()) name += " (" + ShortName(host, 128) + ")";
  return name;
}

std::string ShortName(std::string_view name, size_t max_bytes) {
  if (name.size() <= max_bytes) return std::string(name);
  size_t cut = max_bytes;
  // Not inside a UTF-8 sequence: back up over its continuation bytes to its first byte.
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
  return std::string(name.substr(0, cut)) + "…";
}

}  // namespace runmon::runview
