// NVIDIA GPUs' own metrics, read through NVML (nvidia_collector.cpp emits them); the keys every GPU family
// shares are in gpu/gpu_metrics.hpp. gpu.process.{i}.* come first: gpu.{i}.* would match those keys too.
// The family's metric descriptors: each key is spelled here and nowhere else (core/metric_descriptor.hpp).
#pragma once

#include <string_view>

#include "core/metric_descriptor.hpp"

namespace runmon::nvidia_metrics {

inline constexpr MetricDescriptor kProcessMemory{
    .pattern = "gpu.process.{i}.memory",
    .title = "GPU memory access (run)",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "nvidia",
    .description = "GPU i's memory access share (device-wide), present while the monitored tree uses GPU i.",
    .prometheus_name = "runmon_gpu_process_memory_access_ratio",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kMemory{
    .pattern = "gpu.{i}.memory",
    .title = "GPU memory access",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "nvidia",
    .description =
        "Share of the last sample period in which GPU i's memory was read or written (not memory "
        "in use).",
    .prometheus_name = "runmon_gpu_memory_access_ratio",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kGraphicsClock{.pattern = "gpu.{i}.graphicsClock",
                                                 .title = "Graphics clock",
                                                 .unit = "MHz",
                                                 .kind = MetricKind::kGauge,
                                                 .section = MetricSection::kGpu,
                                                 .source = "nvidia",
                                                 .description = "GPU i's current graphics clock.",
                                                 .prometheus_name = "runmon_gpu_graphics_clock_hertz",
                                                 .prometheus_label = "gpu",
                                                 .series_label = "GPU"};
inline constexpr MetricDescriptor kCorrectedMemoryErrors{
    .pattern = "gpu.{i}.correctedMemoryErrors",
    .title = "Corrected ECC errors",
    .unit = "count",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "nvidia",
    .description = "Corrected (single-bit) device memory errors since the driver loaded (volatile).",
    .prometheus_name = "runmon_gpu_corrected_memory_errors_total",
    .prometheus_type = PrometheusType::kCounter,
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kUnCorrectedMemoryErrors{
    .pattern = "gpu.{i}.unCorrectedMemoryErrors",
    .title = "Uncorrected ECC errors",
    .unit = "count",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "nvidia",
    .description =
        "Uncorrected (double-bit) device memory errors since the driver loaded (volatile). W&B "
        "spells it uncorrectedMemoryErrors.",
    .prometheus_name = "runmon_gpu_uncorrected_memory_errors_total",
    .prometheus_type = PrometheusType::kCounter,
    .prometheus_label = "gpu",
    .series_label = "GPU",
    .also_accepted = "gpu.{i}.uncorrectedMemoryErrors"};
inline constexpr MetricDescriptor kEncoderUtilization{
    .pattern = "gpu.{i}.encoderUtilization",
    .title = "Encoder utilization",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "nvidia",
    .description = "Video encoder utilization of GPU i.",
    .prometheus_name = "runmon_gpu_encoder_utilization_ratio",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kClocksEventReasons{
    .pattern = "gpu.{i}.clocksEventReasons",
    .title = "Clock event reasons",
    .unit = "bitmask",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "nvidia",
    .description =
        "Why GPU i's clocks are held back: NVML's bits (1 idle, 2 application clocks, 4 software "
        "power cap, 8 hardware slowdown, 0x10 sync boost, 0x20 software thermal, 0x40 hardware "
        "thermal, 0x80 power brake, 0x100 display clock).",
    .prometheus_name = "runmon_gpu_clocks_event_reasons",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kSmActive{
    .pattern = "gpu.{i}.smActive",
    .title = "SM active",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "nvidia",
    .description = "GPM (Hopper and newer): share of time SMs were busy, between the last two samples.",
    .prometheus_name = "runmon_gpu_sm_active_ratio",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kSmOccupancy{
    .pattern = "gpu.{i}.smOccupancy",
    .title = "SM occupancy",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "nvidia",
    .description = "GPM: warps resident on SMs as a share of the maximum.",
    .prometheus_name = "runmon_gpu_sm_occupancy_ratio",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kPipeTensorActive{
    .pattern = "gpu.{i}.pipeTensorActive",
    .title = "Tensor pipes active",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "nvidia",
    .description = "GPM: share of time any tensor pipe was busy.",
    .prometheus_name = "runmon_gpu_pipe_tensor_active_ratio",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kPipeTensorHmmaActive{
    .pattern = "gpu.{i}.pipeTensorHmmaActive",
    .title = "Tensor HMMA active",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "nvidia",
    .description = "GPM: share of time the HMMA tensor pipe was busy.",
    .prometheus_name = "runmon_gpu_pipe_tensor_hmma_active_ratio",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kDramActive{
    .pattern = "gpu.{i}.dramActive",
    .title = "DRAM active",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "nvidia",
    .description = "GPM: memory bandwidth used as a share of the maximum.",
    .prometheus_name = "runmon_gpu_dram_active_ratio",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kPipeFp64Active{
    .pattern = "gpu.{i}.pipeFp64Active",
    .title = "FP64 pipes active",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "nvidia",
    .description = "GPM: share of time the FP64 pipes were busy.",
    .prometheus_name = "runmon_gpu_pipe_fp64_active_ratio",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kPipeFp32Active{
    .pattern = "gpu.{i}.pipeFp32Active",
    .title = "FP32 pipes active",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "nvidia",
    .description = "GPM: share of time the FP32 pipes were busy.",
    .prometheus_name = "runmon_gpu_pipe_fp32_active_ratio",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kPipeFp16Active{
    .pattern = "gpu.{i}.pipeFp16Active",
    .title = "FP16 pipes active",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kGpu,
    .source = "nvidia",
    .description = "GPM: share of time the FP16 pipes were busy.",
    .prometheus_name = "runmon_gpu_pipe_fp16_active_ratio",
    .prometheus_label = "gpu",
    .series_label = "GPU"};
inline constexpr MetricDescriptor kPcieTxBytes{
    .pattern = "gpu.{i}.pcieTxBytes",
    .title = "PCIe sent",
    .unit = "bytes/s",
    .kind = MetricKind::kRate,
    .section = MetricSection::kGpu,
    .source = "nvidia",
    .description = "GPM: PCIe bytes sent per second (NVML gives MiB/s; runmon reports bytes/s).",
    .prometheus_name = "runmon_gpu_pcie_sent_bytes_per_second",
    .prometheus_label = "gpu",
    .merge = {"gpu.{i}.pcie", "PCIe traffic", "sent"},
    .series_label = "GPU"};
inline constexpr MetricDescriptor kPcieRxBytes{.pattern = "gpu.{i}.pcieRxBytes",
                                               .title = "PCIe received",
                                               .unit = "bytes/s",
                                               .kind = MetricKind::kRate,
                                               .section = MetricSection::kGpu,
                                               .source = "nvidia",
                                               .description = "GPM: PCIe bytes received per second.",
                                               .prometheus_name = "runmon_gpu_pcie_received_bytes_per_second",
                                               .prometheus_label = "gpu",
                                               .merge = {"gpu.{i}.pcie", "PCIe traffic", "received"},
                                               .series_label = "GPU"};
inline constexpr MetricDescriptor kNvlinkTxBytes{
    .pattern = "gpu.{i}.nvlinkTxBytes",
    .title = "NVLink sent",
    .unit = "bytes/s",
    .kind = MetricKind::kRate,
    .section = MetricSection::kGpu,
    .source = "nvidia",
    .description = "GPM: NVLink bytes sent per second over all links.",
    .prometheus_name = "runmon_gpu_nvlink_sent_bytes_per_second",
    .prometheus_label = "gpu",
    .merge = {"gpu.{i}.nvlink", "NVLink traffic", "sent"},
    .series_label = "GPU"};
inline constexpr MetricDescriptor kNvlinkRxBytes{
    .pattern = "gpu.{i}.nvlinkRxBytes",
    .title = "NVLink received",
    .unit = "bytes/s",
    .kind = MetricKind::kRate,
    .section = MetricSection::kGpu,
    .source = "nvidia",
    .description = "GPM: NVLink bytes received per second over all links.",
    .prometheus_name = "runmon_gpu_nvlink_received_bytes_per_second",
    .prometheus_label = "gpu",
    .merge = {"gpu.{i}.nvlink", "NVLink traffic", "received"},
    .series_label = "GPU"};

// The key's last part ("smClock"): what an NVML failure for that metric is called in messages.
constexpr std::string_view MetricLeaf(const MetricDescriptor& metric) {
  return metric.pattern.substr(metric.pattern.rfind('.') + 1);
}

}  // namespace runmon::nvidia_metrics
