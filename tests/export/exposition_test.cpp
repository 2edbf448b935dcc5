// The text exposition (its values and escapes are tested with the primitives, prometheus_text_test): one
// HELP and TYPE per family with the family's series together however the sample
// interleaves them, constant labels, keys without a name counted and left out, a key given twice, invalid
// UTF-8 in label values, the text before any sample, a golden file, and the cache's handling of late
// samples.
#include "export/exposition.hpp"

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "export/fixture_samples.hpp"
#include "export/prometheus_names.hpp"
#include "support/golden.hpp"

namespace runmon {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Series lines (not comments) that start with `name{` or `name `.
std::vector<std::string> SeriesOf(const std::string& text, std::string_view name) {
  std::vector<std::string> out;
  for (const std::string& line : Lines(text)) {
    if (line.starts_with(std::string(name) + "{") || line.starts_with(std::string(name) + " "))
      out.push_back(line);
  }
  return out;
}

Sample SampleOf(std::vector<std::pair<std::string, double>> values, double timestamp = 1780000000) {
  Sample sample;
  sample.timestamp = timestamp;
  for (auto& [key, value] : values) sample.metrics.Add(key, value);
  return sample;
}

TEST(Exposition, OneHeaderPerFamilyWithItsSeriesTogether) {
  const Sample sample = SampleOf(
      {{"gpu.0.temp", 70}, {"gpu.0.gpu", 90}, {"gpu.1.temp", 40}, {"gpu.1.gpu", 10}, {"cpu_percent", 50}});
  const std::string text = RenderExposition(sample, {}, 1);
  std::map<std::string, int> help, type;
  std::string previous_family;
  std::vector<std::string> families;
  for (const std::string& line : Lines(text)) {
    if (line.starts_with("# HELP ")) ++help[line.substr(7, line.find(' ', 7) - 7)];
    if (line.starts_with("# TYPE ")) ++type[line.substr(7, line.find(' ', 7) - 7)];
    if (line.starts_with("#")) continue;
    const std::string family = line.substr(0, line.find_first_of("{ "));
    if (family != previous_family) families.push_back(family);
    previous_family = family;
  }
  for (const auto& [name, count] : help) EXPECT_EQ(count, 1) << name;
  for (const auto& [name, count] : type) EXPECT_EQ(count, 1) << name;
  // Catalog order, each family once.
  const std::vector<std::string> expected = {"runmon_host_cpu_ratio",
                                             "runmon_gpu_utilization_ratio",
                                             "runmon_gpu_temperature_celsius",
                                             "runmon_exporter_samples_total",
                                             "runmon_last_sample_timestamp_seconds",
                                             "runmon_exporter_unexported_keys"};
  EXPECT_EQ(families, expected);
  EXPECT_EQ(SeriesOf(text, "runmon_gpu_temperature_celsius"),
            (std::vector<std::string>{"runmon_gpu_temperature_celsius{gpu=\"0\"} 70",
                                      "runmon_gpu_temperature_celsius{gpu=\"1\"} 40"}));
  EXPECT_NE(text.find("# TYPE runmon_gpu_temperature_celsius gauge\n"), std::string::npos);
}

TEST(Exposition, ConstantLabelsFollowThePlaceholderLabel) {
  const Sample sample = SampleOf({{"disk.nvme0n1.in", 2}, {"cpu", 25}});
  const std::string text = RenderExposition(sample, {.host = "node-1", .run_id = "r1"}, 3);
  EXPECT_EQ(
      SeriesOf(text, "runmon_disk_device_read_bytes_total"),
      std::vector<std::string>{
          "runmon_disk_device_read_bytes_total{device=\"nvme0n1\",host=\"node-1\",run_id=\"r1\"} 2097152"});
  EXPECT_EQ(SeriesOf(text, "runmon_process_cpu_ratio"),
            std::vector<std::string>{"runmon_process_cpu_ratio{host=\"node-1\",run_id=\"r1\"} 0.25"});
  EXPECT_EQ(SeriesOf(text, "runmon_exporter_samples_total"),
            std::vector<std::string>{"runmon_exporter_samples_total{host=\"node-1\",run_id=\"r1\"} 3"});
  // Without constant labels, a series without a placeholder has no braces at all.
  const std::string bare = RenderExposition(sample, {}, 3);
  EXPECT_EQ(SeriesOf(bare, "runmon_process_cpu_ratio"),
            std::vector<std::string>{"runmon_process_cpu_ratio 0.25"});
  EXPECT_EQ(SeriesOf(RenderExposition(sample, {.host = "h", .run_id = {}}, 3), "runmon_process_cpu_ratio"),
            std::vector<std::string>{"runmon_process_cpu_ratio{host=\"h\"} 0.25"});
}

// A distributed job's node: job_id and node_rank after host and run_id on every series, the exporter's own
// included; each left out when unknown.
TEST(Exposition, JobLabelsFollowHostAndRunId) {
  const Sample sample = SampleOf({{"gpu.3.temp", 70}, {"cpu", 25}});
  const std::string text =
      RenderExposition(sample, {.host = "node-1", .run_id = "r1", .job_id = "77", .node_rank = "2"}, 3);
  EXPECT_EQ(SeriesOf(text, "runmon_gpu_temperature_celsius"),
            std::vector<std::string>{"runmon_gpu_temperature_celsius{gpu=\"3\",host=\"node-1\",run_id=\"r1\","
                                     "job_id=\"77\",node_rank=\"2\"} 70"});
  EXPECT_EQ(
      SeriesOf(text, "runmon_exporter_samples_total"),
      std::vector<std::string>{
          "runmon_exporter_samples_total{host=\"node-1\",run_id=\"r1\",job_id=\"77\",node_rank=\"2\"} 3"});
  EXPECT_EQ(SeriesOf(RenderExposition(sample, {.host = "h", .run_id = {}, .job_id = {}, .node_rank = "0"}, 3),
                     "runmon_process_cpu_ratio"),
            std::vector<std::string>{"runmon_process_cpu_ratio{host=\"h\",node_rank=\"0\"} 0.25"});
  EXPECT_EQ(
      SeriesOf(RenderExposition(sample, {.host = {}, .run_id = {}, .job_id = "j \"x\"", .node_rank = {}}, 3),
               "runmon_process_cpu_ratio"),
      std::vector<std::string>{"runmon_process_cpu_ratio{job_id=\"j \\\"x\\\"\"} 0.25"});  // escaped
  // Every series line carries the node's labels, and nothing else per process.
  size_t series = 0;
  for (const std::string& line : Lines(text)) {
    if (line.empty() || line.front() == '#') continue;
    ++series;
    EXPECT_NE(line.find("job_id=\"77\",node_rank=\"2\"}"), std::string::npos) << line;
    EXPECT_EQ(line.find("pid"), std::string::npos) << line;
  }
  EXPECT_GE(series, 4u);  // temperature, CPU, samples, timestamp, unexported keys
}

TEST(Exposition, UnknownKeysAreLeftOutAndCounted) {
  const Sample sample =
      SampleOf({{"openmetrics.dcgm.DCGM_FI_DEV_GPU_UTIL", 1}, {"cpu", 1}, {"some.legacy.key", 2}});
  const std::string text = RenderExposition(sample, {}, 1);
  EXPECT_EQ(text.find("DCGM"), std::string::npos);
  EXPECT_EQ(text.find("legacy"), std::string::npos);
  EXPECT_EQ(SeriesOf(text, "runmon_exporter_unexported_keys"),
            std::vector<std::string>{"runmon_exporter_unexported_keys 2"});
}

TEST(Exposition, AKeyGivenTwiceKeepsItsLastValue) {
  const Sample sample = SampleOf({{"gpu.0.temp", 70}, {"gpu.1.temp", 40}, {"gpu.0.temp", 72}});
  EXPECT_EQ(SeriesOf(RenderExposition(sample, {}, 1), "runmon_gpu_temperature_celsius"),
            (std::vector<std::string>{"runmon_gpu_temperature_celsius{gpu=\"1\"} 40",
                                      "runmon_gpu_temperature_celsius{gpu=\"0\"} 72"}));
}

TEST(Exposition, LabelValuesAreValidUtf8AndEscaped) {
  const Sample sample = SampleOf({{"disk./a\"b\\c\nd.usageGB", 1}, {"disk.sd\xff.in", 1}});
  const std::string text = RenderExposition(sample, {.host = "h\xc3", .run_id = {}}, 1);
  EXPECT_EQ(
      SeriesOf(text, "runmon_disk_used_bytes"),
      std::vector<std::string>{"runmon_disk_used_bytes{path=\"/a\\\"b\\\\c\\nd\",host=\"h\xef\xbf\xbd\"} "
                               "1073741824"});
  EXPECT_EQ(
      SeriesOf(text, "runmon_disk_device_read_bytes_total"),
      std::vector<std::string>{
          "runmon_disk_device_read_bytes_total{device=\"sd\xef\xbf\xbd\",host=\"h\xef\xbf\xbd\"} 1048576"});
}

TEST(Exposition, CollectorSeriesFollowNodeExportersConvention) {
  Sample sample = SampleOf({{"cpu", 1}});
  sample.collectors = {{"cpu", 0.0015, true},
                       {"nvidia", 2.5, false},
                       {"openmetrics \"x\"", 0.25, true},
                       {"cpu", 9, false}};  // a name given twice keeps its first: no duplicate series
  const std::string text = RenderExposition(sample, {.host = "h", .run_id = "r"}, 1);
  EXPECT_EQ(
      SeriesOf(text, "runmon_collector_duration_seconds"),
      (std::vector<std::string>{
          "runmon_collector_duration_seconds{collector=\"cpu\",host=\"h\",run_id=\"r\"} 0.0015",
          "runmon_collector_duration_seconds{collector=\"nvidia\",host=\"h\",run_id=\"r\"} 2.5",
          "runmon_collector_duration_seconds{collector=\"openmetrics \\\"x\\\"\",host=\"h\",run_id=\"r\"} "
          "0.25"}));
  EXPECT_EQ(SeriesOf(text, "runmon_collector_success"),
            (std::vector<std::string>{
                "runmon_collector_success{collector=\"cpu\",host=\"h\",run_id=\"r\"} 1",
                "runmon_collector_success{collector=\"nvidia\",host=\"h\",run_id=\"r\"} 0",
                "runmon_collector_success{collector=\"openmetrics \\\"x\\\"\",host=\"h\",run_id=\"r\"} 1"}));
  EXPECT_NE(text.find("# TYPE runmon_collector_duration_seconds gauge\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE runmon_collector_success gauge\n"), std::string::npos);
  // Without collectors (a sampler that has none), neither family appears.
  const std::string none = RenderExposition(SampleOf({{"cpu", 1}}), {}, 1);
  EXPECT_EQ(none.find("runmon_collector_"), std::string::npos);
}

TEST(Exposition, BeforeTheFirstSample) {
  Sample sample = SampleOf({{"cpu", 1}});
  sample.collectors = {{"cpu", 0.001, true}};  // ignored like the values
  const std::string text = RenderExposition(sample, {.host = "h", .run_id = {}}, 0);
  EXPECT_EQ(
      text,
      "# HELP runmon_exporter_samples_total " + std::string(kSamplesTotal.help) +
          "\n# TYPE runmon_exporter_samples_total counter\nrunmon_exporter_samples_total{host=\"h\"} 0\n"
          "# HELP runmon_exporter_unexported_keys " +
          std::string(kUnexportedKeys.help) +
          "\n# TYPE runmon_exporter_unexported_keys gauge\nrunmon_exporter_unexported_keys{host=\"h\"} 0\n");
}

TEST(Exposition, EveryLineIsACommentOrASeries) {
  const std::string text = RenderExposition(test::EveryPatternSample(), {.host = "h", .run_id = "r"}, 1);
  ASSERT_TRUE(text.ends_with("\n"));
  size_t series = 0;
  for (const std::string& line : Lines(text)) {
    ASSERT_FALSE(line.empty());
    if (line.starts_with("# HELP ") || line.starts_with("# TYPE ")) continue;
    ++series;
    const std::string name = line.substr(0, line.find_first_of("{ "));
    EXPECT_TRUE(IsValidMetricName(name)) << line;
  }
  // Every catalog pattern, the five extra keys with names, the three of the exporter and two per collector.
  EXPECT_EQ(series, MetricCatalog().size() + 5 + 3 + 2 * test::EveryPatternSample().collectors.size());
  EXPECT_NE(text.find("runmon_gpu_temperature_celsius{gpu=\"7\",host=\"h\",run_id=\"r\"} NaN\n"),
            std::string::npos);
  EXPECT_NE(text.find("runmon_gpu_power_watts{gpu=\"7\",host=\"h\",run_id=\"r\"} +Inf\n"), std::string::npos);
  EXPECT_NE(text.find("runmon_gpu_fan_speed_ratio{gpu=\"7\",host=\"h\",run_id=\"r\"} -Inf\n"),
            std::string::npos);
}

// Every catalog pattern's family (HELP, TYPE, name, label, converted value): the names /metrics serves.
TEST(Exposition, EveryPatternGolden) {
  const std::string text =
      RenderExposition(test::EveryPatternSample(), {.host = "node-1", .run_id = "abc123"}, 42);
  test::ExpectGolden(std::filesystem::path(RUNMON_FIXTURES_DIR) / "golden" / "every-pattern-exposition.txt",
                     text);
}

TEST(Exposition, Golden) {
  const std::string text = RenderExposition(test::GoldenSample(), {.host = "node-1", .run_id = "abc123"}, 7);
  test::ExpectGolden(std::filesystem::path(RUNMON_EXPORT_GOLDEN_DIR) / "exposition.txt", text);
}

TEST(ExpositionCache, ServesTheLatestSampleAndMergesLateValues) {
  ExpositionCache cache({.host = "h", .run_id = {}});
  const auto before = cache.Text();
  EXPECT_EQ(*before, RenderExposition(Sample{}, {.host = "h", .run_id = {}}, 0));

  cache.Publish(SampleOf({{"cpu", 10}, {"gpu.0.temp", 50}}, 100));
  cache.Publish(SampleOf({{"cpu", 20}}, 101));
  std::string text = *cache.Text();
  EXPECT_EQ(SeriesOf(text, "runmon_process_cpu_ratio"),
            std::vector<std::string>{"runmon_process_cpu_ratio{host=\"h\"} 0.2"});
  EXPECT_TRUE(SeriesOf(text, "runmon_gpu_temperature_celsius").empty());  // a full sample replaces the last
  EXPECT_EQ(SeriesOf(text, "runmon_exporter_samples_total"),
            std::vector<std::string>{"runmon_exporter_samples_total{host=\"h\"} 2"});
  EXPECT_EQ(SeriesOf(text, "runmon_last_sample_timestamp_seconds"),
            std::vector<std::string>{"runmon_last_sample_timestamp_seconds{host=\"h\"} 101"});

  // A late lane's values join the latest sample; the sample count and timestamp stay.
  Sample late = SampleOf({{"gpu.0.temp", 55}, {"cpu", 21}}, 100);
  late.late = true;
  cache.Publish(late);
  text = *cache.Text();
  EXPECT_EQ(SeriesOf(text, "runmon_gpu_temperature_celsius"),
            std::vector<std::string>{"runmon_gpu_temperature_celsius{gpu=\"0\",host=\"h\"} 55"});
  EXPECT_EQ(SeriesOf(text, "runmon_process_cpu_ratio"),
            std::vector<std::string>{"runmon_process_cpu_ratio{host=\"h\"} 0.21"});
  EXPECT_EQ(SeriesOf(text, "runmon_exporter_samples_total"),
            std::vector<std::string>{"runmon_exporter_samples_total{host=\"h\"} 2"});
  EXPECT_EQ(SeriesOf(text, "runmon_last_sample_timestamp_seconds"),
            std::vector<std::string>{"runmon_last_sample_timestamp_seconds{host=\"h\"} 101"});
  // A late sample keeps the on-time sample's collector figures.
  Sample timed = SampleOf({{"cpu", 30}}, 102);
  timed.collectors = {{"cpu", 0.002, true}};
  cache.Publish(timed);
  cache.Publish(late);
  EXPECT_EQ(SeriesOf(*cache.Text(), "runmon_collector_success"),
            std::vector<std::string>{"runmon_collector_success{collector=\"cpu\",host=\"h\"} 1"});
  // The text a reader holds stays valid while newer samples arrive.
  EXPECT_EQ(*before, RenderExposition(Sample{}, {.host = "h", .run_id = {}}, 0));
}

}  // namespace
}  // namespace runmon
