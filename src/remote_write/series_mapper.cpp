// Mapping keys to series. See series_mapper.hpp.
#include "remote_write/series_mapper.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/utf8.hpp"
#include "remote_write/sample_codec.hpp"

namespace runmon::remote_write {

SeriesMapper::SeriesMapper(ConstantLabels labels, size_t max_cached_keys)
    : constant_labels_(std::move(labels)), max_cached_keys_(std::max<size_t>(max_cached_keys, 1)) {}

const Series* SeriesMapper::Map(std::string_view key) {
  if (const auto found = keys_.find(key); found != keys_.end()) return found->second;
  const Series* series = Resolve(key);
  if (keys_.size() >= max_cached_keys_) keys_.clear();
  keys_.emplace(std::string(key), series);
  return series;
}

const Series* SeriesMapper::Map(std::string_view key, size_t position) {
  if (position >= kMaxPositions) return Map(key);
  if (position < by_position_.size() && by_position_[position].first == key)
    return by_position_[position].second;
  const Series* series = Map(key);
  if (by_position_.size() <= position) by_position_.resize(position + 1);
  by_position_[position].first.assign(key);
  by_position_[position].second = series;
  return series;
}

const Series* SeriesMapper::Resolve(std::string_view key) {
  if (key.size() > kMaxTickKeyBytes) return nullptr;
  std::string label_value;
  const PrometheusMetric* metric = FindPrometheusMetric(key, &label_value);
  if (metric == nullptr) return nullptr;
  label_value = ToValidUtf8(label_value);
  const size_t index = static_cast<size_t>(metric - PrometheusMetrics().data());
  std::string identity = fmt::format("{}\n{}", index, label_value);
  if (const auto found = by_identity_.find(identity); found != by_identity_.end()) return found->second;

  auto series = std::make_unique<Series>();
  series->id = static_cast<uint32_t>(series_.size());
  series->metric = metric;
  series->labels.push_back({"__name__", std::string(metric->name)});
  if (!metric->label.empty() && !label_value.empty()) {
    series->labels.push_back({std::string(metric->label), std::move(label_value)});
  }
  const std::pair<std::string_view, const std::string*> constants[] = {
      {"host", &constant_labels_.host},
      {"run_id", &constant_labels_.run_id},
      {"job_id", &constant_labels_.job_id},
      {"node_rank", &constant_labels_.node_rank}};
  for (const auto& [name, value] : constants) {
    if (!value->empty()) series->labels.push_back({std::string(name), ToValidUtf8(*value)});
  }
  std::sort(series->labels.begin(), series->labels.end(),
            [](const SeriesLabel& a, const SeriesLabel& b) { return a.name < b.name; });
  const Series* result = series.get();
  series_.push_back(std::move(series));
  by_identity_.emplace(std::move(identity), result);
  return result;
}

}  // namespace runmon::remote_write
