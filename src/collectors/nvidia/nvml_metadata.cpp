// The run's GPU facts from the device walk and two driver-wide NVML calls (see nvml_metadata.hpp).
#include "collectors/nvidia/nvml_metadata.hpp"

#include <cstring>

#include <fmt/format.h>

namespace runmon::nvidia {

nlohmann::json DescribeRunGpus(const nvml::Library& library, const DeviceInventory& inventory,
                               const std::optional<std::string>& cuda_visible_devices,
                               unsigned host_gpu_count) {
  const nvml::Functions& api = library.api();
  const std::vector<GpuDevice>& devices = inventory.devices;
  nlohmann::json meta = nlohmann::json::object();
  const auto ordinals = MapCudaOrdinals(
      ParseCudaVisibleDevices(cuda_visible_devices ? std::optional<std::string_view>(*cuda_visible_devices)
                                                   : std::nullopt),
      inventory.all_identities);
  nlohmann::json gpu_nvidia = nlohmann::json::array();
  nlohmann::json described = nlohmann::json::array();
  unsigned gpu_count = 0;
  for (const GpuDevice& device : devices) {
    nlohmann::json entry = {{"key", fmt::format("gpu.{}", device.key_index)},
                            {"nvmlIndex", device.identity.nvml_index}};
    if (!device.name.empty()) entry["name"] = device.name;
    if (!device.identity.uuid.empty()) entry["uuid"] = device.identity.uuid;
    if (!device.pci_bus_id.empty()) entry["pciBusId"] = device.pci_bus_id;
    if (device.memory_total > 0) entry["memoryTotal"] = std::to_string(device.memory_total);
    if (const size_t at = device.identity_position; at < ordinals.size() && ordinals[at]) {
      entry["cudaOrdinal"] = *ordinals[at];
    }
    if (device.identity.mig_enabled) entry["migMode"] = true;
    if (device.identity.is_mig) {
      nlohmann::json mig = {{"parentUuid", device.identity.parent_uuid}};
      if (device.identity.gpu_instance) mig["gpuInstance"] = *device.identity.gpu_instance;
      if (device.identity.compute_instance) mig["computeInstance"] = *device.identity.compute_instance;
      entry["mig"] = mig;
    } else {
      ++gpu_count;
      nlohmann::json info = nlohmann::json::object();
      if (!device.name.empty()) info["name"] = device.name;
      if (device.memory_total > 0) info["memoryTotal"] = std::to_string(device.memory_total);
      if (device.cuda_cores > 0) info["cudaCores"] = device.cuda_cores;
      if (!device.architecture.empty()) info["architecture"] = device.architecture;
      if (!device.identity.uuid.empty()) info["uuid"] = device.identity.uuid;
      gpu_nvidia.push_back(info);
    }
    described.push_back(entry);
  }
  if (gpu_count > 0) {
    meta["gpu_count"] = host_gpu_count > 0 ? host_gpu_count : gpu_count;
    if (!devices.front().name.empty()) meta["gpu"] = devices.front().name;
    meta["gpu_nvidia"] = gpu_nvidia;
  }
  nlohmann::json nvidia = {{"devices", described}, {"library", library.path()}};
  char driver[96] = {};
  if (api.system_get_driver_version != nullptr &&
      api.system_get_driver_version(driver, sizeof(driver)) == nvml::kSuccess) {
    nvidia["driverVersion"] = std::string(driver, strnlen(driver, sizeof(driver)));
  }
  int cuda = 0;
  if (api.system_get_cuda_driver_version != nullptr &&
      api.system_get_cuda_driver_version(&cuda) == nvml::kSuccess && cuda > 0) {
    meta["cuda_version"] = fmt::format("{}.{}", cuda / 1000, (cuda % 1000) / 10);
  }
  if (cuda_visible_devices) nvidia["cudaVisibleDevices"] = *cuda_visible_devices;
  meta["runmon"] = {{"nvidia", nvidia}};
  return meta;
}

}  // namespace runmon::nvidia
