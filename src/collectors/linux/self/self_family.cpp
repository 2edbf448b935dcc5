// The self family's factory: runmon's own CPU and memory.
#include "collectors/builtin.hpp"
#include "collectors/linux/linux_collectors.hpp"

namespace runmon::collector_families {
namespace {

FamilyStart Start(const CollectorContext& ctx) {
  return FamilyStart::Of(MakeSelfCostCollector(ctx));
}

}  // namespace

const CollectorFamily& self() {
  static constexpr CollectorFamily kFamily{.name = "self", .lane = "host", .start = Start};
  return kFamily;
}

}  // namespace runmon::collector_families
