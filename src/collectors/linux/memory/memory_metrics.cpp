// The memory family's table, joined into the catalog (core/catalog.hpp).
#include "collectors/linux/memory/memory_metrics.hpp"

#include <span>

#include "core/catalog.hpp"

namespace runmon::metric_families {

std::span<const MetricDescriptor> memory() {
  using namespace memory_metrics;
  static constexpr MetricDescriptor kTable[] = {kUsedPercent, kAvailable};
  return kTable;
}

}  // namespace runmon::metric_families
