// Disk usage and I/O metrics (linux/disk_usage_collector.cpp and linux/disk_io_collector.cpp emit them).
// The family's metric descriptors: each key is spelled here and nowhere else (core/metric_descriptor.hpp).
#pragma once

#include "core/metric_descriptor.hpp"

namespace runmon::disk_metrics {

inline constexpr MetricDescriptor kUsagePercent{
    .pattern = "disk.{path}.usagePercent",
    .title = "Disk usage",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kDisk,
    .source = "disk",
    .description =
        "Used share of the filesystem holding the configured path (df semantics: blocks reserved "
        "for root are left out of the denominator).",
    .prometheus_name = "runmon_disk_used_ratio",
    .prometheus_label = "path"};
inline constexpr MetricDescriptor kUsageGB{
    .pattern = "disk.{path}.usageGB",
    .title = "Disk used",
    .unit = "GiB",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kDisk,
    .source = "disk",
    .description = "Space used on the filesystem holding the configured path.",
    .prometheus_name = "runmon_disk_used_bytes",
    .prometheus_label = "path"};
inline constexpr MetricDescriptor kRead{
    .pattern = "disk.in",
    .title = "Disk read",
    .unit = "MiB",
    .kind = MetricKind::kSinceStart,
    .section = MetricSection::kDisk,
    .source = "disk",
    .description =
        "MiB read since the first sample, summed over the block devices behind the configured "
        "paths (/proc/diskstats sectors x 512).",
    .prometheus_name = "runmon_disk_read_bytes_total",
    .prometheus_type = PrometheusType::kCounter,
    .merge = {"disk.io", "Disk I/O", "read"},
    .sidebar_rank = 10};
inline constexpr MetricDescriptor kWritten{
    .pattern = "disk.out",
    .title = "Disk written",
    .unit = "MiB",
    .kind = MetricKind::kSinceStart,
    .section = MetricSection::kDisk,
    .source = "disk",
    .description = "MiB written since the first sample, summed over the devices behind the configured paths.",
    .prometheus_name = "runmon_disk_written_bytes_total",
    .prometheus_type = PrometheusType::kCounter,
    .merge = {"disk.io", "Disk I/O", "write"},
    .sidebar_rank = 10};
inline constexpr MetricDescriptor kReadRate{
    .pattern = "disk.readMBPerSec",
    .title = "Disk read rate",
    .unit = "MiB/s",
    .kind = MetricKind::kRate,
    .section = MetricSection::kDisk,
    .source = "disk",
    .description = "Read throughput during the last interval over the devices behind the configured paths.",
    .prometheus_name = "runmon_disk_read_bytes_per_second",
    .merge = {"disk.rate", "Disk I/O rate", "read"},
    .sidebar_rank = 9};
inline constexpr MetricDescriptor kWriteRate{
    .pattern = "disk.writeMBPerSec",
    .title = "Disk write rate",
    .unit = "MiB/s",
    .kind = MetricKind::kRate,
    .section = MetricSection::kDisk,
    .source = "disk",
    .description = "Write throughput during the last interval over the devices behind the configured paths.",
    .prometheus_name = "runmon_disk_written_bytes_per_second",
    .merge = {"disk.rate", "Disk I/O rate", "write"},
    .sidebar_rank = 9};
inline constexpr MetricDescriptor kDeviceRead{
    .pattern = "disk.{dev}.in",
    .title = "Device read",
    .unit = "MiB",
    .kind = MetricKind::kSinceStart,
    .section = MetricSection::kDisk,
    .source = "disk",
    .description = "MiB read from block device dev since the first sample.",
    .prometheus_name = "runmon_disk_device_read_bytes_total",
    .prometheus_type = PrometheusType::kCounter,
    .prometheus_label = "device",
    .merge = {"disk.{dev}.io", "Device I/O", "read"},
    .sidebar_rank = 8};
inline constexpr MetricDescriptor kDeviceWritten{
    .pattern = "disk.{dev}.out",
    .title = "Device written",
    .unit = "MiB",
    .kind = MetricKind::kSinceStart,
    .section = MetricSection::kDisk,
    .source = "disk",
    .description = "MiB written to block device dev since the first sample.",
    .prometheus_name = "runmon_disk_device_written_bytes_total",
    .prometheus_type = PrometheusType::kCounter,
    .prometheus_label = "device",
    .merge = {"disk.{dev}.io", "Device I/O", "write"},
    .sidebar_rank = 8};

}  // namespace runmon::disk_metrics
