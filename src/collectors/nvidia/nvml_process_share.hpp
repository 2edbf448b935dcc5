// The run's share of each GPU, gpu.process.{i}.* (metrics.md A.2.4): the processes NVML lists on the
// device (compute and graphics lists, each standing alone) that are in the monitored tree (run_tree.hpp),
// their memory, and their SM utilisation since the last tick; the device-wide values (memory activity,
// temperature, power) are repeated, as W&B does. No process of the run on a device: no keys for it.
// Another GPU family pairs its own process list with a RunTree the same way.
#pragma once

#include <optional>
#include <set>

#include "collectors/linux/run_tree.hpp"
#include "collectors/nvidia/nvml_api.hpp"
#include "collectors/nvidia/nvml_discovery.hpp"
#include "collectors/nvidia/nvml_process_query.hpp"
#include "collectors/nvidia/nvml_sampling.hpp"
#include "core/sample.hpp"

namespace runmon::nvidia {

class ProcessShare {
 public:
  ProcessShare(const nvml::Library& library, RunTree tree);

  // Around each tick's devices: the tree's answers are kept for the processes still on a GPU.
  void BeginTick() { tree_.BeginLookups(); }
  void EndTick() { tree_.EndLookups(); }
  // Adds the device's gpu.process.{i}.* values; `values` are the device's own of this tick.
  void Sample(GpuDevice& device, const DeviceValues& values, MetricBatch& out);

 private:
  std::optional<double> TreeSmUtilization(GpuDevice& device, const std::set<unsigned>& ours);

  ProcessQuery query_;
  RunTree tree_;
};

}  // namespace runmon::nvidia
