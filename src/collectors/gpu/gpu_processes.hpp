// Who uses the GPUs, whatever their vendor: one entry per (GPU, process) with what the vendor's library
// tells about it. The NVIDIA lister (nvidia/nvml_process_list.hpp) fills it today; another family (AMD's
// KFD or DRM fdinfo, say) fills the same type, so the screens that show it (`runmon leet symon`) need no
// vendor code. A value the library did not give is absent (nullopt), never 0: "no sample" and "idle" differ.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace runmon::gpu {

struct GpuProcess {
  unsigned device_index = 0;  // i in gpu.{i} (gpu/gpu_index.hpp)
  long pid = 0;               // as the driver reports it (the host's PID namespace)
  std::optional<uint64_t> memory_bytes;
  std::optional<double> sm_percent;  // utilisation of the device's SMs since the previous listing
};

struct GpuProcessListing {
  std::vector<GpuProcess> processes;  // by device, then in the driver's order; each (device, pid) once
  // Devices whose lists could not be read this time, one line each ("GPU 2: Unknown Error").
  std::vector<std::string> problems;
};

// A vendor's lister. List is called from one thread at a time and may block in the vendor's library.
class GpuProcessLister {
 public:
  virtual ~GpuProcessLister() = default;
  virtual GpuProcessListing List() = 0;
};

}  // namespace runmon::gpu
