// The GPU metrics every GPU family emits under the same keys (NVIDIA through NVML, AMD through amdgpu's
// sysfs): the keys W&B writes for both, so a chart, the exporter and a reader treat a GPU alike whoever
// made it. Each family's own keys are in its folder (nvidia/nvidia_metrics.hpp, amd/amd_metrics.hpp).
// gpu.process.{i}.* come first: gpu.{i}.* would match those keys too.
// The descriptors: each key is spelled here and nowhere else (core/metric_descriptor.hpp).
#pragma once

#include "core/metric_descriptor.hpp"

namespace runmon::gpu_metrics {

inline constexpr MetricDescriptor kProcessGpu{
    .pattern = "gpu.process.{i}.gpu",
    .title = "GPU utilization (run)",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "gpu",
    .description =
        "The monitored process tree's own use of GPU i since the last sample, at most 100. NVIDIA: "
        "NVML's per-process SM utilization samples, summed over the tree (absent under MIG). AMD: the "
        "tree's DRM clients' gfx and compute engine busy time over the interval.",
    .prometheus_name = "runmon_gpu_process_utilization_ratio",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kProcessMemoryAllocatedBytes{
    .pattern = "gpu.process.{i}.memoryAllocatedBytes",
    .title = "GPU memory (run)",
    .unit = "bytes",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "gpu",
    .description =
        "GPU memory used by the monitored process tree's own processes on GPU i (AMD: the VRAM of "
        "their DRM clients, else KFD's per-process VRAM).",
    .prometheus_name = "runmon_gpu_process_memory_used_bytes",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kProcessMemoryAllocated{
    .pattern = "gpu.process.{i}.memoryAllocated",
    .title = "GPU memory (run)",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "gpu",
    .description = "The tree's GPU memory as a share of GPU i's total memory.",
    .prometheus_name = "runmon_gpu_process_memory_used_ratio",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kProcessTemp{
    .pattern = "gpu.process.{i}.temp",
    .title = "GPU temperature (run)",
    .unit = "°C",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "gpu",
    .description = "GPU i's temperature (device-wide), present while the monitored tree uses GPU i.",
    .prometheus_name = "runmon_gpu_process_temperature_celsius",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kProcessPowerWatts{
    .pattern = "gpu.process.{i}.powerWatts",
    .title = "GPU power (run)",
    .unit = "W",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "gpu",
    .description = "GPU i's power (device-wide), present while the monitored tree uses GPU i.",
    .prometheus_name = "runmon_gpu_process_power_watts",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kProcessEnforcedPowerLimitWatts{
    .pattern = "gpu.process.{i}.enforcedPowerLimitWatts",
    .title = "GPU power limit (run)",
    .unit = "W",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "gpu",
    .description = "GPU i's power limit (device-wide), present while the monitored tree uses GPU i.",
    .prometheus_name = "runmon_gpu_process_power_limit_watts",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kProcessPowerPercent{
    .pattern = "gpu.process.{i}.powerPercent",
    .title = "GPU power (run)",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "gpu",
    .description =
        "GPU i's power as a share of its limit (device-wide), present while the monitored tree "
        "uses GPU i.",
    .prometheus_name = "runmon_gpu_process_power_ratio",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kGpu{
    .pattern = "gpu.{i}.gpu",
    .title = "GPU utilization",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "gpu",
    .description =
        "How busy GPU i is. NVIDIA: the share of the last sample period (1/6 s to 1 s, by product) in "
        "which a kernel ran. AMD: gpu_busy_percent, the power firmware's load over the engines.",
    .prometheus_name = "runmon_gpu_utilization_ratio",
    .prometheus_label = "gpu",
    .sidebar_rank = 1,
    .series_label = "GPU"};
inline constexpr MetricDescriptor kMemoryAllocated{
    .pattern = "gpu.{i}.memoryAllocated",
    .title = "GPU memory used",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "gpu",
    .description =
        "Memory in use on GPU i as a share of its total. NVIDIA: memory info v2 when the driver has "
        "it (without the driver's reservation, as nvidia-smi shows it). AMD: VRAM used of VRAM total.",
    .prometheus_name = "runmon_gpu_memory_used_ratio",
    .prometheus_label = "gpu",
    .sidebar_rank = 3,
    .series_label = "GPU"};
inline constexpr MetricDescriptor kMemoryAllocatedBytes{
    .pattern = "gpu.{i}.memoryAllocatedBytes",
    .title = "GPU memory used",
    .unit = "bytes",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "gpu",
    .description = "Memory in use on GPU i (AMD: VRAM; an APU's GTT is gpu.{i}.gttMemoryAllocatedBytes).",
    .prometheus_name = "runmon_gpu_memory_used_bytes",
    .prometheus_label = "gpu",
    .sidebar_rank = 2,
    .series_label = "GPU"};
inline constexpr MetricDescriptor kTemp{
    .pattern = "gpu.{i}.temp",
    .title = "GPU temperature",
    .unit = "°C",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "gpu",
    .description =
        "GPU i's temperature. NVIDIA: the die. AMD: the memory sensor as W&B reads it (hwmon "
        "`mem`), else `junction`, else `edge`.",
    .prometheus_name = "runmon_gpu_temperature_celsius",
    .prometheus_label = "gpu",
    .sidebar_rank = 13,
    .series_label = "GPU"};
inline constexpr MetricDescriptor kPowerWatts{
    .pattern = "gpu.{i}.powerWatts",
    .title = "GPU power",
    .unit = "W",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "gpu",
    .description =
        "Power drawn by GPU i. NVIDIA: the board with its circuitry (a 1 s average on Ampere and newer "
        "except GA100). AMD: the socket's average power (power1_average), else its current power "
        "(power1_input, Linux 6.6+); an APU's includes its CPU cores.",
    .prometheus_name = "runmon_gpu_power_watts",
    .prometheus_label = "gpu",
    .sidebar_rank = 14,
    .series_label = "GPU"};
inline constexpr MetricDescriptor kEnforcedPowerLimitWatts{
    .pattern = "gpu.{i}.enforcedPowerLimitWatts",
    .title = "GPU power limit",
    .unit = "W",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "gpu",
    .description = "GPU i's effective power limit (NVIDIA: after all limiters; AMD: power1_cap).",
    .prometheus_name = "runmon_gpu_power_limit_watts",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kPowerPercent{.pattern = "gpu.{i}.powerPercent",
                                                .title = "GPU power",
                                                .unit = "%",
                                                .kind = MetricKind::kGauge,
                                                .section = MetricSection::kGpu,
                                                .source = "gpu",
                                                .description = "powerWatts / enforcedPowerLimitWatts x 100.",
                                                .prometheus_name = "runmon_gpu_power_ratio",
                                                .prometheus_label = "gpu",
                                                .series_label = "GPU"};
inline constexpr MetricDescriptor kSmClock{
    .pattern = "gpu.{i}.smClock",
    .title = "SM clock",
    .unit = "MHz",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "gpu",
    .description = "GPU i's current SM clock (AMD: the current level of pp_dpm_sclk, the gfx/compute clock).",
    .prometheus_name = "runmon_gpu_sm_clock_hertz",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kMemoryClock{
    .pattern = "gpu.{i}.memoryClock",
    .title = "Memory clock",
    .unit = "MHz",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "gpu",
    .description = "GPU i's current memory clock (AMD: the current level of pp_dpm_mclk).",
    .prometheus_name = "runmon_gpu_memory_clock_hertz",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kFanSpeed{
    .pattern = "gpu.{i}.fanSpeed",
    .title = "Fan speed",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "gpu",
    .description =
        "Fan speed as a share of its maximum. NVIDIA: the intended speed of fan 0, can exceed 100. "
        "AMD: pwm1 of pwm1_max, else fan1_input of fan1_max. Absent on passively cooled boards.",
    .prometheus_name = "runmon_gpu_fan_speed_ratio",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kEnergyJoules{
    .pattern = "gpu.{i}.energyJoules",
    .title = "GPU energy",
    .unit = "J",
    .kind = MetricKind::kSinceStart,
    .section = MetricSection::kGpu,
    .source = "gpu",
    .description =
        "Energy GPU i consumed since the first sample (AMD: hwmon energy1_input, where it exists).",
    .prometheus_name = "runmon_gpu_energy_joules_total",
    .prometheus_type = PrometheusType::kCounter,
    .prometheus_label = "gpu",
    .series_label = "GPU"};

}  // namespace runmon::gpu_metrics
