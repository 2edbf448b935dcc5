// The loadavg family's table, joined into the catalog (core/catalog.hpp).
#include "collectors/linux/loadavg/loadavg_metrics.hpp"

#include <span>

#include "core/catalog.hpp"

namespace runmon::metric_families {

std::span<const MetricDescriptor> loadavg() {
  using namespace loadavg_metrics;
  static constexpr MetricDescriptor kTable[] = {kLoad1, kLoad5, kLoad15};
  return kTable;
}

}  // namespace runmon::metric_families
