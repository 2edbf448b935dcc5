// The system load family's metrics (loadavg_family.cpp emits them).
// The family's metric descriptors: each key is spelled here and nowhere else (core/metric_descriptor.hpp).
#pragma once

#include "core/metric_descriptor.hpp"

namespace runmon::loadavg_metrics {

inline constexpr MetricDescriptor kLoad1{
    .pattern = "system.load1",
    .title = "Load average (1 min)",
    .unit = "count",
    .section = MetricSection::kCpu,
    .source = "loadavg",
    .description =
        "Runnable and uninterruptible tasks, averaged by the kernel over the last minute (/proc/loadavg; "
        "host-wide, also inside a container).",
    .prometheus_name = "runmon_host_load1",
    .merge = {"system.load", "Load average", "1 min"}};
inline constexpr MetricDescriptor kLoad5{.pattern = "system.load5",
                                         .title = "Load average (5 min)",
                                         .unit = "count",
                                         .section = MetricSection::kCpu,
                                         .source = "loadavg",
                                         .description = "The same averaged over the last 5 minutes.",
                                         .prometheus_name = "runmon_host_load5",
                                         .merge = {"system.load", "Load average", "5 min"}};
inline constexpr MetricDescriptor kLoad15{.pattern = "system.load15",
                                          .title = "Load average (15 min)",
                                          .unit = "count",
                                          .section = MetricSection::kCpu,
                                          .source = "loadavg",
                                          .description = "The same averaged over the last 15 minutes.",
                                          .prometheus_name = "runmon_host_load15",
                                          .merge = {"system.load", "Load average", "15 min"}};

}  // namespace runmon::loadavg_metrics
