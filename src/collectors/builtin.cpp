// The collector list. Order within a lane is the order of keys in a sample.
#include "collectors/builtin.hpp"

#include <ctime>

namespace runmon {

Clocks Clocks::System() {
  auto read = [](clockid_t id) {
    timespec t{};
    ::clock_gettime(id, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
  };
  return Clocks{[read] { return read(CLOCK_BOOTTIME); }, [read] { return read(CLOCK_MONOTONIC); }};
}

std::vector<CollectorSpec> BuiltinCollectors(const LinuxCollectorContext& ctx) {
  std::vector<CollectorSpec> specs;
  specs.push_back({MakeProcessTreeCollector(ctx), "proc"});
  specs.push_back({MakeHostCpuCollector(ctx), "proc"});
  specs.push_back({MakeMemoryCollector(ctx), "proc"});
  specs.push_back({MakeDiskIoCollector(ctx), "proc"});
  specs.push_back({MakeNetworkCollector(ctx), "proc"});
  if (!ctx.settings.no_cgroup) specs.push_back({MakeCgroupCollector(ctx), "proc"});
  specs.push_back({MakeSelfCostCollector(ctx), "proc"});
  specs.push_back({MakeDiskUsageCollector(ctx), "filesystem"});
  return specs;
}

}  // namespace runmon
