// The monitored process's cgroup limits and pressure (linux/cgroup_collector.cpp emits them).
// The family's metric descriptors: each key is spelled here and nowhere else (core/metric_descriptor.hpp).
#pragma once

#include "core/metric_descriptor.hpp"

namespace runmon::cgroup_metrics {

inline constexpr MetricDescriptor kMemoryLimit{
    .pattern = "cgroup.memory.limitMB",
    .title = "cgroup memory limit",
    .unit = "MiB",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kCgroup,
    .source = "cgroup",
    .description =
        "The tightest memory limit along the monitored process's cgroup and its parents (v2 "
        "memory.max or v1 memory.limit_in_bytes).",
    .prometheus_name = "runmon_cgroup_memory_limit_bytes"};
inline constexpr MetricDescriptor kCpuLimit{
    .pattern = "cgroup.cpu.limit",
    .title = "cgroup CPU limit",
    .unit = "CPUs",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kCgroup,
    .source = "cgroup",
    .description =
        "CPUs available to the process: the smaller of the tightest CPU quota along the cgroup "
        "chain (quota / period) and the affinity mask when it is narrower than the host.",
    .prometheus_name = "runmon_cgroup_cpu_limit_cores"};
inline constexpr MetricDescriptor kThrottledPercent{
    .pattern = "cgroup.cpu.throttledPercent",
    .title = "CPU throttled",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kCgroup,
    .source = "cgroup",
    .description =
        "Share of the scheduler periods of the last interval in which the cgroup was throttled "
        "(cpu.stat nr_throttled / nr_periods).",
    .prometheus_name = "runmon_cgroup_cpu_throttled_ratio"};
inline constexpr MetricDescriptor kOomKills{
    .pattern = "cgroup.memory.oomKills",
    .title = "OOM kills",
    .unit = "count",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kCgroup,
    .source = "cgroup",
    .description =
        "Processes killed by the OOM killer in the cgroup since it was created (memory.events "
        "oom_kill).",
    .prometheus_name = "runmon_cgroup_memory_oom_kills_total",
    .prometheus_type = PrometheusType::kCounter};

}  // namespace runmon::cgroup_metrics
