// The backfill's survey, passes and text. See openmetrics_backfill.hpp.
#include "export/openmetrics_backfill.hpp"

#include <algorithm>
#include <span>
#include <string>

#include "core/utf8.hpp"
#include "export/prometheus_names.hpp"
#include "prometheus_text/prometheus_text.hpp"

namespace runmon {
namespace {

constexpr size_t kWriteChunk = 64 * 1024;
constexpr size_t kUnexportedExamples = 5;
constexpr std::string_view kTotalSuffix = "_total";

// OpenMetrics names a counter's family without `_total`; its samples carry it.
std::string_view FamilyName(const PrometheusMetric& metric) {
  std::string_view name = metric.name;
  if (metric.type == PrometheusType::kCounter && name.ends_with(kTotalSuffix)) {
    name.remove_suffix(kTotalSuffix.size());
  }
  return name;
}

void AppendFamilyHeader(std::string& out, const PrometheusMetric& metric) {
  const std::string_view family = FamilyName(metric);
  out += "# TYPE ";
  out += family;
  out += ' ';
  out += PrometheusTypeName(metric.type);
  out += '\n';
  const std::string_view unit = metric.unit.suffix;
  if (!unit.empty() && family.size() > unit.size() && family.ends_with(unit) &&
      family[family.size() - unit.size() - 1] == '_') {
    out += "# UNIT ";
    out += family;
    out += ' ';
    out += unit;
    out += '\n';
  }
  out += "# HELP ";
  out += family;
  out += ' ';
  prometheus_text::AppendEscapedHelp(out, metric.help);
  out += '\n';
}

void AppendLabel(std::string& out, bool& first, std::string_view name, std::string_view value) {
  if (value.empty()) return;
  out += first ? '{' : ',';
  first = false;
  out += name;
  out += "=\"";
  prometheus_text::AppendEscapedQuoted(out, value);  // valid UTF-8 already
  out += '"';
}

// Seconds with three decimals, exactly: 1735689610250 -> 1735689610.250.
void AppendTimestamp(std::string& out, int64_t timestamp_ms) {
  uint64_t magnitude = static_cast<uint64_t>(timestamp_ms);
  if (timestamp_ms < 0) {
    out += '-';
    magnitude = ~magnitude + 1;
  }
  out += std::to_string(magnitude / 1000);
  const unsigned millis = static_cast<unsigned>(magnitude % 1000);
  out += '.';
  out += static_cast<char>('0' + millis / 100);
  out += static_cast<char>('0' + millis / 10 % 10);
  out += static_cast<char>('0' + millis % 10);
}

}  // namespace

OpenMetricsBackfill::OpenMetricsBackfill(size_t points_per_pass)
    : points_per_pass_(std::max<size_t>(points_per_pass, 1)), family_series_(PrometheusMetrics().size()) {}

bool OpenMetricsBackfill::Survey(std::string_view key) {
  auto known = key_series_.find(key);
  if (known == key_series_.end()) {
    std::string label_value;
    const PrometheusMetric* metric = FindPrometheusMetric(key, &label_value);
    size_t index = kNoSeries;
    if (metric != nullptr) {
      const size_t family = static_cast<size_t>(metric - PrometheusMetrics().data());
      label_value = ToValidUtf8(label_value);
      // Two keys can name one series (their label values made valid UTF-8 alike): they share it.
      std::string identity = std::to_string(family);
      identity += '\n';
      identity += label_value;
      const auto [entry, added] = series_by_identity_.emplace(std::move(identity), series_.size());
      index = entry->second;
      if (added) {
        series_.push_back({.family = family, .label_value = std::move(label_value)});
        family_series_[family].push_back(index);
      }
    } else {
      ++counts_.unexported_keys;
      if (unexported_examples_.size() < kUnexportedExamples) unexported_examples_.emplace_back(key);
    }
    known = key_series_.emplace(std::string(key), index).first;
  }
  if (known->second == kNoSeries) {
    ++counts_.unexported_values;
    return false;
  }
  ++series_[known->second].surveyed;
  return true;
}

size_t OpenMetricsBackfill::Plan() {
  pass_families_.clear();
  counts_.series = series_.size();
  size_t first = 0;
  uint64_t points = 0;
  for (size_t family = 0; family < family_series_.size(); ++family) {
    uint64_t family_points = 0;
    for (const size_t index : family_series_[family]) family_points += series_[index].surveyed;
    if (family_points == 0) continue;
    if (points > 0 && points + family_points > points_per_pass_) {
      pass_families_.emplace_back(first, family);
      first = family;
      points = 0;
    }
    if (points == 0) first = family;
    points += family_points;
  }
  if (points > 0) pass_families_.emplace_back(first, family_series_.size());
  return pass_families_.size();
}

void OpenMetricsBackfill::Collect(size_t pass, int64_t timestamp_ms, std::string_view key, double value) {
  if (pass >= pass_families_.size()) return;
  const auto known = key_series_.find(key);
  if (known == key_series_.end() || known->second == kNoSeries) return;
  Series& series = series_[known->second];
  const auto [first, last] = pass_families_[pass];
  if (series.family < first || series.family >= last) return;
  if (series.points.empty()) series.points.reserve(series.surveyed);
  series.points.push_back({timestamp_ms, value});
}

bool OpenMetricsBackfill::WritePass(size_t pass, const BackfillLabels& labels, const Writer& write) {
  if (pass >= pass_families_.size()) return true;
  const std::span<const PrometheusMetric> metrics = PrometheusMetrics();
  std::string out;
  out.reserve(kWriteChunk + 4096);
  // The run's labels come from the log too: made valid UTF-8 as every label value is.
  const BackfillLabels valid{.host = ToValidUtf8(labels.host),
                             .run_id = ToValidUtf8(labels.run_id),
                             .job_id = ToValidUtf8(labels.job_id),
                             .node_rank = ToValidUtf8(labels.node_rank)};
  const auto [first, last] = pass_families_[pass];
  for (size_t family = first; family < last; ++family) {
    const PrometheusMetric& metric = metrics[family];
    bool header_written = false;
    for (const size_t index : family_series_[family]) {
      std::vector<Point> points = std::move(series_[index].points);
      series_[index].points = {};
      if (points.empty()) continue;
      if (!header_written) {
        AppendFamilyHeader(out, metric);
        header_written = true;
        ++counts_.families;
      }
      // Mostly in order already; stable, so that of two at one millisecond the later read stays last.
      std::stable_sort(points.begin(), points.end(),
                       [](const Point& a, const Point& b) { return a.timestamp_ms < b.timestamp_ms; });
      // The series' name and labels once; each sample repeats them.
      std::string prefix(metric.name);
      bool first_label = true;
      if (!metric.label.empty()) AppendLabel(prefix, first_label, metric.label, series_[index].label_value);
      AppendLabel(prefix, first_label, "host", valid.host);
      AppendLabel(prefix, first_label, "run_id", valid.run_id);
      AppendLabel(prefix, first_label, "job_id", valid.job_id);
      AppendLabel(prefix, first_label, "node_rank", valid.node_rank);
      if (!first_label) prefix += '}';
      prefix += ' ';
      for (size_t i = 0; i < points.size(); ++i) {
        if (i + 1 < points.size() && points[i + 1].timestamp_ms == points[i].timestamp_ms) {
          ++counts_.duplicates;
          continue;
        }
        out += prefix;
        prometheus_text::AppendFloat(out, ToBaseUnits(metric, points[i].value));
        out += ' ';
        AppendTimestamp(out, points[i].timestamp_ms);
        out += '\n';
        ++counts_.values_written;
        if (out.size() >= kWriteChunk) {
          if (!write(out)) return false;
          out.clear();
        }
      }
    }
  }
  return out.empty() || write(out);
}

bool OpenMetricsBackfill::WriteEnd(const Writer& write) {
  return write("# EOF\n");
}

}  // namespace runmon
