// The host's (or its cgroup's) memory metrics (linux/memory_collector.cpp emits them).
// The family's metric descriptors: each key is spelled here and nowhere else (core/metric_descriptor.hpp).
#pragma once

#include "core/metric_descriptor.hpp"

namespace runmon::memory_metrics {

inline constexpr MetricDescriptor kUsedPercent{
    .pattern = "memory_percent",
    .title = "System memory",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kMemory,
    .source = "memory",
    .description =
        "Memory in use: cgroup usage / cgroup limit when a limit applies, else (MemTotal - "
        "MemAvailable) / MemTotal; x 100.",
    .prometheus_name = "runmon_memory_used_ratio",
    .sidebar_rank = 7};
inline constexpr MetricDescriptor kAvailable{
    .pattern = "proc.memory.availableMB",
    .title = "Available memory",
    .unit = "MiB",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kMemory,
    .source = "memory",
    .description =
        "Memory still available to the run (system-wide despite the prefix): cgroup limit - usage "
        "when a limit applies, else MemAvailable.",
    .prometheus_name = "runmon_memory_available_bytes"};

}  // namespace runmon::memory_metrics
