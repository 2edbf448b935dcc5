// Device discovery for the NVIDIA collector: the devices NVML enumerates, which of them are reported, and
// how each is keyed. GPUs come in NVML's order, then the MIG instances of GPUs in MIG mode, numbered after
// the GPUs and the other vendors' GPUs that follow them (gpu.{count+others}, ...: gpu/gpu_index.hpp), as
// devices of their own. x_stats_gpu_device_ids selects GPUs
// by NVML index (a selected GPU brings its MIG instances along). Every enumerated device's identity is kept,
// reported or not, because CUDA ordinals (CUDA_VISIBLE_DEVICES, cuda_devices.hpp) count them all.
// GpuDevice is also where sampling keeps a device's state between ticks.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "collectors/nvidia/cuda_devices.hpp"
#include "collectors/nvidia/nvml_api.hpp"
#include "collectors/nvidia/nvml_outcome.hpp"
#include "core/result.hpp"

namespace runmon::nvidia {

struct GpuDevice {
  unsigned key_index = 0;        // i in gpu.{i}
  size_t identity_position = 0;  // in the list of every device NVML enumerated (for CUDA ordinals)
  nvml::Device handle = nullptr;
  NvmlDeviceIdentity identity;
  std::string name;
  std::string pci_bus_id;
  unsigned long long memory_total = 0;
  unsigned cuda_cores = 0;
  std::string architecture;
  DeviceHealth health;
  // Sampling state (nvml_sampling.hpp, nvml_process_share.hpp).
  std::optional<unsigned long long> energy_start_mj;
  unsigned long long process_samples_seen_us = 0;
  nvml::GpmSample gpm_previous = nullptr;  // freed by the collector
  nvml::GpmSample gpm_current = nullptr;
  std::chrono::steady_clock::time_point gpm_previous_time;
};

struct DeviceInventory {
  std::vector<GpuDevice> devices;                  // the reported ones, in key order
  std::vector<NvmlDeviceIdentity> all_identities;  // every device NVML enumerated, reported or not
};

// The device walk, on an initialised library; `device_ids` unset: every GPU. `other_vendor_gpus`: how many
// indices after NVIDIA's GPUs other vendors' GPUs take (MIG instances come after them). A device NVML
// cannot hand out is skipped; a device lost during the walk comes back with health.lost set.
Result<DeviceInventory> DiscoverDevices(const nvml::Library& library,
                                        const std::optional<std::vector<unsigned>>& device_ids,
                                        unsigned other_vendor_gpus = 0);

}  // namespace runmon::nvidia
