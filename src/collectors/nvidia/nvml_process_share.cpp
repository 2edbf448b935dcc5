// gpu.process.{i}.* from NVML's process lists (see nvml_process_share.hpp). The lists use NVML's sizing
// protocol (the list can grow between the sizing call and the filling call, so it is asked again with more
// room, a few times at most); a process in both lists counts once.
#include "collectors/nvidia/nvml_process_share.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "collectors/gpu/gpu_metrics.hpp"
#include "collectors/nvidia/nvidia_metrics.hpp"

namespace runmon::nvidia {

using nvml::Return;

ProcessShare::ProcessShare(const nvml::Library& library, RunTree tree)
    : library_(library), tree_(std::move(tree)) {}

bool ProcessShare::ReadProcesses(GpuDevice& device, Family family,
                                 Return (*list)(nvml::Device, unsigned*, nvml::ProcessInfo*),
                                 std::vector<nvml::ProcessInfo>& into) {
  if (list == nullptr || device.health.off.test(family) || device.health.lost) return false;
  for (int attempt = 0; attempt < 4; ++attempt) {
    unsigned count = static_cast<unsigned>(scratch_processes_.size());
    const Return code = list(device.handle, &count, scratch_processes_.data());
    if (code == nvml::kSuccess) {
      into.insert(into.end(), scratch_processes_.begin(),
                  scratch_processes_.begin() + std::min<size_t>(count, scratch_processes_.size()));
      return true;
    }
    if (code != nvml::kInsufficientSize)
      return Handle(library_, device.health, family, code, "running processes");
    scratch_processes_.resize(
        std::min<size_t>(std::max<size_t>(count, scratch_processes_.size()) * 2 + 8, 1u << 16));
  }
  return false;
}

void ProcessShare::Sample(GpuDevice& device, const DeviceValues& values, MetricBatch& out) {
  if (!tree_.watching() || device.health.lost) return;
  const nvml::Functions& api = library_.api();
  // Each list stands alone: a board without graphics processes still has its compute list.
  std::vector<nvml::ProcessInfo> processes;
  const bool compute =
      ReadProcesses(device, kComputeProcesses, api.device_get_compute_running_processes, processes);
  const bool graphics =
      ReadProcesses(device, kGraphicsProcesses, api.device_get_graphics_running_processes, processes);
  if (!compute && !graphics) return;
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
  const nvml::Functions& api = library_.api();
  if (!Ask(device.health, kProcessUtilization, api.device_get_process_utilization)) return std::nullopt;
  unsigned count = 0;
  Return code =
      api.device_get_process_utilization(device.handle, nullptr, &count, device.process_samples_seen_us);
  if (code == nvml::kNotFound) return std::nullopt;  // no samples since the last tick
  if (code != nvml::kInsufficientSize && code != nvml::kSuccess) {
    Handle(library_, device.health, kProcessUtilization, code, "process utilization");
    return std::nullopt;
  }
  if (count == 0) return std::nullopt;
  scratch_utilization_.resize(std::min<size_t>(count + 16, 1u << 16));
  count = static_cast<unsigned>(scratch_utilization_.size());
  code = api.device_get_process_utilization(device.handle, scratch_utilization_.data(), &count,
                                            device.process_samples_seen_us);
  if (!Handle(library_, device.health, kProcessUtilization, code, "process utilization")) return std::nullopt;
  std::map<unsigned, std::pair<double, unsigned>> per_process;
  for (unsigned i = 0; i < std::min<size_t>(count, scratch_utilization_.size()); ++i) {
    const auto& sample = scratch_utilization_[i];
    device.process_samples_seen_us = std::max(device.process_samples_seen_us, sample.timestamp);
    if (ours.count(sample.pid) == 0) continue;
    auto& [sum, n] = per_process[sample.pid];
    sum += sample.sm_util;
    ++n;
  }
  if (per_process.empty()) return std::nullopt;
  double total = 0;
  for (const auto& [pid, entry] : per_process) total += entry.first / entry.second;
  return std::min(total, 100.0);
}

}  // namespace runmon::nvidia
