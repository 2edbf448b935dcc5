// The monitored process tree's metrics (linux/process_tree_collector.cpp emits them).
// The family's metric descriptors: each key is spelled here and nowhere else (core/metric_descriptor.hpp).
#pragma once

#include "core/metric_descriptor.hpp"

namespace runmon::process_metrics {

inline constexpr MetricDescriptor kCpu{
    .pattern = "cpu",
    .title = "Process CPU",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kCpu,
    .source = "process",
    .description =
        "CPU time used by the monitored process tree during the last interval (descendants that "
        "exited during it included, through their parent's reaped-children time), divided by "
        "(interval x CPUs available to the process: the smallest of the cgroup quota, the "
        "affinity mask and the logical CPU count), x 100; 0-100. The first sample uses the "
        "average since the process started.",
    .prometheus_name = "runmon_process_cpu_ratio",
    .sidebar_rank = 4};
inline constexpr MetricDescriptor kThreads{
    .pattern = "proc.cpu.threads",
    .title = "Process threads",
    .unit = "count",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kCpu,
    .source = "process",
    .description = "Threads of the monitored process tree (sum of /proc/PID/stat num_threads).",
    .prometheus_name = "runmon_process_threads"};
inline constexpr MetricDescriptor kResidentMemory{
    .pattern = "proc.memory.rssMB",
    .title = "Process RSS",
    .unit = "MiB",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kMemory,
    .source = "process",
    .description = "Resident set size of the monitored process tree (sum of /proc/PID/statm resident).",
    .prometheus_name = "runmon_process_resident_memory_bytes",
    .sidebar_rank = 6};
inline constexpr MetricDescriptor kMemoryPercent{
    .pattern = "proc.memory.percent",
    .title = "Process memory",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kMemory,
    .source = "process",
    .description =
        "Process tree RSS as a percentage of the memory limit: the cgroup limit when one applies, "
        "else total RAM.",
    .prometheus_name = "runmon_process_memory_ratio"};

}  // namespace runmon::process_metrics
