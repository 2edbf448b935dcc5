// Metric keys into charts (catalog grouping, merged pairs, /l: labels, unknown keys under "Other",
// history keys) and the metric filter (substring, regex, glob, invalid and hostile patterns).
#include "runview/metric_groups.hpp"

#include <chrono>

#include <gtest/gtest.h>

#include "support/run_log_builder.hpp"

namespace runmon::runview {
namespace {

TEST(IdentifySystemKey, GroupsByBaseKeyWithDeviceSeries) {
  const auto gpu0 = IdentifySystemKey("gpu.0.temp");
  const auto gpu1 = IdentifySystemKey("gpu.1.temp");
  EXPECT_EQ(gpu0.chart_id, "gpu.{i}.temp");
  EXPECT_EQ(gpu1.chart_id, gpu0.chart_id);
  EXPECT_EQ(gpu0.series, "GPU 0");
  EXPECT_EQ(gpu1.series, "GPU 1");
  EXPECT_EQ(gpu0.title, "GPU temperature");
  EXPECT_EQ(gpu0.unit, "°C");
  EXPECT_EQ(gpu0.section, ChartSection::kSystem);

  const auto process = IdentifySystemKey("gpu.process.0.gpu");
  EXPECT_EQ(process.chart_id, "gpu.process.{i}.gpu");
  EXPECT_EQ(process.series, "GPU 0");
  EXPECT_EQ(IdentifySystemKey("cpu.3.cpu_percent").series, "Core 3");
  const auto disk = IdentifySystemKey("disk./data.usagePercent");
  EXPECT_EQ(disk.chart_id, "disk.{path}.usagePercent");
  EXPECT_EQ(disk.series, "/data");
  EXPECT_EQ(IdentifySystemKey("cpu").series, "");
  EXPECT_EQ(IdentifySystemKey("cpu").unit, "%");
}

TEST(IdentifySystemKey, PairsShareAChart) {
  const auto read = IdentifySystemKey("disk.nvme0n1.in");
  const auto write = IdentifySystemKey("disk.nvme0n1.out");
  EXPECT_EQ(read.chart_id, "disk.{dev}.io");
  EXPECT_EQ(write.chart_id, read.chart_id);
  EXPECT_EQ(read.series, "nvme0n1 read");
  EXPECT_EQ(write.series, "nvme0n1 write");
  EXPECT_EQ(read.order, write.order);
  EXPECT_EQ(IdentifySystemKey("network.sent").chart_id, IdentifySystemKey("network.recv").chart_id);
  EXPECT_EQ(IdentifySystemKey("network.recv").series, "received");
  EXPECT_EQ(IdentifySystemKey("gpu.2.pcieRxBytes").series, "GPU 2 received");
}

TEST(IdentifySystemKey, LabelSuffixJoinsTheSeriesName) {
  const auto labelled = IdentifySystemKey("gpu.0.temp/l:node-7");
  EXPECT_EQ(labelled.chart_id, "gpu.{i}.temp");
  EXPECT_EQ(labelled.series, "GPU 0 node-7");
}

// W&B's x_label: gpu.0.powerWatts/l:node1 means what gpu.0.powerWatts means (chart, title, unit, order); the
// label names the series, and the full key stays the series' key.
TEST(IdentifySystemKey, LabelledKeysHaveTheCatalogMeaningOfTheirBase) {
  for (const std::string_view base : {"gpu.0.powerWatts", "cpu", "disk./data.usageGB", "network.sent",
                                      "openmetrics.dcgm.DCGM_FI_DEV_GPU_UTIL.3", "vendor.thing"}) {
    const auto plain = IdentifySystemKey(base);
    const auto labelled = IdentifySystemKey(std::string(base) + "/l:node1");
    EXPECT_EQ(labelled.chart_id, plain.chart_id) << base;
    EXPECT_EQ(labelled.title, plain.title) << base;
    EXPECT_EQ(labelled.unit, plain.unit) << base;
    EXPECT_EQ(labelled.order, plain.order) << base;
    EXPECT_EQ(labelled.section, plain.section) << base;
    EXPECT_EQ(labelled.series, plain.series.empty() ? "node1" : plain.series + " node1") << base;
  }
  EXPECT_EQ(IdentifySystemKey("gpu.0.powerWatts/l:node1").unit, "W");
  // The DCGM exporter's node and the run's label: two suffixes, both in the series name.
  const auto twice = IdentifySystemKey("gpu.0.temp/l:node1/l:rank-0");
  EXPECT_EQ(twice.chart_id, "gpu.{i}.temp");
  EXPECT_EQ(twice.series, "GPU 0 node1 rank-0");
}

TEST(SplitKeyLabel, Suffixes) {
  EXPECT_EQ(SplitKeyLabel("gpu.0.temp").base, "gpu.0.temp");
  EXPECT_EQ(SplitKeyLabel("gpu.0.temp").label, "");
  EXPECT_EQ(SplitKeyLabel("gpu.0.temp/l:n1").base, "gpu.0.temp");
  EXPECT_EQ(SplitKeyLabel("gpu.0.temp/l:n1").label, "n1");
  EXPECT_EQ(SplitKeyLabel("a/l:x/l:y/l:z").label, "x y z");
  EXPECT_EQ(SplitKeyLabel("/l:").base, "");
  EXPECT_EQ(SplitKeyLabel("a/l:/l:b").label, "b");
  EXPECT_EQ(SplitKeyLabel("disk./mnt/l.usageGB").base, "disk./mnt/l.usageGB");  // "/l." is no suffix
}

TEST(GroupCharts, LabelledNodesAreSeriesOfOneChart) {
  test::RunLogBuilder builder;
  builder.Stats(1e9, {{"gpu.0.powerWatts/l:node1", "300"},
                      {"gpu.0.powerWatts/l:node2", "250"},
                      {"openmetrics.node.node_load1.0/l:node1", "0.5"}});
  RunModel model;
  for (const auto& record : builder.records()) model.Ingest(record);
  wandb::Record config;
  auto* item = config.mutable_config()->add_update();
  item->set_key("_runmon.openmetrics");
  item->set_value_json(R"({"node":{"node_load1":[{"cpu":"all"}]}})");
  model.Ingest(config);
  const RunModel* runs[] = {&model};
  const auto groups = GroupSystemCharts(runs, {});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].id, "gpu.{i}.powerWatts");
  EXPECT_EQ(groups[0].unit, "W");
  ASSERT_EQ(groups[0].members.size(), 2u);
  EXPECT_EQ(groups[0].members[0].key, "gpu.0.powerWatts/l:node1");  // the full key is the series
  EXPECT_EQ(groups[0].members[0].series, "GPU 0 node1");
  EXPECT_EQ(groups[0].members[1].key, "gpu.0.powerWatts/l:node2");
  EXPECT_EQ(groups[0].members[1].series, "GPU 0 node2");
  ASSERT_NE(groups[0].members[0].data, nullptr);
  EXPECT_EQ(groups[0].members[0].data->size(), 1u);
  // A scraped series keeps its labels from the run's table, with the run's label after them.
  ASSERT_EQ(groups[1].members.size(), 1u);
  EXPECT_EQ(groups[1].members[0].series, "cpu=all node1");
}

TEST(IdentifySystemKey, UnknownKeysGoToOtherGroupedWithoutTheirIndex) {
  const auto first = IdentifySystemKey("openmetrics.dcgm.DCGM_FI_DEV_GPU_UTIL.0");
  const auto second = IdentifySystemKey("openmetrics.dcgm.DCGM_FI_DEV_GPU_UTIL.1");
  EXPECT_EQ(first.section, ChartSection::kOther);
  EXPECT_EQ(first.chart_id, "openmetrics.dcgm.DCGM_FI_DEV_GPU_UTIL");
  EXPECT_EQ(second.chart_id, first.chart_id);
  EXPECT_EQ(first.series, "#0");
  const auto plain = IdentifySystemKey("memory");  // W&B's legacy key
  EXPECT_EQ(plain.section, ChartSection::kOther);
  EXPECT_EQ(plain.chart_id, "memory");
  EXPECT_GT(plain.order, IdentifySystemKey("gpu.0.nvlinkRxBytes").order);
  // Hostile names are kept as they are (the cell grid makes them safe to show).
  EXPECT_EQ(IdentifySystemKey("\x1b[31mred").chart_id, "\x1b[31mred");
  EXPECT_EQ(IdentifySystemKey("").chart_id, "");
  EXPECT_EQ(IdentifySystemKey(".5").chart_id, ".5");
}

TEST(GroupCharts, OneChartPerBaseKeyInCatalogOrderWithOtherLast) {
  test::RunLogBuilder builder;
  builder.Run("r", "run", 1e9)
      .Stats(1e9 + 1, {{"vendor.x", "1"},
                       {"gpu.1.gpu", "10"},
                       {"gpu.0.gpu", "20"},
                       {"cpu", "5"},
                       {"network.sent", "1"},
                       {"network.recv", "2"}});
  RunModel model;
  for (const auto& record : builder.records()) model.Ingest(record);
  const RunModel* runs[] = {&model};
  const std::string labels[] = {"run"};
  const auto groups = GroupSystemCharts(runs, labels);
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0].id, "cpu");
  EXPECT_EQ(groups[1].id, "network");
  EXPECT_EQ(groups[2].id, "gpu.{i}.gpu");
  ASSERT_EQ(groups[2].members.size(), 2u);
  EXPECT_EQ(groups[2].members[0].series, "GPU 0");
  EXPECT_EQ(groups[3].id, "vendor.x");
  EXPECT_EQ(groups[3].section, ChartSection::kOther);

  auto sidebar = groups;
  SortForSidebar(sidebar);
  EXPECT_EQ(sidebar[0].id, "gpu.{i}.gpu");
  EXPECT_EQ(sidebar[1].id, "cpu");
  EXPECT_EQ(sidebar[2].id, "network");
  EXPECT_EQ(sidebar[3].id, "vendor.x");
}

TEST(GroupCharts, OverlaidRunsNameTheirSeries) {
  RunModel a;
  RunModel b;
  test::RunLogBuilder first;
  test::RunLogBuilder second;
  first.Stats(1e9, {{"gpu.0.gpu", "1"}});
  second.Stats(1e9, {{"gpu.0.gpu", "2"}});
  for (const auto& r : first.records()) a.Ingest(r);
  for (const auto& r : second.records()) b.Ingest(r);
  const RunModel* runs[] = {&a, &b};
  const std::string labels[] = {"alpha", "beta"};
  const auto groups = GroupSystemCharts(runs, labels);
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_EQ(groups[0].members.size(), 2u);
  EXPECT_EQ(groups[0].members[0].series, "alpha GPU 0");
  EXPECT_EQ(groups[0].members[1].series, "beta GPU 0");
  EXPECT_EQ(groups[0].members[1].run, 1u);
}

TEST(GroupCharts, SeriesAreInNaturalOrderWithinEachRun) {
  RunModel a;
  RunModel b;
  test::RunLogBuilder first;
  test::RunLogBuilder second;
  first.Stats(1e9, {{"gpu.10.gpu", "1"}, {"gpu.2.gpu", "1"}, {"gpu.0.gpu", "1"}, {"gpu.1.gpu", "1"}});
  second.Stats(1e9, {{"gpu.9.gpu", "2"}, {"gpu.09.gpu", "2"}, {"gpu.100.gpu", "2"}});
  for (const auto& r : first.records()) a.Ingest(r);
  for (const auto& r : second.records()) b.Ingest(r);
  const RunModel* runs[] = {&a, &b};
  const std::string labels[] = {"a", "b"};
  const auto groups = GroupSystemCharts(runs, labels);
  ASSERT_EQ(groups.size(), 1u);
  std::vector<std::string> order;
  for (const auto& member : groups[0].members) order.push_back(member.key);
  EXPECT_EQ(order, (std::vector<std::string>{"gpu.0.gpu", "gpu.1.gpu", "gpu.2.gpu", "gpu.10.gpu",
                                             "gpu.09.gpu", "gpu.9.gpu", "gpu.100.gpu"}));
}

TEST(GroupCharts, ScrapedSeriesAreNamedByTheirLabelsFromTheRunsTable) {
  test::RunLogBuilder builder;
  builder.Stats(1e9, {{"openmetrics.node.node_cpu_seconds_total.0", "5"},
                      {"openmetrics.node.node_cpu_seconds_total.1", "6"},
                      {"openmetrics.node.node_load1.0", "0.5"}});
  RunModel model;
  for (const auto& record : builder.records()) model.Ingest(record);
  wandb::Record config;
  auto* item = config.mutable_config()->add_update();
  item->set_key("_runmon.openmetrics");
  item->set_value_json(
      R"({"node":{"node_cpu_seconds_total":[{"cpu":"0","mode":"idle"},{"cpu":"0","mode":"user"}],"node_load1":[{}]}})");
  const auto keys_before = model.keys_version();
  model.Ingest(config);
  EXPECT_GT(model.keys_version(), keys_before);  // charts are regrouped with the names
  EXPECT_TRUE(model.overview().config.empty());  // the table is not shown as a config entry
  const RunModel* runs[] = {&model};
  const auto groups = GroupSystemCharts(runs, {});
  ASSERT_EQ(groups.size(), 2u);
  ASSERT_EQ(groups[0].members.size(), 2u);
  EXPECT_EQ(groups[0].members[0].series, "cpu=0,mode=idle");
  EXPECT_EQ(groups[0].members[1].series, "cpu=0,mode=user");
  EXPECT_EQ(groups[1].members[0].series, "#0");  // no labels: the index
  // A malformed table changes nothing.
  item->set_value_json("[1,2");
  model.Ingest(config);
  EXPECT_EQ(GroupSystemCharts(runs, {})[0].members[0].series, "cpu=0,mode=idle");
}

TEST(GroupCharts, HistoryKeysOneChartEachOverSteps) {
  RunModel model;
  test::RunLogBuilder builder;
  builder.History(1, {{"train/loss", "1"}, {"acc", "0.1"}});
  for (const auto& r : builder.records()) model.Ingest(r);
  const RunModel* runs[] = {&model};
  const auto groups = GroupHistoryCharts(runs, {});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].id, "acc");
  EXPECT_EQ(groups[1].id, "train/loss");
  EXPECT_EQ(groups[1].x_axis, XAxisKind::kStep);
  EXPECT_EQ(groups[1].section, ChartSection::kLogged);
}

TEST(MetricFilter, SubstringRegexAndGlobCaseInsensitive) {
  MetricFilter filter;
  EXPECT_TRUE(filter.Matches("anything"));
  filter.Set("GPU", false);
  EXPECT_TRUE(filter.Matches("gpu.0.temp"));
  EXPECT_FALSE(filter.Matches("cpu"));
  filter.Set("^gpu\\.[01]\\.", false);
  EXPECT_TRUE(filter.Matches("gpu.1.temp"));
  EXPECT_FALSE(filter.Matches("gpu.2.temp"));
  EXPECT_FALSE(filter.Matches("x gpu.1.temp"));
  filter.Set("gpu.*temp", true);
  EXPECT_TRUE(filter.Matches("GPU.3.Temp"));
  EXPECT_FALSE(filter.Matches("gpu.3.power"));
  filter.Set("g?u", true);
  EXPECT_TRUE(filter.Matches("the gpu"));
  filter.Set("a.b", true);  // glob: a dot is a dot
  EXPECT_TRUE(filter.Matches("a.b"));
  EXPECT_FALSE(filter.Matches("axb"));
  filter.Set("mem", true);  // no wildcard: substring
  EXPECT_TRUE(filter.Matches("proc.memory.rssMB"));
}

TEST(MetricFilter, InvalidRegexFallsBackToSubstring) {
  MetricFilter filter;
  filter.Set("gpu[", false);
  EXPECT_TRUE(filter.Matches("the gpu[ key"));
  EXPECT_FALSE(filter.Matches("gpu"));
  filter.Set("(", false);
  EXPECT_FALSE(filter.Matches("cpu"));
}

TEST(MetricFilter, CatastrophicPatternsStayLinear) {
  MetricFilter filter;
  filter.Set("(a+)+$", false);
  const std::string hostile(100000, 'a');
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(filter.Matches(hostile + "!"));
  EXPECT_TRUE(filter.Matches(hostile));
  // RE2 is linear; a backtracking engine would not finish this at all.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  filter.Set(std::string(5000, '('), false);  // invalid and huge: substring
  EXPECT_FALSE(filter.Matches("cpu"));
}

TEST(MetricFilter, MatchesAGroupByTitleIdOrKey) {
  ChartGroup group;
  group.id = "gpu.{i}.temp";
  group.title = "GPU temperature";
  group.members.push_back({"gpu.0.temp", "GPU 0", 0, nullptr});
  MetricFilter filter;
  filter.Set("temperature", false);
  EXPECT_TRUE(filter.Matches(group));
  filter.Set("gpu.0", false);
  EXPECT_TRUE(filter.Matches(group));
  filter.Set("power", false);
  EXPECT_FALSE(filter.Matches(group));
}

}  // namespace
}  // namespace runmon::runview
