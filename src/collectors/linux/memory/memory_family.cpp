// The memory family's factory: host (or cgroup) memory in use and available.
#include "collectors/builtin.hpp"
#include "collectors/linux/linux_collectors.hpp"

namespace runmon::collector_families {
namespace {

FamilyStart Start(const CollectorContext& ctx) {
  return FamilyStart::Of(MakeMemoryCollector(ctx));
}

}  // namespace

const CollectorFamily& memory() {
  static constexpr CollectorFamily kFamily{.name = "memory", .lane = "host", .start = Start};
  return kFamily;
}

}  // namespace runmon::collector_families
