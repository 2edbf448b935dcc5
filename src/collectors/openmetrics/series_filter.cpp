// SeriesFilter (the x_stats_open_metrics_filters setting, RE2, unanchored) and SeriesKeys (the per-endpoint
// series index behind the keys openmetrics.<endpoint>.<metric>.<index>). See series_filter.hpp.
#include "collectors/openmetrics/series_filter.hpp"

#include <re2/re2.h>

#include <algorithm>
#include <utility>

namespace runmon::openmetrics {
namespace {

constexpr std::string_view kSetting = "x_stats_open_metrics_filters";

Result<std::unique_ptr<re2::RE2>> Compile(const std::string& pattern) {
  re2::RE2::Options options;
  options.set_max_mem(SeriesFilter::kMaxRegexMemory);
  options.set_log_errors(false);
  auto re = std::make_unique<re2::RE2>(pattern, options);
  // ParseOpenMetricsFilters compiled it with the same options already; this is only a second guard.
  if (!re->ok()) {
    return Error{std::string(kSetting) + ": regex \"" + pattern + "\" does not compile: " + re->error()};
  }
  return re;
}

bool Matches(const re2::RE2& re, std::string_view text) {
  return re2::RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), re);
}

const std::string* FindLabel(const Labels& labels, std::string_view name) {
  auto it = std::lower_bound(labels.begin(), labels.end(), name,
                             [](const auto& label, std::string_view n) { return label.first < n; });
  if (it != labels.end() && it->first == name) return &it->second;
  // Not sorted after all (a caller's own labels): fall back to a scan.
  for (const auto& label : labels) {
    if (label.first == name) return &label.second;
  }
  return nullptr;
}

}  // namespace

SeriesFilter::SeriesFilter() = default;
SeriesFilter::~SeriesFilter() = default;
SeriesFilter::SeriesFilter(SeriesFilter&&) noexcept = default;
SeriesFilter& SeriesFilter::operator=(SeriesFilter&&) noexcept = default;

Result<SeriesFilter> SeriesFilter::FromSetting(std::optional<std::string_view> json) {
  auto spec = ParseOpenMetricsFilters(json);
  if (!spec) return Error{std::string(kSetting) + ": " + spec.error()};
  return FromSpec(*spec);
}

Result<SeriesFilter> SeriesFilter::FromSpec(const OpenMetricsFilterSpec& spec) {
  SeriesFilter filter;
  for (const std::string& pattern : spec.list) {
    auto re = Compile(pattern);
    if (!re) return Error{re.error()};
    filter.list_.push_back(std::move(*re));
  }
  for (const OpenMetricsFilterRule& rule : spec.dict) {
    DictEntry entry;
    auto metric_re = Compile(rule.metric_pattern);
    if (!metric_re) return Error{metric_re.error()};
    entry.metric = std::move(*metric_re);
    for (const OpenMetricsLabelRule& label : rule.labels) {
      auto value_re = Compile(label.value_pattern);
      if (!value_re) return Error{value_re.error()};
      entry.labels.push_back(LabelRule{.label = label.label, .value = std::move(*value_re)});
    }
    filter.dict_.push_back(std::move(entry));
  }
  switch (spec.kind) {
    case OpenMetricsFilterSpec::Kind::kAll:
      filter.kind_ = Kind::kAll;
      break;
    case OpenMetricsFilterSpec::Kind::kList:
      filter.kind_ = filter.list_.empty() ? Kind::kAll : Kind::kList;
      break;
    case OpenMetricsFilterSpec::Kind::kDict:
      filter.kind_ = filter.dict_.empty() ? Kind::kAll : Kind::kDict;
      break;
  }
  return filter;
}

bool SeriesFilter::Keep(std::string_view full_name, const Labels& labels) const {
  switch (kind_) {
    case Kind::kAll:
      return true;
    case Kind::kList:
      return std::any_of(list_.begin(), list_.end(), [&](const auto& re) { return Matches(*re, full_name); });
    case Kind::kDict:
      for (const DictEntry& entry : dict_) {
        if (!Matches(*entry.metric, full_name)) continue;
        const bool all = std::all_of(entry.labels.begin(), entry.labels.end(), [&](const LabelRule& rule) {
          const std::string* value = FindLabel(labels, rule.label);
          return value != nullptr && Matches(*rule.value, *value);
        });
        if (all) return true;
      }
      return false;
  }
  return false;
}

SeriesKeys::SeriesKeys(std::string endpoint, const SeriesFilter* filter, SeriesKeysOptions options)
    : endpoint_(std::move(endpoint)), filter_(filter), options_(options) {}

bool SeriesKeys::UsesType(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
    case MetricType::kGauge:
    case MetricType::kUntyped:
    case MetricType::kUnknown:
      return true;
    case MetricType::kHistogram:
    case MetricType::kSummary:
    case MetricType::kGaugeHistogram:
    case MetricType::kStateSet:
    case MetricType::kInfo:
      return false;
  }
  return false;
}

std::optional<std::string> SeriesKeys::KeyFor(const MetricSample& sample) {
  if (!UsesType(sample.type)) return std::nullopt;
  if (sample.type == MetricType::kCounter && sample.name.size() == sample.family.size() + 8 &&
      sample.name.starts_with(sample.family) && sample.name.ends_with("_created")) {
    return std::nullopt;
  }
  const std::string& metric = sample.name;
  // Identity is the sorted label set; ParseExposition sorts, a caller's own labels may not be.
  Labels sorted_copy;
  const Labels* labels = &sample.labels;
  if (!std::is_sorted(labels->begin(), labels->end())) {
    sorted_copy = sample.labels;
    std::sort(sorted_copy.begin(), sorted_copy.end());
    labels = &sorted_copy;
  }
  auto make_key = [&](size_t index) {
    return "openmetrics." + endpoint_ + "." + metric + "." + std::to_string(index);
  };
  auto metric_it = index_.find(metric);
  if (metric_it != index_.end()) {
    auto series_it = metric_it->second.find(*labels);
    // A known series passed the filter before; the decision depends only on its name and labels.
    if (series_it != metric_it->second.end()) return make_key(series_it->second);
  }
  if (filter_ != nullptr && !filter_->Keep(endpoint_ + "." + metric, *labels)) return std::nullopt;
  if (series_count_ >= options_.max_series) {
    ++dropped_series_;
    return std::nullopt;
  }
  if (metric_it == index_.end()) metric_it = index_.emplace(metric, std::map<Labels, size_t>{}).first;
  std::vector<Labels>& labels_by_index = table_[metric];
  const size_t index = labels_by_index.size();
  labels_by_index.push_back(*labels);
  metric_it->second.emplace(*labels, index);
  ++series_count_;
  return make_key(index);
}

}  // namespace runmon::openmetrics
