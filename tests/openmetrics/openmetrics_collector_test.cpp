// OpenMetricsCollector end to end against a local server: keys and values of real exporter output (DCGM, node
// exporter, OpenMetrics 1.0), filters in list and label form, the index -> labels table published as a
// config item (once, then again only when it grew), lines that do not parse, a body that is not an
// exposition, invalid UTF-8, duplicate series, huge label sets, the series cap, a catastrophic filter regex,
// NaN values, a slow or dead endpoint (the collector returns within its budget), retries, and the builtin
// list: a lane per endpoint and a sampler whose other collectors are not delayed by a dead endpoint.
#include "collectors/openmetrics/openmetrics_collector.hpp"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "collectors/builtin.hpp"
#include "sampler/sampler.hpp"
#include "test_http_server.hpp"

namespace runmon::openmetrics {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::Connection;
using testing::HttpRequest;
using testing::HttpResponse;
using testing::TestHttpServer;
using Clock = std::chrono::steady_clock;

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(RUNMON_FIXTURES_DIR) + "/openmetrics/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

Tick Now(uint64_t index = 0) {
  return Tick{.monotonic = Clock::now(), .wall_seconds = 0, .index = index, .final = false};
}

std::map<std::string, double> Values(const MetricBatch& batch) {
  std::map<std::string, double> out;
  for (const Metric& m : batch.items()) {
    EXPECT_TRUE(out.emplace(m.key, m.value).second) << "key twice: " << m.key;
  }
  return out;
}

struct Published {
  std::mutex mutex;
  std::vector<std::pair<std::string, nlohmann::json>> calls;
};

struct Harness {
  std::shared_ptr<Published> published = std::make_shared<Published>();
  std::shared_ptr<std::vector<std::string>> warnings = std::make_shared<std::vector<std::string>>();

  OpenMetricsCollectorOptions Options(std::string endpoint, std::string url) {
    OpenMetricsCollectorOptions options;
    options.endpoint = std::move(endpoint);
    options.url = std::move(url);
    options.budget_seconds = 4.0;
    auto sink = published;
    options.publisher = std::make_shared<OpenMetricsTablePublisher>(
        [sink](const std::string& key, const nlohmann::json& value) {
          std::lock_guard lock(sink->mutex);
          sink->calls.emplace_back(key, value);
        });
    auto warned = warnings;
    options.warn = [warned](const std::string& message) { warned->push_back(message); };
    return options;
  }
  size_t PublishCount() {
    std::lock_guard lock(published->mutex);
    return published->calls.size();
  }
  nlohmann::json LastPublished() {
    std::lock_guard lock(published->mutex);
    return published->calls.empty() ? nlohmann::json() : published->calls.back().second;
  }
};

std::shared_ptr<const SeriesFilter> Filter(std::string_view json) {
  auto filter = SeriesFilter::FromSetting(json);
  EXPECT_TRUE(filter.ok()) << (filter.ok() ? "" : filter.error());
  return std::make_shared<const SeriesFilter>(std::move(*filter));
}

TestHttpServer Serving(std::string body, std::string content_type = "text/plain; version=0.0.4") {
  return TestHttpServer(
      [body = std::move(body), content_type = std::move(content_type)](const HttpRequest&, Connection& c) {
        c.Send(HttpResponse(200, body, content_type));
      });
}

// ---------------------------------------------------------------------------------------------------------
// Keys, values and the table

TEST(OpenMetricsCollector, DcgmExporterKeysValuesAndTable) {
  TestHttpServer server = Serving(Fixture("dcgm_exporter.prom"));
  Harness h;
  OpenMetricsCollector collector(h.Options("dcgm", server.Url()));
  EXPECT_EQ(collector.Name(), "openmetrics:dcgm");
  MetricBatch batch;
  ASSERT_TRUE(collector.Collect(Now(), batch).ok());
  const std::map<std::string, double> expected = {
      {"openmetrics.dcgm.DCGM_FI_DEV_MEM_COPY_UTIL.0", 37.5},
      {"openmetrics.dcgm.DCGM_FI_DEV_MEM_COPY_UTIL.1", 81.25},
      {"openmetrics.dcgm.DCGM_FI_DEV_GPU_TEMP.0", 41.0},
      {"openmetrics.dcgm.DCGM_FI_DEV_GPU_TEMP.1", 63.0},
      {"openmetrics.dcgm.DCGM_FI_DEV_POWER_USAGE.0", 70.123},
      {"openmetrics.dcgm.DCGM_FI_DEV_POWER_USAGE.1", 212.5},
  };
  EXPECT_EQ(Values(batch), expected);
  // Keys keep the exposition's order.
  ASSERT_EQ(batch.items().size(), 6u);
  EXPECT_EQ(batch.items()[0].key, "openmetrics.dcgm.DCGM_FI_DEV_MEM_COPY_UTIL.0");

  ASSERT_EQ(h.PublishCount(), 1u);
  EXPECT_EQ(h.published->calls[0].first, "_runmon.openmetrics");
  const nlohmann::json table = h.LastPublished();
  ASSERT_TRUE(table.contains("dcgm"));
  const nlohmann::json& temp = table["dcgm"]["DCGM_FI_DEV_GPU_TEMP"];
  ASSERT_EQ(temp.size(), 2u);
  EXPECT_EQ(temp[0]["gpu"], "0");
  EXPECT_EQ(temp[0]["UUID"], "GPU-c601d117-58ff-cd30-ae20-529ab192ba51");
  EXPECT_EQ(temp[0]["modelName"], "Tesla T4");
  EXPECT_EQ(temp[1]["gpu"], "1");
  EXPECT_EQ(temp[1]["pod"], "dcgm-loadtest");
  EXPECT_EQ(temp[0].size(), 8u);  // every label, the empty ones too

  // The same series again: same keys, nothing new to publish.
  MetricBatch again;
  ASSERT_TRUE(collector.Collect(Now(1), again).ok());
  EXPECT_EQ(Values(again), expected);
  EXPECT_EQ(h.PublishCount(), 1u);
  EXPECT_TRUE(h.warnings->empty()) << h.warnings->front();
}

TEST(OpenMetricsCollector, SharedFixtureAgreesWhenPresent) {
  const std::string shared =
      std::string(RUNMON_SHARED_DIR) + "/fixtures/openmetrics/dcgm_exporter_metrics_rendered.prom";
  if (!std::filesystem::exists(shared)) GTEST_SKIP() << "../shared is not beside the checkout";
  std::ifstream in(shared, std::ios::binary);
  std::stringstream body;
  body << in.rdbuf();
  EXPECT_EQ(body.str(), Fixture("dcgm_exporter.prom"));
}

TEST(OpenMetricsCollector, NodeExporterCountersGaugesAndSkippedSummaries) {
  TestHttpServer server = Serving(Fixture("node_exporter.prom"));
  Harness h;
  OpenMetricsCollector collector(h.Options("node", server.Url()));
  MetricBatch batch;
  ASSERT_TRUE(collector.Collect(Now(), batch).ok());
  const auto values = Values(batch);
  EXPECT_EQ(values.at("openmetrics.node.node_boot_time_seconds.0"), 1.71234567e+09);
  EXPECT_EQ(values.at("openmetrics.node.node_cpu_seconds_total.0"), 1.23456789e+06);  // cpu 0 idle
  EXPECT_EQ(values.at("openmetrics.node.node_cpu_seconds_total.7"), 10111.5);         // cpu 1 user
  EXPECT_EQ(values.count("openmetrics.node.node_cpu_seconds_total.8"), 0u);
  for (const auto& [key, value] : values) {
    EXPECT_FALSE(key.starts_with("openmetrics.node.go_gc_duration_seconds")) << key;  // a summary
  }
  const nlohmann::json table = h.LastPublished()["node"];
  EXPECT_EQ(table["node_cpu_seconds_total"][7], (nlohmann::json{{"cpu", "1"}, {"mode", "user"}}));
  EXPECT_FALSE(table.contains("go_gc_duration_seconds"));
}

TEST(OpenMetricsCollector, OpenMetricsContentTypeSkipsHistogramsInfoAndCreated) {
  TestHttpServer server =
      Serving(Fixture("openmetrics_1_0.om"), "application/openmetrics-text; version=1.0.0; charset=utf-8");
  Harness h;
  OpenMetricsCollector collector(h.Options("acme", server.Url()));
  MetricBatch batch;
  ASSERT_TRUE(collector.Collect(Now(), batch).ok());
  const auto values = Values(batch);
  EXPECT_EQ(values.at("openmetrics.acme.acme_http_requests_total.0"), 1027);
  EXPECT_EQ(values.at("openmetrics.acme.acme_http_requests_total.1"), 3);
  EXPECT_EQ(values.at("openmetrics.acme.acme_temperature_celsius.0"), -35);
  for (const auto& [key, value] : values) {
    EXPECT_EQ(key.find("_created"), std::string::npos) << key;
    EXPECT_EQ(key.find("latency"), std::string::npos) << key;
    EXPECT_EQ(key.find("queue_depth"), std::string::npos) << key;
    EXPECT_EQ(key.find("build_info"), std::string::npos) << key;
    EXPECT_EQ(key.find("acme_feature"), std::string::npos) << key;
  }
  // acme_mystery is -Inf: indexed, but no value.
  EXPECT_EQ(values.count("openmetrics.acme.acme_mystery.0"), 0u);
  EXPECT_EQ(collector.LastReport().non_finite, 1u);
  EXPECT_EQ(h.LastPublished()["acme"]["acme_mystery"].size(), 1u);
  EXPECT_EQ(h.LastPublished()["acme"]["acme_temperature_celsius"][0]["sensor.name"], "inlet");
  EXPECT_EQ(collector.LastReport().parse_errors, 0u);
}

// ---------------------------------------------------------------------------------------------------------
// Filters

TEST(OpenMetricsCollector, ListFilterKeepsMatchingMetrics) {
  TestHttpServer server = Serving(Fixture("dcgm_exporter.prom"));
  Harness h;
  auto options = h.Options("dcgm", server.Url());
  options.filter = Filter(R"(["dcgm\\.DCGM_FI_DEV_GPU_TEMP$", "POWER"])");
  OpenMetricsCollector collector(std::move(options));
  MetricBatch batch;
  ASSERT_TRUE(collector.Collect(Now(), batch).ok());
  const std::map<std::string, double> expected = {
      {"openmetrics.dcgm.DCGM_FI_DEV_GPU_TEMP.0", 41.0},
      {"openmetrics.dcgm.DCGM_FI_DEV_GPU_TEMP.1", 63.0},
      {"openmetrics.dcgm.DCGM_FI_DEV_POWER_USAGE.0", 70.123},
      {"openmetrics.dcgm.DCGM_FI_DEV_POWER_USAGE.1", 212.5},
  };
  EXPECT_EQ(Values(batch), expected);
  EXPECT_FALSE(h.LastPublished()["dcgm"].contains("DCGM_FI_DEV_MEM_COPY_UTIL"));
}

TEST(OpenMetricsCollector, LabelFilterNarrowsAndIndicesCountOnlyKeptSeries) {
  TestHttpServer server = Serving(Fixture("dcgm_exporter.prom"));
  Harness h;
  auto options = h.Options("dcgm", server.Url());
  options.filter = Filter(R"j({"DCGM_FI_DEV_(GPU_TEMP|POWER_USAGE)": {"gpu": "^1$"}})j");
  OpenMetricsCollector collector(std::move(options));
  MetricBatch batch;
  ASSERT_TRUE(collector.Collect(Now(), batch).ok());
  const std::map<std::string, double> expected = {
      {"openmetrics.dcgm.DCGM_FI_DEV_GPU_TEMP.0", 63.0},
      {"openmetrics.dcgm.DCGM_FI_DEV_POWER_USAGE.0", 212.5},
  };
  EXPECT_EQ(Values(batch), expected);
  EXPECT_EQ(h.LastPublished()["dcgm"]["DCGM_FI_DEV_GPU_TEMP"][0]["gpu"], "1");
}

TEST(OpenMetricsCollector, CatastrophicFilterRegexStaysLinear) {
  std::string body;
  for (int i = 0; i < 50; ++i) body += std::string(20'000, 'a') + "_" + std::to_string(i) + " 1\n";
  body += "aaa 2\n";
  TestHttpServer server = Serving(body);
  Harness h;
  auto options = h.Options("ep", server.Url());
  options.filter = Filter(R"(["^ep\\.(a+)+$", "(x+x+)+y"])");
  OpenMetricsCollector collector(std::move(options));
  MetricBatch batch;
  const auto start = Clock::now();
  ASSERT_TRUE(collector.Collect(Now(), batch).ok());
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 3.0);
  EXPECT_EQ(Values(batch), (std::map<std::string, double>{{"openmetrics.ep.aaa.0", 2}}));
}

// ---------------------------------------------------------------------------------------------------------
// Bad input

TEST(OpenMetricsCollector, BadLinesAreSkippedAndReportedRateLimited) {
  const std::string body =
      "# TYPE good gauge\n"
      "good{a=\"1\"} 1\n"
      "this is not a sample\n"
      "good{a=\"2\"} 2\n"
      "bad{a=\"unterminated} 3\n"
      "also_good 4\n";
  TestHttpServer server = Serving(body);
  Harness h;
  OpenMetricsCollector collector(h.Options("ep", server.Url()));
  for (uint64_t i = 0; i < 3; ++i) {
    MetricBatch batch;
    ASSERT_TRUE(collector.Collect(Now(i), batch).ok());
    EXPECT_EQ(Values(batch), (std::map<std::string, double>{{"openmetrics.ep.good.0", 1},
                                                            {"openmetrics.ep.good.1", 2},
                                                            {"openmetrics.ep.also_good.0", 4}}));
    EXPECT_EQ(collector.LastReport().parse_errors, 2u);
  }
  ASSERT_EQ(h.warnings->size(), 1u);  // once per 10 minutes
  EXPECT_NE(h.warnings->front().find("openmetrics endpoint ep: 2 lines could not be parsed"),
            std::string::npos)
      << h.warnings->front();
  EXPECT_NE(h.warnings->front().find("line 3"), std::string::npos) << h.warnings->front();

  Harness chatty;
  auto options = chatty.Options("ep", server.Url());
  options.warn_interval_seconds = 0;
  OpenMetricsCollector every_time(std::move(options));
  for (uint64_t i = 0; i < 3; ++i) {
    MetricBatch batch;
    ASSERT_TRUE(every_time.Collect(Now(i), batch).ok());
  }
  EXPECT_EQ(chatty.warnings->size(), 3u);
}

TEST(OpenMetricsCollector, HeldBackWarningsAreCounted) {
  TestHttpServer server = Serving("ok 1\nnot a sample\n");
  Harness h;
  auto options = h.Options("ep", server.Url());
  options.warn_interval_seconds = 0.3;
  OpenMetricsCollector collector(std::move(options));
  MetricBatch batch;
  ASSERT_TRUE(collector.Collect(Now(0), batch).ok());
  ASSERT_TRUE(collector.Collect(Now(1), batch).ok());
  ASSERT_TRUE(collector.Collect(Now(2), batch).ok());
  std::this_thread::sleep_for(milliseconds(350));
  ASSERT_TRUE(collector.Collect(Now(3), batch).ok());
  ASSERT_EQ(h.warnings->size(), 2u);
  EXPECT_NE(h.warnings->back().find("2 more such reports held back"), std::string::npos)
      << h.warnings->back();
}

TEST(OpenMetricsCollector, GarbageBodyIsAnErrorOfTheTick) {
  std::string garbage;
  for (int i = 0; i < 20'000; ++i) garbage += static_cast<char>((i * 7919 + 13) % 251 + 1);
  TestHttpServer server = Serving(garbage);
  Harness h;
  OpenMetricsCollector collector(h.Options("ep", server.Url()));
  MetricBatch batch;
  const Status status = collector.Collect(Now(), batch);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().find("not a Prometheus or OpenMetrics exposition"), std::string::npos)
      << status.error();
  EXPECT_TRUE(status.error().starts_with("GET " + server.Url() + ": ")) << status.error();
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(h.PublishCount(), 0u);
}

TEST(OpenMetricsCollector, HtmlErrorPageWithStatus200IsAnError) {
  TestHttpServer server = Serving("<html><body>Login required</body></html>\n", "text/html");
  Harness h;
  OpenMetricsCollector collector(h.Options("ep", server.Url()));
  MetricBatch batch;
  EXPECT_FALSE(collector.Collect(Now(), batch).ok());
}

TEST(OpenMetricsCollector, EmptyBodyIsNoValuesButNoError) {
  TestHttpServer server = Serving("");
  Harness h;
  OpenMetricsCollector collector(h.Options("ep", server.Url()));
  MetricBatch batch;
  EXPECT_TRUE(collector.Collect(Now(), batch).ok());
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(h.PublishCount(), 0u);
}

TEST(OpenMetricsCollector, InvalidUtf8LinesAreSkipped) {
  const std::string body =
      "m{l=\"ok\"} 1\nm{l=\"\xff\xfe\"} 2\nm{l=\"caf\xc3\xa9\"} 3\n# HELP x bad \xc0\xaf\nx 4\n";
  TestHttpServer server = Serving(body);
  Harness h;
  OpenMetricsCollector collector(h.Options("ep", server.Url()));
  MetricBatch batch;
  ASSERT_TRUE(collector.Collect(Now(), batch).ok());
  EXPECT_EQ(Values(batch),
            (std::map<std::string, double>{
                {"openmetrics.ep.m.0", 1}, {"openmetrics.ep.m.1", 3}, {"openmetrics.ep.x.0", 4}}));
  ASSERT_EQ(h.warnings->size(), 1u);
  EXPECT_NE(h.warnings->front().find("UTF-8"), std::string::npos) << h.warnings->front();
  const nlohmann::json table = h.LastPublished();
  EXPECT_EQ(table["ep"]["m"][1]["l"], "caf\xc3\xa9");
  EXPECT_NO_THROW((void)table.dump());
}

TEST(OpenMetricsCollector, DuplicateSeriesKeepTheFirstValue) {
  const std::string body =
      "# TYPE m gauge\n"
      "m{a=\"1\",b=\"2\"} 1\n"
      "m{b=\"2\",a=\"1\"} 99\n"  // the same label set in another order
      "m{a=\"1\",b=\"3\"} 2\n"
      "m{a=\"1\",b=\"2\"} 98\n"
      "n 5\nn 6\n";
  TestHttpServer server = Serving(body);
  Harness h;
  OpenMetricsCollector collector(h.Options("ep", server.Url()));
  MetricBatch batch;
  ASSERT_TRUE(collector.Collect(Now(), batch).ok());
  EXPECT_EQ(Values(batch),
            (std::map<std::string, double>{
                {"openmetrics.ep.m.0", 1}, {"openmetrics.ep.m.1", 2}, {"openmetrics.ep.n.0", 5}}));
  EXPECT_EQ(collector.LastReport().duplicates, 3u);
  ASSERT_EQ(h.warnings->size(), 1u);
  EXPECT_NE(h.warnings->front().find("3 duplicate series"), std::string::npos) << h.warnings->front();
  EXPECT_NE(h.warnings->front().find("m{a=\"1\",b=\"2\"}"), std::string::npos) << h.warnings->front();
}

TEST(OpenMetricsCollector, HugeLabelSetsAreBounded) {
  std::string many_labels = "wide{";
  for (int i = 0; i < 200; ++i) many_labels += "l" + std::to_string(i) + "=\"v\",";
  many_labels += "} 1\n";
  const std::string long_value = "long{l=\"" + std::string(10'000, 'v') + "\"} 2\n";
  const std::string body = many_labels + long_value + "fine{l=\"x\"} 3\n";
  TestHttpServer server = Serving(body);
  Harness h;
  OpenMetricsCollector collector(h.Options("ep", server.Url()));
  MetricBatch batch;
  ASSERT_TRUE(collector.Collect(Now(), batch).ok());
  EXPECT_EQ(Values(batch), (std::map<std::string, double>{{"openmetrics.ep.fine.0", 3}}));
  EXPECT_EQ(collector.LastReport().parse_errors, 1u);      // more than 128 labels
  EXPECT_EQ(collector.LastReport().oversized_labels, 1u);  // over 4096 bytes
  EXPECT_FALSE(h.LastPublished()["ep"].contains("long"));
  bool limit_warned = false;
  for (const auto& w : *h.warnings)
    limit_warned |= w.find("labels take more than 4096 bytes") != std::string::npos;
  EXPECT_TRUE(limit_warned);
}

TEST(OpenMetricsCollector, SeriesCapHolds) {
  std::string body;
  for (int i = 0; i < 150; ++i) body += "s{i=\"" + std::to_string(i) + "\"} " + std::to_string(i) + "\n";
  TestHttpServer server = Serving(body);
  Harness h;
  auto options = h.Options("ep", server.Url());
  options.keys.max_series = 100;
  OpenMetricsCollector collector(std::move(options));
  MetricBatch batch;
  ASSERT_TRUE(collector.Collect(Now(), batch).ok());
  EXPECT_EQ(batch.items().size(), 100u);
  EXPECT_EQ(collector.Keys().SeriesCount(), 100u);
  bool warned = false;
  for (const auto& w : *h.warnings) warned |= w.find("50 new series not recorded") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(OpenMetricsCollector, ParserLimitTruncationIsReported) {
  std::string body;
  for (int i = 0; i < 50; ++i) body += "s{i=\"" + std::to_string(i) + "\"} 1\n";
  TestHttpServer server = Serving(body);
  Harness h;
  auto options = h.Options("ep", server.Url());
  options.parse.max_samples = 10;
  OpenMetricsCollector collector(std::move(options));
  MetricBatch batch;
  ASSERT_TRUE(collector.Collect(Now(), batch).ok());
  EXPECT_EQ(batch.items().size(), 10u);
  EXPECT_TRUE(collector.LastReport().truncated);
  ASSERT_FALSE(h.warnings->empty());
  EXPECT_NE(h.warnings->back().find("parser limit"), std::string::npos) << h.warnings->back();
}

// ---------------------------------------------------------------------------------------------------------
// Publishing the table

TEST(OpenMetricsCollector, TableIsPublishedAgainOnlyWhenItGrew) {
  std::atomic<int> scrape{0};
  TestHttpServer server([&](const HttpRequest&, Connection& c) {
    const int n = ++scrape;
    std::string body = "g{i=\"0\"} 0\n";
    if (n >= 3) body += "g{i=\"1\"} 1\n";
    c.Send(HttpResponse(200, body));
  });
  Harness h;
  auto options = h.Options("ep", server.Url());
  options.publish_interval_seconds = 0;
  OpenMetricsCollector collector(std::move(options));
  for (uint64_t i = 0; i < 4; ++i) {
    MetricBatch batch;
    ASSERT_TRUE(collector.Collect(Now(i), batch).ok());
  }
  ASSERT_EQ(h.PublishCount(), 2u);
  EXPECT_EQ(h.published->calls[0].second["ep"]["g"].size(), 1u);
  EXPECT_EQ(h.published->calls[1].second["ep"]["g"].size(), 2u);
}

TEST(OpenMetricsCollector, GrowthIsPublishedAtMostOncePerIntervalAndOnTheFinalTick) {
  std::atomic<int> scrape{0};
  TestHttpServer server([&](const HttpRequest&, Connection& c) {
    const int n = ++scrape;
    std::string body;
    for (int i = 0; i < n; ++i) body += "g{i=\"" + std::to_string(i) + "\"} 1\n";
    c.Send(HttpResponse(200, body));
  });
  Harness h;
  OpenMetricsCollector collector(h.Options("ep", server.Url()));  // 60 s
  for (uint64_t i = 0; i < 5; ++i) {
    MetricBatch batch;
    ASSERT_TRUE(collector.Collect(Now(i), batch).ok());
  }
  EXPECT_EQ(h.PublishCount(), 1u);
  Tick last = Now(5);
  last.final = true;
  MetricBatch batch;
  ASSERT_TRUE(collector.Collect(last, batch).ok());
  ASSERT_EQ(h.PublishCount(), 2u);
  EXPECT_EQ(h.LastPublished()["ep"]["g"].size(), 6u);
}

TEST(OpenMetricsCollector, EveryEndpointIsInEachPublication) {
  TestHttpServer a = Serving("x 1\n");
  TestHttpServer b = Serving("y{k=\"v\"} 2\n");
  Harness h;
  auto options_a = h.Options("a", a.Url());
  auto options_b = h.Options("b", b.Url());
  options_b.publisher = options_a.publisher;  // one publisher per run
  OpenMetricsCollector ca(std::move(options_a));
  OpenMetricsCollector cb(std::move(options_b));
  MetricBatch batch;
  ASSERT_TRUE(ca.Collect(Now(), batch).ok());
  ASSERT_TRUE(cb.Collect(Now(), batch).ok());
  ASSERT_EQ(h.PublishCount(), 2u);
  const nlohmann::json expected = {{"a", {{"x", {nlohmann::json::object()}}}},
                                   {"b", {{"y", {{{"k", "v"}}}}}}};
  EXPECT_EQ(h.LastPublished(), expected);
}

TEST(OpenMetricsCollector, NoPublisherKeepsTheTableInMemory) {
  TestHttpServer server = Serving("x 1\n");
  OpenMetricsCollectorOptions options;
  options.endpoint = "ep";
  options.url = server.Url();
  OpenMetricsCollector collector(std::move(options));
  MetricBatch batch;
  ASSERT_TRUE(collector.Collect(Now(), batch).ok());
  EXPECT_EQ(collector.Keys().SeriesCount(), 1u);
  EXPECT_FALSE(collector.LastReport().published);
}

// ---------------------------------------------------------------------------------------------------------
// Time: slow, dead and recovering endpoints

TEST(OpenMetricsCollector, SlowEndpointReturnsWithinTheBudget) {
  TestHttpServer server([](const HttpRequest&, Connection& c) {
    if (c.Sleep(seconds(10))) c.Send(HttpResponse(200, "x 1\n"));
  });
  Harness h;
  auto options = h.Options("slow", server.Url());
  options.budget_seconds = 0.5;
  OpenMetricsCollector collector(std::move(options));
  MetricBatch batch;
  const auto start = Clock::now();
  const Status status = collector.Collect(Now(), batch);
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().find("deadline"), std::string::npos) << status.error();
  EXPECT_LT(took, 1.0);
  EXPECT_TRUE(batch.empty());
}

TEST(OpenMetricsCollector, BudgetCountsFromWhenTheTickWasDue) {
  TestHttpServer server([](const HttpRequest&, Connection& c) {
    if (c.Sleep(seconds(10))) c.Send(HttpResponse(200, "x 1\n"));
  });
  Harness h;
  auto options = h.Options("slow", server.Url());
  options.budget_seconds = 1.0;
  OpenMetricsCollector collector(std::move(options));
  MetricBatch batch;
  Tick tick = Now();
  tick.monotonic -= milliseconds(400);  // the lane started this tick 0.4 s late
  const auto start = Clock::now();
  ASSERT_FALSE(collector.Collect(tick, batch).ok());
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 0.9);
}

TEST(OpenMetricsCollector, DeadEndpointIsAQuickClearError) {
  Harness h;
  OpenMetricsCollector collector(
      h.Options("dead", "http://127.0.0.1:" + std::to_string(testing::UnusedPort()) + "/metrics"));
  MetricBatch batch;
  const auto start = Clock::now();
  const Status status = collector.Collect(Now(), batch);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().find("Connection refused"), std::string::npos) << status.error();
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 1.5);
  EXPECT_TRUE(batch.empty());
}

TEST(OpenMetricsCollector, RetryMakesATransientErrorInvisible) {
  std::atomic<int> calls{0};
  TestHttpServer server([&](const HttpRequest&, Connection& c) {
    c.Send(++calls % 2 == 1 ? HttpResponse(502, "bad gateway\n") : HttpResponse(200, "x 1\n"));
  });
  Harness h;
  OpenMetricsCollector collector(h.Options("flaky", server.Url()));
  MetricBatch batch;
  ASSERT_TRUE(collector.Collect(Now(), batch).ok());
  EXPECT_EQ(Values(batch), (std::map<std::string, double>{{"openmetrics.flaky.x.0", 1}}));
  EXPECT_EQ(collector.LastReport().fetch.attempts, 2u);
}

TEST(OpenMetricsCollector, HeadersReachTheEndpoint) {
  std::mutex mutex;
  std::string seen;
  TestHttpServer server([&](const HttpRequest& r, Connection& c) {
    if (const std::string* auth = r.Header("Authorization")) {
      std::lock_guard lock(mutex);
      seen = *auth;
    }
    c.Send(HttpResponse(200, "x 1\n"));
  });
  Harness h;
  auto options = h.Options("ep", server.Url());
  options.headers = {{"Authorization", "Bearer abc"}};
  OpenMetricsCollector collector(std::move(options));
  MetricBatch batch;
  ASSERT_TRUE(collector.Collect(Now(), batch).ok());
  std::lock_guard lock(mutex);
  EXPECT_EQ(seen, "Bearer abc");
}

TEST(OpenMetricsCollector, ProbeNamesTheEndpointWithoutItsPassword) {
  OpenMetricsCollectorOptions options;
  options.endpoint = "node";
  options.url = "http://me:secret@127.0.0.1:9100/metrics";
  OpenMetricsCollector collector(std::move(options));
  nlohmann::json metadata = nlohmann::json::object();
  collector.Probe(metadata);
  EXPECT_EQ(metadata["runmon"]["openmetrics"]["node"]["url"], "http://***@127.0.0.1:9100/metrics");
  EXPECT_EQ(metadata["runmon"]["openmetrics"]["node"]["filtered"], false);
}

TEST(OpenMetricsCollector, BudgetFromTheInterval) {
  EXPECT_DOUBLE_EQ(OpenMetricsBudgetSeconds(15), 4.5);
  EXPECT_DOUBLE_EQ(OpenMetricsBudgetSeconds(60), 4.5);
  EXPECT_DOUBLE_EQ(OpenMetricsBudgetSeconds(1), 0.45);
  EXPECT_NEAR(OpenMetricsBudgetSeconds(0.1), 0.045, 1e-12);
}

// ---------------------------------------------------------------------------------------------------------
// The builtin list and the sampler

CollectorContext ContextWith(const std::map<std::string, std::string>& other) {
  CollectorContext ctx;
  ctx.paths = HostPaths{};
  ctx.settings.other = other;
  ctx.settings.interval_seconds = 1;
  ctx.clocks = Clocks::System();
  return ctx;
}

TEST(OpenMetricsBuiltin, OneLanePerEndpointAndConfigPublished) {
  TestHttpServer server = Serving(Fixture("dcgm_exporter.prom"));
  auto ctx = ContextWith({{"x_stats_open_metrics_endpoints",
                           R"({"dcgm": ")" + server.Url() + R"(", "other": "http://127.0.0.1:1/metrics"})"},
                          {"x_stats_open_metrics_filters", R"({"GPU_TEMP": {"gpu": "0"}})"},
                          {"x_stats_open_metrics_http_headers", R"({"X-Test": "yes"})"}});
  std::vector<std::pair<std::string, nlohmann::json>> published;
  ctx.publish_config = [&](const std::string& key, const nlohmann::json& value) {
    published.emplace_back(key, value);
  };
  auto specs = BuiltinCollectors(ctx);
  std::map<std::string, Collector*> by_lane;
  for (auto& spec : specs) {
    if (spec.lane.starts_with("openmetrics:")) by_lane[spec.lane] = spec.collector.get();
  }
  ASSERT_EQ(by_lane.size(), 2u);
  ASSERT_TRUE(by_lane.count("openmetrics:dcgm"));
  ASSERT_TRUE(by_lane.count("openmetrics:other"));
  EXPECT_EQ(by_lane["openmetrics:dcgm"]->Name(), "openmetrics:dcgm");
  MetricBatch batch;
  ASSERT_TRUE(by_lane["openmetrics:dcgm"]->Collect(Now(), batch).ok());
  EXPECT_EQ(Values(batch),
            (std::map<std::string, double>{{"openmetrics.dcgm.DCGM_FI_DEV_GPU_TEMP.0", 41.0}}));
  ASSERT_EQ(published.size(), 1u);
  EXPECT_EQ(published[0].first, "_runmon.openmetrics");
  EXPECT_EQ(published[0].second["dcgm"]["DCGM_FI_DEV_GPU_TEMP"][0]["gpu"], "0");
  ASSERT_FALSE(server.Requests().empty());
  ASSERT_NE(server.Requests()[0].Header("X-Test"), nullptr);
}

TEST(OpenMetricsBuiltin, NoSettingNoCollectorAndBadSettingsAWarning) {
  for (const auto& other :
       std::vector<std::map<std::string, std::string>>{{}, {{"x_stats_open_metrics_endpoints", "{}"}}}) {
    auto specs = BuiltinCollectors(ContextWith(other));
    for (const auto& spec : specs) EXPECT_FALSE(spec.lane.starts_with("openmetrics")) << spec.lane;
  }
  // Settings are validated when read; a context made by hand with bad ones gets a warning, not a crash.
  auto ctx = ContextWith({{"x_stats_open_metrics_endpoints", R"({"x": "file:///etc/passwd"})"}});
  std::vector<std::string> warnings;
  ctx.warn = [&](const std::string& m) { warnings.push_back(m); };
  auto specs = BuiltinCollectors(ctx);
  for (const auto& spec : specs) EXPECT_FALSE(spec.lane.starts_with("openmetrics")) << spec.lane;
  bool warned = false;
  for (const auto& w : warnings) warned |= w.find("no OpenMetrics scraping") != std::string::npos;
  EXPECT_TRUE(warned);
}

// RUNMON_OPENMETRICS_PROXY comes from the context's environment (the app's, read once), not from the
// process's: the proxy named there is used for a far endpoint.
TEST(OpenMetricsBuiltin, ProxyFromTheContextEnvironment) {
  TestHttpServer proxy(
      [](const HttpRequest&, Connection& c) { c.Send(HttpResponse(200, "proxied_total 1\n")); });
  auto ctx = ContextWith(
      {{"x_stats_open_metrics_endpoints", R"({"far": "http://metrics.example.invalid:9100/m"})"}});
  ctx.environment = {{"RUNMON_OPENMETRICS_PROXY", proxy.Url("")}};
  auto specs = BuiltinCollectors(ctx);
  Collector* far = nullptr;
  for (auto& spec : specs) {
    if (spec.lane == "openmetrics:far") far = spec.collector.get();
  }
  ASSERT_NE(far, nullptr);
  MetricBatch batch;
  ASSERT_TRUE(far->Collect(Now(), batch).ok());
  ASSERT_EQ(proxy.Requests().size(), 1u);
  EXPECT_EQ(proxy.Requests()[0].target, "http://metrics.example.invalid:9100/m");
}

class FastCollector : public Collector {
 public:
  std::string_view Name() const override { return "fast"; }
  Status Collect(const Tick&, MetricBatch& out) override {
    out.Add("fast.value", 1);
    return OkStatus();
  }
};

TEST(OpenMetricsSampler, DeadAndSlowEndpointsDelayNothingElse) {
  TestHttpServer slow([](const HttpRequest&, Connection& c) {
    if (c.Sleep(seconds(30))) c.Send(HttpResponse(200, "x 1\n"));
  });
  TestHttpServer good = Serving("up 1\n");
  auto make = [](std::string name, std::string url) {
    OpenMetricsCollectorOptions options;
    options.endpoint = name;
    options.url = std::move(url);
    options.budget_seconds = OpenMetricsBudgetSeconds(0.4);
    return std::make_unique<OpenMetricsCollector>(std::move(options));
  };
  std::vector<CollectorSpec> specs;
  specs.push_back({std::make_unique<FastCollector>(), "host"});
  specs.push_back({make("slow", slow.Url()), "openmetrics:slow"});
  specs.push_back(
      {make("dead", "http://127.0.0.1:" + std::to_string(testing::UnusedPort()) + "/m"), "openmetrics:dead"});
  specs.push_back({make("good", good.Url()), "openmetrics:good"});
  SamplerOptions options;
  options.interval_seconds = 0.4;
  options.max_samples = 4;
  std::vector<Sample> samples;
  std::vector<std::string> logged;
  std::mutex mutex;
  Sampler sampler(
      std::move(specs), options,
      [&](const Sample& s) {
        std::lock_guard lock(mutex);
        samples.push_back(s);
      },
      [&](const std::string& m) {
        std::lock_guard lock(mutex);
        logged.push_back(m);
      });
  const auto start = Clock::now();
  sampler.Run();
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_LT(took, 3.0);
  std::lock_guard lock(mutex);
  size_t on_time = 0;
  for (const Sample& s : samples) {
    if (s.late) continue;
    ++on_time;
    EXPECT_NE(s.metrics.Find("fast.value"), nullptr);
    EXPECT_EQ(s.metrics.Find("openmetrics.slow.x.0"), nullptr);
  }
  EXPECT_EQ(on_time, 4u);
  EXPECT_NE(samples.front().metrics.Find("openmetrics.good.up.0"), nullptr);
  bool dead_logged = false;
  bool hung = false;
  for (const auto& m : logged) {
    dead_logged |= m.find("collector openmetrics:dead failed") != std::string::npos &&
                   m.find("Connection refused") != std::string::npos;
    hung |= m.find("hung") != std::string::npos || m.find("stuck") != std::string::npos;
  }
  EXPECT_TRUE(dead_logged);
  EXPECT_FALSE(hung);  // the slow one gave up within its budget, before the lane deadline
}

}  // namespace
}  // namespace runmon::openmetrics
