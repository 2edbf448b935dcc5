// One device's tick through NVML (see nvml_sampling.hpp). GPM is rolling: each tick's sample is compared
// with the previous tick's (NVML needs > 100 ms between them), so no tick waits for a measurement window.
#include "collectors/nvidia/nvml_sampling.hpp"

#include <array>
#include <chrono>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "collectors/gpu/gpu_metrics.hpp"
#include "collectors/nvidia/nvidia_metrics.hpp"

namespace runmon::nvidia {
namespace {

using nvml::Return;
namespace metrics = nvidia_metrics;

// GPM metrics: NVML id, metric, factor (PCIe and NVLink come in MiB/s; runmon reports bytes/s).
struct GpmKey {
  unsigned id;
  const MetricDescriptor* metric;
  double factor;
};
constexpr std::array kGpmKeys = {
    GpmKey{2, &metrics::kSmActive, 1.0},
    GpmKey{3, &metrics::kSmOccupancy, 1.0},
    GpmKey{5, &metrics::kPipeTensorActive, 1.0},
    GpmKey{10, &metrics::kDramActive, 1.0},
    GpmKey{11, &metrics::kPipeFp64Active, 1.0},
    GpmKey{12, &metrics::kPipeFp32Active, 1.0},
    GpmKey{13, &metrics::kPipeFp16Active, 1.0},
    GpmKey{7, &metrics::kPipeTensorHmmaActive, 1.0},
    GpmKey{20, &metrics::kPcieTxBytes, 1048576.0},
    GpmKey{21, &metrics::kPcieRxBytes, 1048576.0},
    GpmKey{61, &metrics::kNvlinkTxBytes, 1048576.0},
    GpmKey{60, &metrics::kNvlinkRxBytes, 1048576.0},
};
static_assert(kGpmKeys.size() <= nvml::kGpmMetricsCapacity);

void SampleGpm(const nvml::Library& library, GpuDevice& device, const std::string& index, MetricBatch& out) {
  const nvml::Functions& api = library.api();
  DeviceHealth& health = device.health;
  if (health.off.test(kGpm) || health.lost || api.gpm_sample_alloc == nullptr ||
      api.gpm_sample_get == nullptr || api.gpm_metrics_get == nullptr) {
    return;
  }
  for (auto* sample : {&device.gpm_previous, &device.gpm_current}) {
    if (*sample == nullptr && !Handle(library, health, kGpm, api.gpm_sample_alloc(sample), "GPM")) return;
  }
  if (!Handle(library, health, kGpm, api.gpm_sample_get(device.handle, device.gpm_current), "GPM")) return;
  const auto now = std::chrono::steady_clock::now();
  const bool have_previous = device.gpm_previous_time.time_since_epoch().count() != 0;
  if (have_previous && now - device.gpm_previous_time > std::chrono::milliseconds(100)) {
    nvml::GpmMetricsGet request{};
    request.version = 1;
    request.num_metrics = static_cast<unsigned>(kGpmKeys.size());
    request.sample1 = device.gpm_previous;
    request.sample2 = device.gpm_current;
    for (size_t i = 0; i < kGpmKeys.size(); ++i) request.metrics[i].metric_id = kGpmKeys[i].id;
    if (Handle(library, health, kGpm, api.gpm_metrics_get(&request), "GPM")) {
      for (size_t i = 0; i < kGpmKeys.size(); ++i) {
        if (request.metrics[i].nvml_return != nvml::kSuccess) continue;
        out.Add(*kGpmKeys[i].metric, index, request.metrics[i].value * kGpmKeys[i].factor);
      }
    }
  }
  if (!have_previous || now - device.gpm_previous_time > std::chrono::milliseconds(100)) {
    std::swap(device.gpm_previous, device.gpm_current);
    device.gpm_previous_time = now;
  }
}

}  // namespace

std::optional<MemoryReading> ReadMemory(const nvml::Library& library, GpuDevice& device) {
  const nvml::Functions& api = library.api();
  DeviceHealth& health = device.health;
  if (!health.off.test(kMemoryV2) && api.device_get_memory_info_v2 != nullptr) {
    nvml::MemoryV2 memory{};
    memory.version = nvml::kMemoryV2Version;
    const Return code = api.device_get_memory_info_v2(device.handle, &memory);
    if (Handle(library, health, kMemoryV2, code, "memory")) return MemoryReading{memory.total, memory.used};
    if (health.lost || !health.off.test(kMemoryV2)) return std::nullopt;
  }
  if (health.off.test(kMemory) || api.device_get_memory_info == nullptr) return std::nullopt;
  nvml::Memory memory{};
  if (Handle(library, health, kMemory, api.device_get_memory_info(device.handle, &memory), "memory")) {
    return MemoryReading{memory.total, memory.used};
  }
  return std::nullopt;
}

DeviceValues SampleDevice(const nvml::Library& library, GpuDevice& device, MetricBatch& out) {
  const nvml::Functions& api = library.api();
  DeviceHealth& health = device.health;
  const auto handled = [&](Family family, Return code, std::string_view what) {
    return Handle(library, health, family, code, what);
  };
  const std::string index = fmt::format("{}", device.key_index);
  const auto add = [&](const MetricDescriptor& metric, double value) { out.Add(metric, index, value); };
  DeviceValues values;

  if (Ask(health, kUtilization, api.device_get_utilization_rates)) {
    nvml::Utilization utilization{};
    if (handled(kUtilization, api.device_get_utilization_rates(device.handle, &utilization), "utilization")) {
      values.gpu = utilization.gpu;
      values.memory = utilization.memory;
    }
  }
  if (!health.lost) {
    if (auto memory = ReadMemory(library, device); memory && memory->total > 0) {
      values.memory_total = memory->total;
      values.memory_used = memory->used;
    }
  }
  if (Ask(health, kTemperature, api.device_get_temperature)) {
    unsigned temperature = 0;
    if (handled(kTemperature, api.device_get_temperature(device.handle, nvml::kTemperatureGpu, &temperature),
                "temperature")) {
      values.temp = temperature;
    }
  }
  if (Ask(health, kPower, api.device_get_power_usage)) {
    unsigned milliwatts = 0;
    if (handled(kPower, api.device_get_power_usage(device.handle, &milliwatts), "power")) {
      values.power_watts = milliwatts / 1000.0;
    }
  }
  if (Ask(health, kPowerLimit, api.device_get_enforced_power_limit)) {
    unsigned milliwatts = 0;
    if (handled(kPowerLimit, api.device_get_enforced_power_limit(device.handle, &milliwatts),
                "power limit") &&
        milliwatts > 0) {
      values.power_limit_watts = milliwatts / 1000.0;
    }
  }

  if (values.gpu) add(gpu_metrics::kGpu, *values.gpu);
  if (values.memory) add(metrics::kMemory, *values.memory);
  if (values.memory_total) {
    add(gpu_metrics::kMemoryAllocated,
        100.0 * static_cast<double>(*values.memory_used) / static_cast<double>(*values.memory_total));
    add(gpu_metrics::kMemoryAllocatedBytes, static_cast<double>(*values.memory_used));
  }
  if (values.temp) add(gpu_metrics::kTemp, *values.temp);
  if (values.power_watts) add(gpu_metrics::kPowerWatts, *values.power_watts);
  if (values.power_limit_watts) add(gpu_metrics::kEnforcedPowerLimitWatts, *values.power_limit_watts);
  if (values.power_watts && values.power_limit_watts) {
    add(gpu_metrics::kPowerPercent, 100.0 * *values.power_watts / *values.power_limit_watts);
  }

  static constexpr std::array<std::tuple<Family, unsigned, const MetricDescriptor*>, 3> kClocks = {
      std::tuple{kClockSm, nvml::kClockSm, &gpu_metrics::kSmClock},
      std::tuple{kClockMem, nvml::kClockMem, &gpu_metrics::kMemoryClock},
      std::tuple{kClockGraphics, nvml::kClockGraphics, &metrics::kGraphicsClock}};
  for (const auto& [family, clock, metric] : kClocks) {
    if (!Ask(health, family, api.device_get_clock_info)) continue;
    unsigned mhz = 0;
    if (handled(family, api.device_get_clock_info(device.handle, clock, &mhz),
                metrics::MetricLeaf(*metric))) {
      add(*metric, mhz);
    }
  }
  static constexpr std::array<std::tuple<Family, unsigned, const MetricDescriptor*>, 2> kEcc = {
      std::tuple{kEccCorrected, nvml::kMemoryErrorCorrected, &metrics::kCorrectedMemoryErrors},
      std::tuple{kEccUncorrected, nvml::kMemoryErrorUncorrected, &metrics::kUnCorrectedMemoryErrors}};
  for (const auto& [family, type, metric] : kEcc) {
    if (!Ask(health, family, api.device_get_memory_error_counter)) continue;
    unsigned long long count = 0;
    // Volatile (since the driver loaded) device memory errors, as W&B reads them.
    if (handled(family,
                api.device_get_memory_error_counter(device.handle, type, nvml::kVolatileEcc,
                                                    nvml::kMemoryLocationDevice, &count),
                metrics::MetricLeaf(*metric))) {
      add(*metric, static_cast<double>(count));
    }
  }
  if (Ask(health, kEncoder, api.device_get_encoder_utilization)) {
    unsigned utilization = 0, period = 0;
    if (handled(kEncoder, api.device_get_encoder_utilization(device.handle, &utilization, &period),
                "encoder")) {
      add(metrics::kEncoderUtilization, utilization);
    }
  }
  if (api.device_get_fan_speed_v2 != nullptr || api.device_get_fan_speed != nullptr) {
    if (!health.off.test(kFan) && !health.lost) {
      unsigned percent = 0;
      const Return code = api.device_get_fan_speed_v2 != nullptr
                              ? api.device_get_fan_speed_v2(device.handle, 0, &percent)
                              : api.device_get_fan_speed(device.handle, &percent);
      if (handled(kFan, code, "fan")) add(gpu_metrics::kFanSpeed, percent);
    }
  }
  if (Ask(health, kClockReasons, api.device_get_clocks_event_reasons)) {
    unsigned long long reasons = 0;
    if (handled(kClockReasons, api.device_get_clocks_event_reasons(device.handle, &reasons),
                "clock event reasons")) {
      add(metrics::kClocksEventReasons, static_cast<double>(reasons));
    }
  }
  if (Ask(health, kEnergy, api.device_get_total_energy_consumption)) {
    unsigned long long millijoules = 0;
    if (handled(kEnergy, api.device_get_total_energy_consumption(device.handle, &millijoules), "energy")) {
      if (!device.energy_start_mj || millijoules < *device.energy_start_mj)
        device.energy_start_mj = millijoules;
      add(gpu_metrics::kEnergyJoules, static_cast<double>(millijoules - *device.energy_start_mj) / 1000.0);
    }
  }
  SampleGpm(library, device, index, out);
  return values;
}

}  // namespace runmon::nvidia
