// The self family's factory: runmon's own CPU and memory (not when runmon shares the monitored process),
// and its remote write's progress when it pushes.
#include "collectors/builtin.hpp"
#include "collectors/linux/linux_collectors.hpp"

namespace runmon::collector_families {
namespace {

FamilyStart Start(const CollectorContext& ctx) {
  FamilyStart start;
  if (ctx.shares_monitored_process) {
    start.absent_reason = "runmon runs inside the monitored process";
  } else {
    start.collectors.push_back(MakeSelfCostCollector(ctx));
  }
  if (auto remote_write = MakeRemoteWriteStatusCollector(ctx))
    start.collectors.push_back(std::move(remote_write));
  return start;
}

}  // namespace

const CollectorFamily& self() {
  static constexpr CollectorFamily kFamily{.name = "self", .lane = "host", .start = Start};
  return kFamily;
}

}  // namespace runmon::collector_families
