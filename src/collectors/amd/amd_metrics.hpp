// AMD GPUs' own metrics, read from amdgpu's sysfs and hwmon files (amd_collector.cpp emits them), beside the
// keys every GPU family shares (gpu/gpu_metrics.hpp). W&B writes memoryReadWriteActivity and
// memoryOverDrive from rocm-smi; the per-sensor temperatures, fan RPM and GTT memory are runmon's.
// The family's metric descriptors: each key is spelled here and nowhere else (core/metric_descriptor.hpp).
#pragma once

#include "core/metric_descriptor.hpp"

namespace runmon::amd_metrics {

inline constexpr MetricDescriptor kMemoryReadWriteActivity{
    .pattern = "gpu.{i}.memoryReadWriteActivity",
    .title = "GPU memory activity",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "amd",
    .description =
        "How busy AMD GPU i's memory controller is (mem_busy_percent; rocm-smi's `GPU memory use (%)` "
        "before ROCm 6.1.2), not how full its memory is.",
    .prometheus_name = "runmon_gpu_memory_activity_ratio",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kGttMemoryAllocatedBytes{
    .pattern = "gpu.{i}.gttMemoryAllocatedBytes",
    .title = "GPU GTT memory used",
    .unit = "bytes",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "amd",
    .description =
        "System memory mapped for AMD GPU i (GTT, mem_info_gtt_used): where most of an APU's GPU "
        "memory lives.",
    .prometheus_name = "runmon_gpu_gtt_memory_used_bytes",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kGttMemoryAllocated{
    .pattern = "gpu.{i}.gttMemoryAllocated",
    .title = "GPU GTT memory used",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "amd",
    .description = "GTT in use as a share of the GTT size (mem_info_gtt_used / mem_info_gtt_total).",
    .prometheus_name = "runmon_gpu_gtt_memory_used_ratio",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kTempEdge{
    .pattern = "gpu.{i}.tempEdge",
    .title = "GPU edge temperature",
    .unit = "°C",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "amd",
    .description = "AMD GPU i's die edge sensor (hwmon label `edge`).",
    .prometheus_name = "runmon_gpu_edge_temperature_celsius",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kTempJunction{
    .pattern = "gpu.{i}.tempJunction",
    .title = "GPU junction temperature",
    .unit = "°C",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "amd",
    .description = "AMD GPU i's hottest point (hwmon label `junction`; Vega and newer discrete GPUs).",
    .prometheus_name = "runmon_gpu_junction_temperature_celsius",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kTempMemory{
    .pattern = "gpu.{i}.tempMemory",
    .title = "GPU memory temperature",
    .unit = "°C",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "amd",
    .description = "AMD GPU i's memory (HBM or VRAM) sensor (hwmon label `mem`).",
    .prometheus_name = "runmon_gpu_memory_temperature_celsius",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kFanRpm{
    .pattern = "gpu.{i}.fanRpm",
    .title = "Fan speed (RPM)",
    .unit = "RPM",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "amd",
    .description = "AMD GPU i's fan speed (hwmon fan1_input). Absent on passively cooled boards.",
    .prometheus_name = "runmon_gpu_fan_rpm",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kMemoryOverDrive{
    .pattern = "gpu.{i}.memoryOverDrive",
    .title = "GPU memory overdrive",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "amd",
    .description =
        "AMD GPU i's memory clock overdrive setting (pp_mclk_od; rocm-smi's `GPU Memory OverDrive value "
        "(%)`).",
    .prometheus_name = "runmon_gpu_memory_overdrive_ratio",
    .prometheus_label = "gpu",
    .series_label = "GPU"};

}  // namespace runmon::amd_metrics
