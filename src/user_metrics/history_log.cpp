// A run's own metrics into its run log: see history_log.hpp.
#include "user_metrics/history_log.hpp"

#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace runmon::user_metrics {
namespace {

runlog::JsonItems ToJsonItems(const std::vector<MetricItem>& items) {
  runlog::JsonItems out;
  out.reserve(items.size());
  for (const auto& item : items) out.emplace_back(item.key, item.value_json);
  return out;
}

// wandb-summary.json: the summary's keys and values as a JSON object. A value that is not JSON to
// nlohmann (Python's NaN) is written as W&B writes it, as a string.
std::string SummaryJson(const std::vector<MetricItem>& items) {
  nlohmann::ordered_json summary = nlohmann::ordered_json::object();
  for (const auto& item : items) {
    nlohmann::ordered_json value = nlohmann::ordered_json::parse(item.value_json, nullptr, false);
    summary[item.key] = value.is_discarded() ? nlohmann::ordered_json(item.value_json) : value;
  }
  return summary.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace

void HistoryLog::Write(std::vector<HistoryRow>& closed) {
  if (closed.empty()) return;
  payloads_.resize(closed.size());
  for (size_t i = 0; i < closed.size(); ++i) {
    const HistoryRow& row = closed[i];
    views_.clear();
    for (const auto& item : row.items) views_.push_back({item.key, item.value_json});
    payloads_[i] = runlog::EncodeHistoryRecord(row.step, row.timestamp - start_time_, row.timestamp, views_);
  }
  last_ = HistoryRow{closed.back().step, closed.back().timestamp, {}};
  const size_t added = recorder_.AddEncodedUnlessBehind(payloads_, kMaxQueuedBytes);
  written_ += added;
  dropped_ += closed.size() - added;
  closed.clear();
}

Status HistoryLog::WriteSummary(std::vector<MetricItem> summary,
                                const std::filesystem::path& files_directory) {
  if (last_) {
    summary.push_back({"_step", std::to_string(last_->step)});
    summary.push_back({"_runtime", runlog::FormatValueJson(last_->timestamp - start_time_)});
    summary.push_back({"_timestamp", runlog::FormatValueJson(last_->timestamp)});
  }
  if (summary.empty()) return OkStatus();
  auto record = runlog::MakeSummaryRecord(ToJsonItems(summary));
  recorder_.Add(record);
  const std::filesystem::path file_path = files_directory / "wandb-summary.json";
  std::ofstream file(file_path, std::ios::binary | std::ios::trunc);
  file << SummaryJson(summary);
  file.close();
  if (!file) return Error{fmt::format("{}: cannot be written", file_path.string())};
  return OkStatus();
}

}  // namespace runmon::user_metrics
