// NVIDIA GPUs through NVML (metrics.md A.1, A.2.4, A.3, B 3; docs/collectors.md). Keys gpu.{i}.* use NVML's
// device index i (as W&B does); MIG instances follow as devices of their own, numbered after the GPUs of
// every vendor (gpu/gpu_index.hpp).
// The collector runs in a lane of its own ("nvidia"): a driver call that hangs holds only that lane.
// nvmlInit and the device walk happen on its first Collect, in that lane, never on the main thread; the
// metadata they yield (names, UUIDs, PCI bus ids, memory, NVML index and CUDA ordinal, driver and CUDA
// versions) is handed to `publish_metadata` then.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectors/collector.hpp"
#include "collectors/nvidia/cuda_devices.hpp"
#include "core/result.hpp"
#include "host/host_paths.hpp"

namespace runmon {

struct NvidiaOptions {
  std::string library_path;                         // empty: libnvidia-ml.so.1
  std::optional<std::vector<unsigned>> device_ids;  // x_stats_gpu_device_ids: NVML indices to report
  unsigned other_vendor_gpus = 0;                   // AMD GPUs, numbered before the MIG instances
  unsigned host_gpu_count = 0;                      // with AMD GPUs too: both vendors' (gpu_count); else 0
  std::optional<std::string> cuda_visible_devices;  // the run's CUDA_VISIBLE_DEVICES, for CUDA ordinals
  std::optional<long> pid;                          // root of the monitored tree: gpu.process.{i}.*
  bool whole_tree = true;                           // false: the root process alone (--no-process-tree)
  HostPaths paths;                                  // /proc, to tell whether a GPU process is in the tree
  std::function<void(const nlohmann::json&)> publish_metadata;  // wandb-metadata.json fields
};

// The collector, or nullptr (and the reason) when no NVML library can be opened: no NVIDIA collector then.
std::unique_ptr<Collector> MakeNvidiaCollector(NvidiaOptions options, std::string* why_not = nullptr);

// For `runmon info`: initialises NVML and returns the GPUs' metadata (the same fields the collector
// publishes), or why it cannot.
Result<nlohmann::json> ProbeNvidiaMetadata(const NvidiaOptions& options);

}  // namespace runmon
