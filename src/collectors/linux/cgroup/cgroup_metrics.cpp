// The cgroup family's table, joined into the catalog (core/catalog.hpp).
#include "collectors/linux/cgroup/cgroup_metrics.hpp"

#include <span>

#include "core/catalog.hpp"

namespace runmon::metric_families {

std::span<const MetricDescriptor> cgroup() {
  using namespace cgroup_metrics;
  static constexpr MetricDescriptor kTable[] = {kMemoryLimit, kCpuLimit, kThrottledPercent, kOomKills};
  return kTable;
}

}  // namespace runmon::metric_families
