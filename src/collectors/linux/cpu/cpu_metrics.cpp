// The cpu family's table, joined into the catalog (core/catalog.hpp).
#include "collectors/linux/cpu/cpu_metrics.hpp"

#include <span>

#include "core/catalog.hpp"

namespace runmon::metric_families {

std::span<const MetricDescriptor> cpu() {
  using namespace cpu_metrics;
  static constexpr MetricDescriptor kTable[] = {kHostCpu, kCoreCpu};
  return kTable;
}

}  // namespace runmon::metric_families
