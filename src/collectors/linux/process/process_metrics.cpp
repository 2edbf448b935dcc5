// The process family's table, joined into the catalog (core/catalog.hpp).
#include "collectors/linux/process/process_metrics.hpp"

#include <span>

#include "core/catalog.hpp"

namespace runmon::metric_families {

std::span<const MetricDescriptor> process() {
  using namespace process_metrics;
  static constexpr MetricDescriptor kTable[] = {kCpu, kThreads, kResidentMemory, kMemoryPercent};
  return kTable;
}

}  // namespace runmon::metric_families
