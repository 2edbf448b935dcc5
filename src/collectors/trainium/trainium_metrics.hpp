// AWS Trainium / Inferentia metrics, read from neuron-monitor's documents (trainium_emit.cpp emits them).
// The per-run keys are W&B's (metrics.md B §8), with the host memory breakdown under the user's document's
// trn.host_total_memory_usage.* (W&B's code writes trn.host_memory_usage.*; readers accept both). The
// runtimes' vCPU share, the instance's vCPU and memory figures and the devices' ECC counters are runmon's,
// named after neuron-monitor's own fields under trn.system.* and trn.device.{device}.*.
// The family's metric descriptors: each key is spelled here and nowhere else (core/metric_descriptor.hpp).
#pragma once

#include "core/metric_descriptor.hpp"

namespace runmon::trainium_metrics {

inline constexpr MetricDescriptor kNeuronCoreUtilization{
    .pattern = "trn.{core}.neuroncore_utilization",
    .title = "Neuron Core",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "How busy NeuronCore `core` was over neuron-monitor's last period (neuroncore_counters), for the "
        "run's Neuron runtimes.",
    .prometheus_name = "runmon_trn_neuroncore_utilization_ratio",
    .prometheus_label = "core",
    .series_label = "Core"};
inline constexpr MetricDescriptor kHostTotalMemoryUsage{
    .pattern = "trn.host_total_memory_usage",
    .title = "Trainium Host Memory",
    .unit = "bytes",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "Host memory the run's Neuron runtimes use (memory_used.neuron_runtime_used_bytes.host, summed over "
        "the run's runtimes).",
    .prometheus_name = "runmon_trn_host_memory_used_bytes"};
inline constexpr MetricDescriptor kNeuronDeviceTotalMemoryUsage{
    .pattern = "trn.neuron_device_total_memory_usage",
    .title = "Neuron Device Memory",
    .unit = "bytes",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "Neuron device memory the run's Neuron runtimes use (neuron_runtime_used_bytes.neuron_device, summed "
        "over the run's runtimes).",
    .prometheus_name = "runmon_trn_device_memory_used_bytes"};
inline constexpr MetricDescriptor kHostMemoryApplicationMemory{
    .pattern = "trn.host_total_memory_usage.application_memory",
    .title = "Trainium Host App Memory",
    .unit = "bytes",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "The run's Neuron runtimes' host memory held as application memory "
        "(usage_breakdown.host.application_memory, summed). W&B writes "
        "trn.host_memory_usage.application_memory.",
    .prometheus_name = "runmon_trn_host_memory_application_memory_bytes",
    .also_accepted = "trn.host_memory_usage.application_memory"};
inline constexpr MetricDescriptor kHostMemoryConstants{
    .pattern = "trn.host_total_memory_usage.constants",
    .title = "Trainium Host Constants",
    .unit = "bytes",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "The run's Neuron runtimes' host memory held as constants (usage_breakdown.host.constants, summed). "
        "W&B writes trn.host_memory_usage.constants.",
    .prometheus_name = "runmon_trn_host_memory_constants_bytes",
    .also_accepted = "trn.host_memory_usage.constants"};
inline constexpr MetricDescriptor kHostMemoryDmaBuffers{
    .pattern = "trn.host_total_memory_usage.dma_buffers",
    .title = "Trainium Host DMA",
    .unit = "bytes",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "The run's Neuron runtimes' host memory held as DMA buffers (usage_breakdown.host.dma_buffers, "
        "summed). W&B writes trn.host_memory_usage.dma_buffers.",
    .prometheus_name = "runmon_trn_host_memory_dma_buffers_bytes",
    .also_accepted = "trn.host_memory_usage.dma_buffers"};
inline constexpr MetricDescriptor kHostMemoryTensors{
    .pattern = "trn.host_total_memory_usage.tensors",
    .title = "Trainium Host Tensors",
    .unit = "bytes",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "The run's Neuron runtimes' host memory held as tensors (usage_breakdown.host.tensors, summed). W&B "
        "writes trn.host_memory_usage.tensors.",
    .prometheus_name = "runmon_trn_host_memory_tensors_bytes",
    .also_accepted = "trn.host_memory_usage.tensors"};
inline constexpr MetricDescriptor kCoreMemoryConstants{
    .pattern = "trn.{core}.neuroncore_memory_usage.constants",
    .title = "Neuron Constants",
    .unit = "bytes",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "Device memory NeuronCore `core` holds as constants for the run's runtimes "
        "(usage_breakdown.neuroncore_memory_usage.<core>.constants).",
    .prometheus_name = "runmon_trn_neuroncore_memory_constants_bytes",
    .prometheus_label = "core",
    .series_label = "Core"};
inline constexpr MetricDescriptor kCoreMemoryModelCode{
    .pattern = "trn.{core}.neuroncore_memory_usage.model_code",
    .title = "Neuron Model Code",
    .unit = "bytes",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "Device memory NeuronCore `core` holds as model code for the run's runtimes "
        "(usage_breakdown.neuroncore_memory_usage.<core>.model_code).",
    .prometheus_name = "runmon_trn_neuroncore_memory_model_code_bytes",
    .prometheus_label = "core",
    .series_label = "Core"};
inline constexpr MetricDescriptor kCoreMemoryModelSharedScratchpad{
    .pattern = "trn.{core}.neuroncore_memory_usage.model_shared_scratchpad",
    .title = "Neuron Scratchpad",
    .unit = "bytes",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "Device memory NeuronCore `core` holds as the models' shared scratchpad for the run's runtimes "
        "(usage_breakdown.neuroncore_memory_usage.<core>.model_shared_scratchpad).",
    .prometheus_name = "runmon_trn_neuroncore_memory_model_shared_scratchpad_bytes",
    .prometheus_label = "core",
    .series_label = "Core"};
inline constexpr MetricDescriptor kCoreMemoryRuntimeMemory{
    .pattern = "trn.{core}.neuroncore_memory_usage.runtime_memory",
    .title = "Neuron Runtime",
    .unit = "bytes",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "Device memory NeuronCore `core` holds as the runtime's own memory for the run's runtimes "
        "(usage_breakdown.neuroncore_memory_usage.<core>.runtime_memory).",
    .prometheus_name = "runmon_trn_neuroncore_memory_runtime_memory_bytes",
    .prometheus_label = "core",
    .series_label = "Core"};
inline constexpr MetricDescriptor kCoreMemoryTensors{
    .pattern = "trn.{core}.neuroncore_memory_usage.tensors",
    .title = "Neuron Tensors",
    .unit = "bytes",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "Device memory NeuronCore `core` holds as tensors for the run's runtimes "
        "(usage_breakdown.neuroncore_memory_usage.<core>.tensors).",
    .prometheus_name = "runmon_trn_neuroncore_memory_tensors_bytes",
    .prometheus_label = "core",
    .series_label = "Core"};
inline constexpr MetricDescriptor kRuntimeVcpuUser{
    .pattern = "trn.runtime_vcpu_usage.user",
    .title = "Neuron runtime vCPU (user)",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "Host CPU time the run's Neuron runtimes spent in user mode over the period, as a share of the "
        "host's vCPUs (neuron_runtime_vcpu_usage.vcpu_usage.user, summed).",
    .prometheus_name = "runmon_trn_runtime_vcpu_user_ratio"};
inline constexpr MetricDescriptor kRuntimeVcpuSystem{
    .pattern = "trn.runtime_vcpu_usage.system",
    .title = "Neuron runtime vCPU (system)",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "Host CPU time the run's Neuron runtimes spent in system mode over the period, as a share of the "
        "host's vCPUs (neuron_runtime_vcpu_usage.vcpu_usage.system, summed).",
    .prometheus_name = "runmon_trn_runtime_vcpu_system_ratio"};
inline constexpr MetricDescriptor kSystemVcpuUser{
    .pattern = "trn.system.vcpu_usage.user",
    .title = "Instance vCPU (user)",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "The instance's vCPUs' average time in user over neuron-monitor's period "
        "(system_data.vcpu_usage.average_usage.user).",
    .prometheus_name = "runmon_trn_system_vcpu_user_ratio"};
inline constexpr MetricDescriptor kSystemVcpuNice{
    .pattern = "trn.system.vcpu_usage.nice",
    .title = "Instance vCPU (nice)",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "The instance's vCPUs' average time in nice over neuron-monitor's period "
        "(system_data.vcpu_usage.average_usage.nice).",
    .prometheus_name = "runmon_trn_system_vcpu_nice_ratio"};
inline constexpr MetricDescriptor kSystemVcpuSystem{
    .pattern = "trn.system.vcpu_usage.system",
    .title = "Instance vCPU (system)",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "The instance's vCPUs' average time in system over neuron-monitor's period "
        "(system_data.vcpu_usage.average_usage.system).",
    .prometheus_name = "runmon_trn_system_vcpu_system_ratio"};
inline constexpr MetricDescriptor kSystemVcpuIdle{
    .pattern = "trn.system.vcpu_usage.idle",
    .title = "Instance vCPU (idle)",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "The instance's vCPUs' average time in idle over neuron-monitor's period "
        "(system_data.vcpu_usage.average_usage.idle).",
    .prometheus_name = "runmon_trn_system_vcpu_idle_ratio"};
inline constexpr MetricDescriptor kSystemVcpuIoWait{
    .pattern = "trn.system.vcpu_usage.io_wait",
    .title = "Instance vCPU (io wait)",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "The instance's vCPUs' average time in io wait over neuron-monitor's period "
        "(system_data.vcpu_usage.average_usage.io_wait).",
    .prometheus_name = "runmon_trn_system_vcpu_io_wait_ratio"};
inline constexpr MetricDescriptor kSystemVcpuIrq{
    .pattern = "trn.system.vcpu_usage.irq",
    .title = "Instance vCPU (irq)",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "The instance's vCPUs' average time in irq over neuron-monitor's period "
        "(system_data.vcpu_usage.average_usage.irq).",
    .prometheus_name = "runmon_trn_system_vcpu_irq_ratio"};
inline constexpr MetricDescriptor kSystemVcpuSoftIrq{
    .pattern = "trn.system.vcpu_usage.soft_irq",
    .title = "Instance vCPU (soft irq)",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "The instance's vCPUs' average time in soft irq over neuron-monitor's period "
        "(system_data.vcpu_usage.average_usage.soft_irq).",
    .prometheus_name = "runmon_trn_system_vcpu_soft_irq_ratio"};
inline constexpr MetricDescriptor kSystemContextSwitches{
    .pattern = "trn.system.context_switch_count",
    .title = "Instance context switches",
    .unit = "count",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "Context switches on the instance during neuron-monitor's last period "
        "(system_data.vcpu_usage.context_switch_count).",
    .prometheus_name = "runmon_trn_system_context_switches"};
inline constexpr MetricDescriptor kSystemMemoryUsedBytes{
    .pattern = "trn.system.memory_used_bytes",
    .title = "Instance memory used",
    .unit = "bytes",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "The instance's memory in use as neuron-monitor reads it "
        "(system_data.memory_info.memory_used_bytes).",
    .prometheus_name = "runmon_trn_system_memory_used_bytes"};
inline constexpr MetricDescriptor kSystemMemoryTotalBytes{
    .pattern = "trn.system.memory_total_bytes",
    .title = "Instance memory",
    .unit = "bytes",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "The instance's memory as neuron-monitor reads it (system_data.memory_info.memory_total_bytes).",
    .prometheus_name = "runmon_trn_system_memory_total_bytes"};
inline constexpr MetricDescriptor kSystemSwapUsedBytes{
    .pattern = "trn.system.swap_used_bytes",
    .title = "Instance swap used",
    .unit = "bytes",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "The instance's swap in use as neuron-monitor reads it (system_data.memory_info.swap_used_bytes).",
    .prometheus_name = "runmon_trn_system_swap_used_bytes"};
inline constexpr MetricDescriptor kSystemSwapTotalBytes{
    .pattern = "trn.system.swap_total_bytes",
    .title = "Instance swap",
    .unit = "bytes",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "The instance's swap space as neuron-monitor reads it (system_data.memory_info.swap_total_bytes).",
    .prometheus_name = "runmon_trn_system_swap_total_bytes"};
inline constexpr MetricDescriptor kDeviceMemEccCorrected{
    .pattern = "trn.device.{device}.mem_ecc_corrected",
    .title = "Neuron device memory ECC corrected",
    .unit = "count",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "Neuron device `device`'s corrected ECC errors in the device's memory, counted by the driver "
        "(system_data.neuron_hw_counters).",
    .prometheus_name = "runmon_trn_device_mem_ecc_corrected_errors_total",
    .prometheus_type = PrometheusType::kCounter,
    .prometheus_label = "device",
    .series_label = "Device"};
inline constexpr MetricDescriptor kDeviceMemEccUncorrected{
    .pattern = "trn.device.{device}.mem_ecc_uncorrected",
    .title = "Neuron device memory ECC uncorrected",
    .unit = "count",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "Neuron device `device`'s uncorrected ECC errors in the device's memory, counted by the driver "
        "(system_data.neuron_hw_counters).",
    .prometheus_name = "runmon_trn_device_mem_ecc_uncorrected_errors_total",
    .prometheus_type = PrometheusType::kCounter,
    .prometheus_label = "device",
    .series_label = "Device"};
inline constexpr MetricDescriptor kDeviceSramEccCorrected{
    .pattern = "trn.device.{device}.sram_ecc_corrected",
    .title = "Neuron device SRAM ECC corrected",
    .unit = "count",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "Neuron device `device`'s corrected ECC errors in the device's on-chip SRAM, counted by the driver "
        "(system_data.neuron_hw_counters).",
    .prometheus_name = "runmon_trn_device_sram_ecc_corrected_errors_total",
    .prometheus_type = PrometheusType::kCounter,
    .prometheus_label = "device",
    .series_label = "Device"};
inline constexpr MetricDescriptor kDeviceSramEccUncorrected{
    .pattern = "trn.device.{device}.sram_ecc_uncorrected",
    .title = "Neuron device SRAM ECC uncorrected",
    .unit = "count",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "trainium",
    .description =
        "Neuron device `device`'s uncorrected ECC errors in the device's on-chip SRAM, counted by the driver "
        "(system_data.neuron_hw_counters).",
    .prometheus_name = "runmon_trn_device_sram_ecc_uncorrected_errors_total",
    .prometheus_type = PrometheusType::kCounter,
    .prometheus_label = "device",
    .series_label = "Device"};

}  // namespace runmon::trainium_metrics
