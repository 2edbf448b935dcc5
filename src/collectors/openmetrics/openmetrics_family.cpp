// The OpenMetrics family's factory: one collector per endpoint of x_stats_open_metrics_endpoints, each in a
// lane of its own ("openmetrics:<name>") so a slow endpoint delays nothing else, sharing the filter and the
// table publisher. Off unless endpoints are set.
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "collectors/builtin.hpp"
#include "collectors/openmetrics/openmetrics_collector.hpp"
#include "config/openmetrics_settings.hpp"

namespace runmon::collector_families {
namespace {

constexpr std::string_view kSettings[] = {"x_stats_open_metrics_endpoints", "x_stats_open_metrics_filters",
                                          "x_stats_open_metrics_http_headers", "RUNMON_OPENMETRICS_PROXY",
                                          "no_proxy"};

std::optional<std::string> OtherSetting(const Settings& settings, const std::string& name) {
  if (auto it = settings.other.find(name); it != settings.other.end()) return it->second;
  return std::nullopt;
}

// One collector per OpenMetrics endpoint, sharing the filter and the table publisher. The settings were
// validated when they were read; what still fails here (a context built by hand) is a warning.
std::vector<std::unique_ptr<openmetrics::OpenMetricsCollector>> MakeOpenMetricsCollectors(
    const CollectorContext& ctx) {
  std::vector<std::unique_ptr<openmetrics::OpenMetricsCollector>> collectors;
  const auto endpoints_setting = OtherSetting(ctx.settings, "x_stats_open_metrics_endpoints");
  if (!endpoints_setting) return collectors;
  auto warn = [&ctx](const std::string& message) {
    if (ctx.warn) ctx.warn(fmt::format("no OpenMetrics scraping: {}", message));
  };
  auto endpoints = ParseOpenMetricsEndpoints(*endpoints_setting);
  if (!endpoints) {
    warn(fmt::format("x_stats_open_metrics_endpoints: {}", endpoints.error()));
    return collectors;
  }
  if (endpoints->empty()) return collectors;
  std::vector<OpenMetricsHeader> headers;
  if (const auto headers_setting = OtherSetting(ctx.settings, "x_stats_open_metrics_http_headers")) {
    auto parsed = ParseOpenMetricsHeaders(*headers_setting);
    if (!parsed) {
      warn(fmt::format("x_stats_open_metrics_http_headers: {}", parsed.error()));
      return collectors;
    }
    headers = std::move(*parsed);
  }
  const auto filters_setting = OtherSetting(ctx.settings, "x_stats_open_metrics_filters");
  auto filter = openmetrics::SeriesFilter::FromSetting(
      filters_setting ? std::optional<std::string_view>(*filters_setting) : std::nullopt);
  if (!filter) {
    warn(filter.error());
    return collectors;
  }
  auto shared_filter = std::make_shared<const openmetrics::SeriesFilter>(std::move(*filter));
  // Without a run to write to (runmon sample) the tables stay with the collectors only.
  auto publisher = ctx.publish_config
                       ? std::make_shared<openmetrics::OpenMetricsTablePublisher>(ctx.publish_config)
                       : nullptr;
  openmetrics::FetchOptions fetch;
  const auto proxy = EnvironmentValue(ctx, "RUNMON_OPENMETRICS_PROXY");
  openmetrics::ApplyProxySetting(proxy ? proxy->c_str() : nullptr, fetch);
  fetch.no_proxy = EnvironmentValue(ctx, "no_proxy").value_or(EnvironmentValue(ctx, "NO_PROXY").value_or(""));
  for (const OpenMetricsEndpoint& endpoint : *endpoints) {
    openmetrics::OpenMetricsCollectorOptions options;
    options.endpoint = endpoint.name;
    options.url = endpoint.url;
    options.headers = headers;
    options.filter = shared_filter->KeepsAll() ? nullptr : shared_filter;
    options.fetch = fetch;
    options.budget_seconds = openmetrics::OpenMetricsBudgetSeconds(ctx.settings.interval_seconds);
    options.warn = ctx.warn;
    options.publisher = publisher;
    collectors.push_back(std::make_unique<openmetrics::OpenMetricsCollector>(std::move(options)));
  }
  return collectors;
}

FamilyStart Start(const CollectorContext& ctx) {
  FamilyStart started;
  for (auto& collector : MakeOpenMetricsCollectors(ctx)) started.collectors.push_back(std::move(collector));
  if (started.collectors.empty()) started.absent_reason = "x_stats_open_metrics_endpoints not set";
  return started;
}

}  // namespace

const CollectorFamily& openmetrics() {
  static constexpr CollectorFamily kFamily{
      .name = "openmetrics", .enabled_by_default = false, .settings = kSettings, .start = Start};
  return kFamily;
}

}  // namespace runmon::collector_families
