// The network family's table, joined into the catalog (core/catalog.hpp).
#include "collectors/linux/network/network_metrics.hpp"

#include <span>

#include "core/catalog.hpp"

namespace runmon::metric_families {

std::span<const MetricDescriptor> network() {
  using namespace network_metrics;
  static constexpr MetricDescriptor kTable[] = {kSent, kReceived, kSendRate, kReceiveRate};
  return kTable;
}

}  // namespace runmon::metric_families
