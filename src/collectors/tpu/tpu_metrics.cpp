// The tpu family's table, joined into the catalog (core/catalog.hpp): the per-device gauges, then each
// distribution's six statistics, then the HLO queue sizes.
#include "collectors/tpu/tpu_metrics.hpp"

#include <span>

#include "core/catalog.hpp"

namespace runmon::metric_families {
namespace {

using namespace tpu_metrics;

constexpr const StatDescriptors* kDistributions[] = {&kBufferTransferLatency,
                                                     &kInboundBufferTransferLatency,
                                                     &kHostToDeviceTransferLatency,
                                                     &kDeviceToHostTransferLatency,
                                                     &kCollectiveE2ELatency,
                                                     &kHostComputeLatency,
                                                     &kHloExecTiming,
                                                     &kGrpcTcpMinRtt,
                                                     &kGrpcTcpDeliveryRate};
constexpr MetricDescriptor kGauges[] = {kTensorcoreUtilization,  kDutyCycle,      kHbmCapacityTotal,
                                        kHbmCapacityUsage,       kHbmMemoryUsage, kRuntimeHbmUtilization,
                                        kTensorcoreIdleDuration, kIciLinkHealth,  kThrottleScore};
constexpr size_t kTableSize = std::size(kGauges) + std::size(kDistributions) * 6 + 1;

constexpr std::array<MetricDescriptor, kTableSize> BuildTable() {
  std::array<MetricDescriptor, kTableSize> table{};
  size_t next = 0;
  for (const MetricDescriptor& gauge : kGauges) table[next++] = gauge;
  for (const StatDescriptors* distribution : kDistributions) {
    for (const MetricDescriptor& stat : *distribution) table[next++] = stat;
  }
  table[next++] = kHloQueueSize;
  return table;
}

constexpr std::array<MetricDescriptor, kTableSize> kTable = BuildTable();

}  // namespace

std::span<const MetricDescriptor> tpu() {
  return kTable;
}

}  // namespace runmon::metric_families
