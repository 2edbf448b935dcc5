// The table of the GPU keys every GPU family shares, joined into the catalog (core/catalog.hpp) before the
// families' own tables.
#include "collectors/gpu/gpu_metrics.hpp"

#include <span>

#include "core/catalog.hpp"

namespace runmon::metric_families {

std::span<const MetricDescriptor> gpu() {
  using namespace gpu_metrics;
  static constexpr MetricDescriptor kTable[] = {kProcessGpu,
                                                kProcessMemoryAllocatedBytes,
                                                kProcessMemoryAllocated,
                                                kProcessTemp,
                                                kProcessPowerWatts,
                                                kProcessEnforcedPowerLimitWatts,
                                                kProcessPowerPercent,
                                                kGpu,
                                                kMemoryAllocated,
                                                kMemoryAllocatedBytes,
                                                kTemp,
                                                kPowerWatts,
                                                kEnforcedPowerLimitWatts,
                                                kPowerPercent,
                                                kSmClock,
                                                kMemoryClock,
                                                kFanSpeed,
                                                kEnergyJoules};
  return kTable;
}

}  // namespace runmon::metric_families
