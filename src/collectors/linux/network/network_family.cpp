// The network family's factory: bytes sent and received, all interfaces.
#include "collectors/builtin.hpp"
#include "collectors/linux/linux_collectors.hpp"

namespace runmon::collector_families {
namespace {

FamilyStart Start(const CollectorContext& ctx) {
  return FamilyStart::Of(MakeNetworkCollector(ctx));
}

}  // namespace

const CollectorFamily& network() {
  static constexpr CollectorFamily kFamily{.name = "network", .lane = "host", .start = Start};
  return kFamily;
}

}  // namespace runmon::collector_families
