// The host CPU's metrics (linux/host_cpu_collector.cpp emits them).
// The family's metric descriptors: each key is spelled here and nowhere else (core/metric_descriptor.hpp).
#pragma once

#include "core/metric_descriptor.hpp"

namespace runmon::cpu_metrics {

inline constexpr MetricDescriptor kHostCpu{
    .pattern = "cpu_percent",
    .title = "Host CPU",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kCpu,
    .source = "cpu",
    .description = "Host CPU busy time during the last interval, all CPUs (/proc/stat); 0-100.",
    .prometheus_name = "runmon_host_cpu_ratio",
    .sidebar_rank = 5};
inline constexpr MetricDescriptor kCoreCpu{
    .pattern = "cpu.{i}.cpu_percent",
    .title = "Core CPU",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kCpu,
    .source = "cpu",
    .description = "Busy time of logical CPU i during the last interval (opt-in: --per-core).",
    .prometheus_name = "runmon_host_cpu_core_ratio",
    .prometheus_label = "cpu",
    .series_label = "Core"};

}  // namespace runmon::cpu_metrics
