// One metric as its collector family declares it: the key pattern with its {placeholder}, the title, unit,
// kind and docs text, the W&B spelling readers also accept, the Prometheus name, type and label, and how
// charts show it (a merged chart with a partner key, the system sidebar's rank, the series label). Each
// family's folder holds a table of these (src/collectors/<family>/..._metrics.cpp) and its collector emits
// keys through them, so a key is spelled in one file; the catalog (core/catalog.hpp) joins the tables, and
// `runmon catalog`, the exposition, the chart grouping and the generated docs derive from it. The types are
// constexpr-friendly so that a table is constant data with no start-up cost.
#pragma once

#include <string>
#include <string_view>

namespace runmon {

enum class MetricKind {
  kGauge,       // an instantaneous reading
  kSinceStart,  // a counter relative to the first sample (W&B's disk.in, network.sent)
  kRate,        // a per-second rate over the last interval
};

// The group a metric is documented and charted in; the catalog lists sections in this order, each
// section's metrics in the order the families' tables are joined (see core/CMakeLists.txt). kAccelerator:
// what is not a GPU (Trainium's NeuronCores, Graphcore IPUs, TPUs).
enum class MetricSection { kCpu, kMemory, kDisk, kNetwork, kCgroup, kGpu, kAccelerator, kMonitor };

enum class PrometheusType { kGauge, kCounter };

// A key that shares a chart with its partner (a device's read and write): the chart's id and title, and
// what this key adds to the series name. An empty chart_id: the key has a chart of its own.
struct ChartMerge {
  std::string_view chart_id = {};
  std::string_view title = {};
  std::string_view series_suffix = {};
};

struct MetricDescriptor {
  std::string_view pattern = {};  // key, with {placeholders} for the variable parts
  std::string_view title = {};    // short human title for charts and tables
  std::string_view unit = {};  // "%", "MiB", "GiB", "bytes", "bytes/s", "MiB/s", "count", "CPUs", "ms", "RPM", ...
  MetricKind kind = MetricKind::kGauge;
  MetricSection section = MetricSection::kCpu;
  std::string_view source = {};       // collector family as docs name it: cpu, memory, disk, process, ...
  std::string_view description = {};  // what it measures and how it is computed (docs/metrics.md)
  // Prometheus (export/prometheus_names.hpp derives the conversion to base units from `unit`).
  std::string_view prometheus_name = {};
  PrometheusType prometheus_type = PrometheusType::kGauge;
  std::string_view prometheus_label = {};  // the label the {placeholder} becomes; empty without one
  // Charts (runview/metric_groups.hpp).
  ChartMerge merge = {};
  int sidebar_rank = 0;                // 1, 2, ...: among the system sidebar's first charts; 0: catalog order
  std::string_view series_label = {};  // "GPU": the placeholder's value shows as "GPU 0"; empty: as it is
  std::string_view also_accepted = {};  // another spelling readers take for this key (W&B's), or empty
};

// True when `key` matches `pattern` ({x} matches one or more characters, which may include dots).
bool KeyMatchesPattern(std::string_view key, std::string_view pattern);

// The descriptor's pattern `key` matches (its own or the spelling it also accepts), or empty.
std::string_view MatchingPattern(const MetricDescriptor& descriptor, std::string_view key);

// The part of `key` that the pattern's one placeholder matched ("" when the pattern has none).
std::string_view PlaceholderValue(std::string_view key, std::string_view pattern);

// The key for a descriptor: its pattern with the one placeholder replaced by `value` (a pattern without
// one is returned as it is).
std::string MetricKey(const MetricDescriptor& descriptor, std::string_view value = {});

}  // namespace runmon
