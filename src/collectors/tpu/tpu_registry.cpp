// The TPU metric registry (tpu_emit.hpp's MetricSpecs, metrics.md B §7.3): each metric's SDK aliases, in
// the order they are tried, its runtime-metrics service name, its shape and its keys. A metric without a
// service name is the SDK's alone, one without SDK names the service's alone.
#include <span>
#include <string_view>

#include "collectors/tpu/tpu_emit.hpp"

namespace runmon::tpu {
namespace {

namespace keys = tpu_metrics;

constexpr std::string_view kTensorcoreSdk[] = {"tensorcore_util", "tensorcore_utilization"};
constexpr std::string_view kDutyCycleSdk[] = {"duty_cycle_pct"};
constexpr std::string_view kHbmTotalSdk[] = {"hbm_capacity_total"};
constexpr std::string_view kHbmUsageSdk[] = {"hbm_capacity_usage"};
constexpr std::string_view kBufferTransferSdk[] = {"buffer_transfer_latency"};
constexpr std::string_view kInboundTransferSdk[] = {"inbound_buffer_transfer_latency"};
constexpr std::string_view kHostToDeviceSdk[] = {"host_to_device_transfer_latency"};
constexpr std::string_view kDeviceToHostSdk[] = {"device_to_host_transfer_latency"};
constexpr std::string_view kCollectiveSdk[] = {"collective_e2e_latency"};
constexpr std::string_view kHostComputeSdk[] = {"host_compute_latency"};
constexpr std::string_view kMinRttSdk[] = {"tcp_min_rtt", "grpc_tcp_min_rtt",
                                           "grpc_tcp_min_round_trip_times"};
constexpr std::string_view kDeliveryRateSdk[] = {"tcp_delivery_rate", "grpc_tcp_delivery_rate",
                                                 "grpc_tcp_delivery_rates"};
constexpr std::string_view kHloExecSdk[] = {"hlo_execution_timing", "hlo_exec_timing"};
constexpr std::string_view kHloQueueSdk[] = {"hlo_queue_size"};
constexpr std::string_view kIciLinkSdk[] = {"ici_link_health"};
constexpr std::string_view kThrottleSdk[] = {"tpu_throttle_score"};

constexpr MetricSpec kSpecs[] = {
    {.sdk_names = kTensorcoreSdk, .shape = Shape::kGauge, .key = &keys::kTensorcoreUtilization},
    {.service_name = "tpu.runtime.tensorcore.idle_duration.seconds",
     .shape = Shape::kGauge,
     .key = &keys::kTensorcoreIdleDuration},
    {.sdk_names = kDutyCycleSdk,
     .service_name = "tpu.runtime.tensorcore.dutycycle.percent",
     .shape = Shape::kDutyCycle,
     .key = &keys::kDutyCycle},
    {.sdk_names = kHbmTotalSdk,
     .service_name = "tpu.runtime.hbm.memory.total.bytes",
     .shape = Shape::kGauge,
     .key = &keys::kHbmCapacityTotal},
    {.sdk_names = kHbmUsageSdk,
     .service_name = "tpu.runtime.hbm.memory.usage.bytes",
     .shape = Shape::kGauge,
     .key = &keys::kHbmCapacityUsage},
    {.service_name = "tpu.runtime.hbm.utilization.percent",
     .shape = Shape::kGauge,
     .key = &keys::kRuntimeHbmUtilization},
    {.sdk_names = kBufferTransferSdk,
     .service_name = "megascale.dcn_transfer_latencies.microsecond.cumulative.distribution",
     .shape = Shape::kLabeledDistribution,
     .stats = &keys::kBufferTransferLatency},
    {.sdk_names = kInboundTransferSdk,
     .service_name = "megascale.dcn_inbound_transfer_latencies.microsecond.cumulative.distribution",
     .shape = Shape::kLabeledDistribution,
     .stats = &keys::kInboundBufferTransferLatency},
    {.sdk_names = kHostToDeviceSdk,
     .service_name = "megascale.host_to_device_transfer_latencies.microsecond.cumulative.distribution",
     .shape = Shape::kLabeledDistribution,
     .stats = &keys::kHostToDeviceTransferLatency},
    {.sdk_names = kDeviceToHostSdk,
     .service_name = "megascale.device_to_host_transfer_latencies.microsecond.cumulative.distribution",
     .shape = Shape::kLabeledDistribution,
     .stats = &keys::kDeviceToHostTransferLatency},
    {.sdk_names = kCollectiveSdk,
     .service_name = "megascale.collective_end_to_end_latencies.microsecond.cumulative.distribution",
     .shape = Shape::kLabeledDistribution,
     .stats = &keys::kCollectiveE2ELatency},
    {.sdk_names = kHostComputeSdk,
     .service_name = "megascale.mxla_compute_latencies.microsecond.cumulative.distribution",
     .shape = Shape::kLabeledDistribution,
     .stats = &keys::kHostComputeLatency},
    {.sdk_names = kMinRttSdk,
     .service_name = "megascale.grpc_tcp_min_rtt.microsecond.cumulative.distribution",
     .shape = Shape::kFlatDistribution,
     .stats = &keys::kGrpcTcpMinRtt},
    {.sdk_names = kDeliveryRateSdk,
     .service_name = "megascale.grpc_tcp_delivery_rate.Mbps.cumulative.distribution",
     .shape = Shape::kFlatDistribution,
     .stats = &keys::kGrpcTcpDeliveryRate},
    {.sdk_names = kHloExecSdk,
     .service_name = "hlo.execution.timing.distribution.microseconds",
     .shape = Shape::kLabeledDistribution,
     .stats = &keys::kHloExecTiming},
    {.sdk_names = kHloQueueSdk,
     .service_name = "hlo.queue.size.gauge",
     .shape = Shape::kColonKeyed,
     .key = &keys::kHloQueueSize},
    {.sdk_names = kIciLinkSdk, .shape = Shape::kGauge, .key = &keys::kIciLinkHealth},
    {.sdk_names = kThrottleSdk, .shape = Shape::kGauge, .key = &keys::kThrottleScore},
};

}  // namespace

std::span<const MetricSpec> MetricSpecs() {
  return kSpecs;
}

}  // namespace runmon::tpu
