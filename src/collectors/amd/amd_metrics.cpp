// The amd family's table, joined into the catalog (core/catalog.hpp).
#include "collectors/amd/amd_metrics.hpp"

#include <span>

#include "core/catalog.hpp"

namespace runmon::metric_families {

std::span<const MetricDescriptor> amd() {
  using namespace amd_metrics;
  static constexpr MetricDescriptor kTable[] = {kMemoryReadWriteActivity,
                                                kGttMemoryAllocatedBytes,
                                                kGttMemoryAllocated,
                                                kTempEdge,
                                                kTempJunction,
                                                kTempMemory,
                                                kFanRpm,
                                                kMemoryOverDrive};
  return kTable;
}

}  // namespace runmon::metric_families
