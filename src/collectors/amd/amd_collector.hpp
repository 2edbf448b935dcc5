// AMD GPUs through the amdgpu driver's sysfs and hwmon files (metrics.md A.1, B §4; accelerators.md §3;
// docs/amd.md): every tick each card's files are read again, kept open, with no subprocess and no vendor
// library, so a sample costs microseconds where W&B's `rocm-smi -a --json` costs seconds. Keys gpu.{i}.*
// follow the GPU index rule (gpu/gpu_index.hpp). The collector runs in a lane of its own ("amd"): a GPU in
// reset can block a sysfs read, and that holds only this lane.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectors/amd/amdgpu_discovery.hpp"
#include "collectors/collector.hpp"
#include "core/result.hpp"
#include "host/host_paths.hpp"

namespace runmon {

struct AmdOptions {
  HostPaths paths;
  unsigned first_index = 0;                         // the GPU index rule's start for AMD
  std::optional<std::vector<unsigned>> device_ids;  // x_stats_gpu_device_ids: key indices to report
  std::optional<long> pid;                          // root of the monitored tree: gpu.process.{i}.*
  bool whole_tree = true;                           // false: the root process alone (--no-process-tree)
  std::function<void(const nlohmann::json&)> publish_metadata;  // wandb-metadata.json fields
  std::function<void(const std::string&)> warn;                 // a file that fails, said once
};

// The collector over the cards `discovery` found (at least one).
std::unique_ptr<Collector> MakeAmdCollector(AmdOptions options, amd::CardDiscovery discovery);

}  // namespace runmon
