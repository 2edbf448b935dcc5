// NVML's per-device process queries (see nvml_process_query.hpp).
#include "collectors/nvidia/nvml_process_query.hpp"

#include <algorithm>
#include <utility>

namespace runmon::nvidia {

using nvml::Return;

namespace {

constexpr size_t kMaxEntries = 1u << 16;  // a driver claiming more is broken; never allocate past this

}  // namespace

bool ProcessQuery::ReadList(GpuDevice& device, Family family,
                            Return (*list)(nvml::Device, unsigned*, nvml::ProcessInfo*),
                            std::vector<nvml::ProcessInfo>& into, std::string* why) {
  if (!Ask(device.health, family, list)) return false;
  for (int attempt = 0; attempt < 4; ++attempt) {
    unsigned count = static_cast<unsigned>(scratch_processes_.size());
    const Return code = list(device.handle, &count, scratch_processes_.data());
    if (code == nvml::kSuccess) {
      into.insert(into.end(), scratch_processes_.begin(),
                  scratch_processes_.begin() + std::min<size_t>(count, scratch_processes_.size()));
      return true;
    }
    if (code != nvml::kInsufficientSize) {
      if (why != nullptr) *why = library_.ErrorString(code);
      return Handle(library_, device.health, family, code, "running processes");
    }
    scratch_processes_.resize(
        std::min<size_t>(std::max<size_t>(count, scratch_processes_.size()) * 2 + 8, kMaxEntries));
  }
  if (why != nullptr) *why = "the list kept growing";
  return false;
}

bool ProcessQuery::ReadLists(GpuDevice& device, std::vector<nvml::ProcessInfo>& into, std::string* why) {
  if (device.health.lost) return false;
  const nvml::Functions& api = library_.api();
  const bool compute =
      ReadList(device, kComputeProcesses, api.device_get_compute_running_processes, into, why);
  const bool graphics =
      ReadList(device, kGraphicsProcesses, api.device_get_graphics_running_processes, into, why);
  return compute || graphics;
}

std::map<unsigned, double> ProcessQuery::ReadSmUtilization(GpuDevice& device) {
  const nvml::Functions& api = library_.api();
  if (!Ask(device.health, kProcessUtilization, api.device_get_process_utilization)) return {};
  unsigned count = 0;
  Return code =
      api.device_get_process_utilization(device.handle, nullptr, &count, device.process_samples_seen_us);
  if (code == nvml::kNotFound) return {};  // no samples since the last call
  if (code != nvml::kInsufficientSize && code != nvml::kSuccess) {
    Handle(library_, device.health, kProcessUtilization, code, "process utilization");
    return {};
  }
  // Samples can come between the sizing call and the filling call, as processes do in the lists.
  code = nvml::kInsufficientSize;
  for (int attempt = 0; code == nvml::kInsufficientSize && attempt < 4; ++attempt) {
    if (count == 0) return {};
    scratch_utilization_.resize(std::min<size_t>(static_cast<size_t>(count) + 16, kMaxEntries));
    count = static_cast<unsigned>(scratch_utilization_.size());
    code = api.device_get_process_utilization(device.handle, scratch_utilization_.data(), &count,
                                              device.process_samples_seen_us);
  }
  if (code == nvml::kNotFound) return {};
  if (!Handle(library_, device.health, kProcessUtilization, code, "process utilization")) return {};
  std::map<unsigned, std::pair<double, unsigned>> sums;
  for (size_t i = 0; i < std::min<size_t>(count, scratch_utilization_.size()); ++i) {
    const auto& sample = scratch_utilization_[i];
    device.process_samples_seen_us = std::max(device.process_samples_seen_us, sample.timestamp);
    auto& [sum, n] = sums[sample.pid];
    sum += sample.sm_util;
    ++n;
  }
  std::map<unsigned, double> means;
  for (const auto& [pid, entry] : sums) means.emplace_hint(means.end(), pid, entry.first / entry.second);
  return means;
}

}  // namespace runmon::nvidia
