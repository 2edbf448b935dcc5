// The trn.* keys of one document (trainium_emit.hpp). Per-run values are summed over the run's runtimes
// first, core by core, and checked once summed: two runtimes sharing a core must not make it busier than
// 100 %. Cores come out in index order, whatever order the runtimes listed them in.
#include "collectors/trainium/trainium_emit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "collectors/trainium/trainium_metrics.hpp"

namespace runmon::trainium {
namespace {

namespace keys = trainium_metrics;

bool IsPercent(double value) {
  return value >= 0 && value <= 100;
}
bool IsCount(double value) {
  return value >= 0 && std::floor(value) == value && value < 0x1p53;
}

void Accumulate(std::optional<double>* total, const std::optional<double>& value) {
  if (value) *total = total->value_or(0) + *value;
}

void AddIf(MetricBatch& out, const MetricDescriptor& descriptor, const std::optional<double>& value,
           bool (*possible)(double), std::string_view placeholder = {}) {
  if (!value || !possible(*value)) return;
  out.Add(descriptor, placeholder, *value);
}

// Bytes no more than `limit` (when there is one).
void AddBytes(MetricBatch& out, const MetricDescriptor& descriptor, const std::optional<double>& value,
              const std::optional<double>& limit, std::string_view placeholder = {}) {
  if (!value || !IsCount(*value) || (limit && *value > *limit)) return;
  out.Add(descriptor, placeholder, *value);
}

struct CoreTotals {
  std::optional<double> utilization;
  std::optional<double> constants, model_code, model_shared_scratchpad, runtime_memory, tensors;
};

struct RunTotals {
  std::map<int, CoreTotals> cores;
  std::optional<double> host_bytes, device_bytes;
  std::optional<double> host_application_memory, host_constants, host_dma_buffers, host_tensors;
  std::optional<double> vcpu_user, vcpu_system;
  bool any_runtime = false;
};

RunTotals SumRunRuntimes(const NeuronDocument& document, const std::function<bool(long pid)>& in_run) {
  RunTotals totals;
  for (const RuntimeReading& runtime : document.runtimes) {
    if (runtime.pid <= 0 || !in_run(runtime.pid)) continue;
    totals.any_runtime = true;
    for (const CoreReading& reading : runtime.cores) {
      CoreTotals& core = totals.cores[reading.core];
      Accumulate(&core.utilization, reading.utilization);
      Accumulate(&core.constants, reading.memory.constants);
      Accumulate(&core.model_code, reading.memory.model_code);
      Accumulate(&core.model_shared_scratchpad, reading.memory.model_shared_scratchpad);
      Accumulate(&core.runtime_memory, reading.memory.runtime_memory);
      Accumulate(&core.tensors, reading.memory.tensors);
    }
    Accumulate(&totals.host_bytes, runtime.host_bytes);
    Accumulate(&totals.device_bytes, runtime.device_bytes);
    Accumulate(&totals.host_application_memory, runtime.host_breakdown.application_memory);
    Accumulate(&totals.host_constants, runtime.host_breakdown.constants);
    Accumulate(&totals.host_dma_buffers, runtime.host_breakdown.dma_buffers);
    Accumulate(&totals.host_tensors, runtime.host_breakdown.tensors);
    Accumulate(&totals.vcpu_user, runtime.vcpu_user);
    Accumulate(&totals.vcpu_system, runtime.vcpu_system);
  }
  return totals;
}

// What all of the instance's devices hold, and one device, when the document says.
struct DeviceMemoryLimits {
  std::optional<double> all_devices, one_device;
};

DeviceMemoryLimits DeviceLimits(const NeuronDocument& document) {
  DeviceMemoryLimits limits;
  if (!document.hardware || !document.hardware->device_memory_bytes) return limits;
  limits.one_device = *document.hardware->device_memory_bytes;
  if (document.hardware->device_count && *document.hardware->device_count >= 1) {
    limits.all_devices = *limits.one_device * *document.hardware->device_count;
  }
  return limits;
}

void EmitRun(const NeuronDocument& document, const RunTotals& run, const EmitLimits& limits,
             MetricBatch& out) {
  const DeviceMemoryLimits device = DeviceLimits(document);
  std::string core_index;
  for (const auto& [core, totals] : run.cores) {
    core_index = std::to_string(core);
    AddIf(out, keys::kNeuronCoreUtilization, totals.utilization, IsPercent, core_index);
  }
  AddBytes(out, keys::kHostTotalMemoryUsage, run.host_bytes, limits.host_memory_bytes);
  AddBytes(out, keys::kNeuronDeviceTotalMemoryUsage, run.device_bytes, device.all_devices);
  AddBytes(out, keys::kHostMemoryApplicationMemory, run.host_application_memory, limits.host_memory_bytes);
  AddBytes(out, keys::kHostMemoryConstants, run.host_constants, limits.host_memory_bytes);
  AddBytes(out, keys::kHostMemoryDmaBuffers, run.host_dma_buffers, limits.host_memory_bytes);
  AddBytes(out, keys::kHostMemoryTensors, run.host_tensors, limits.host_memory_bytes);
  for (const auto& [core, totals] : run.cores) {
    core_index = std::to_string(core);
    AddBytes(out, keys::kCoreMemoryConstants, totals.constants, device.one_device, core_index);
    AddBytes(out, keys::kCoreMemoryModelCode, totals.model_code, device.one_device, core_index);
    AddBytes(out, keys::kCoreMemoryModelSharedScratchpad, totals.model_shared_scratchpad, device.one_device,
             core_index);
    AddBytes(out, keys::kCoreMemoryRuntimeMemory, totals.runtime_memory, device.one_device, core_index);
    AddBytes(out, keys::kCoreMemoryTensors, totals.tensors, device.one_device, core_index);
  }
  AddIf(out, keys::kRuntimeVcpuUser, run.vcpu_user, IsPercent);
  AddIf(out, keys::kRuntimeVcpuSystem, run.vcpu_system, IsPercent);
}

void EmitSystem(const SystemReading& system, const EmitLimits& limits, MetricBatch& out) {
  const VcpuUsage& vcpu = system.vcpu;
  AddIf(out, keys::kSystemVcpuUser, vcpu.user, IsPercent);
  AddIf(out, keys::kSystemVcpuNice, vcpu.nice, IsPercent);
  AddIf(out, keys::kSystemVcpuSystem, vcpu.system, IsPercent);
  AddIf(out, keys::kSystemVcpuIdle, vcpu.idle, IsPercent);
  AddIf(out, keys::kSystemVcpuIoWait, vcpu.io_wait, IsPercent);
  AddIf(out, keys::kSystemVcpuIrq, vcpu.irq, IsPercent);
  AddIf(out, keys::kSystemVcpuSoftIrq, vcpu.soft_irq, IsPercent);
  AddIf(out, keys::kSystemContextSwitches, system.context_switches, IsCount);
  // The instance's RAM as neuron-monitor sees it, unless runmon knows better.
  std::optional<double> memory_limit = limits.host_memory_bytes;
  if (system.memory_total_bytes && IsCount(*system.memory_total_bytes) &&
      (!memory_limit || *system.memory_total_bytes <= *memory_limit)) {
    out.Add(keys::kSystemMemoryTotalBytes, *system.memory_total_bytes);
    memory_limit = *system.memory_total_bytes;
  }
  AddBytes(out, keys::kSystemMemoryUsedBytes, system.memory_used_bytes, memory_limit);
  AddBytes(out, keys::kSystemSwapTotalBytes, system.swap_total_bytes, std::nullopt);
  const std::optional<double> swap_limit =
      system.swap_total_bytes && IsCount(*system.swap_total_bytes) ? system.swap_total_bytes : std::nullopt;
  AddBytes(out, keys::kSystemSwapUsedBytes, system.swap_used_bytes, swap_limit);
  std::string device_index;
  for (const DeviceCounters& device : system.devices) {
    device_index = std::to_string(device.device);
    AddIf(out, keys::kDeviceMemEccCorrected, device.mem_ecc_corrected, IsCount, device_index);
    AddIf(out, keys::kDeviceMemEccUncorrected, device.mem_ecc_uncorrected, IsCount, device_index);
    AddIf(out, keys::kDeviceSramEccCorrected, device.sram_ecc_corrected, IsCount, device_index);
    AddIf(out, keys::kDeviceSramEccUncorrected, device.sram_ecc_uncorrected, IsCount, device_index);
  }
}

}  // namespace

void EmitNeuronDocument(const NeuronDocument& document, const std::function<bool(long pid)>& in_run,
                        const EmitLimits& limits, MetricBatch& out) {
  const RunTotals run = SumRunRuntimes(document, in_run);
  if (run.any_runtime) EmitRun(document, run, limits, out);
  EmitSystem(document.system, limits, out);
}

}  // namespace runmon::trainium
