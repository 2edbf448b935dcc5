// The OpenMetrics backfill renderer: the exporter's names, TYPE/UNIT/HELP, counters named as OpenMetrics
// names them, base units, the run's labels (left out when empty, escaped, made valid UTF-8), each family's
// samples together in catalog order and each series' in time order however the run interleaves them, two
// values at one millisecond, keys without a name, timestamps written exactly, `# EOF` last, an empty run,
// and the same text whatever the memory budget (passes of one family, a family bigger than the budget).
#include "export/openmetrics_backfill.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "export/fixture_samples.hpp"
#include "export/prometheus_names.hpp"

namespace runmon {
namespace {

struct Value {
  int64_t timestamp_ms;
  std::string key;
  double value;
};

struct Rendered {
  std::string text;
  size_t passes = 0;
  BackfillCounts counts;
  std::vector<std::string> unexported_examples;
  size_t most_points_held = 0;  // the largest pass, in points
};

// What `runmon dump --format openmetrics` does with a run's values: the survey, then one reading per pass.
Rendered Backfill(const std::vector<Value>& values, const BackfillLabels& labels = {},
                  size_t points_per_pass = kDefaultBackfillPointsPerPass) {
  OpenMetricsBackfill backfill(points_per_pass);
  for (const Value& v : values) backfill.Survey(v.key);
  Rendered rendered;
  rendered.passes = backfill.Plan();
  const auto write = [&rendered](std::string_view text) {
    rendered.text += text;
    return true;
  };
  for (size_t pass = 0; pass < rendered.passes; ++pass) {
    for (const Value& v : values) backfill.Collect(pass, v.timestamp_ms, v.key, v.value);
    const uint64_t before = backfill.counts().values_written + backfill.counts().duplicates;
    EXPECT_TRUE(backfill.WritePass(pass, labels, write));
    const uint64_t held = backfill.counts().values_written + backfill.counts().duplicates - before;
    rendered.most_points_held = std::max<size_t>(rendered.most_points_held, held);
  }
  EXPECT_TRUE(backfill.WriteEnd(write));
  rendered.counts = backfill.counts();
  rendered.unexported_examples = backfill.unexported_examples();
  return rendered;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> SamplesOf(const std::string& text) {
  std::vector<std::string> out;
  for (const std::string& line : Lines(text)) {
    if (!line.starts_with("#")) out.push_back(line);
  }
  return out;
}

// A sample line's parts: series (name and labels), value, timestamp.
std::tuple<std::string, std::string, std::string> Split(const std::string& line) {
  const size_t last = line.rfind(' ');
  const size_t middle = line.rfind(' ', last - 1);
  return {line.substr(0, middle), line.substr(middle + 1, last - middle - 1), line.substr(last + 1)};
}

TEST(OpenMetricsBackfill, AnEmptyRunIsJustTheEnd) {
  const Rendered rendered = Backfill({});
  EXPECT_EQ(rendered.passes, 0u);
  EXPECT_EQ(rendered.text, "# EOF\n");
  EXPECT_EQ(rendered.counts.values_written, 0u);
}

TEST(OpenMetricsBackfill, OnlyKeysWithoutANameIsJustTheEndAndTheyAreCounted) {
  const Rendered rendered = Backfill({{1000, "openmetrics.dcgm.DCGM_FI_DEV_GPU_UTIL", 97},
                                      {2000, "openmetrics.dcgm.DCGM_FI_DEV_GPU_UTIL", 98},
                                      {2000, "_wandb.legacy", 1}});
  EXPECT_EQ(rendered.text, "# EOF\n");
  EXPECT_EQ(rendered.counts.unexported_values, 3u);
  EXPECT_EQ(rendered.counts.unexported_keys, 2u);
  EXPECT_EQ(rendered.unexported_examples,
            (std::vector<std::string>{"openmetrics.dcgm.DCGM_FI_DEV_GPU_UTIL", "_wandb.legacy"}));
}

TEST(OpenMetricsBackfill, GaugeNamesHeadersAndBaseUnits) {
  const Rendered rendered = Backfill({{1735689610250, "cpu_percent", 12.5},
                                      {1735689610250, "proc.memory.rssMB", 1.5},
                                      {1735689610250, "system.load1", 0.75}});
  const std::vector<std::string> lines = Lines(rendered.text);
  const std::vector<std::string> expected = {
      "# TYPE runmon_host_cpu_ratio gauge",
      "# UNIT runmon_host_cpu_ratio ratio",
      "# HELP runmon_host_cpu_ratio " + std::string(FindPrometheusMetric("cpu_percent", nullptr)->help),
      "runmon_host_cpu_ratio 0.125 1735689610.250",
      "# TYPE runmon_host_load1 gauge",  // no unit: no UNIT line
      "# HELP runmon_host_load1 " + std::string(FindPrometheusMetric("system.load1", nullptr)->help),
      "runmon_host_load1 0.75 1735689610.250",
      "# TYPE runmon_process_resident_memory_bytes gauge",
      "# UNIT runmon_process_resident_memory_bytes bytes",
      "# HELP runmon_process_resident_memory_bytes " +
          std::string(FindPrometheusMetric("proc.memory.rssMB", nullptr)->help),
      "runmon_process_resident_memory_bytes 1572864 1735689610.250",
      "# EOF",
  };
  EXPECT_EQ(lines, expected) << rendered.text;
}

TEST(OpenMetricsBackfill, CountersAreFamiliesWithoutTotalAndSamplesWithIt) {
  const Rendered rendered =
      Backfill({{1000, "disk.in", 2}, {2000, "disk.in", 3}, {1000, "gpu.0.energyJoules", 5}});
  const std::vector<std::string> lines = Lines(rendered.text);
  EXPECT_NE(std::find(lines.begin(), lines.end(), "# TYPE runmon_disk_read_bytes counter"), lines.end());
  EXPECT_NE(std::find(lines.begin(), lines.end(), "# UNIT runmon_disk_read_bytes bytes"), lines.end());
  EXPECT_NE(std::find(lines.begin(), lines.end(), "runmon_disk_read_bytes_total 2097152 1.000"), lines.end());
  EXPECT_NE(std::find(lines.begin(), lines.end(), "runmon_disk_read_bytes_total 3145728 2.000"), lines.end());
  EXPECT_NE(std::find(lines.begin(), lines.end(), "# TYPE runmon_gpu_energy_joules counter"), lines.end());
  EXPECT_NE(std::find(lines.begin(), lines.end(), "runmon_gpu_energy_joules_total{gpu=\"0\"} 5 1.000"),
            lines.end());
  for (const std::string& line : lines) EXPECT_FALSE(line.starts_with("# TYPE runmon_disk_read_bytes_total"));
}

// The family name is the counter's without `_total`: every counter's name must have it.
TEST(OpenMetricsBackfill, EveryCounterIsNamedTotal) {
  for (const PrometheusMetric& metric : PrometheusMetrics()) {
    if (metric.type == PrometheusType::kCounter) {
      EXPECT_TRUE(metric.name.ends_with("_total")) << metric.name;
    }
  }
}

TEST(OpenMetricsBackfill, TheRunsLabelsAfterThePlaceholdersEscapedAndValidUtf8) {
  const BackfillLabels labels{.host = "node\"1\\\n", .run_id = "run\xff", .job_id = "4242", .node_rank = "3"};
  const Rendered rendered =
      Backfill({{1000, "gpu.0.temp", 70}, {1000, "disk./d \"q\"\\x\xff.usageGB", 1}}, labels);
  const std::vector<std::string> samples = SamplesOf(rendered.text);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0],
            "runmon_disk_used_bytes{path=\"/d \\\"q\\\"\\\\x\xEF\xBF\xBD\",host=\"node\\\"1\\\\\\n\","
            "run_id=\"run\xEF\xBF\xBD\",job_id=\"4242\",node_rank=\"3\"} 1073741824 1.000");
  EXPECT_EQ(samples[1],
            "runmon_gpu_temperature_celsius{gpu=\"0\",host=\"node\\\"1\\\\\\n\",run_id=\"run\xEF\xBF\xBD\","
            "job_id=\"4242\",node_rank=\"3\"} 70 1.000");
}

TEST(OpenMetricsBackfill, EmptyLabelsAreLeftOut) {
  const Rendered with_host =
      Backfill({{1000, "cpu", 50}}, {.host = "h", .run_id = "", .job_id = "", .node_rank = "0"});
  EXPECT_EQ(SamplesOf(with_host.text),
            (std::vector<std::string>{"runmon_process_cpu_ratio{host=\"h\",node_rank=\"0\"} 0.5 1.000"}));
  const Rendered without = Backfill({{1000, "cpu", 50}});
  EXPECT_EQ(SamplesOf(without.text), (std::vector<std::string>{"runmon_process_cpu_ratio 0.5 1.000"}));
}

TEST(OpenMetricsBackfill, FamiliesTogetherInCatalogOrderAndEachSeriesInTimeOrder) {
  // Three records in the log's order, every family in each, one record out of time order (a clock step).
  std::vector<Value> values;
  for (const int64_t t : {3000, 1000, 2000}) {
    values.push_back({t, "gpu.1.gpu", static_cast<double>(t / 1000)});
    values.push_back({t, "cpu_percent", static_cast<double>(t / 100)});
    values.push_back({t, "gpu.0.gpu", static_cast<double>(t / 1000 + 10)});
    values.push_back({t, "gpu.0.temp", 60});
  }
  const Rendered rendered = Backfill(values, {.host = "h", .run_id = "", .job_id = "", .node_rank = ""});
  std::vector<std::string> families;
  std::map<std::string, std::vector<std::string>> timestamps;
  std::vector<std::string> series_order;
  for (const std::string& line : Lines(rendered.text)) {
    if (line.starts_with("# TYPE ")) families.push_back(line.substr(7, line.find(' ', 7) - 7));
    if (line.starts_with("#")) continue;
    const auto [series, value, timestamp] = Split(line);
    if (series_order.empty() || series_order.back() != series) series_order.push_back(series);
    timestamps[series].push_back(timestamp);
  }
  EXPECT_EQ(families, (std::vector<std::string>{"runmon_host_cpu_ratio", "runmon_gpu_utilization_ratio",
                                                "runmon_gpu_temperature_celsius"}));
  // Each series once (its samples together), in the order the run first gave them.
  EXPECT_EQ(series_order, (std::vector<std::string>{"runmon_host_cpu_ratio{host=\"h\"}",
                                                    "runmon_gpu_utilization_ratio{gpu=\"1\",host=\"h\"}",
                                                    "runmon_gpu_utilization_ratio{gpu=\"0\",host=\"h\"}",
                                                    "runmon_gpu_temperature_celsius{gpu=\"0\",host=\"h\"}"}));
  for (const auto& [series, times] : timestamps) {
    EXPECT_EQ(times, (std::vector<std::string>{"1.000", "2.000", "3.000"})) << series;
  }
  EXPECT_NE(rendered.text.find("runmon_gpu_utilization_ratio{gpu=\"0\",host=\"h\"} 0.11 1.000\n"),
            std::string::npos);
  EXPECT_EQ(rendered.counts.families, 3u);
  EXPECT_EQ(rendered.counts.series, 4u);
  EXPECT_EQ(rendered.counts.values_written, 12u);
  EXPECT_TRUE(rendered.text.ends_with("\n# EOF\n"));
}

TEST(OpenMetricsBackfill, TwoValuesAtOneMillisecondKeepTheLaterRead) {
  // A key given twice in one record, and two keys whose label values are the same once made valid UTF-8.
  const Rendered rendered = Backfill({{1000, "gpu.0.temp", 60},
                                      {1000, "gpu.0.temp", 61},
                                      {2000, "disk.a\xff.in", 1},
                                      {2000, "disk.a\xfe.in", 2},
                                      {3000, "disk.a\xff.in", 3}});
  const std::vector<std::string> samples = SamplesOf(rendered.text);
  EXPECT_EQ(samples, (std::vector<std::string>{
                         "runmon_disk_device_read_bytes_total{device=\"a\xEF\xBF\xBD\"} 2097152 2.000",
                         "runmon_disk_device_read_bytes_total{device=\"a\xEF\xBF\xBD\"} 3145728 3.000",
                         "runmon_gpu_temperature_celsius{gpu=\"0\"} 61 1.000"}));
  EXPECT_EQ(rendered.counts.duplicates, 2u);
  EXPECT_EQ(rendered.counts.series, 2u);
}

TEST(OpenMetricsBackfill, TimestampsAreSecondsWithThreeDecimalsExactly) {
  const Rendered rendered =
      Backfill({{0, "cpu", 1}, {5, "cpu", 2}, {1735689610999, "cpu", 3}, {-1500, "cpu", 4}, {-7, "cpu", 5}});
  std::vector<std::string> timestamps;
  for (const std::string& line : SamplesOf(rendered.text)) timestamps.push_back(std::get<2>(Split(line)));
  EXPECT_EQ(timestamps, (std::vector<std::string>{"-1.500", "-0.007", "0.000", "0.005", "1735689610.999"}));
}

TEST(OpenMetricsBackfill, ValuesTheTextFormatSpellsInWords) {
  const Rendered rendered = Backfill({{1000, "gpu.7.temp", std::numeric_limits<double>::quiet_NaN()},
                                      {1000, "gpu.7.powerWatts", std::numeric_limits<double>::infinity()},
                                      {1000, "gpu.7.fanSpeed", -std::numeric_limits<double>::infinity()},
                                      {1000, "gpu.1.temp", 1e300}});
  const std::vector<std::string> samples = SamplesOf(rendered.text);
  std::set<std::string> values;
  for (const std::string& line : samples) values.insert(std::get<1>(Split(line)));
  EXPECT_EQ(values, (std::set<std::string>{"NaN", "+Inf", "-Inf", "1e+300"}));
}

// A run with every catalog pattern over a few records, and hostile keys.
std::vector<Value> EveryPatternRun() {
  std::vector<Value> values;
  for (int record = 0; record < 5; ++record) {
    const Sample sample = test::EveryPatternSample();
    for (const Metric& metric : sample.metrics.items()) {
      values.push_back({1780000000000 + record * 15000, metric.key, metric.value + record});
    }
  }
  return values;
}

TEST(OpenMetricsBackfill, TheSameTextWhateverTheBudget) {
  const std::vector<Value> values = EveryPatternRun();
  const BackfillLabels labels{.host = "node-1", .run_id = "abc", .job_id = "7", .node_rank = "0"};
  const Rendered one_pass = Backfill(values, labels);
  EXPECT_EQ(one_pass.passes, 1u);
  EXPECT_GT(one_pass.counts.families, 100u);
  for (const size_t budget : {1, 5, 12, 64, 400}) {
    const Rendered rendered = Backfill(values, labels, budget);
    EXPECT_EQ(rendered.text, one_pass.text) << budget;
    EXPECT_EQ(rendered.counts.values_written, one_pass.counts.values_written);
    // A pass holds what fits, or one family when one alone is bigger (the disk families hold 10 points).
    EXPECT_LE(rendered.most_points_held, std::max<size_t>(budget, 10)) << budget;
    EXPECT_GT(rendered.passes, 1u);
  }
  // Each value once: written, replaced by a later one at its millisecond, or left out without a name.
  EXPECT_EQ(one_pass.counts.values_written + one_pass.counts.duplicates + one_pass.counts.unexported_values,
            values.size());
}

TEST(OpenMetricsBackfill, AFailedWriteStops) {
  std::vector<Value> values;
  for (int64_t t = 0; t < 5000; ++t) values.push_back({t * 1000, "gpu.0.temp", 1});
  OpenMetricsBackfill backfill;
  for (const Value& v : values) backfill.Survey(v.key);
  ASSERT_EQ(backfill.Plan(), 1u);
  for (const Value& v : values) backfill.Collect(0, v.timestamp_ms, v.key, v.value);
  int writes = 0;
  EXPECT_FALSE(backfill.WritePass(0, {}, [&writes](std::string_view) {
    ++writes;
    return false;
  }));
  EXPECT_EQ(writes, 1);  // the first piece failed: nothing more was tried
}

TEST(OpenMetricsBackfill, KeysTheSurveyDidNotSeeArePassedOver) {
  OpenMetricsBackfill backfill;
  backfill.Survey("cpu");
  ASSERT_EQ(backfill.Plan(), 1u);
  backfill.Collect(0, 1000, "cpu", 10);
  backfill.Collect(0, 1000, "gpu.0.temp", 10);
  backfill.Collect(1, 1000, "cpu", 10);  // no such pass
  std::string text;
  EXPECT_TRUE(backfill.WritePass(0, {}, [&text](std::string_view piece) {
    text += piece;
    return true;
  }));
  EXPECT_EQ(SamplesOf(text), (std::vector<std::string>{"runmon_process_cpu_ratio 0.1 1.000"}));
}

}  // namespace
}  // namespace runmon
