// The NVIDIA family's factory: one collector over NVML in a lane of its own, so a driver call that hangs
// delays nothing else. No library, no collector; that is only worth a word when the library was named
// explicitly (RUNMON_NVML_LIBRARY). The probe gives `runmon info` the GPUs' metadata.
#include <string_view>

#include "collectors/builtin.hpp"
#include "collectors/gpu/gpu_device_ids.hpp"
#include "collectors/gpu/gpu_index.hpp"
#include "collectors/nvidia/nvidia_collector.hpp"
#include "config/settings.hpp"

namespace runmon::collector_families {
namespace {

constexpr std::string_view kSettings[] = {"x_stats_gpu_device_ids", "x_stats_track_process_tree",
                                          "RUNMON_NVML_LIBRARY", "CUDA_VISIBLE_DEVICES"};

NvidiaOptions OptionsFor(const CollectorContext& ctx) {
  NvidiaOptions nvidia;
  nvidia.library_path = EnvironmentValue(ctx, "RUNMON_NVML_LIBRARY").value_or("");
  if (auto it = ctx.settings.other.find("x_stats_gpu_device_ids"); it != ctx.settings.other.end()) {
    if (auto ids = ParseGpuDeviceIds(it->second)) nvidia.device_ids = *ids;  // validated with the settings
  }
  const gpu::HostGpus host = ctx.facts.gpus;
  nvidia.other_vendor_gpus = host.amd;
  if (host.amd > 0) nvidia.host_gpu_count = host.nvidia + host.amd;
  nvidia.cuda_visible_devices = ctx.cuda_visible_devices;
  nvidia.pid = ctx.pid;
  nvidia.whole_tree = ctx.settings.track_process_tree;
  nvidia.paths = ctx.paths;
  nvidia.publish_metadata = ctx.publish_metadata;
  return nvidia;
}

FamilyStart Start(const CollectorContext& ctx) {
  FamilyStart started;
  if (auto collector = MakeNvidiaCollector(OptionsFor(ctx), &started.absent_reason)) {
    started.collectors.push_back(std::move(collector));
  } else if (EnvironmentValue(ctx, "RUNMON_NVML_LIBRARY") && ctx.warn) {
    ctx.warn("no NVIDIA metrics: " + started.absent_reason);
  }
  return started;
}

Result<nlohmann::json> Probe(const CollectorContext& ctx) {
  return ProbeNvidiaMetadata(OptionsFor(ctx));
}

}  // namespace

const CollectorFamily& nvidia() {
  static constexpr CollectorFamily kFamily{
      .name = "nvidia", .lane = "nvidia", .settings = kSettings, .start = Start, .probe = Probe};
  return kFamily;
}

}  // namespace runmon::collector_families
