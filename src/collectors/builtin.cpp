// The collector list. Order within a lane is the order of keys in a sample. The host collectors share one
// lane: each lane costs a thread wake-up per tick, which on a virtual machine costs more than most of these
// collectors. disk_usage can block (statvfs on a dead network mount); if it does, the sampler leaves it
// alone in this lane and moves the others to a new one (sampler.hpp), so it is last here and delays
// nothing for longer than one deadline.
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
  specs.push_back({MakeProcessTreeCollector(ctx), "host"});
  specs.push_back({MakeHostCpuCollector(ctx), "host"});
  specs.push_back({MakeMemoryCollector(ctx), "host"});
  specs.push_back({MakeDiskIoCollector(ctx), "host"});
  specs.push_back({MakeNetworkCollector(ctx), "host"});
  if (!ctx.settings.no_cgroup) specs.push_back({MakeCgroupCollector(ctx), "host"});
  specs.push_back({MakeSelfCostCollector(ctx), "host"});
  specs.push_back({MakeDiskUsageCollector(ctx), "host"});
  return specs;
}

}  // namespace runmon
