// The cpu family's factory: host CPU busy time (cpu_percent, cpu.{i}.cpu_percent).
#include <string_view>

#include "collectors/builtin.hpp"
#include "collectors/linux/linux_collectors.hpp"

namespace runmon::collector_families {
namespace {

constexpr std::string_view kSettings[] = {"x_stats_per_core_cpu"};

FamilyStart Start(const CollectorContext& ctx) {
  return FamilyStart::Of(MakeHostCpuCollector(ctx));
}

}  // namespace

const CollectorFamily& cpu() {
  static constexpr CollectorFamily kFamily{
      .name = "cpu", .lane = "host", .settings = kSettings, .start = Start};
  return kFamily;
}

}  // namespace runmon::collector_families
