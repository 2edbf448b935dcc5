// The unit conversion and what is derived from the catalog's Prometheus names. See prometheus_names.hpp for
// the rules. Names (in the families' descriptor tables) follow the catalog's grouping: runmon_process_* for
// the monitored process tree, runmon_host_* and runmon_memory_* for the machine (or its cgroup),
// runmon_gpu_process_* for the tree's share of a GPU, runmon_self_* for runmon itself. The device-wide GPU
// values W&B repeats under gpu.process.{i}.* keep their own names (runmon_gpu_process_temperature_celsius) so
// that each catalog pattern has exactly one metric.
#include "export/prometheus_names.hpp"

#include <array>
#include <vector>

#include <fmt/format.h>

namespace runmon {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = kMiB * 1024.0;

struct UnitRow {
  std::string_view catalog_unit;
  BaseUnit base;
};

// Percentages are divided by 100 rather than multiplied by 0.01: 37.5 % becomes exactly 0.375.
constexpr std::array kUnits = {
    UnitRow{"%", {"ratio", 1, 100}},
    UnitRow{"MiB", {"bytes", kMiB, 1}},
    UnitRow{"GiB", {"bytes", kGiB, 1}},
    UnitRow{"bytes", {"bytes", 1, 1}},
    UnitRow{"bytes/s", {"bytes_per_second", 1, 1}},
    UnitRow{"MiB/s", {"bytes_per_second", kMiB, 1}},
    UnitRow{"count", {"", 1, 1}},
    UnitRow{"bitmask", {"", 1, 1}},
    UnitRow{"CPUs", {"cores", 1, 1}},
    UnitRow{"s", {"seconds", 1, 1}},
    UnitRow{"ms", {"seconds", 1, 1000}},
    UnitRow{"µs", {"seconds", 1, 1e6}},
    UnitRow{"°C", {"celsius", 1, 1}},
    UnitRow{"W", {"watts", 1, 1}},
    UnitRow{"MHz", {"hertz", 1e6, 1}},
    UnitRow{"J", {"joules", 1, 1}},
    UnitRow{"RPM", {"rpm", 1, 1}},
    UnitRow{"GT/s", {"transfers_per_second", 1e9, 1}},
    UnitRow{"Mbit/s", {"bytes_per_second", 125000, 1}},  // 10^6 bits / 8
    UnitRow{"score", {"", 1, 1}},
};

constexpr std::array kExporterMetrics = {kSamplesTotal, kLastSampleTimestamp, kUnexportedKeys,
                                         kCollectorDuration, kCollectorSuccess};

// How a value becomes base units, in words ("% / 100", "MiB x 1048576"), for HELP and the docs.
std::string Conversion(std::string_view catalog_unit, const BaseUnit& unit) {
  if (unit.factor != 1) return fmt::format("{} x {}", catalog_unit, unit.factor);
  if (unit.divisor != 1) return fmt::format("{} / {}", catalog_unit, unit.divisor);
  return std::string(catalog_unit);
}

std::vector<PrometheusMetric> BuildMetrics() {
  std::vector<PrometheusMetric> out;
  for (const MetricDefinition& definition : MetricCatalog()) {
    const auto unit = BaseUnitFor(definition.unit);
    if (definition.prometheus_name.empty() || !unit) continue;
    std::string help = fmt::format("{} (runmon key {}", definition.description, definition.pattern);
    if (!unit->suffix.empty()) help += fmt::format(", in {}", Conversion(definition.unit, *unit));
    help += ")";
    out.push_back({&definition, definition.prometheus_name, definition.prometheus_type,
                   definition.prometheus_label, *unit, std::move(help)});
  }
  return out;
}

}  // namespace

std::string_view PrometheusTypeName(PrometheusType type) {
  return type == PrometheusType::kCounter ? "counter" : "gauge";
}

std::optional<BaseUnit> BaseUnitFor(std::string_view catalog_unit) {
  for (const UnitRow& row : kUnits) {
    if (row.catalog_unit == catalog_unit) return row.base;
  }
  return std::nullopt;
}

std::span<const PrometheusMetric> PrometheusMetrics() {
  static const std::vector<PrometheusMetric> metrics = BuildMetrics();
  return metrics;
}

std::span<const ExporterMetric> ExporterMetrics() {
  return kExporterMetrics;
}

const PrometheusMetric* FindPrometheusMetric(std::string_view key, std::string* label_value) {
  const MetricDefinition* definition = FindMetricDefinition(key);
  if (definition == nullptr) return nullptr;
  for (const PrometheusMetric& metric : PrometheusMetrics()) {
    if (metric.definition != definition) continue;
    if (label_value != nullptr) *label_value = PlaceholderValue(key, MatchingPattern(*definition, key));
    return &metric;
  }
  return nullptr;
}

double ToBaseUnits(const PrometheusMetric& metric, double value) {
  if (metric.unit.factor != 1) value *= metric.unit.factor;
  if (metric.unit.divisor != 1) value /= metric.unit.divisor;
  return value;
}

std::string RenderPrometheusMarkdown() {
  std::string out =
      "# Prometheus names\n\n"
      "Generated from the collector families' metric descriptors (each family's `*_metrics.hpp` under "
      "`src/collectors/`) and the unit conversions of `src/export/prometheus_names.cpp` by "
      "`runmon catalog --prometheus`; do not edit by hand.\n\n"
      "`runmon exporter` and `runmon run --metrics-listen` ([cli.md](cli.md)) serve each sample in the "
      "Prometheus text format 0.0.4 under these names. Values are converted to base units: bytes (not "
      "MiB or GiB), seconds, hertz, and ratios from 0 to 1 instead of percentages. A value that can exceed "
      "100 % (`runmon.cpuPercent` of one CPU, `gpu.{i}.fanSpeed`) can exceed 1. Keys that runmon counts "
      "from its start (`disk.in`, `network.sent`, `gpu.{i}.energyJoules`) are counters: they start at 0 "
      "when runmon starts and only grow, so a restart is a counter reset and `rate()` works across it. "
      "The key's placeholder becomes a label (`{i}` is `gpu` or `cpu`, `{path}` is `path`, `{dev}` is "
      "`device`); every series also carries `host` (the machine's host name) and, in `runmon run`, "
      "`run_id`, then `job_id` and `node_rank` when the run is a node of a distributed job "
      "([clusters.md](clusters.md#job-identity): detected from Slurm, TorchElastic or MPI, or given with "
      "`--job-id` and `--node-rank`; each is left out when unknown). They name the node, never a process "
      "or a step, so a job has one label set per node. Keys the catalog does not know (such as "
      "`openmetrics.*` series scraped from other "
      "exporters, whose own exporter already serves them) are left out and counted in "
      "`runmon_exporter_unexported_keys`. No series carries a timestamp: Prometheus stamps each scrape, "
      "and `runmon_last_sample_timestamp_seconds` says when the values were taken. `runmon run "
      "--remote-write` pushes the same series with the same labels, each value with its own sample's time "
      "in milliseconds, and `runmon dump --format openmetrics` writes a recorded run under these names "
      "with those times ([clusters.md](clusters.md#remote-write)).\n\n"
      "| runmon key | Prometheus metric | Type | Labels | Conversion |\n"
      "|---|---|---|---|---|\n";
  for (const PrometheusMetric& metric : PrometheusMetrics()) {
    const MetricDefinition& d = *metric.definition;
    std::string conversion = "as is";
    if (metric.unit.factor != 1)
      conversion = fmt::format("x {} ({} to {})", metric.unit.factor, d.unit, metric.unit.suffix);
    if (metric.unit.divisor != 1)
      conversion = fmt::format("/ {} ({} to {})", metric.unit.divisor, d.unit, metric.unit.suffix);
    out += fmt::format("| `{}` | `{}` | {} | {} | {} |\n", d.pattern, metric.name,
                       PrometheusTypeName(metric.type),
                       metric.label.empty() ? "" : fmt::format("`{}`", metric.label), conversion);
  }
  out +=
      "\nrunmon's own series:\n\n"
      "| Prometheus metric | Type | Meaning |\n"
      "|---|---|---|\n";
  for (const ExporterMetric& metric : ExporterMetrics()) {
    out += fmt::format("| `{}` | {} | {} |\n", metric.name, PrometheusTypeName(metric.type), metric.help);
  }
  return out;
}

}  // namespace runmon
