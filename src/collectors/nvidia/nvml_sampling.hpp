// Sampling for the NVIDIA collector: one tick of one device's gpu.{i}.* keys through NVML (utilisation,
// memory, temperature, power, clocks, ECC, encoder, fan, clock event reasons, energy since the start, and
// the GPM metrics of Hopper and later). Each query goes through nvml_outcome.hpp, so a family the device
// refuses is not asked again. Values that cannot be real (a memory total of 0, a power limit of 0) are
// left out, never replaced by a made-up number.
#pragma once

#include <optional>

#include "collectors/nvidia/nvml_api.hpp"
#include "collectors/nvidia/nvml_discovery.hpp"
#include "core/sample.hpp"

namespace runmon::nvidia {

// Memory: v2 (used without the driver's reservation, as nvidia-smi shows it) when the driver has it.
struct MemoryReading {
  unsigned long long total;
  unsigned long long used;
};
std::optional<MemoryReading> ReadMemory(const nvml::Library& library, GpuDevice& device);

// The device-wide values of a tick that the run's share (gpu.process.{i}.*) repeats.
struct DeviceValues {
  std::optional<double> gpu, memory, temp, power_watts, power_limit_watts;
  std::optional<unsigned long long> memory_total, memory_used;
};

// Adds the device's gpu.{i}.* values to `out` and returns the device-wide ones.
DeviceValues SampleDevice(const nvml::Library& library, GpuDevice& device, MetricBatch& out);

}  // namespace runmon::nvidia
