// Keys as series: the exporter's names (counters end _total), the placeholder as its label (gpu="0",
// device="sda"), constant labels sorted with __name__ and left out when empty, label values made valid
// UTF-8, keys without a Prometheus name, a W&B spelling sharing its key's series, stable numbering across
// the key cache's bound, and no catalog label that a constant label would collide with.
#include "remote_write/series_mapper.hpp"

#include <algorithm>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "core/utf8.hpp"
#include "remote_write/sample_codec.hpp"

namespace runmon::remote_write {
namespace {

std::map<std::string, std::string> LabelMap(const Series& series) {
  std::map<std::string, std::string> out;
  for (const SeriesLabel& label : series.labels) out[label.name] = label.value;
  return out;
}

std::vector<std::string> LabelNames(const Series& series) {
  std::vector<std::string> out;
  for (const SeriesLabel& label : series.labels) out.push_back(label.name);
  return out;
}

TEST(SeriesMapper, UsesTheExportersNamesAndLabels) {
  SeriesMapper mapper({"node-1", "run-7", "job-3", "2"});
  const Series* cpu = mapper.Map("cpu");
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(LabelMap(*cpu), (std::map<std::string, std::string>{{"__name__", "runmon_process_cpu_ratio"},
                                                                {"host", "node-1"},
                                                                {"job_id", "job-3"},
                                                                {"node_rank", "2"},
                                                                {"run_id", "run-7"}}));
  EXPECT_EQ(ToBaseUnits(*cpu->metric, 37.5), 0.375);

  const Series* temperature = mapper.Map("gpu.0.temp");
  ASSERT_NE(temperature, nullptr);
  EXPECT_EQ(LabelMap(*temperature).at("__name__"), "runmon_gpu_temperature_celsius");
  EXPECT_EQ(LabelMap(*temperature).at("gpu"), "0");

  const Series* read = mapper.Map("disk.sda.in");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(LabelMap(*read).at("__name__"), "runmon_disk_device_read_bytes_total");
  EXPECT_EQ(LabelMap(*read).at("device"), "sda");
  EXPECT_EQ(ToBaseUnits(*read->metric, 2), 2 * 1024.0 * 1024.0);
}

TEST(SeriesMapper, LabelsAreSortedByNameWithNameFirst) {
  SeriesMapper mapper({"h", "r", "j", "0"});
  for (const char* key : {"cpu", "gpu.1.temp", "disk./.usageGB", "disk.nvme0n1.out", "network.sent"}) {
    const Series* series = mapper.Map(key);
    ASSERT_NE(series, nullptr) << key;
    const std::vector<std::string> names = LabelNames(*series);
    EXPECT_TRUE(std::is_sorted(names.begin(), names.end())) << key;
    EXPECT_TRUE(std::adjacent_find(names.begin(), names.end()) == names.end()) << key;
    EXPECT_EQ(names.front(), "__name__") << key;
  }
  EXPECT_EQ(LabelNames(*mapper.Map("disk./.usageGB")),
            (std::vector<std::string>{"__name__", "host", "job_id", "node_rank", "path", "run_id"}));
}

TEST(SeriesMapper, EmptyConstantLabelsAreLeftOut) {
  SeriesMapper mapper({"", "run-1", "", ""});
  EXPECT_EQ(LabelNames(*mapper.Map("gpu.0.temp")), (std::vector<std::string>{"__name__", "gpu", "run_id"}));
  SeriesMapper bare({});
  EXPECT_EQ(LabelNames(*bare.Map("cpu")), (std::vector<std::string>{"__name__"}));
}

TEST(SeriesMapper, CountersEndInTotal) {
  SeriesMapper mapper({});
  for (const PrometheusMetric& metric : PrometheusMetrics()) {
    if (metric.type != PrometheusType::kCounter) continue;
    EXPECT_TRUE(metric.name.ends_with("_total")) << metric.name;
  }
  EXPECT_EQ(LabelMap(*mapper.Map("network.sent")).at("__name__"), "runmon_network_sent_bytes_total");
}

TEST(SeriesMapper, LabelValuesAreValidUtf8) {
  SeriesMapper mapper({"host\xff", "run", "", ""});
  const Series* series = mapper.Map("disk./mnt/\xc3(x.usageGB");
  ASSERT_NE(series, nullptr);
  for (const SeriesLabel& label : series->labels) EXPECT_TRUE(IsValidUtf8(label.value)) << label.name;
  EXPECT_EQ(LabelMap(*series).at("host"), "host\xef\xbf\xbd");
}

TEST(SeriesMapper, KeysWithoutAPrometheusNameMapToNothing) {
  SeriesMapper mapper({"h", "", "", ""});
  EXPECT_EQ(mapper.Map("openmetrics.dcgm.DCGM_FI_DEV_GPU_UTIL"), nullptr);
  EXPECT_EQ(mapper.Map("not.a.runmon.key"), nullptr);
  EXPECT_EQ(mapper.Map(""), nullptr);
  EXPECT_EQ(mapper.Map("disk." + std::string(kMaxTickKeyBytes, 'p') + ".usageGB"), nullptr);
  EXPECT_EQ(mapper.series_count(), 0u);
}

TEST(SeriesMapper, ASpellingTheCatalogAlsoAcceptsSharesTheSeries) {
  SeriesMapper mapper({});
  const Series* own = mapper.Map("ipu.0.average board temp (C)");
  const Series* also = mapper.Map("ipu.0.average board temp");
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(own, also);
  EXPECT_NE(mapper.Map("ipu.1.average board temp"), own);
  EXPECT_EQ(mapper.series_count(), 2u);
}

TEST(SeriesMapper, SeriesKeepTheirNumbersPastTheKeyCachesBound) {
  SeriesMapper mapper({}, 4);
  std::vector<const Series*> first;
  for (int i = 0; i < 6; ++i) first.push_back(mapper.Map("gpu." + std::to_string(i) + ".temp"));
  for (int i = 0; i < 20; ++i) EXPECT_EQ(mapper.Map("openmetrics.x" + std::to_string(i)), nullptr);
  EXPECT_LE(mapper.cached_keys(), 4u);
  for (int i = 0; i < 6; ++i) {
    const Series* again = mapper.Map("gpu." + std::to_string(i) + ".temp");
    EXPECT_EQ(again, first[static_cast<size_t>(i)]);
    EXPECT_EQ(again->id, static_cast<uint32_t>(i));
  }
  EXPECT_EQ(mapper.series_count(), 6u);
}

TEST(SeriesMapper, APositionRemembersItsKeyAndFollowsAChange) {
  SeriesMapper mapper({});
  const Series* cpu = mapper.Map("cpu");
  const Series* gpu = mapper.Map("gpu.0.temp");
  EXPECT_EQ(mapper.Map("cpu", 0), cpu);
  EXPECT_EQ(mapper.Map("cpu", 0), cpu);
  EXPECT_EQ(mapper.Map("gpu.0.temp", 0), gpu);  // another key at the position
  EXPECT_EQ(mapper.Map("openmetrics.x", 0), nullptr);
  EXPECT_EQ(mapper.Map("", 1), nullptr);
  EXPECT_EQ(mapper.Map("cpu", 1), cpu);
  EXPECT_EQ(mapper.Map("gpu.0.temp", SeriesMapper::kMaxPositions + 3), gpu);
  EXPECT_EQ(mapper.series_count(), 2u);
}

TEST(SeriesMapper, NoCatalogLabelCollidesWithAConstantLabel) {
  for (const PrometheusMetric& metric : PrometheusMetrics()) {
    for (std::string_view constant : {"__name__", "host", "run_id", "job_id", "node_rank"}) {
      EXPECT_NE(metric.label, constant) << metric.name;
    }
  }
}

}  // namespace
}  // namespace runmon::remote_write
