// The nvidia family's table, joined into the catalog (core/catalog.hpp).
#include "collectors/nvidia/nvidia_metrics.hpp"

#include <span>

#include "core/catalog.hpp"

namespace runmon::metric_families {

std::span<const MetricDescriptor> nvidia() {
  using namespace nvidia_metrics;
  static constexpr MetricDescriptor kTable[] = {kProcessGpu,
                                                kProcessMemoryAllocatedBytes,
                                                kProcessMemoryAllocated,
                                                kProcessMemory,
                                                kProcessTemp,
                                                kProcessPowerWatts,
                                                kProcessEnforcedPowerLimitWatts,
                                                kProcessPowerPercent,
                                                kGpu,
                                                kMemory,
                                                kMemoryAllocated,
                                                kMemoryAllocatedBytes,
                                                kTemp,
                                                kPowerWatts,
                                                kEnforcedPowerLimitWatts,
                                                kPowerPercent,
                                                kSmClock,
                                                kMemoryClock,
                                                kGraphicsClock,
                                                kCorrectedMemoryErrors,
                                                kUnCorrectedMemoryErrors,
                                                kEncoderUtilization,
                                                kFanSpeed,
                                                kClocksEventReasons,
                                                kEnergyJoules,
                                                kSmActive,
                                                kSmOccupancy,
                                                kPipeTensorActive,
                                                kPipeTensorHmmaActive,
                                                kDramActive,
                                                kPipeFp64Active,
                                                kPipeFp32Active,
                                                kPipeFp16Active,
                                                kPcieTxBytes,
                                                kPcieRxBytes,
                                                kNvlinkTxBytes,
                                                kNvlinkRxBytes};
  return kTable;
}

}  // namespace runmon::metric_families
