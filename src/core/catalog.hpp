// The metric catalog: one definition per key pattern (key, title, unit, kind, source family, description).
// It is the single source of names and units: docs/metrics.md is generated from it, and every display
// (the sample table today; the TUI, dashboard and exporter later) takes titles and units from here.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace runmon {

enum class MetricKind {
  kGauge,       // an instantaneous reading
  kSinceStart,  // a counter relative to the first sample (W&B's disk.in, network.sent)
  kRate,        // a per-second rate over the last interval
};

struct MetricDefinition {
  std::string_view pattern;  // key, with {placeholders} for the variable parts
  std::string_view title;    // short human title for charts and tables
  std::string_view unit;     // "%", "MiB", "GiB", "bytes", "bytes/s", "MiB/s", "count", "CPUs", "ms"
  MetricKind kind;
  std::string_view source;       // collector family: cpu, memory, disk, network, process, cgroup, runmon
  std::string_view description;  // what it measures and how it is computed
};

// Every definition, in documentation order.
std::span<const MetricDefinition> MetricCatalog();

// The definition whose pattern matches `key` ({x} matches one or more characters), or nullptr.
const MetricDefinition* FindMetricDefinition(std::string_view key);

// True when `key` matches `pattern` ({x} matches one or more characters, which may include dots).
bool KeyMatchesPattern(std::string_view key, std::string_view pattern);

std::string_view MetricKindName(MetricKind kind);

// docs/metrics.md, rendered from the catalog.
std::string RenderCatalogMarkdown();

}  // namespace runmon
