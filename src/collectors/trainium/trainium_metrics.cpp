// The trainium family's table, joined into the catalog (core/catalog.hpp).
#include "collectors/trainium/trainium_metrics.hpp"

#include <span>

#include "core/catalog.hpp"

namespace runmon::metric_families {

std::span<const MetricDescriptor> trainium() {
  using namespace trainium_metrics;
  static constexpr MetricDescriptor kTable[] = {kNeuronCoreUtilization,
                                                kHostTotalMemoryUsage,
                                                kNeuronDeviceTotalMemoryUsage,
                                                kHostMemoryApplicationMemory,
                                                kHostMemoryConstants,
                                                kHostMemoryDmaBuffers,
                                                kHostMemoryTensors,
                                                kCoreMemoryConstants,
                                                kCoreMemoryModelCode,
                                                kCoreMemoryModelSharedScratchpad,
                                                kCoreMemoryRuntimeMemory,
                                                kCoreMemoryTensors,
                                                kRuntimeVcpuUser,
                                                kRuntimeVcpuSystem,
                                                kSystemVcpuUser,
                                                kSystemVcpuNice,
                                                kSystemVcpuSystem,
                                                kSystemVcpuIdle,
                                                kSystemVcpuIoWait,
                                                kSystemVcpuIrq,
                                                kSystemVcpuSoftIrq,
                                                kSystemContextSwitches,
                                                kSystemMemoryUsedBytes,
                                                kSystemMemoryTotalBytes,
                                                kSystemSwapUsedBytes,
                                                kSystemSwapTotalBytes,
                                                kDeviceMemEccCorrected,
                                                kDeviceMemEccUncorrected,
                                                kDeviceSramEccCorrected,
                                                kDeviceSramEccUncorrected};
  return kTable;
}

}  // namespace runmon::metric_families
