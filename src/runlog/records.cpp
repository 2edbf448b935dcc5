// Record builders (see records.hpp).
#include "runlog/records.hpp"

#include <array>

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/compile.h>
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
// written) when the value is not finite. The format string is compiled: every sample and history row
// formats many values, and a runtime "{}" is parsed and dispatched each time.
// Whole numbers short of 10^15 (clocks, temperatures, byte counts: a good part of every sample) are that
// integer's digits, which is what fmt writes for them; written as an integer, without the shortest-digits
// search. Zero goes through fmt, which tells -0 from 0.
constexpr double kPlainIntegerBound = 1e15;

bool AppendValueJson(double value, fmt::memory_buffer& out) {
  if (!std::isfinite(value)) return false;
  if (value != 0 && std::abs(value) < kPlainIntegerBound && value == std::trunc(value)) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, static_cast<int64_t>(value)).ptr;
    out.append(digits, end);
    return true;
  }
  fmt::format_to(std::back_inserter(out), FMT_COMPILE("{}"), value);
  return true;
}

// AppendValueJson into a buffer of the caller's (the shortest double is at most 24 characters).
std::string_view ValueJsonInto(double value, std::array<char, 32>& buffer) {
  if (!std::isfinite(value)) return {};
  if (value != 0 && std::abs(value) < kPlainIntegerBound && value == std::trunc(value)) {
    const auto end =
        std::to_chars(buffer.data(), buffer.data() + buffer.size(), static_cast<int64_t>(value)).ptr;
    return {buffer.data(), static_cast<size_t>(end - buffer.data())};
  }
  const auto written = fmt::format_to_n(buffer.data(), buffer.size(), FMT_COMPILE("{}"), value);
  return {buffer.data(), std::min(written.size, buffer.size())};
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

namespace {

void AppendVarint(std::string& out, uint64_t value) {
  char bytes[10];
  size_t size = 0;
  while (value >= 0x80) {
    bytes[size++] = static_cast<char>(value | 0x80);
    value >>= 7;
  }
  bytes[size++] = static_cast<char>(value);
  out.append(bytes, size);
}

size_t VarintSize(uint64_t value) {
  size_t size = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++size;
  }
  return size;
}

// A length-delimited field's tag (its number, wire type 2), length and bytes.
void AppendBytesField(std::string& out, uint32_t field, std::string_view bytes) {
  AppendVarint(out, uint64_t{field} << 3 | 2);
  AppendVarint(out, bytes.size());
  out.append(bytes);
}

size_t BytesFieldSize(uint32_t field, size_t size) {
  return VarintSize(uint64_t{field} << 3 | 2) + VarintSize(size) + size;
}

// HistoryItem: key = 1, value_json = 16.
size_t ItemSize(std::string_view key, std::string_view value_json) {
  return BytesFieldSize(1, key.size()) + BytesFieldSize(16, value_json.size());
}

void AppendItem(std::string& out, std::string_view key, std::string_view value_json) {
  AppendVarint(out, uint64_t{1} << 3 | 2);  // HistoryRecord.item = 1
  AppendVarint(out, ItemSize(key, value_json));
  AppendBytesField(out, 1, key);
  AppendBytesField(out, 16, value_json);
}

}  // namespace

std::string EncodeHistoryRecord(int64_t step, double runtime_seconds, double timestamp,
                                std::span<const JsonItemView> items) {
  // On the stack: these are longer than a short string's inline buffer, and every row has them.
  std::array<char, 32> step_text{};
  std::array<char, 32> runtime_text{};
  std::array<char, 32> timestamp_text{};
  const std::string_view step_json(
      step_text.data(),
      static_cast<size_t>(std::to_chars(step_text.data(), step_text.data() + step_text.size(), step).ptr -
                          step_text.data()));
  const std::string_view runtime_json = ValueJsonInto(runtime_seconds, runtime_text);
  const std::string_view timestamp_json = ValueJsonInto(timestamp, timestamp_text);
  const std::array<JsonItemView, 3> own = {
      {{"_step", step_json}, {"_runtime", runtime_json}, {"_timestamp", timestamp_json}}};
  // HistoryStep: num = 1 (a varint; left out when 0, as proto3 does).
  const size_t step_size = step == 0 ? 0 : 1 + VarintSize(static_cast<uint64_t>(step));
  size_t history_size = BytesFieldSize(2, step_size);
  for (const JsonItemView& item : items)
    history_size += BytesFieldSize(1, ItemSize(item.key, item.value_json));
  for (const JsonItemView& item : own) {
    if (!item.value_json.empty()) history_size += BytesFieldSize(1, ItemSize(item.key, item.value_json));
  }
  std::string out;
  out.reserve(BytesFieldSize(2, history_size) + 32);  // and room for num and _info
  AppendVarint(out, uint64_t{2} << 3 | 2);            // Record.history = 2
  AppendVarint(out, history_size);
  for (const JsonItemView& item : items) AppendItem(out, item.key, item.value_json);
  for (const JsonItemView& item : own) {
    if (!item.value_json.empty()) AppendItem(out, item.key, item.value_json);  // not finite: left out
  }
  AppendVarint(out, uint64_t{2} << 3 | 2);  // HistoryRecord.step = 2
  AppendVarint(out, step_size);
  if (step != 0) {
    out.push_back(static_cast<char>(1 << 3));  // HistoryStep.num = 1, a varint
    AppendVarint(out, static_cast<uint64_t>(step));
  }
  return out;
}

std::string EncodeStatsRecord(const Sample& sample, std::string_view label, EncodedStatsItems* encoded) {
  // Every value formatted first (their lengths size the fields around them), into one buffer.
  fmt::memory_buffer values;
  std::vector<uint32_t> ends;  // each item's end in `values`; UINT32_MAX: not finite, left out
  ends.reserve(sample.metrics.items().size());
  for (const auto& metric : sample.metrics.items()) {
    ends.push_back(AppendValueJson(metric.value, values) ? static_cast<uint32_t>(values.size()) : UINT32_MAX);
  }
  const size_t suffix = label.empty() ? 0 : 3 + label.size();  // "/l:" + label
  size_t items_size = 0;
  size_t items = 0;
  uint32_t start = 0;
  for (size_t i = 0; i < ends.size(); ++i) {
    if (ends[i] == UINT32_MAX) continue;
    const size_t key_size = sample.metrics.items()[i].key.size() + suffix;
    items_size += BytesFieldSize(3, BytesFieldSize(1, key_size) + BytesFieldSize(16, ends[i] - start));
    start = ends[i];
    ++items;
  }
  if (items == 0) {
    if (encoded != nullptr) *encoded = {};
    return {};
  }
  // StatsRecord: stats_type = 1 (SYSTEM, 0: left out as proto3 does), timestamp = 2 {seconds = 1, nanos =
  // 2, each left out when 0}, item = 3.
  const EpochTime time = SplitEpochSeconds(sample.timestamp);
  const auto seconds = static_cast<uint64_t>(time.seconds);  // negative: ten bytes, as protobuf writes it
  const auto nanos = static_cast<uint64_t>(static_cast<int64_t>(time.nanos));
  const size_t time_size =
      (seconds == 0 ? 0 : 1 + VarintSize(seconds)) + (nanos == 0 ? 0 : 1 + VarintSize(nanos));
  const size_t stats_size = BytesFieldSize(2, time_size) + items_size;
  std::string out;
  out.reserve(BytesFieldSize(7, stats_size) + 32);  // and room for num and _info
  AppendVarint(out, uint64_t{7} << 3 | 2);          // Record.stats = 7
  AppendVarint(out, stats_size);
  AppendVarint(out, uint64_t{2} << 3 | 2);
  AppendVarint(out, time_size);
  if (seconds != 0) {
    out.push_back(static_cast<char>(1 << 3));
    AppendVarint(out, seconds);
  }
  if (nanos != 0) {
    out.push_back(static_cast<char>(2 << 3));
    AppendVarint(out, nanos);
  }
  // What the recorder's index takes: the time as a reader of the log computes it, each key's place.
  const bool note = encoded != nullptr && BytesFieldSize(7, stats_size) <= UINT32_MAX;
  if (encoded != nullptr) {
    encoded->time = static_cast<double>(time.seconds) + static_cast<double>(time.nanos) * 1e-9;
    encoded->items.clear();
    if (note) encoded->items.reserve(items);
  }
  start = 0;
  for (size_t i = 0; i < ends.size(); ++i) {
    if (ends[i] == UINT32_MAX) continue;
    const std::string& key = sample.metrics.items()[i].key;
    const std::string_view value(values.data() + start, ends[i] - start);
    start = ends[i];
    AppendVarint(out, uint64_t{3} << 3 | 2);  // StatsRecord.item = 3
    AppendVarint(out, BytesFieldSize(1, key.size() + suffix) + BytesFieldSize(16, value.size()));
    AppendVarint(out, uint64_t{1} << 3 | 2);  // StatsItem.key = 1
    AppendVarint(out, key.size() + suffix);
    if (note) {
      encoded->items.push_back({static_cast<uint32_t>(out.size()), static_cast<uint32_t>(key.size() + suffix),
                                sample.metrics.items()[i].value});
    }
    out.append(key);
    if (suffix > 0) out.append("/l:").append(label);
    AppendBytesField(out, 16, value);  // StatsItem.value_json = 16
  }
  return out;
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
