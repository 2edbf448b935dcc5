// The process family's factory: the monitored process tree (cpu, proc.*).
#include <string_view>

#include "collectors/builtin.hpp"
#include "collectors/linux/linux_collectors.hpp"

namespace runmon::collector_families {
namespace {

constexpr std::string_view kSettings[] = {"x_stats_pid", "x_stats_track_process_tree"};

FamilyStart Start(const CollectorContext& ctx) {
  if (!ctx.pid) return {.absent_reason = "no process to monitor (--pid 0, or runmon run --host-only)"};
  return FamilyStart::Of(MakeProcessTreeCollector(ctx));
}

}  // namespace

const CollectorFamily& process() {
  static constexpr CollectorFamily kFamily{
      .name = "process", .lane = "host", .settings = kSettings, .start = Start};
  return kFamily;
}

}  // namespace runmon::collector_families
