// The cgroup family's factory: the monitored process's cgroup limits, throttling and OOM kills.
#include <string_view>

#include "collectors/builtin.hpp"
#include "collectors/linux/linux_collectors.hpp"

namespace runmon::collector_families {
namespace {

constexpr std::string_view kSettings[] = {"x_stats_no_cgroup"};

FamilyStart Start(const CollectorContext& ctx) {
  if (ctx.settings.no_cgroup) return {.absent_reason = "x_stats_no_cgroup is set (--no-cgroup)"};
  return FamilyStart::Of(MakeCgroupCollector(ctx));
}

}  // namespace

const CollectorFamily& cgroup() {
  static constexpr CollectorFamily kFamily{
      .name = "cgroup", .lane = "host", .settings = kSettings, .start = Start};
  return kFamily;
}

}  // namespace runmon::collector_families
