// Record builders (see records.hpp).
#include "runlog/records.hpp"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/utf8.hpp"
#include "core/wall_clock.hpp"

namespace runmon::runlog {

void SetTimestamp(double seconds, google::protobuf::Timestamp& timestamp) {
  const EpochTime time = SplitEpochSeconds(seconds);
  timestamp.set_seconds(time.seconds);
  timestamp.set_nanos(time.nanos);
}

wandb::Record MakeHeaderRecord(const std::string& producer) {
  wandb::Record record;
  record.mutable_header()->mutable_version_info()->set_producer(producer);
  return record;
}

wandb::Record MakeRunRecord(const RunInfo& run) {
  wandb::Record record;
  auto* r = record.mutable_run();
  r->set_run_id(run.run_id);
  r->set_project(run.project);
  r->set_display_name(run.display_name);
  r->set_host(run.host);
  for (const auto& tag : run.tags) r->add_tags(tag);
  SetTimestamp(run.start_time, *r->mutable_start_time());
  return record;
}

Result<wandb::Record> MakeEnvironmentRecord(const nlohmann::json& metadata, const std::string& writer_id) {
  wandb::Record record;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  const auto status =
      google::protobuf::util::JsonStringToMessage(metadata.dump(), record.mutable_environment(), options);
  if (!status.ok())
    return Error{fmt::format("metadata does not fit the environment record: {}", status.ToString())};
  record.mutable_environment()->set_writer_id(writer_id);
  return record;
}

namespace {

// The one rule for value_json: the shortest JSON number that reads back as the same double; false (nothing
// written) when the value is not finite.
bool AppendValueJson(double value, fmt::memory_buffer& out) {
  if (!std::isfinite(value)) return false;
  fmt::format_to(std::back_inserter(out), "{}", value);
  return true;
}

}  // namespace

std::string FormatValueJson(double value) {
  fmt::memory_buffer text;
  AppendValueJson(value, text);
  return fmt::to_string(text);
}

bool FillStatsRecord(const Sample& sample, wandb::Record& record, std::string_view label) {
  // Record::Clear() would free the stats message; kept, its items and their strings are reused.
  wandb::StatsRecord* stats = record.has_stats() ? record.release_stats() : new wandb::StatsRecord();
  record.Clear();
  stats->Clear();
  record.set_allocated_stats(stats);
  SetTimestamp(sample.timestamp, *stats->mutable_timestamp());
  fmt::memory_buffer value;
  for (const auto& metric : sample.metrics.items()) {
    value.clear();
    if (!AppendValueJson(metric.value, value)) continue;
    auto* item = stats->add_item();
    item->set_key(metric.key);
    if (!label.empty()) item->mutable_key()->append("/l:").append(label);
    item->set_value_json(value.data(), value.size());
  }
  return stats->item_size() > 0;
}

wandb::Record MakeConfigRecord(const std::string& key, const nlohmann::json& value) {
  wandb::Record record;
  auto* item = record.mutable_config()->add_update();
  item->set_key(ToValidUtf8(key));
  // Invalid UTF-8 inside the value (label values come from other programs) is replaced, not thrown on.
  item->set_value_json(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return record;
}

wandb::Record MakeExitRecord(int exit_code, double runtime_seconds) {
  wandb::Record record;
  auto* exit = record.mutable_exit();
  exit->set_exit_code(exit_code);
  const double finite = std::isnan(runtime_seconds) ? 0.0 : runtime_seconds;
  const double clamped = std::clamp(finite, 0.0, static_cast<double>(std::numeric_limits<int32_t>::max()));
  exit->set_runtime(static_cast<int32_t>(clamped));
  return record;
}

wandb::Record MakeOutputRawRecord(bool is_stderr, std::string_view text, double timestamp) {
  wandb::Record record;
  auto* output = record.mutable_output_raw();
  output->set_output_type(is_stderr ? wandb::OutputRawRecord::STDERR : wandb::OutputRawRecord::STDOUT);
  SetTimestamp(timestamp, *output->mutable_timestamp());
  output->set_line(ToValidUtf8(text));
  return record;
}

wandb::Record MakeHistoryRecord(int64_t step, double runtime_seconds, double timestamp,
                                const JsonItems& items) {
  wandb::Record record;
  auto* history = record.mutable_history();
  history->mutable_step()->set_num(step);
  for (const auto& [key, value_json] : items) {
    auto* item = history->add_item();
    item->set_key(ToValidUtf8(key));
    item->set_value_json(ToValidUtf8(value_json));
  }
  const auto add = [&](const char* key, std::string value_json) {
    if (value_json.empty()) return;  // not finite
    auto* item = history->add_item();
    item->set_key(key);
    item->set_value_json(std::move(value_json));
  };
  add("_step", std::to_string(step));
  add("_runtime", FormatValueJson(runtime_seconds));
  add("_timestamp", FormatValueJson(timestamp));
  return record;
}

wandb::Record MakeSummaryRecord(const JsonItems& items) {
  wandb::Record record;
  auto* summary = record.mutable_summary();
  for (const auto& [key, value_json] : items) {
    auto* item = summary->add_update();
    item->set_key(ToValidUtf8(key));
    item->set_value_json(ToValidUtf8(value_json));
  }
  return record;
}

wandb::Record MakeFinalRecord() {
  wandb::Record record;
  record.mutable_final();
  return record;
}

}  // namespace runmon::runlog
