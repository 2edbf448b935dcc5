// The monitor's own cost (linux/self_cost_collector.cpp, and the sampler for sampleMillis).
// The family's metric descriptors: each key is spelled here and nowhere else (core/metric_descriptor.hpp).
#pragma once

#include "core/metric_descriptor.hpp"

namespace runmon::self_metrics {

inline constexpr MetricDescriptor kCpuPercent{
    .pattern = "runmon.cpuPercent",
    .title = "runmon CPU",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kMonitor,
    .source = "runmon",
    .description = "CPU used by runmon itself during the last interval, as a percentage of one CPU.",
    .prometheus_name = "runmon_self_cpu_ratio"};
inline constexpr MetricDescriptor kResidentMemory{.pattern = "runmon.rssMB",
                                                  .title = "runmon RSS",
                                                  .unit = "MiB",
                                                  .kind = MetricKind::kGauge,
                                                  .section = MetricSection::kMonitor,
                                                  .source = "runmon",
                                                  .description = "Resident set size of runmon itself.",
                                                  .prometheus_name = "runmon_self_resident_memory_bytes"};
inline constexpr MetricDescriptor kSampleMillis{
    .pattern = "runmon.sampleMillis",
    .title = "runmon sample time",
    .unit = "ms",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kMonitor,
    .source = "runmon",
    .description =
        "Wall time this sampling pass took, from its tick until its last lane returned (or its "
        "deadline).",
    .prometheus_name = "runmon_self_sample_duration_seconds"};

}  // namespace runmon::self_metrics
