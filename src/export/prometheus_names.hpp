// Prometheus names for runmon's keys. Each metric descriptor (core/metric_descriptor.hpp, in its family's
// table) holds its metric name `runmon_*` in base units (bytes, seconds, ratio 0-1, celsius, hertz, ...;
// https://prometheus.io/docs/practices/naming/), its TYPE and the label its {placeholder} becomes; this
// file joins them with the conversion to base units. The scale to base units is derived from the catalog
// unit, so a unit change in the catalog changes the conversion with it (and a test checks that the name's
// unit suffix still agrees). runmon's "since start" values count from zero when runmon starts and only grow
// while it runs: that is a Prometheus counter (a restart is a counter reset, which rate() handles), so they
// are counters named `_total`; so are the kernel's and driver's own counters (OOM kills, ECC errors). Keys
// the catalog does not know (openmetrics.* series scraped from other exporters, W&B's legacy keys) have no
// name: the exposition leaves them out and counts them (exposition.hpp).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/catalog.hpp"
#include "prometheus_text/prometheus_text.hpp"

namespace runmon {

std::string_view PrometheusTypeName(PrometheusType type);

// A catalog unit in Prometheus' base units: value in base units = value x factor / divisor.
struct BaseUnit {
  std::string_view suffix;  // the unit part of the name ("bytes", "ratio"); empty for counts and bitmasks
  double factor = 1;
  double divisor = 1;
};

// Every catalog unit has one; nullopt for a unit this file does not know yet (a test fails then).
std::optional<BaseUnit> BaseUnitFor(std::string_view catalog_unit);

// A catalog definition joined with its unit conversion: what the exposition needs per family.
struct PrometheusMetric {
  const MetricDefinition* definition;
  std::string_view name;
  PrometheusType type;
  std::string_view label;
  BaseUnit unit;
  std::string help;  // the catalog description, with the runmon key and the conversion appended
};

// In catalog order; a catalog pattern without a Prometheus name (or with an unknown unit) is missing.
std::span<const PrometheusMetric> PrometheusMetrics();

// The metric for a sample key (through the catalog's own matching, so the first matching pattern wins),
// with the text its placeholder matched in `label_value`; nullptr for keys without a Prometheus name.
const PrometheusMetric* FindPrometheusMetric(std::string_view key, std::string* label_value);

double ToBaseUnits(const PrometheusMetric& metric, double value);

// The name grammar lives with the text format's other primitives.
using prometheus_text::IsReservedLabelName;
using prometheus_text::IsValidLabelName;
using prometheus_text::IsValidMetricName;

// The exporter's own series, after the catalog's in every exposition (same constant labels).
struct ExporterMetric {
  std::string_view name;
  PrometheusType type;
  std::string_view help;
};
inline constexpr ExporterMetric kSamplesTotal{
    "runmon_exporter_samples_total", PrometheusType::kCounter,
    "Samples taken since this runmon started (values of a late lane, published on their own, not counted)."};
inline constexpr ExporterMetric kLastSampleTimestamp{
    "runmon_last_sample_timestamp_seconds", PrometheusType::kGauge,
    "Wall-clock time of the latest sample's tick, in seconds since the Unix epoch (absent before the "
    "first sample)."};
inline constexpr ExporterMetric kUnexportedKeys{
    "runmon_exporter_unexported_keys", PrometheusType::kGauge,
    "Keys of the latest sample without a Prometheus name (keys the catalog does not know, such as "
    "openmetrics.* series scraped from other exporters), left out of this exposition."};
// Per collector the sampler runs, labelled collector="<its name>" (node_exporter's convention).
inline constexpr ExporterMetric kCollectorDuration{
    "runmon_collector_duration_seconds", PrometheusType::kGauge,
    "How long each collector's latest pass took, in seconds (label collector: its name; a pass still stuck "
    "counts until the sample)."};
inline constexpr ExporterMetric kCollectorSuccess{
    "runmon_collector_success", PrometheusType::kGauge,
    "1 when each collector's latest pass succeeded, 0 when it failed, returned only part of its values or is "
    "stuck (label collector: its name)."};
std::span<const ExporterMetric> ExporterMetrics();

// docs/prometheus.md, rendered from the table (`runmon catalog --prometheus`).
std::string RenderPrometheusMarkdown();

}  // namespace runmon
