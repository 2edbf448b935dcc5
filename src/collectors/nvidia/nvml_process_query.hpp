// NVML's per-device process queries, shared by the run's share of each GPU (nvml_process_share.hpp) and the
// list of every process on every GPU (nvml_process_list.hpp). The process lists use NVML's sizing protocol:
// a list can grow between the sizing call and the filling call, so it is asked again with more room, a few
// times at most (NVML_ERROR_INSUFFICIENT_SIZE); the compute and graphics lists stand alone (a board without
// graphics processes still has its compute list). Process utilisation returns the samples newer than the
// last timestamp seen on the device, which is kept in the GpuDevice, so each caller needs its own devices.
// Failures go through nvml_outcome.hpp: a list the device does not support is not asked again.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collectors/nvidia/nvml_api.hpp"
#include "collectors/nvidia/nvml_discovery.hpp"

namespace runmon::nvidia {

class ProcessQuery {
 public:
  explicit ProcessQuery(const nvml::Library& library) : library_(library) {}

  // Appends the device's compute and graphics lists to `into` (a process in both appears twice); false when
  // neither could be read, and then `why` (when given) holds NVML's words for the last failure, if a call
  // was made.
  bool ReadLists(GpuDevice& device, std::vector<nvml::ProcessInfo>& into, std::string* why = nullptr);
  // Per PID, the mean SM utilisation (%) of NVML's samples newer than the last one seen on the device
  // (which moves on). Empty when there are none, the device cannot tell, or the call failed.
  std::map<unsigned, double> ReadSmUtilization(GpuDevice& device);

 private:
  bool ReadList(GpuDevice& device, Family family,
                nvml::Return (*list)(nvml::Device, unsigned*, nvml::ProcessInfo*),
                std::vector<nvml::ProcessInfo>& into, std::string* why);

  const nvml::Library& library_;
  std::vector<nvml::ProcessInfo> scratch_processes_ = std::vector<nvml::ProcessInfo>(64);
  std::vector<nvml::ProcessUtilizationSample> scratch_utilization_;
};

}  // namespace runmon::nvidia
