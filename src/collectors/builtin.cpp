// The collector list. Order within a lane is the order of keys in a sample. The host collectors share one
// lane: each lane costs a thread wake-up per tick, which on a virtual machine costs more than most of these
// collectors. disk_usage can block (statvfs on a dead network mount); if it does, the sampler leaves it
// alone in this lane and moves the others to a new one (sampler.hpp), so it is last here and delays
// nothing for longer than one deadline.
#include "collectors/builtin.hpp"

#include <cstdlib>
#include <ctime>

#include <fmt/format.h>

namespace runmon {

Clocks Clocks::System() {
  auto read = [](clockid_t id) {
    timespec t{};
    ::clock_gettime(id, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
  };
  return Clocks{[read] { return read(CLOCK_BOOTTIME); }, [read] { return read(CLOCK_MONOTONIC); }};
}

NvidiaOptions NvidiaOptionsFor(const LinuxCollectorContext& ctx) {
  NvidiaOptions nvidia;
  if (auto it = ctx.settings.other.find("x_stats_gpu_device_ids"); it != ctx.settings.other.end()) {
    if (auto ids = ParseGpuDeviceIds(it->second)) nvidia.device_ids = *ids;  // validated with the settings
  }
  nvidia.cuda_visible_devices = ctx.cuda_visible_devices;
  nvidia.pid = ctx.pid;
  nvidia.whole_tree = ctx.settings.track_process_tree;
  nvidia.paths = ctx.paths;
  nvidia.publish_metadata = ctx.publish_metadata;
  return nvidia;
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

  // NVIDIA: a lane of its own, so a driver call that hangs delays nothing else. No library, no collector;
  // that is only worth a word when the library was named explicitly.
  std::string why_not;
  if (auto collector = MakeNvidiaCollector(NvidiaOptionsFor(ctx), &why_not)) {
    specs.push_back({std::move(collector), "nvidia"});
  } else if (const char* named = std::getenv("RUNMON_NVML_LIBRARY");
             named != nullptr && *named != '\0' && ctx.warn) {
    ctx.warn(fmt::format("no NVIDIA metrics: {}", why_not));
  }
  return specs;
}

}  // namespace runmon
