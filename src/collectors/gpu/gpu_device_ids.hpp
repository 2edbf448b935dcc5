// x_stats_gpu_device_ids, the W&B setting that picks which GPUs are reported: a JSON list of integers, or one
// integer, the gpu.{i} indices of the GPU index rule (gpu_index.hpp: NVML's for NVIDIA's GPUs, and the ones
// after them for AMD's). A pure parser (fuzzed through fuzz/cuda_visible_devices_fuzz.cpp), shared by the
// GPU families and the settings check.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace runmon {

// The indices; nullopt when the setting is unset or empty; an error naming the setting otherwise.
Result<std::optional<std::vector<unsigned>>> ParseGpuDeviceIds(const std::optional<std::string>& setting);

}  // namespace runmon
