// Rendering the exposition text and caching it. See exposition.hpp.
#include "export/exposition.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/utf8.hpp"
#include "export/prometheus_names.hpp"
#include "prometheus_text/prometheus_text.hpp"

namespace runmon {
namespace {

struct Series {
  size_t family;  // index into PrometheusMetrics()
  std::string label_value;
  double value;
};

void AppendFamilyHeader(std::string& out, std::string_view name, PrometheusType type, std::string_view help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  prometheus_text::AppendEscapedHelp(out, help);
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += PrometheusTypeName(type);
  out += '\n';
}

void AppendLabel(std::string& out, bool& first, std::string_view name, std::string_view value) {
  out += first ? '{' : ',';
  first = false;
  out += name;
  out += "=\"";
  prometheus_text::AppendEscapedQuoted(out, ToValidUtf8(value));
  out += '"';
}

// name{label="value",host="h",run_id="r",job_id="j",node_rank="n"} value
void AppendSeries(std::string& out, std::string_view name, std::string_view label,
                  std::string_view label_value, const ExpositionLabels& labels, double value) {
  out += name;
  bool first = true;
  if (!label.empty()) AppendLabel(out, first, label, label_value);
  if (!labels.host.empty()) AppendLabel(out, first, "host", labels.host);
  if (!labels.run_id.empty()) AppendLabel(out, first, "run_id", labels.run_id);
  if (!labels.job_id.empty()) AppendLabel(out, first, "job_id", labels.job_id);
  if (!labels.node_rank.empty()) AppendLabel(out, first, "node_rank", labels.node_rank);
  if (!first) out += '}';
  out += ' ';
  prometheus_text::AppendFloat(out, value);
  out += '\n';
}

// One series per collector, labelled with its name. A name given twice keeps its first series (two with the
// same labels would make Prometheus refuse the whole scrape).
void AppendCollectorFamily(std::string& out, const ExporterMetric& metric,
                           const std::vector<CollectorOutcome>& outcomes, const ExpositionLabels& labels,
                           double (*value)(const CollectorOutcome&)) {
  if (outcomes.empty()) return;
  AppendFamilyHeader(out, metric.name, metric.type, metric.help);
  std::unordered_set<std::string_view> seen;
  for (const CollectorOutcome& outcome : outcomes) {
    if (!seen.insert(outcome.name).second) continue;
    AppendSeries(out, metric.name, "collector", outcome.name, labels, value(outcome));
  }
}

}  // namespace

std::string RenderExposition(const Sample& sample, const ExpositionLabels& labels, uint64_t samples_total) {
  const std::span<const PrometheusMetric> metrics = PrometheusMetrics();
  const std::vector<Metric>& items = sample.metrics.items();
  std::vector<Series> series;
  uint64_t unexported = 0;
  if (samples_total > 0) {
    // A key given twice in one sample keeps its last value (two series with the same labels would make
    // Prometheus refuse the whole scrape).
    std::unordered_map<std::string_view, size_t> last;
    for (size_t i = 0; i < items.size(); ++i) last[items[i].key] = i;
    series.reserve(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      if (last[items[i].key] != i) continue;
      std::string label_value;
      const PrometheusMetric* metric = FindPrometheusMetric(items[i].key, &label_value);
      if (metric == nullptr) {
        ++unexported;
        continue;
      }
      series.push_back({static_cast<size_t>(metric - metrics.data()), std::move(label_value),
                        ToBaseUnits(*metric, items[i].value)});
    }
    std::stable_sort(series.begin(), series.end(),
                     [](const Series& a, const Series& b) { return a.family < b.family; });
  }

  std::string out;
  out.reserve(series.size() * 96 + 1024);
  for (size_t i = 0; i < series.size(); ++i) {
    const PrometheusMetric& metric = metrics[series[i].family];
    if (i == 0 || series[i - 1].family != series[i].family) {
      AppendFamilyHeader(out, metric.name, metric.type, metric.help);
    }
    AppendSeries(out, metric.name, metric.label, series[i].label_value, labels, series[i].value);
  }
  AppendFamilyHeader(out, kSamplesTotal.name, kSamplesTotal.type, kSamplesTotal.help);
  AppendSeries(out, kSamplesTotal.name, "", "", labels, static_cast<double>(samples_total));
  if (samples_total > 0) {
    AppendFamilyHeader(out, kLastSampleTimestamp.name, kLastSampleTimestamp.type, kLastSampleTimestamp.help);
    AppendSeries(out, kLastSampleTimestamp.name, "", "", labels, sample.timestamp);
  }
  AppendFamilyHeader(out, kUnexportedKeys.name, kUnexportedKeys.type, kUnexportedKeys.help);
  AppendSeries(out, kUnexportedKeys.name, "", "", labels, static_cast<double>(unexported));
  if (samples_total > 0) {
    AppendCollectorFamily(out, kCollectorDuration, sample.collectors, labels,
                          [](const CollectorOutcome& outcome) { return outcome.duration_seconds; });
    AppendCollectorFamily(out, kCollectorSuccess, sample.collectors, labels,
                          [](const CollectorOutcome& outcome) { return outcome.success ? 1.0 : 0.0; });
  }
  return out;
}

ExpositionCache::ExpositionCache(ExpositionLabels labels)
    : labels_(std::move(labels)),
      text_(std::make_shared<const std::string>(RenderExposition(Sample{}, labels_, 0))) {}

void ExpositionCache::Publish(const Sample& sample) {
  if (!sample.late) {
    latest_ = sample;  // with its collectors' outcomes; a late sample has none and keeps these
    ++samples_;
  } else {
    for (const Metric& metric : sample.metrics.items()) {
      bool replaced = false;
      for (Metric& existing : latest_.metrics.items()) {
        if (existing.key != metric.key) continue;
        existing.value = metric.value;
        replaced = true;
      }
      if (!replaced) latest_.metrics.Add(metric.key, metric.value);
    }
  }
  auto text = std::make_shared<const std::string>(RenderExposition(latest_, labels_, samples_));
  std::lock_guard lock(mutex_);
  text_ = std::move(text);
}

std::shared_ptr<const std::string> ExpositionCache::Text() const {
  std::lock_guard lock(mutex_);
  return text_;
}

}  // namespace runmon
