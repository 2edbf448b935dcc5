// gpu.process.{i}.* from NVML's process lists (see nvml_process_share.hpp), read through ProcessQuery
// (nvml_process_query.hpp); a process in both lists counts once.
#include "collectors/nvidia/nvml_process_share.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "collectors/gpu/gpu_metrics.hpp"
#include "collectors/nvidia/nvidia_metrics.hpp"

namespace runmon::nvidia {

ProcessShare::ProcessShare(const nvml::Library& library, RunTree tree)
    : query_(library), tree_(std::move(tree)) {}

void ProcessShare::Sample(GpuDevice& device, const DeviceValues& values, MetricBatch& out) {
  if (!tree_.watching() || device.health.lost) return;
  std::vector<nvml::ProcessInfo> processes;
  if (!query_.ReadLists(device, processes)) return;
  std::set<unsigned> ours;
  unsigned long long memory = 0;
  bool memory_known = false;
  for (const auto& process : processes) {
    if (!tree_.Contains(static_cast<long>(process.pid))) continue;
    if (!ours.insert(process.pid).second) continue;
    if (process.used_gpu_memory != nvml::kValueNotAvailable) {
      memory += process.used_gpu_memory;
      memory_known = true;
    }
  }
  if (ours.empty()) return;
  using namespace gpu_metrics;
  using nvidia_metrics::kProcessMemory;
  const std::string index = fmt::format("{}", device.key_index);
  const auto add = [&](const MetricDescriptor& metric, double value) { out.Add(metric, index, value); };
  if (auto utilization = TreeSmUtilization(device, ours)) add(kProcessGpu, *utilization);
  if (values.memory) add(kProcessMemory, *values.memory);
  if (memory_known) {
    if (values.memory_total)
      add(kProcessMemoryAllocated,
          100.0 * static_cast<double>(memory) / static_cast<double>(*values.memory_total));
    add(kProcessMemoryAllocatedBytes, static_cast<double>(memory));
  }
  if (values.temp) add(kProcessTemp, *values.temp);
  if (values.power_watts) add(kProcessPowerWatts, *values.power_watts);
  if (values.power_limit_watts) add(kProcessEnforcedPowerLimitWatts, *values.power_limit_watts);
  if (values.power_watts && values.power_limit_watts)
    add(kProcessPowerPercent, 100.0 * *values.power_watts / *values.power_limit_watts);
}

// The tree's SM utilisation since the last tick: per process, the mean of NVML's samples newer than the
// last one seen; summed over the tree's processes (at most 100).
std::optional<double> ProcessShare::TreeSmUtilization(GpuDevice& device, const std::set<unsigned>& ours) {
  double total = 0;
  bool any = false;
  for (const auto& [pid, mean] : query_.ReadSmUtilization(device)) {
    if (ours.count(pid) == 0) continue;
    total += mean;
    any = true;
  }
  if (!any) return std::nullopt;
  return std::min(total, 100.0);
}

}  // namespace runmon::nvidia
