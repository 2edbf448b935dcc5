// Google Cloud TPU metrics (metrics.md B §7.3), read from libtpu's monitoring SDK and its runtime-metrics
// gRPC service (tpu_emit.hpp turns both into these keys). The keys are W&B's: per device tpu.{device}.*,
// and the latency distributions tpu.<family>.<label>.<stat>Us (flat ones without the label), where <stat> is
// mean, p50, p90, p95, p99 or p999 and <label> is sanitised to [a-z0-9_]. A distribution is one chart (as
// LEET draws it): each stat is a descriptor of its own, its series named "<label> <stat>". W&B's older Go
// collector wrote tpu.{device}.memoryUsage and .memoryUsageBytes: readers accept them for hbmMemoryUsage and
// hbmCapacityUsage.
// The family's metric descriptors: each key is spelled here and nowhere else (core/metric_descriptor.hpp).
#pragma once

#include <array>
#include <string_view>

#include "core/metric_descriptor.hpp"

namespace runmon::tpu_metrics {

inline constexpr MetricDescriptor kTensorcoreUtilization{
    .pattern = "tpu.{device}.tensorcoreUtilization",
    .title = "TPU Tensorcore Utilization",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "tpu",
    .description =
        "How busy TPU device `device`'s TensorCores were (libtpu SDK tensorcore_util; the SDK only).",
    .prometheus_name = "runmon_tpu_tensorcore_utilization_ratio",
    .prometheus_label = "device",
    .series_label = "TPU"};
inline constexpr MetricDescriptor kDutyCycle{
    .pattern = "tpu.{device}.dutyCycle",
    .title = "TPU Duty Cycle",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "tpu",
    .description =
        "The share of time the TensorCores of device `device`'s chip were executing "
        "(tpu.runtime.tensorcore.dutycycle.percent; SDK duty_cycle_pct). It is reported per chip: on chips "
        "with two devices and one duty cycle (v2, v3) both devices carry the chip's value.",
    .prometheus_name = "runmon_tpu_duty_cycle_ratio",
    .prometheus_label = "device",
    .series_label = "TPU"};
inline constexpr MetricDescriptor kHbmCapacityTotal{
    .pattern = "tpu.{device}.hbmCapacityTotal",
    .title = "TPU HBM Capacity Total",
    .unit = "bytes",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "tpu",
    .description =
        "Device `device`'s high-bandwidth memory (tpu.runtime.hbm.memory.total.bytes; SDK "
        "hbm_capacity_total).",
    .prometheus_name = "runmon_tpu_hbm_capacity_total_bytes",
    .prometheus_label = "device",
    .series_label = "TPU"};
inline constexpr MetricDescriptor kHbmCapacityUsage{
    .pattern = "tpu.{device}.hbmCapacityUsage",
    .title = "TPU HBM Capacity Usage",
    .unit = "bytes",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "tpu",
    .description =
        "Device `device`'s high-bandwidth memory in use (tpu.runtime.hbm.memory.usage.bytes; SDK "
        "hbm_capacity_usage); never above the device's total. W&B's older collector wrote "
        "tpu.{device}.memoryUsageBytes.",
    .prometheus_name = "runmon_tpu_hbm_capacity_usage_bytes",
    .prometheus_label = "device",
    .series_label = "TPU",
    .also_accepted = "tpu.{device}.memoryUsageBytes"};
inline constexpr MetricDescriptor kHbmMemoryUsage{
    .pattern = "tpu.{device}.hbmMemoryUsage",
    .title = "TPU HBM Memory Usage",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "tpu",
    .description =
        "hbmCapacityUsage / hbmCapacityTotal x 100 for device `device`, when both are known and the "
        "total is above zero. W&B's older collector wrote tpu.{device}.memoryUsage.",
    .prometheus_name = "runmon_tpu_hbm_memory_usage_ratio",
    .prometheus_label = "device",
    .series_label = "TPU",
    .also_accepted = "tpu.{device}.memoryUsage"};
inline constexpr MetricDescriptor kRuntimeHbmUtilization{
    .pattern = "tpu.{device}.runtimeHbmUtilization",
    .title = "TPU Runtime HBM Utilization",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "tpu",
    .description =
        "Device `device`'s HBM bandwidth use (tpu.runtime.hbm.utilization.percent; the service only).",
    .prometheus_name = "runmon_tpu_runtime_hbm_utilization_ratio",
    .prometheus_label = "device",
    .series_label = "TPU"};
inline constexpr MetricDescriptor kTensorcoreIdleDuration{
    .pattern = "tpu.{device}.tensorcoreIdleDuration",
    .title = "TPU Tensorcore Idle Duration",
    .unit = "s",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "tpu",
    .description =
        "How long device `device`'s TensorCores have been idle (tpu.runtime.tensorcore.idle_duration."
        "seconds; the service only).",
    .prometheus_name = "runmon_tpu_tensorcore_idle_duration_seconds",
    .prometheus_label = "device",
    .series_label = "TPU"};
inline constexpr MetricDescriptor kIciLinkHealth{
    .pattern = "tpu.{device}.iciLinkHealth",
    .title = "TPU ICI Link Health",
    .unit = "score",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "tpu",
    .description =
        "libtpu's health score of device `device`'s inter-chip interconnect links (SDK "
        "ici_link_health; the SDK only), as libtpu reports it.",
    .prometheus_name = "runmon_tpu_ici_link_health",
    .prometheus_label = "device",
    .series_label = "TPU"};
inline constexpr MetricDescriptor kThrottleScore{
    .pattern = "tpu.{device}.throttleScore",
    .title = "TPU Throttle Score",
    .unit = "score",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "tpu",
    .description =
        "libtpu's throttling score of device `device` (SDK tpu_throttle_score; the SDK only), as "
        "libtpu reports it.",
    .prometheus_name = "runmon_tpu_throttle_score",
    .prometheus_label = "device",
    .series_label = "TPU"};
inline constexpr MetricDescriptor kHloQueueSize{
    .pattern = "tpu.hloQueueSize.{label}",
    .title = "TPU HLO Queue Size",
    .unit = "count",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "tpu",
    .description =
        "HLO programs queued for execution (hlo.queue.size.gauge; SDK hlo_queue_size), per label "
        "(the core, for the service's device_ordinal attribute).",
    .prometheus_name = "runmon_tpu_hlo_queue_size",
    .prometheus_label = "label"};

// The distributions' statistics, in the order of the keys of a StatDescriptors table.
enum class Stat { kMean, kP50, kP90, kP95, kP99, kP999 };
inline constexpr std::array<std::string_view, 6> kStatNames = {"mean", "p50", "p90", "p95", "p99", "p999"};

// What a distribution's six descriptors share: its chart, unit, docs text and label.
struct StatFamily {
  std::string_view chart_id = {};
  std::string_view chart_title = {};
  std::string_view unit = {};
  std::string_view description = {};
  std::string_view prometheus_label = {};  // "label"; empty for a flat distribution
};

constexpr MetricDescriptor StatDescriptor(const StatFamily& family, std::string_view pattern,
                                          std::string_view title, std::string_view stat,
                                          std::string_view prometheus_name) {
  return MetricDescriptor{
      .pattern = pattern,
      .title = title,
      .unit = family.unit,
      .kind = MetricKind::kGauge,
      .section = MetricSection::kAccelerator,
      .source = "tpu",
      .description = family.description,
      .prometheus_name = prometheus_name,
      .prometheus_label = family.prometheus_label,
      .merge = {.chart_id = family.chart_id, .title = family.chart_title, .series_suffix = stat}};
}

// One distribution's keys, indexed by Stat.
using StatDescriptors = std::array<MetricDescriptor, 6>;

inline constexpr StatFamily kBufferTransferLatencyFamily{
    .chart_id = "tpu.bufferTransferLatency",
    .chart_title = "TPU Buffer Transfer Latency",
    .unit = "µs",
    .description =
        "Latency of DCN buffer transfers (megascale.dcn_transfer_latencies; SDK buffer_transfer_latency), "
        "per buffer-size label: the mean, or the percentile the key names.",
    .prometheus_label = "label"};
inline constexpr StatDescriptors kBufferTransferLatency = {
    StatDescriptor(kBufferTransferLatencyFamily, "tpu.bufferTransferLatency.{label}.meanUs",
                   "TPU Buffer Transfer Latency mean", "mean",
                   "runmon_tpu_buffer_transfer_latency_mean_seconds"),
    StatDescriptor(kBufferTransferLatencyFamily, "tpu.bufferTransferLatency.{label}.p50Us",
                   "TPU Buffer Transfer Latency p50", "p50",
                   "runmon_tpu_buffer_transfer_latency_p50_seconds"),
    StatDescriptor(kBufferTransferLatencyFamily, "tpu.bufferTransferLatency.{label}.p90Us",
                   "TPU Buffer Transfer Latency p90", "p90",
                   "runmon_tpu_buffer_transfer_latency_p90_seconds"),
    StatDescriptor(kBufferTransferLatencyFamily, "tpu.bufferTransferLatency.{label}.p95Us",
                   "TPU Buffer Transfer Latency p95", "p95",
                   "runmon_tpu_buffer_transfer_latency_p95_seconds"),
    StatDescriptor(kBufferTransferLatencyFamily, "tpu.bufferTransferLatency.{label}.p99Us",
                   "TPU Buffer Transfer Latency p99", "p99",
                   "runmon_tpu_buffer_transfer_latency_p99_seconds"),
    StatDescriptor(kBufferTransferLatencyFamily, "tpu.bufferTransferLatency.{label}.p999Us",
                   "TPU Buffer Transfer Latency p999", "p999",
                   "runmon_tpu_buffer_transfer_latency_p999_seconds")};
inline constexpr StatFamily kInboundBufferTransferLatencyFamily{
    .chart_id = "tpu.inboundBufferTransferLatency",
    .chart_title = "TPU Inbound Buffer Transfer Latency",
    .unit = "µs",
    .description =
        "Latency of inbound DCN buffer transfers (megascale.dcn_inbound_transfer_latencies; SDK "
        "inbound_buffer_transfer_latency), per buffer-size label: the mean, or the percentile the key names.",
    .prometheus_label = "label"};
inline constexpr StatDescriptors kInboundBufferTransferLatency = {
    StatDescriptor(kInboundBufferTransferLatencyFamily, "tpu.inboundBufferTransferLatency.{label}.meanUs",
                   "TPU Inbound Buffer Transfer Latency mean", "mean",
                   "runmon_tpu_inbound_buffer_transfer_latency_mean_seconds"),
    StatDescriptor(kInboundBufferTransferLatencyFamily, "tpu.inboundBufferTransferLatency.{label}.p50Us",
                   "TPU Inbound Buffer Transfer Latency p50", "p50",
                   "runmon_tpu_inbound_buffer_transfer_latency_p50_seconds"),
    StatDescriptor(kInboundBufferTransferLatencyFamily, "tpu.inboundBufferTransferLatency.{label}.p90Us",
                   "TPU Inbound Buffer Transfer Latency p90", "p90",
                   "runmon_tpu_inbound_buffer_transfer_latency_p90_seconds"),
    StatDescriptor(kInboundBufferTransferLatencyFamily, "tpu.inboundBufferTransferLatency.{label}.p95Us",
                   "TPU Inbound Buffer Transfer Latency p95", "p95",
                   "runmon_tpu_inbound_buffer_transfer_latency_p95_seconds"),
    StatDescriptor(kInboundBufferTransferLatencyFamily, "tpu.inboundBufferTransferLatency.{label}.p99Us",
                   "TPU Inbound Buffer Transfer Latency p99", "p99",
                   "runmon_tpu_inbound_buffer_transfer_latency_p99_seconds"),
    StatDescriptor(kInboundBufferTransferLatencyFamily, "tpu.inboundBufferTransferLatency.{label}.p999Us",
                   "TPU Inbound Buffer Transfer Latency p999", "p999",
                   "runmon_tpu_inbound_buffer_transfer_latency_p999_seconds")};
inline constexpr StatFamily kHostToDeviceTransferLatencyFamily{
    .chart_id = "tpu.hostToDeviceTransferLatency",
    .chart_title = "TPU Host-to-Device Latency",
    .unit = "µs",
    .description =
        "Latency of host-to-device transfers (megascale.host_to_device_transfer_latencies; SDK "
        "host_to_device_transfer_latency), per buffer-size label: the mean, or the percentile the key names.",
    .prometheus_label = "label"};
inline constexpr StatDescriptors kHostToDeviceTransferLatency = {
    StatDescriptor(kHostToDeviceTransferLatencyFamily, "tpu.hostToDeviceTransferLatency.{label}.meanUs",
                   "TPU Host-to-Device Latency mean", "mean",
                   "runmon_tpu_host_to_device_transfer_latency_mean_seconds"),
    StatDescriptor(kHostToDeviceTransferLatencyFamily, "tpu.hostToDeviceTransferLatency.{label}.p50Us",
                   "TPU Host-to-Device Latency p50", "p50",
                   "runmon_tpu_host_to_device_transfer_latency_p50_seconds"),
    StatDescriptor(kHostToDeviceTransferLatencyFamily, "tpu.hostToDeviceTransferLatency.{label}.p90Us",
                   "TPU Host-to-Device Latency p90", "p90",
                   "runmon_tpu_host_to_device_transfer_latency_p90_seconds"),
    StatDescriptor(kHostToDeviceTransferLatencyFamily, "tpu.hostToDeviceTransferLatency.{label}.p95Us",
                   "TPU Host-to-Device Latency p95", "p95",
                   "runmon_tpu_host_to_device_transfer_latency_p95_seconds"),
    StatDescriptor(kHostToDeviceTransferLatencyFamily, "tpu.hostToDeviceTransferLatency.{label}.p99Us",
                   "TPU Host-to-Device Latency p99", "p99",
                   "runmon_tpu_host_to_device_transfer_latency_p99_seconds"),
    StatDescriptor(kHostToDeviceTransferLatencyFamily, "tpu.hostToDeviceTransferLatency.{label}.p999Us",
                   "TPU Host-to-Device Latency p999", "p999",
                   "runmon_tpu_host_to_device_transfer_latency_p999_seconds")};
inline constexpr StatFamily kDeviceToHostTransferLatencyFamily{
    .chart_id = "tpu.deviceToHostTransferLatency",
    .chart_title = "TPU Device-to-Host Latency",
    .unit = "µs",
    .description =
        "Latency of device-to-host transfers (megascale.device_to_host_transfer_latencies; SDK "
        "device_to_host_transfer_latency), per buffer-size label: the mean, or the percentile the key names.",
    .prometheus_label = "label"};
inline constexpr StatDescriptors kDeviceToHostTransferLatency = {
    StatDescriptor(kDeviceToHostTransferLatencyFamily, "tpu.deviceToHostTransferLatency.{label}.meanUs",
                   "TPU Device-to-Host Latency mean", "mean",
                   "runmon_tpu_device_to_host_transfer_latency_mean_seconds"),
    StatDescriptor(kDeviceToHostTransferLatencyFamily, "tpu.deviceToHostTransferLatency.{label}.p50Us",
                   "TPU Device-to-Host Latency p50", "p50",
                   "runmon_tpu_device_to_host_transfer_latency_p50_seconds"),
    StatDescriptor(kDeviceToHostTransferLatencyFamily, "tpu.deviceToHostTransferLatency.{label}.p90Us",
                   "TPU Device-to-Host Latency p90", "p90",
                   "runmon_tpu_device_to_host_transfer_latency_p90_seconds"),
    StatDescriptor(kDeviceToHostTransferLatencyFamily, "tpu.deviceToHostTransferLatency.{label}.p95Us",
                   "TPU Device-to-Host Latency p95", "p95",
                   "runmon_tpu_device_to_host_transfer_latency_p95_seconds"),
    StatDescriptor(kDeviceToHostTransferLatencyFamily, "tpu.deviceToHostTransferLatency.{label}.p99Us",
                   "TPU Device-to-Host Latency p99", "p99",
                   "runmon_tpu_device_to_host_transfer_latency_p99_seconds"),
    StatDescriptor(kDeviceToHostTransferLatencyFamily, "tpu.deviceToHostTransferLatency.{label}.p999Us",
                   "TPU Device-to-Host Latency p999", "p999",
                   "runmon_tpu_device_to_host_transfer_latency_p999_seconds")};
inline constexpr StatFamily kCollectiveE2ELatencyFamily{
    .chart_id = "tpu.collectiveE2ELatency",
    .chart_title = "TPU Collective E2E Latency",
    .unit = "µs",
    .description =
        "End-to-end latency of collectives (megascale.collective_end_to_end_latencies; SDK "
        "collective_e2e_latency), per label: the mean, or the percentile the key names.",
    .prometheus_label = "label"};
inline constexpr StatDescriptors kCollectiveE2ELatency = {
    StatDescriptor(kCollectiveE2ELatencyFamily, "tpu.collectiveE2ELatency.{label}.meanUs",
                   "TPU Collective E2E Latency mean", "mean",
                   "runmon_tpu_collective_e2e_latency_mean_seconds"),
    StatDescriptor(kCollectiveE2ELatencyFamily, "tpu.collectiveE2ELatency.{label}.p50Us",
                   "TPU Collective E2E Latency p50", "p50", "runmon_tpu_collective_e2e_latency_p50_seconds"),
    StatDescriptor(kCollectiveE2ELatencyFamily, "tpu.collectiveE2ELatency.{label}.p90Us",
                   "TPU Collective E2E Latency p90", "p90", "runmon_tpu_collective_e2e_latency_p90_seconds"),
    StatDescriptor(kCollectiveE2ELatencyFamily, "tpu.collectiveE2ELatency.{label}.p95Us",
                   "TPU Collective E2E Latency p95", "p95", "runmon_tpu_collective_e2e_latency_p95_seconds"),
    StatDescriptor(kCollectiveE2ELatencyFamily, "tpu.collectiveE2ELatency.{label}.p99Us",
                   "TPU Collective E2E Latency p99", "p99", "runmon_tpu_collective_e2e_latency_p99_seconds"),
    StatDescriptor(kCollectiveE2ELatencyFamily, "tpu.collectiveE2ELatency.{label}.p999Us",
                   "TPU Collective E2E Latency p999", "p999",
                   "runmon_tpu_collective_e2e_latency_p999_seconds")};
inline constexpr StatFamily kHostComputeLatencyFamily{
    .chart_id = "tpu.hostComputeLatency",
    .chart_title = "TPU Host Compute Latency",
    .unit = "µs",
    .description =
        "Latency of host compute (megascale.mxla_compute_latencies; SDK host_compute_latency), per label: "
        "the mean, or the percentile the key names.",
    .prometheus_label = "label"};
inline constexpr StatDescriptors kHostComputeLatency = {
    StatDescriptor(kHostComputeLatencyFamily, "tpu.hostComputeLatency.{label}.meanUs",
                   "TPU Host Compute Latency mean", "mean", "runmon_tpu_host_compute_latency_mean_seconds"),
    StatDescriptor(kHostComputeLatencyFamily, "tpu.hostComputeLatency.{label}.p50Us",
                   "TPU Host Compute Latency p50", "p50", "runmon_tpu_host_compute_latency_p50_seconds"),
    StatDescriptor(kHostComputeLatencyFamily, "tpu.hostComputeLatency.{label}.p90Us",
                   "TPU Host Compute Latency p90", "p90", "runmon_tpu_host_compute_latency_p90_seconds"),
    StatDescriptor(kHostComputeLatencyFamily, "tpu.hostComputeLatency.{label}.p95Us",
                   "TPU Host Compute Latency p95", "p95", "runmon_tpu_host_compute_latency_p95_seconds"),
    StatDescriptor(kHostComputeLatencyFamily, "tpu.hostComputeLatency.{label}.p99Us",
                   "TPU Host Compute Latency p99", "p99", "runmon_tpu_host_compute_latency_p99_seconds"),
    StatDescriptor(kHostComputeLatencyFamily, "tpu.hostComputeLatency.{label}.p999Us",
                   "TPU Host Compute Latency p999", "p999", "runmon_tpu_host_compute_latency_p999_seconds")};
inline constexpr StatFamily kHloExecTimingFamily{
    .chart_id = "tpu.hloExecTiming",
    .chart_title = "TPU HLO Exec Timing",
    .unit = "µs",
    .description =
        "Execution time of HLO programs (hlo.execution.timing.distribution.microseconds; SDK "
        "hlo_execution_timing), per label (the core for the service's device_ordinal attribute): the mean, "
        "or the percentile the key names.",
    .prometheus_label = "label"};
inline constexpr StatDescriptors kHloExecTiming = {
    StatDescriptor(kHloExecTimingFamily, "tpu.hloExecTiming.{label}.meanUs", "TPU HLO Exec Timing mean",
                   "mean", "runmon_tpu_hlo_exec_timing_mean_seconds"),
    StatDescriptor(kHloExecTimingFamily, "tpu.hloExecTiming.{label}.p50Us", "TPU HLO Exec Timing p50", "p50",
                   "runmon_tpu_hlo_exec_timing_p50_seconds"),
    StatDescriptor(kHloExecTimingFamily, "tpu.hloExecTiming.{label}.p90Us", "TPU HLO Exec Timing p90", "p90",
                   "runmon_tpu_hlo_exec_timing_p90_seconds"),
    StatDescriptor(kHloExecTimingFamily, "tpu.hloExecTiming.{label}.p95Us", "TPU HLO Exec Timing p95", "p95",
                   "runmon_tpu_hlo_exec_timing_p95_seconds"),
    StatDescriptor(kHloExecTimingFamily, "tpu.hloExecTiming.{label}.p99Us", "TPU HLO Exec Timing p99", "p99",
                   "runmon_tpu_hlo_exec_timing_p99_seconds"),
    StatDescriptor(kHloExecTimingFamily, "tpu.hloExecTiming.{label}.p999Us", "TPU HLO Exec Timing p999",
                   "p999", "runmon_tpu_hlo_exec_timing_p999_seconds")};
inline constexpr StatFamily kGrpcTcpMinRttFamily{
    .chart_id = "tpu.grpcTcpMinRtt",
    .chart_title = "TPU gRPC TCP Min RTT",
    .unit = "µs",
    .description =
        "Minimum round-trip time of the runtime's gRPC TCP connections (megascale.grpc_tcp_min_rtt; SDK "
        "tcp_min_rtt): the mean, or the percentile the key names.",
    .prometheus_label = ""};
inline constexpr StatDescriptors kGrpcTcpMinRtt = {
    StatDescriptor(kGrpcTcpMinRttFamily, "tpu.grpcTcpMinRtt.meanUs", "TPU gRPC TCP Min RTT mean", "mean",
                   "runmon_tpu_grpc_tcp_min_rtt_mean_seconds"),
    StatDescriptor(kGrpcTcpMinRttFamily, "tpu.grpcTcpMinRtt.p50Us", "TPU gRPC TCP Min RTT p50", "p50",
                   "runmon_tpu_grpc_tcp_min_rtt_p50_seconds"),
    StatDescriptor(kGrpcTcpMinRttFamily, "tpu.grpcTcpMinRtt.p90Us", "TPU gRPC TCP Min RTT p90", "p90",
                   "runmon_tpu_grpc_tcp_min_rtt_p90_seconds"),
    StatDescriptor(kGrpcTcpMinRttFamily, "tpu.grpcTcpMinRtt.p95Us", "TPU gRPC TCP Min RTT p95", "p95",
                   "runmon_tpu_grpc_tcp_min_rtt_p95_seconds"),
    StatDescriptor(kGrpcTcpMinRttFamily, "tpu.grpcTcpMinRtt.p99Us", "TPU gRPC TCP Min RTT p99", "p99",
                   "runmon_tpu_grpc_tcp_min_rtt_p99_seconds"),
    StatDescriptor(kGrpcTcpMinRttFamily, "tpu.grpcTcpMinRtt.p999Us", "TPU gRPC TCP Min RTT p999", "p999",
                   "runmon_tpu_grpc_tcp_min_rtt_p999_seconds")};
inline constexpr StatFamily kGrpcTcpDeliveryRateFamily{
    .chart_id = "tpu.grpcTcpDeliveryRate",
    .chart_title = "TPU gRPC TCP Delivery Rate",
    .unit = "Mbit/s",
    .description =
        "Delivery rate of the runtime's gRPC TCP connections (megascale.grpc_tcp_delivery_rate; SDK "
        "tcp_delivery_rate): the mean, or the percentile the key names.",
    .prometheus_label = ""};
inline constexpr StatDescriptors kGrpcTcpDeliveryRate = {
    StatDescriptor(kGrpcTcpDeliveryRateFamily, "tpu.grpcTcpDeliveryRate.meanMbps",
                   "TPU gRPC TCP Delivery Rate mean", "mean",
                   "runmon_tpu_grpc_tcp_delivery_rate_mean_bytes_per_second"),
    StatDescriptor(kGrpcTcpDeliveryRateFamily, "tpu.grpcTcpDeliveryRate.p50Mbps",
                   "TPU gRPC TCP Delivery Rate p50", "p50",
                   "runmon_tpu_grpc_tcp_delivery_rate_p50_bytes_per_second"),
    StatDescriptor(kGrpcTcpDeliveryRateFamily, "tpu.grpcTcpDeliveryRate.p90Mbps",
                   "TPU gRPC TCP Delivery Rate p90", "p90",
                   "runmon_tpu_grpc_tcp_delivery_rate_p90_bytes_per_second"),
    StatDescriptor(kGrpcTcpDeliveryRateFamily, "tpu.grpcTcpDeliveryRate.p95Mbps",
                   "TPU gRPC TCP Delivery Rate p95", "p95",
                   "runmon_tpu_grpc_tcp_delivery_rate_p95_bytes_per_second"),
    StatDescriptor(kGrpcTcpDeliveryRateFamily, "tpu.grpcTcpDeliveryRate.p99Mbps",
                   "TPU gRPC TCP Delivery Rate p99", "p99",
                   "runmon_tpu_grpc_tcp_delivery_rate_p99_bytes_per_second"),
    StatDescriptor(kGrpcTcpDeliveryRateFamily, "tpu.grpcTcpDeliveryRate.p999Mbps",
                   "TPU gRPC TCP Delivery Rate p999", "p999",
                   "runmon_tpu_grpc_tcp_delivery_rate_p999_bytes_per_second")};

}  // namespace runmon::tpu_metrics
