// The OpenMetrics collector: one per entry of x_stats_open_metrics_endpoints, each in a lane of its own
// ("openmetrics:<name>"), so a slow endpoint delays nothing else. Each tick it GETs the endpoint
// (HttpFetcher: bounded by the tick's deadline and a response cap), parses the body (ParseExposition:
// per-line errors), keys the counter, gauge and untyped samples the filters keep as
// openmetrics.<endpoint>.<metric>.<index> (SeriesKeys) and hands the index -> labels table to the run
// (OpenMetricsTablePublisher).
//
// Odd cases, and what happens to them:
//  - Lines that do not parse are skipped; the rest is used. They are reported through `warn`, at most once
//  per
//    warn_interval_seconds per kind of trouble (with a count of what was held back). A body with no sample
//    and only errors (not an exposition at all) is an error of the tick.
//  - A series seen twice in one scrape (same name, same labels): the first value is used, the others counted
//    and reported.
//  - A series whose labels take more than max_label_bytes (names and values together) is skipped and counted:
//    the table of labels is kept for the whole run and written into it.
//  - NaN and infinite values keep their series' index but are left out of the sample (a missing value is
//    omitted, never made up).
//  - The table is published when it grew: at once the first time, then at most once per
//    publish_interval_seconds (and on the final tick), so an endpoint whose label values churn cannot write a
//    config record every tick.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectors/collector.hpp"
#include "collectors/openmetrics/http_fetch.hpp"
#include "collectors/openmetrics/series_filter.hpp"
#include "collectors/openmetrics/text_parse.hpp"
#include "config/openmetrics_settings.hpp"

namespace runmon::openmetrics {

// The config key the index -> labels tables are published under (spec/metrics.md A.2.7).
inline constexpr std::string_view kTableConfigKey = "_runmon.openmetrics";

using PublishConfigFunction = std::function<void(const std::string& key, const nlohmann::json& value)>;

// The tables of every endpoint of a run, published together: a config item is replaced, not merged, when it
// is written again, so each publication carries every endpoint's table:
// {"<endpoint>": {"<metric>": [{label: value, ...} for index 0, 1, ...]}}. Calls of `publish` are serialised
// (one at a time, in the order the tables changed). Thread-safe.
class OpenMetricsTablePublisher {
 public:
  explicit OpenMetricsTablePublisher(PublishConfigFunction publish);
  void Publish(const std::string& endpoint, nlohmann::json table);
  nlohmann::json Tables() const;

 private:
  mutable std::mutex mutex_;
  PublishConfigFunction publish_;
  nlohmann::json tables_ = nlohmann::json::object();
};

// The labels of SeriesKeys::Table() as JSON (invalid UTF-8, which the parser does not let through, would be
// replaced).
nlohmann::json TableJson(const SeriesKeys& keys);

struct OpenMetricsCollectorOptions {
  std::string endpoint;
  std::string url;
  std::vector<OpenMetricsHeader> headers;
  std::shared_ptr<const SeriesFilter> filter;  // null keeps everything
  FetchOptions fetch;
  // How long one tick's scrape may take in all, from when the tick was due (the sampler's lane deadline is
  // half the interval, at most 5 s; this is set a little under it).
  double budget_seconds = 4.5;
  ParseOptions parse{.format = TextFormat::kAuto,
                     .max_samples = 200'000,
                     .max_line_bytes = size_t{1} << 20,
                     .max_labels = 128,
                     .max_errors = 5};
  SeriesKeysOptions keys;
  size_t max_label_bytes = 4096;
  double warn_interval_seconds = 600;
  double publish_interval_seconds = 60;
  std::function<void(const std::string&)> warn;
  std::shared_ptr<OpenMetricsTablePublisher> publisher;  // null: the table stays in memory
};

// What the last Collect did (tests, diagnostics).
struct ScrapeReport {
  size_t samples = 0;  // parsed
  size_t values = 0;   // added to the batch
  size_t parse_errors = 0;
  size_t duplicates = 0;
  size_t oversized_labels = 0;
  size_t non_finite = 0;
  bool truncated = false;
  bool published = false;
  FetchStats fetch;
};

class OpenMetricsCollector : public Collector {
 public:
  explicit OpenMetricsCollector(OpenMetricsCollectorOptions options);
  ~OpenMetricsCollector() override;

  std::string_view Name() const override { return name_; }
  // runmon.openmetrics.<endpoint>: the URL (password redacted).
  void Probe(nlohmann::json& metadata) override;
  Status Collect(const Tick& tick, MetricBatch& out) override;

  const ScrapeReport& LastReport() const { return report_; }
  const SeriesKeys& Keys() const { return keys_; }

 private:
  class Limiter;
  void Warn(Limiter& limiter, const std::string& message);

  OpenMetricsCollectorOptions options_;
  std::string name_;
  HttpFetcher fetcher_;
  SeriesKeys keys_;
  ScrapeReport report_;
  size_t published_series_ = 0;
  bool ever_published_ = false;
  std::chrono::steady_clock::time_point last_publish_{};
  std::unique_ptr<Limiter> parse_limiter_;
  std::unique_ptr<Limiter> duplicate_limiter_;
  std::unique_ptr<Limiter> limit_limiter_;
};

// The lane (and collector name) of an endpoint: "openmetrics:<name>".
std::string OpenMetricsLaneName(std::string_view endpoint);

// The per-tick budget for a sampling interval: 90% of the sampler's lane deadline (half the interval, at most
// 5 s).
double OpenMetricsBudgetSeconds(double interval_seconds);

}  // namespace runmon::openmetrics
