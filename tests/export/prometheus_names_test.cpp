// The catalog's Prometheus names: every catalog pattern has one (adding a key to a family's table without
// one fails here), names are valid and unique, each
// name's unit suffix agrees with the catalog unit, counters and only counters end in _total, and sample
// keys find their metric and label value through the catalog's own matching.
#include "export/prometheus_names.hpp"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace runmon {
namespace {

size_t Placeholders(std::string_view pattern) {
  size_t count = 0;
  for (const char c : pattern) count += c == '{' ? 1 : 0;
  return count;
}

TEST(PrometheusNames, EveryCatalogPatternHasAName) {
  for (const MetricDefinition& definition : MetricCatalog()) {
    EXPECT_FALSE(definition.prometheus_name.empty())
        << "catalog pattern " << definition.pattern << " needs a prometheus_name in its family's table";
    EXPECT_TRUE(BaseUnitFor(definition.unit).has_value())
        << "catalog unit \"" << definition.unit << "\" of " << definition.pattern
        << " has no base unit in src/export/prometheus_names.cpp's kUnits";
  }
  EXPECT_EQ(PrometheusMetrics().size(), MetricCatalog().size());
}

TEST(PrometheusNames, NamesAreValidAndUnique) {
  std::set<std::string_view> names;
  for (const MetricDefinition& row : MetricCatalog()) {
    EXPECT_TRUE(IsValidMetricName(row.prometheus_name)) << row.prometheus_name;
    EXPECT_TRUE(row.prometheus_name.starts_with("runmon_")) << row.prometheus_name;
    EXPECT_TRUE(names.insert(row.prometheus_name).second) << "duplicate name " << row.prometheus_name;
  }
  for (const ExporterMetric& metric : ExporterMetrics()) {
    EXPECT_TRUE(IsValidMetricName(metric.name)) << metric.name;
    EXPECT_TRUE(names.insert(metric.name).second) << "duplicate name " << metric.name;
    EXPECT_EQ(metric.name.ends_with("_total"), metric.type == PrometheusType::kCounter) << metric.name;
  }
}

TEST(PrometheusNames, LabelsMatchPlaceholders) {
  for (const MetricDefinition& row : MetricCatalog()) {
    const size_t placeholders = Placeholders(row.pattern);
    ASSERT_LE(placeholders, 1u) << row.pattern << ": the exporter turns one placeholder into one label";
    EXPECT_EQ(placeholders == 1, !row.prometheus_label.empty()) << row.pattern;
    if (!row.prometheus_label.empty()) {
      EXPECT_TRUE(IsValidLabelName(row.prometheus_label)) << row.prometheus_label;
      EXPECT_FALSE(IsReservedLabelName(row.prometheus_label)) << row.prometheus_label;
      EXPECT_NE(row.prometheus_label, "host") << row.pattern;
      EXPECT_NE(row.prometheus_label, "run_id") << row.pattern;
    }
  }
}

TEST(PrometheusNames, SuffixesAgreeWithUnitsAndTypes) {
  for (const PrometheusMetric& metric : PrometheusMetrics()) {
    const MetricDefinition& definition = *metric.definition;
    std::string_view name = metric.name;
    if (metric.type == PrometheusType::kCounter) {
      ASSERT_TRUE(name.ends_with("_total")) << name << ": a counter ends in _total";
      name.remove_suffix(6);
    } else {
      EXPECT_FALSE(name.ends_with("_total")) << name << ": only counters end in _total";
    }
    if (!metric.unit.suffix.empty()) {
      EXPECT_TRUE(name.ends_with("_" + std::string(metric.unit.suffix)))
          << metric.name << " should end in _" << metric.unit.suffix << " (catalog unit " << definition.unit
          << ")";
    }
    // A value runmon counts from its start only grows: a Prometheus counter.
    if (definition.kind == MetricKind::kSinceStart) {
      EXPECT_EQ(metric.type, PrometheusType::kCounter) << definition.pattern;
    }
    // A rate over the last interval is a reading, never a counter.
    if (definition.kind == MetricKind::kRate) {
      EXPECT_EQ(metric.type, PrometheusType::kGauge) << definition.pattern;
    }
    EXPECT_NE(metric.help.find(definition.description), std::string::npos) << metric.name;
    EXPECT_NE(metric.help.find(definition.pattern), std::string::npos) << metric.name;
  }
}

TEST(PrometheusNames, BaseUnits) {
  EXPECT_EQ(BaseUnitFor("%")->suffix, "ratio");
  EXPECT_EQ(BaseUnitFor("%")->divisor, 100);
  EXPECT_EQ(BaseUnitFor("MiB")->factor, 1048576);
  EXPECT_EQ(BaseUnitFor("GiB")->factor, 1073741824);
  EXPECT_EQ(BaseUnitFor("ms")->divisor, 1000);
  EXPECT_EQ(BaseUnitFor("MHz")->factor, 1e6);
  EXPECT_EQ(BaseUnitFor("GT/s")->suffix, "transfers_per_second");
  EXPECT_EQ(BaseUnitFor("GT/s")->factor, 1e9);
  EXPECT_FALSE(BaseUnitFor("furlongs").has_value());
}

TEST(PrometheusNames, KeysFindTheirMetricAndLabel) {
  struct Case {
    std::string_view key;
    std::string_view name;
    std::string_view label_value;
  };
  const Case cases[] = {
      {"cpu", "runmon_process_cpu_ratio", ""},
      {"cpu.12.cpu_percent", "runmon_host_cpu_core_ratio", "12"},
      {"gpu.process.0.gpu", "runmon_gpu_process_utilization_ratio", "0"},
      {"gpu.process.3.memoryAllocatedBytes", "runmon_gpu_process_memory_used_bytes", "3"},
      {"gpu.0.gpu", "runmon_gpu_utilization_ratio", "0"},
      {"gpu.10.memoryAllocated", "runmon_gpu_memory_used_ratio", "10"},
      {"gpu.2.energyJoules", "runmon_gpu_energy_joules_total", "2"},
      {"disk./.usagePercent", "runmon_disk_used_ratio", "/"},
      {"disk./mnt/a.b/c.usageGB", "runmon_disk_used_bytes", "/mnt/a.b/c"},
      {"disk.in", "runmon_disk_read_bytes_total", ""},
      {"disk.nvme0n1.out", "runmon_disk_device_written_bytes_total", "nvme0n1"},
      {"runmon.sampleMillis", "runmon_self_sample_duration_seconds", ""},
      {"ipu.3.clock (MHz)", "runmon_ipu_clock_hertz", "3"},
      {"ipu.3.clock", "runmon_ipu_clock_hertz", "3"},
      {"ipu.0.ipu utilisation (session) (%)", "runmon_ipu_session_utilization_ratio", "0"},
      {"ipu.1.link speed (GT/s)", "runmon_ipu_link_speed_transfers_per_second", "1"},
  };
  for (const Case& c : cases) {
    std::string label_value = "unset";
    const PrometheusMetric* metric = FindPrometheusMetric(c.key, &label_value);
    ASSERT_NE(metric, nullptr) << c.key;
    EXPECT_EQ(metric->name, c.name) << c.key;
    EXPECT_EQ(label_value, c.label_value) << c.key;
  }
  std::string label_value;
  EXPECT_EQ(FindPrometheusMetric("openmetrics.dcgm.DCGM_FI_DEV_GPU_UTIL", &label_value), nullptr);
  EXPECT_EQ(FindPrometheusMetric("gpu", &label_value), nullptr);
  EXPECT_EQ(FindPrometheusMetric("", &label_value), nullptr);
  EXPECT_NE(FindPrometheusMetric("cpu", nullptr), nullptr);
}

TEST(PrometheusNames, ConversionsToBaseUnits) {
  const auto convert = [](std::string_view key, double value) {
    const PrometheusMetric* metric = FindPrometheusMetric(key, nullptr);
    EXPECT_NE(metric, nullptr) << key;
    return metric == nullptr ? 0.0 : ToBaseUnits(*metric, value);
  };
  EXPECT_EQ(convert("cpu", 37.5), 0.375);
  EXPECT_DOUBLE_EQ(convert("cpu_percent", 12.3), 0.123);  // 12.3 / 100 rounds to 0.12300000000000001
  EXPECT_EQ(convert("proc.memory.rssMB", 1.5), 1572864);
  EXPECT_EQ(convert("disk./.usageGB", 2), 2147483648);
  EXPECT_EQ(convert("disk.readMBPerSec", 1), 1048576);
  EXPECT_EQ(convert("network.sent", 12345), 12345);
  EXPECT_EQ(convert("gpu.0.smClock", 1980), 1.98e9);
  EXPECT_EQ(convert("runmon.sampleMillis", 1.5), 0.0015);
  EXPECT_EQ(convert("gpu.0.temp", 71), 71);
}

TEST(PrometheusNames, MarkdownListsEveryName) {
  const std::string markdown = RenderPrometheusMarkdown();
  for (const PrometheusMetric& metric : PrometheusMetrics()) {
    EXPECT_NE(markdown.find("| `" + std::string(metric.definition->pattern) + "` | `" +
                            std::string(metric.name) + "` |"),
              std::string::npos)
        << metric.name;
  }
  for (const ExporterMetric& metric : ExporterMetrics()) {
    EXPECT_NE(markdown.find("`" + std::string(metric.name) + "`"), std::string::npos) << metric.name;
  }
}

}  // namespace
}  // namespace runmon
