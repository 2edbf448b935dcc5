// The self family's table, joined into the catalog (core/catalog.hpp).
#include "collectors/linux/self/self_metrics.hpp"

#include <span>

#include "core/catalog.hpp"

namespace runmon::metric_families {

std::span<const MetricDescriptor> self() {
  using namespace self_metrics;
  static constexpr MetricDescriptor kTable[] = {kCpuPercent,
                                                kResidentMemory,
                                                kSampleMillis,
                                                kRemoteWritePendingSamples,
                                                kRemoteWriteOldestPendingSeconds,
                                                kRemoteWriteSentSamples,
                                                kRemoteWriteDroppedSamples};
  return kTable;
}

}  // namespace runmon::metric_families
