// AMD GPUs through the amdgpu driver's sysfs and hwmon files (metrics.md A.1, B §4; accelerators.md §3;
// docs/amd.md): every tick each card's files are read again, kept open, with no subprocess and no vendor
// library, so a sample costs microseconds where W&B's `rocm-smi -a --json` costs seconds. Keys gpu.{i}.*
// follow the GPU index rule (gpu/gpu_index.hpp). The collector runs in a lane of its own ("amd"): a GPU in
// reset can block a sysfs read, and that holds only this lane.
// Where sysfs lacks a value (a card without hwmon, a file a container hides), amd-smi or rocm-smi fills it
// (amd_tool_fallback.hpp): in the background, at most once per interval, never delaying a tick; each value
// still comes from sysfs when sysfs has it, and a tool's card is paired with sysfs's by PCI address. When
// sysfs shows no card at all but the driver is live and a tool is there, the tool's cards are the cards
// (keyed in the tool's order). The run's own share, gpu.process.{i}.*, comes from amdgpu_process_share.hpp.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectors/amd/amd_tool_fallback.hpp"
#include "collectors/amd/amdgpu_discovery.hpp"
#include "collectors/collector.hpp"
#include "collectors/gpu/gpu_index.hpp"
#include "core/result.hpp"
#include "host/host_paths.hpp"

namespace runmon {

struct AmdOptions {
  HostPaths paths;
  gpu::HostGpus host_gpus;                          // both vendors' GPUs on the host (gpu_count)
  unsigned first_index = 0;                         // the GPU index rule's start for AMD
  std::optional<std::vector<unsigned>> device_ids;  // x_stats_gpu_device_ids: key indices to report
  std::optional<long> pid;                          // root of the monitored tree: gpu.process.{i}.*
  bool whole_tree = true;                           // false: the root process alone (--no-process-tree)
  std::function<void(const nlohmann::json&)> publish_metadata;  // wandb-metadata.json fields
  std::function<void(const std::string&)> warn;                 // a file that fails, said once
  double interval_seconds = 15;
  std::function<double()> monotonic_seconds;  // the tick clock, for busy-time rates and tool readings (set)
  // Starts the vendor tool fallback; null when no tool is to be used (none found, or a sys root that is not
  // the host's own, which the tools would not read).
  std::function<std::unique_ptr<amd::AmdToolFallback>()> start_tool;
};

// The collector over the cards `discovery` found; with none, over the tool's (`start_tool` set).
std::unique_ptr<Collector> MakeAmdCollector(AmdOptions options, amd::CardDiscovery discovery);

}  // namespace runmon
