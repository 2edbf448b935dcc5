// The naming table and what is derived from it. See prometheus_names.hpp for the rules. Names follow the
// catalog's grouping: runmon_process_* for the monitored process tree, runmon_host_* and runmon_memory_*
// for the machine (or its cgroup), runmon_gpu_process_* for the tree's share of a GPU, runmon_self_* for
// runmon itself. The device-wide GPU values W&B repeats under gpu.process.{i}.* keep their own names
// (runmon_gpu_process_temperature_celsius) so that each catalog pattern has exactly one metric.
#include "export/prometheus_names.hpp"

#include <array>
#include <vector>

#include <fmt/format.h>

namespace runmon {
namespace {

using enum PrometheusType;

constexpr std::array kNames = {
    // CPU
    PrometheusName{"cpu", "runmon_process_cpu_ratio", kGauge, ""},
    PrometheusName{"proc.cpu.threads", "runmon_process_threads", kGauge, ""},
    PrometheusName{"cpu_percent", "runmon_host_cpu_ratio", kGauge, ""},
    PrometheusName{"cpu.{i}.cpu_percent", "runmon_host_cpu_core_ratio", kGauge, "cpu"},
    // Memory
    PrometheusName{"proc.memory.rssMB", "runmon_process_resident_memory_bytes", kGauge, ""},
    PrometheusName{"proc.memory.percent", "runmon_process_memory_ratio", kGauge, ""},
    PrometheusName{"memory_percent", "runmon_memory_used_ratio", kGauge, ""},
    PrometheusName{"proc.memory.availableMB", "runmon_memory_available_bytes", kGauge, ""},
    // Disk
    PrometheusName{"disk.{path}.usagePercent", "runmon_disk_used_ratio", kGauge, "path"},
    PrometheusName{"disk.{path}.usageGB", "runmon_disk_used_bytes", kGauge, "path"},
    PrometheusName{"disk.in", "runmon_disk_read_bytes_total", kCounter, ""},
    PrometheusName{"disk.out", "runmon_disk_written_bytes_total", kCounter, ""},
    PrometheusName{"disk.readMBPerSec", "runmon_disk_read_bytes_per_second", kGauge, ""},
    PrometheusName{"disk.writeMBPerSec", "runmon_disk_written_bytes_per_second", kGauge, ""},
    PrometheusName{"disk.{dev}.in", "runmon_disk_device_read_bytes_total", kCounter, "device"},
    PrometheusName{"disk.{dev}.out", "runmon_disk_device_written_bytes_total", kCounter, "device"},
    // Network
    PrometheusName{"network.sent", "runmon_network_sent_bytes_total", kCounter, ""},
    PrometheusName{"network.recv", "runmon_network_received_bytes_total", kCounter, ""},
    PrometheusName{"network.sentBytesPerSec", "runmon_network_sent_bytes_per_second", kGauge, ""},
    PrometheusName{"network.recvBytesPerSec", "runmon_network_received_bytes_per_second", kGauge, ""},
    // cgroup
    PrometheusName{"cgroup.memory.limitMB", "runmon_cgroup_memory_limit_bytes", kGauge, ""},
    PrometheusName{"cgroup.cpu.limit", "runmon_cgroup_cpu_limit_cores", kGauge, ""},
    PrometheusName{"cgroup.cpu.throttledPercent", "runmon_cgroup_cpu_throttled_ratio", kGauge, ""},
    PrometheusName{"cgroup.memory.oomKills", "runmon_cgroup_memory_oom_kills_total", kCounter, ""},
    // NVIDIA GPUs: the monitored tree's share
    PrometheusName{"gpu.process.{i}.gpu", "runmon_gpu_process_utilization_ratio", kGauge, "gpu"},
    PrometheusName{"gpu.process.{i}.memoryAllocatedBytes", "runmon_gpu_process_memory_used_bytes", kGauge,
                   "gpu"},
    PrometheusName{"gpu.process.{i}.memoryAllocated", "runmon_gpu_process_memory_used_ratio", kGauge, "gpu"},
    PrometheusName{"gpu.process.{i}.memory", "runmon_gpu_process_memory_access_ratio", kGauge, "gpu"},
    PrometheusName{"gpu.process.{i}.temp", "runmon_gpu_process_temperature_celsius", kGauge, "gpu"},
    PrometheusName{"gpu.process.{i}.powerWatts", "runmon_gpu_process_power_watts", kGauge, "gpu"},
    PrometheusName{"gpu.process.{i}.enforcedPowerLimitWatts", "runmon_gpu_process_power_limit_watts", kGauge,
                   "gpu"},
    PrometheusName{"gpu.process.{i}.powerPercent", "runmon_gpu_process_power_ratio", kGauge, "gpu"},
    // NVIDIA GPUs: the devices
    PrometheusName{"gpu.{i}.gpu", "runmon_gpu_utilization_ratio", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.memory", "runmon_gpu_memory_access_ratio", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.memoryAllocated", "runmon_gpu_memory_used_ratio", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.memoryAllocatedBytes", "runmon_gpu_memory_used_bytes", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.temp", "runmon_gpu_temperature_celsius", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.powerWatts", "runmon_gpu_power_watts", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.enforcedPowerLimitWatts", "runmon_gpu_power_limit_watts", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.powerPercent", "runmon_gpu_power_ratio", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.smClock", "runmon_gpu_sm_clock_hertz", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.memoryClock", "runmon_gpu_memory_clock_hertz", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.graphicsClock", "runmon_gpu_graphics_clock_hertz", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.correctedMemoryErrors", "runmon_gpu_corrected_memory_errors_total", kCounter,
                   "gpu"},
    PrometheusName{"gpu.{i}.unCorrectedMemoryErrors", "runmon_gpu_uncorrected_memory_errors_total", kCounter,
                   "gpu"},
    PrometheusName{"gpu.{i}.encoderUtilization", "runmon_gpu_encoder_utilization_ratio", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.fanSpeed", "runmon_gpu_fan_speed_ratio", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.clocksEventReasons", "runmon_gpu_clocks_event_reasons", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.energyJoules", "runmon_gpu_energy_joules_total", kCounter, "gpu"},
    PrometheusName{"gpu.{i}.smActive", "runmon_gpu_sm_active_ratio", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.smOccupancy", "runmon_gpu_sm_occupancy_ratio", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.pipeTensorActive", "runmon_gpu_pipe_tensor_active_ratio", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.pipeTensorHmmaActive", "runmon_gpu_pipe_tensor_hmma_active_ratio", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.dramActive", "runmon_gpu_dram_active_ratio", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.pipeFp64Active", "runmon_gpu_pipe_fp64_active_ratio", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.pipeFp32Active", "runmon_gpu_pipe_fp32_active_ratio", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.pipeFp16Active", "runmon_gpu_pipe_fp16_active_ratio", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.pcieTxBytes", "runmon_gpu_pcie_sent_bytes_per_second", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.pcieRxBytes", "runmon_gpu_pcie_received_bytes_per_second", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.nvlinkTxBytes", "runmon_gpu_nvlink_sent_bytes_per_second", kGauge, "gpu"},
    PrometheusName{"gpu.{i}.nvlinkRxBytes", "runmon_gpu_nvlink_received_bytes_per_second", kGauge, "gpu"},
    // runmon itself
    PrometheusName{"runmon.cpuPercent", "runmon_self_cpu_ratio", kGauge, ""},
    PrometheusName{"runmon.rssMB", "runmon_self_resident_memory_bytes", kGauge, ""},
    PrometheusName{"runmon.sampleMillis", "runmon_self_sample_duration_seconds", kGauge, ""},
};

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
    UnitRow{"ms", {"seconds", 1, 1000}},
    UnitRow{"°C", {"celsius", 1, 1}},
    UnitRow{"W", {"watts", 1, 1}},
    UnitRow{"MHz", {"hertz", 1e6, 1}},
    UnitRow{"J", {"joules", 1, 1}},
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
    const PrometheusName* row = nullptr;
    for (const PrometheusName& candidate : kNames) {
      if (candidate.pattern == definition.pattern) row = &candidate;
    }
    const auto unit = BaseUnitFor(definition.unit);
    if (row == nullptr || !unit) continue;
    std::string help = fmt::format("{} (runmon key {}", definition.description, definition.pattern);
    if (!unit->suffix.empty()) help += fmt::format(", in {}", Conversion(definition.unit, *unit));
    help += ")";
    out.push_back({&definition, row->name, row->type, row->label, *unit, std::move(help)});
  }
  return out;
}

// Text between the pattern's fixed prefix and suffix around its one placeholder.
std::string PlaceholderValue(std::string_view key, std::string_view pattern) {
  const size_t open = pattern.find('{');
  if (open == std::string_view::npos) return {};
  const size_t close = pattern.find('}', open);
  const size_t suffix = pattern.size() - close - 1;
  if (key.size() < open + suffix) return {};
  return std::string(key.substr(open, key.size() - open - suffix));
}

}  // namespace

std::string_view PrometheusTypeName(PrometheusType type) {
  return type == PrometheusType::kCounter ? "counter" : "gauge";
}

std::span<const PrometheusName> PrometheusNameTable() {
  return kNames;
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
    if (label_value != nullptr) *label_value = PlaceholderValue(key, definition->pattern);
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
      "Generated from the metric catalog (`src/core/catalog.cpp`) and the naming table "
      "(`src/export/prometheus_names.cpp`) by `runmon catalog --prometheus`; do not edit by hand.\n\n"
      "`runmon exporter` and `runmon run --metrics-listen` ([cli.md](cli.md)) serve each sample in the "
      "Prometheus text format 0.0.4 under these names. Values are converted to base units: bytes (not "
      "MiB or GiB), seconds, hertz, and ratios from 0 to 1 instead of percentages. A value that can exceed "
      "100 % (`runmon.cpuPercent` of one CPU, `gpu.{i}.fanSpeed`) can exceed 1. Keys that runmon counts "
      "from its start (`disk.in`, `network.sent`, `gpu.{i}.energyJoules`) are counters: they start at 0 "
      "when runmon starts and only grow, so a restart is a counter reset and `rate()` works across it. "
      "The key's placeholder becomes a label (`{i}` is `gpu` or `cpu`, `{path}` is `path`, `{dev}` is "
      "`device`); every series also carries `host` (the machine's host name) and, in `runmon run`, "
      "`run_id`. Keys the catalog does not know (such as `openmetrics.*` series scraped from other "
      "exporters, whose own exporter already serves them) are left out and counted in "
      "`runmon_exporter_unexported_keys`. No series carries a timestamp: Prometheus stamps each scrape, "
      "and `runmon_last_sample_timestamp_seconds` says when the values were taken.\n\n"
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
