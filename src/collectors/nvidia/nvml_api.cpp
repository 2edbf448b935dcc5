// dlopen and symbol resolution for NVML (see nvml_api.hpp).
#include "collectors/nvidia/nvml_api.hpp"

#include <dlfcn.h>

#include <initializer_list>

#include <fmt/format.h>

namespace runmon::nvml {
namespace {

// The first of `names` (newest version first) the library exports, as a function pointer of `target`'s
// type.
template <typename Function>
void Resolve(void* handle, Function& target, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* symbol = ::dlsym(handle, name)) {
      target = reinterpret_cast<Function>(symbol);
      return;
    }
  }
  target = nullptr;
}

}  // namespace

Result<std::unique_ptr<Library>> Library::Open(const std::string& path) {
  const std::string chosen = path.empty() ? "libnvidia-ml.so.1" : path;
  ::dlerror();
  void* handle = ::dlopen(chosen.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* reason = ::dlerror();
    return Error{fmt::format("cannot load {}: {}", chosen, reason != nullptr ? reason : "unknown error")};
  }
  std::unique_ptr<Library> library(new Library(handle, chosen));
  Functions& f = library->api_;
  Resolve(handle, f.init, {"nvmlInit_v2", "nvmlInit"});
  Resolve(handle, f.shutdown, {"nvmlShutdown"});
  Resolve(handle, f.error_string, {"nvmlErrorString"});
  Resolve(handle, f.system_get_driver_version, {"nvmlSystemGetDriverVersion"});
  // The _v2 asks libcuda and fails without it; the plain one falls back to what the driver supports.
  Resolve(handle, f.system_get_cuda_driver_version, {"nvmlSystemGetCudaDriverVersion"});
  Resolve(handle, f.device_get_count, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  Resolve(handle, f.device_get_handle_by_index,
          {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  Resolve(handle, f.device_get_name, {"nvmlDeviceGetName"});
  Resolve(handle, f.device_get_uuid, {"nvmlDeviceGetUUID"});
  Resolve(handle, f.device_get_pci_info, {"nvmlDeviceGetPciInfo_v3"});
  Resolve(handle, f.device_get_architecture, {"nvmlDeviceGetArchitecture"});
  Resolve(handle, f.device_get_num_gpu_cores, {"nvmlDeviceGetNumGpuCores"});
  Resolve(handle, f.device_get_memory_info, {"nvmlDeviceGetMemoryInfo"});
  Resolve(handle, f.device_get_memory_info_v2, {"nvmlDeviceGetMemoryInfo_v2"});
  Resolve(handle, f.device_get_utilization_rates, {"nvmlDeviceGetUtilizationRates"});
  Resolve(handle, f.device_get_temperature, {"nvmlDeviceGetTemperature"});
  Resolve(handle, f.device_get_temperature_v, {"nvmlDeviceGetTemperatureV"});
  Resolve(handle, f.device_get_power_usage, {"nvmlDeviceGetPowerUsage"});
  Resolve(handle, f.device_get_enforced_power_limit, {"nvmlDeviceGetEnforcedPowerLimit"});
  Resolve(handle, f.device_get_total_energy_consumption, {"nvmlDeviceGetTotalEnergyConsumption"});
  Resolve(handle, f.device_get_clock_info, {"nvmlDeviceGetClockInfo"});
  Resolve(handle, f.device_get_memory_error_counter, {"nvmlDeviceGetMemoryErrorCounter"});
  Resolve(handle, f.device_get_encoder_utilization, {"nvmlDeviceGetEncoderUtilization"});
  Resolve(handle, f.device_get_fan_speed_v2, {"nvmlDeviceGetFanSpeed_v2"});
  Resolve(handle, f.device_get_fan_speed, {"nvmlDeviceGetFanSpeed"});
  Resolve(handle, f.device_get_clocks_event_reasons,
          {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  // _v3 and _v2 fill the same 24-byte nvmlProcessInfo_v2_t; the plain (v1) one a 16-byte struct, not used.
  Resolve(handle, f.device_get_compute_running_processes,
          {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"});
  Resolve(handle, f.device_get_graphics_running_processes,
          {"nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2"});
  Resolve(handle, f.device_get_process_utilization, {"nvmlDeviceGetProcessUtilization"});
  Resolve(handle, f.device_get_mig_mode, {"nvmlDeviceGetMigMode"});
  Resolve(handle, f.device_get_max_mig_device_count, {"nvmlDeviceGetMaxMigDeviceCount"});
  Resolve(handle, f.device_get_mig_device_handle_by_index, {"nvmlDeviceGetMigDeviceHandleByIndex"});
  Resolve(handle, f.device_get_gpu_instance_id, {"nvmlDeviceGetGpuInstanceId"});
  Resolve(handle, f.device_get_compute_instance_id, {"nvmlDeviceGetComputeInstanceId"});
  Resolve(handle, f.gpm_query_device_support, {"nvmlGpmQueryDeviceSupport"});
  Resolve(handle, f.gpm_sample_alloc, {"nvmlGpmSampleAlloc"});
  Resolve(handle, f.gpm_sample_free, {"nvmlGpmSampleFree"});
  Resolve(handle, f.gpm_sample_get, {"nvmlGpmSampleGet"});
  Resolve(handle, f.gpm_metrics_get, {"nvmlGpmMetricsGet"});

  if (f.init == nullptr || f.device_get_count == nullptr || f.device_get_handle_by_index == nullptr) {
    return Error{fmt::format("{} is not NVML (no nvmlInit, nvmlDeviceGetCount or nvmlDeviceGetHandleByIndex)",
                             chosen)};
  }
  return library;
}

Status Library::Init() {
  if (initialized_) return OkStatus();
  if (const Return status = api_.init(); status != kSuccess) {
    return Error{fmt::format("NVML ({}) did not start: {}", path_, ErrorString(status))};
  }
  initialized_ = true;
  return OkStatus();
}

Result<std::unique_ptr<Library>> Library::Load(const std::string& path) {
  auto library = Open(path);
  if (!library) return library;
  if (auto status = (*library)->Init(); !status) return Error{status.error()};
  return library;
}

Library::~Library() {
  if (initialized_ && api_.shutdown != nullptr) api_.shutdown();
  // Not unloaded: a driver library may keep threads of its own; unloading it under them would crash.
  (void)handle_;
}

std::string Library::ErrorString(Return code) const {
  const char* text = api_.error_string != nullptr ? api_.error_string(code) : nullptr;
  if (text != nullptr) return fmt::format("{} (NVML error {})", text, code);
  return fmt::format("NVML error {}", code);
}

}  // namespace runmon::nvml
