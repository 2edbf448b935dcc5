// The nvidia family's table, joined into the catalog (core/catalog.hpp).
#include "collectors/nvidia/nvidia_metrics.hpp"

#include <span>

#include "core/catalog.hpp"

namespace runmon::metric_families {

std::span<const MetricDescriptor> nvidia() {
  using namespace nvidia_metrics;
  static constexpr MetricDescriptor kTable[] = {kProcessMemory,
                                                kMemory,
                                                kGraphicsClock,
                                                kCorrectedMemoryErrors,
                                                kUnCorrectedMemoryErrors,
                                                kEncoderUtilization,
                                                kClocksEventReasons,
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
