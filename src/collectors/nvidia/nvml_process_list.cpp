// Every process on every NVIDIA GPU (see nvml_process_list.hpp).
#include "collectors/nvidia/nvml_process_list.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace runmon::nvidia {

Result<std::unique_ptr<NvmlProcessLister>> NvmlProcessLister::Open(const std::string& library_path) {
  auto library = nvml::Library::Open(library_path);
  if (!library) return Error{library.error()};
  return Start(std::move(*library));
}

Result<std::unique_ptr<NvmlProcessLister>> NvmlProcessLister::Start(std::unique_ptr<nvml::Library> library) {
  if (auto status = library->Init(); !status) return Error{status.error()};
  auto inventory = DiscoverDevices(*library, std::nullopt);
  if (!inventory) return Error{inventory.error()};
  return std::unique_ptr<NvmlProcessLister>(new NvmlProcessLister(std::move(library), std::move(*inventory)));
}

NvmlProcessLister::NvmlProcessLister(std::unique_ptr<nvml::Library> library, DeviceInventory inventory)
    : library_(std::move(library)), inventory_(std::move(inventory)), query_(*library_) {}

gpu::GpuProcessListing NvmlProcessLister::List() {
  gpu::GpuProcessListing listing;
  for (GpuDevice& device : inventory_.devices) {
    if (device.identity.mig_enabled) continue;  // its instances list their processes
    if (device.health.lost) {
      listing.problems.push_back(fmt::format("GPU {}: {}", device.key_index, device.health.lost_reason));
      continue;
    }
    scratch_.clear();
    std::string& why = why_not_[device.key_index];  // kept: a list switched off is not asked again
    if (!query_.ReadLists(device, scratch_, &why)) {
      const std::string& reason = device.health.lost ? device.health.lost_reason : why;
      listing.problems.push_back(fmt::format("GPU {}: NVML cannot list its processes: {}", device.key_index,
                                             reason.empty() ? "the driver lacks the function" : reason));
      continue;
    }
    const std::map<unsigned, double> sm = query_.ReadSmUtilization(device);
    const size_t first = listing.processes.size();
    for (const nvml::ProcessInfo& info : scratch_) {
      const long pid = static_cast<long>(info.pid);
      const auto end = listing.processes.end();
      auto same = std::find_if(listing.processes.begin() + static_cast<std::ptrdiff_t>(first), end,
                               [&](const gpu::GpuProcess& p) { return p.pid == pid; });
      if (same == end) {
        gpu::GpuProcess process;
        process.device_index = device.key_index;
        process.pid = pid;
        if (auto it = sm.find(info.pid); it != sm.end()) process.sm_percent = std::min(it->second, 100.0);
        listing.processes.push_back(process);
        same = listing.processes.end() - 1;
      }
      // In both lists: the memory the driver gives in either (the larger, should they differ).
      if (info.used_gpu_memory != nvml::kValueNotAvailable) {
        same->memory_bytes = std::max<uint64_t>(same->memory_bytes.value_or(0), info.used_gpu_memory);
      }
    }
  }
  return listing;
}

}  // namespace runmon::nvidia
