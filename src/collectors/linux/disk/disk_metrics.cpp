// The disk family's table, joined into the catalog (core/catalog.hpp).
#include "collectors/linux/disk/disk_metrics.hpp"

#include <span>

#include "core/catalog.hpp"

namespace runmon::metric_families {

std::span<const MetricDescriptor> disk() {
  using namespace disk_metrics;
  static constexpr MetricDescriptor kTable[] = {kUsagePercent, kUsageGB,   kRead,       kWritten,
                                                kReadRate,     kWriteRate, kDeviceRead, kDeviceWritten};
  return kTable;
}

}  // namespace runmon::metric_families
