// Metadata for the NVIDIA collector: the run's GPU facts in W&B's wandb-metadata.json layout (gpu,
// gpu_count, gpu_nvidia, cuda_version) plus runmon's own under runmon.nvidia (every reported device with
// its key, NVML index, CUDA ordinal for the run's CUDA_VISIBLE_DEVICES, MIG parentage; the library and
// driver). GPUs count in gpu_count, MIG instances do not; on a host with other vendors' GPUs too,
// gpu_count is `host_gpu_count`, both vendors' (gpu/gpu_index.hpp), as the AMD family writes it. A fact
// NVML did not give is left out.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectors/nvidia/cuda_devices.hpp"
#include "collectors/nvidia/nvml_api.hpp"
#include "collectors/nvidia/nvml_discovery.hpp"

namespace runmon::nvidia {

nlohmann::json DescribeRunGpus(const nvml::Library& library, const DeviceInventory& inventory,
                               const std::optional<std::string>& cuda_visible_devices,
                               unsigned host_gpu_count = 0);

}  // namespace runmon::nvidia
