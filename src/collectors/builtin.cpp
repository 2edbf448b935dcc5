// The collector list. Order within a lane is the order of keys in a sample. The host collectors share one
// lane: each lane costs a thread wake-up per tick, which on a virtual machine costs more than most of these
// collectors. disk_usage can block (statvfs on a dead network mount); if it does, the sampler leaves it
// alone in this lane and moves the others to a new one (sampler.hpp), so it is last here and delays
// nothing for longer than one deadline.
#include "collectors/builtin.hpp"

#include <cstdlib>
#include <ctime>

#include <fmt/format.h>

#include "collectors/openmetrics/openmetrics_collector.hpp"
#include "config/openmetrics_settings.hpp"

namespace runmon {
namespace {

std::optional<std::string> OtherSetting(const Settings& settings, const std::string& name) {
  if (auto it = settings.other.find(name); it != settings.other.end()) return it->second;
  return std::nullopt;
}

// One collector per OpenMetrics endpoint, sharing the filter and the table publisher. The settings were
// validated when they were read; what still fails here (a context built by hand) is a warning.
std::vector<std::unique_ptr<openmetrics::OpenMetricsCollector>> MakeOpenMetricsCollectors(
    const LinuxCollectorContext& ctx) {
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
  openmetrics::ApplyProxySetting(std::getenv("RUNMON_OPENMETRICS_PROXY"), fetch);
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

}  // namespace

Clocks Clocks::System() {
  auto read = [](clockid_t id) {
    timespec t{};
    ::clock_gettime(id, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
  };
  return Clocks{[read] { return read(CLOCK_BOOTTIME); }, [read] { return read(CLOCK_MONOTONIC); }};
}

NvidiaOptions NvidiaOptionsFor(const LinuxCollectorContext& ctx) {
  NvidiaOptions nvidia;
  if (auto it = ctx.settings.other.find("x_stats_gpu_device_ids"); it != ctx.settings.other.end()) {
    if (auto ids = ParseGpuDeviceIds(it->second)) nvidia.device_ids = *ids;  // validated with the settings
  }
  nvidia.cuda_visible_devices = ctx.cuda_visible_devices;
  nvidia.pid = ctx.pid;
  nvidia.whole_tree = ctx.settings.track_process_tree;
  nvidia.paths = ctx.paths;
  nvidia.publish_metadata = ctx.publish_metadata;
  return nvidia;
}

std::vector<CollectorSpec> BuiltinCollectors(const LinuxCollectorContext& ctx) {
  std::vector<CollectorSpec> specs;
  specs.push_back({MakeProcessTreeCollector(ctx), "host"});
  specs.push_back({MakeHostCpuCollector(ctx), "host"});
  specs.push_back({MakeMemoryCollector(ctx), "host"});
  specs.push_back({MakeDiskIoCollector(ctx), "host"});
  specs.push_back({MakeNetworkCollector(ctx), "host"});
  if (!ctx.settings.no_cgroup) specs.push_back({MakeCgroupCollector(ctx), "host"});
  specs.push_back({MakeSelfCostCollector(ctx), "host"});
  specs.push_back({MakeDiskUsageCollector(ctx), "host"});

  // NVIDIA: a lane of its own, so a driver call that hangs delays nothing else. No library, no collector;
  // that is only worth a word when the library was named explicitly.
  std::string why_not;
  if (auto collector = MakeNvidiaCollector(NvidiaOptionsFor(ctx), &why_not)) {
    specs.push_back({std::move(collector), "nvidia"});
  } else if (const char* named = std::getenv("RUNMON_NVML_LIBRARY");
             named != nullptr && *named != '\0' && ctx.warn) {
    ctx.warn(fmt::format("no NVIDIA metrics: {}", why_not));
  }

  // OpenMetrics endpoints: a lane each ("openmetrics:<name>"), so a slow endpoint delays nothing else.
  for (auto& collector : MakeOpenMetricsCollectors(ctx)) {
    std::string lane(collector->Name());
    specs.push_back({std::move(collector), std::move(lane)});
  }
  return specs;
}

}  // namespace runmon
