// Every process on every NVIDIA GPU, for `runmon leet symon`'s process table (gpu/gpu_processes.hpp): the
// compute and graphics lists of each device (a process in both, once per device), the GPU memory each uses
// and its SM utilisation since the previous listing (nvmlDeviceGetProcessUtilization, from the last sample
// timestamp seen on that device). A GPU in MIG mode is listed through its MIG instances, under their own
// indices (its own list would repeat theirs); NVML gives no utilisation per process there. A device whose
// lists fail is named in the listing's problems and the others are still listed; a device NVML reports
// lost is not asked again. NVML is loaded with dlopen (nvml_api.hpp), never linked; the lister has its own
// library handle and devices, so it shares no state with the NVIDIA collector's lane.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collectors/gpu/gpu_processes.hpp"
#include "collectors/nvidia/nvml_api.hpp"
#include "collectors/nvidia/nvml_discovery.hpp"
#include "collectors/nvidia/nvml_process_query.hpp"
#include "core/result.hpp"

namespace runmon::nvidia {

class NvmlProcessLister final : public gpu::GpuProcessLister {
 public:
  // Loads and initialises NVML at `library_path` (empty: libnvidia-ml.so.1) and walks its devices; both
  // may block in the driver, so call it off the screen's thread. The error says why in words ("cannot load
  // libnvidia-ml.so.1: ...", "NVML device count: ...").
  static Result<std::unique_ptr<NvmlProcessLister>> Open(const std::string& library_path);
  // The same with a library already opened (nvml::Library::Open), not yet initialised.
  static Result<std::unique_ptr<NvmlProcessLister>> Start(std::unique_ptr<nvml::Library> library);
  ~NvmlProcessLister() override = default;

  gpu::GpuProcessListing List() override;
  size_t device_count() const { return inventory_.devices.size(); }

 private:
  NvmlProcessLister(std::unique_ptr<nvml::Library> library, DeviceInventory inventory);

  std::unique_ptr<nvml::Library> library_;
  DeviceInventory inventory_;
  ProcessQuery query_;
  std::vector<nvml::ProcessInfo> scratch_;
  std::map<unsigned, std::string> why_not_;  // device key index -> NVML's words for its last list failure
};

}  // namespace runmon::nvidia
