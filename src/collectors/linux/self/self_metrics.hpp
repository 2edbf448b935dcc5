// The monitor's own cost (linux/self_cost_collector.cpp, and the sampler for sampleMillis), and how its
// remote write keeps up (linux/remote_write_status_collector.cpp; one series per --remote-write URL, labelled
// by its position among the flags: destination="0", "1", ...).
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

inline constexpr MetricDescriptor kRemoteWritePendingSamples{
    .pattern = "runmon.remoteWrite.{destination}.pendingSamples",
    .title = "Remote write pending samples",
    .unit = "count",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kMonitor,
    .source = "runmon",
    .description =
        "Values waiting in the remote-write queue on disk for this destination (the --remote-write URLs in "
        "the order given: 0, 1, ...), not yet acknowledged by the receiver.",
    .prometheus_name = "runmon_remote_write_pending_samples",
    .prometheus_label = "destination",
    .series_label = "destination"};
inline constexpr MetricDescriptor kRemoteWriteOldestPendingSeconds{
    .pattern = "runmon.remoteWrite.{destination}.oldestPendingSeconds",
    .title = "Remote write oldest pending",
    .unit = "s",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kMonitor,
    .source = "runmon",
    .description =
        "Age of the oldest value still waiting in the queue for this destination (0 when none waits): how "
        "far the receiver lags behind the run.",
    .prometheus_name = "runmon_remote_write_oldest_pending_seconds",
    .prometheus_label = "destination",
    .series_label = "destination"};
inline constexpr MetricDescriptor kRemoteWriteSentSamples{
    .pattern = "runmon.remoteWrite.{destination}.sentSamples",
    .title = "Remote write sent samples",
    .unit = "count",
    .kind = MetricKind::kSinceStart,
    .section = MetricSection::kMonitor,
    .source = "runmon",
    .description = "Values the receiver acknowledged since runmon started.",
    .prometheus_name = "runmon_remote_write_sent_samples_total",
    .prometheus_type = PrometheusType::kCounter,
    .prometheus_label = "destination",
    .merge = {.chart_id = "runmon.remoteWrite.{destination}.samples",
              .title = "Remote write samples",
              .series_suffix = "sent"},
    .series_label = "destination"};
inline constexpr MetricDescriptor kRemoteWriteDroppedSamples{
    .pattern = "runmon.remoteWrite.{destination}.droppedSamples",
    .title = "Remote write dropped samples",
    .unit = "count",
    .kind = MetricKind::kSinceStart,
    .section = MetricSection::kMonitor,
    .source = "runmon",
    .description =
        "Values given up since runmon started: refused by the receiver (a 4xx other than 429), older than "
        "the "
        "age cap, or deleted to keep the queue within its bound. Each kind is also said once on stderr.",
    .prometheus_name = "runmon_remote_write_dropped_samples_total",
    .prometheus_type = PrometheusType::kCounter,
    .prometheus_label = "destination",
    .merge = {.chart_id = "runmon.remoteWrite.{destination}.samples",
              .title = "Remote write samples",
              .series_suffix = "dropped"},
    .series_label = "destination"};

}  // namespace runmon::self_metrics
