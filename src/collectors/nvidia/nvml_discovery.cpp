// The NVML device walk (see nvml_discovery.hpp): each device's fixed facts (name, UUID, PCI bus id,
// memory, cores, architecture, GPM support) are asked once here; a fact NVML does not give stays empty and
// is left out of the metadata.
#include "collectors/nvidia/nvml_discovery.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "collectors/nvidia/nvml_sampling.hpp"

namespace runmon::nvidia {
namespace {

std::string_view ArchitectureName(unsigned architecture) {
  switch (architecture) {
    case 2:
      return "Kepler";
    case 3:
      return "Maxwell";
    case 4:
      return "Pascal";
    case 5:
      return "Volta";
    case 6:
      return "Turing";
    case 7:
      return "Ampere";
    case 8:
      return "Ada";
    case 9:
      return "Hopper";
    case 10:
      return "Blackwell";
    default:
      return {};
  }
}

GpuDevice Describe(const nvml::Library& library, nvml::Device handle, unsigned nvml_index) {
  const nvml::Functions& api = library.api();
  GpuDevice device;
  device.handle = handle;
  device.identity.nvml_index = nvml_index;
  char text[96] = {};
  if (api.device_get_name != nullptr && api.device_get_name(handle, text, sizeof(text)) == nvml::kSuccess) {
    device.name = std::string(text, strnlen(text, sizeof(text)));
  }
  std::memset(text, 0, sizeof(text));
  if (api.device_get_uuid != nullptr && api.device_get_uuid(handle, text, sizeof(text)) == nvml::kSuccess) {
    device.identity.uuid = std::string(text, strnlen(text, sizeof(text)));
  }
  nvml::PciInfo pci{};
  if (api.device_get_pci_info != nullptr && api.device_get_pci_info(handle, &pci) == nvml::kSuccess) {
    device.pci_bus_id = std::string(pci.bus_id, strnlen(pci.bus_id, sizeof(pci.bus_id)));
  }
  if (auto memory = ReadMemory(library, device)) device.memory_total = memory->total;
  unsigned value = 0;
  if (api.device_get_num_gpu_cores != nullptr &&
      api.device_get_num_gpu_cores(handle, &value) == nvml::kSuccess) {
    device.cuda_cores = value;
  }
  if (api.device_get_architecture != nullptr &&
      api.device_get_architecture(handle, &value) == nvml::kSuccess) {
    device.architecture = std::string(ArchitectureName(value));
  }
  if (api.gpm_query_device_support != nullptr) {
    nvml::GpmSupport support{1, 0};
    if (api.gpm_query_device_support(handle, &support) != nvml::kSuccess ||
        support.is_supported_device == 0) {
      device.health.off.set(kGpm);
    }
  } else {
    device.health.off.set(kGpm);
  }
  return device;
}

// The MIG instances of a GPU in MIG mode (marking the GPU and its identity as in MIG mode), each with its
// identity appended to `identities`; none when the driver lacks the MIG functions.
std::vector<GpuDevice> DescribeMigInstances(const nvml::Library& library, GpuDevice& gpu,
                                            std::vector<NvmlDeviceIdentity>& identities) {
  const nvml::Functions& api = library.api();
  std::vector<GpuDevice> instances;
  if (api.device_get_mig_mode == nullptr || api.device_get_max_mig_device_count == nullptr ||
      api.device_get_mig_device_handle_by_index == nullptr) {
    return instances;
  }
  unsigned current = 0, pending = 0, slots = 0;
  if (api.device_get_mig_mode(gpu.handle, &current, &pending) != nvml::kSuccess || current != 1 ||
      api.device_get_max_mig_device_count(gpu.handle, &slots) != nvml::kSuccess) {
    return instances;
  }
  identities[gpu.identity_position].mig_enabled = true;
  gpu.identity.mig_enabled = true;
  for (unsigned slot = 0; slot < slots; ++slot) {
    nvml::Device mig = nullptr;
    if (api.device_get_mig_device_handle_by_index(gpu.handle, slot, &mig) != nvml::kSuccess) continue;
    GpuDevice instance = Describe(library, mig, gpu.identity.nvml_index);
    instance.identity.is_mig = true;
    instance.identity.parent_uuid = gpu.identity.uuid;
    unsigned id = 0;
    if (api.device_get_gpu_instance_id != nullptr &&
        api.device_get_gpu_instance_id(mig, &id) == nvml::kSuccess) {
      instance.identity.gpu_instance = id;
    }
    if (api.device_get_compute_instance_id != nullptr &&
        api.device_get_compute_instance_id(mig, &id) == nvml::kSuccess) {
      instance.identity.compute_instance = id;
    }
    instance.identity_position = identities.size();
    identities.push_back(instance.identity);
    instances.push_back(std::move(instance));
  }
  return instances;
}

}  // namespace

Result<DeviceInventory> DiscoverDevices(const nvml::Library& library,
                                        const std::optional<std::vector<unsigned>>& device_ids,
                                        unsigned other_vendor_gpus) {
  const nvml::Functions& api = library.api();
  unsigned count = 0;
  if (const nvml::Return code = api.device_get_count(&count); code != nvml::kSuccess) {
    return Error{fmt::format("NVML device count: {}", library.ErrorString(code))};
  }
  DeviceInventory inventory;
  std::vector<GpuDevice> gpus;
  std::vector<GpuDevice> instances;
  for (unsigned index = 0; index < count; ++index) {
    nvml::Device handle = nullptr;
    if (api.device_get_handle_by_index(index, &handle) != nvml::kSuccess) continue;
    const bool selected =
        !device_ids || std::find(device_ids->begin(), device_ids->end(), index) != device_ids->end();
    GpuDevice gpu = Describe(library, handle, index);
    gpu.key_index = index;
    gpu.identity_position = inventory.all_identities.size();
    inventory.all_identities.push_back(gpu.identity);
    auto migs = DescribeMigInstances(library, gpu, inventory.all_identities);
    if (!selected) continue;
    for (auto& instance : migs) instances.push_back(std::move(instance));
    gpus.push_back(std::move(gpu));
  }
  unsigned next_index = count + other_vendor_gpus;
  for (auto& instance : instances) instance.key_index = next_index++;
  inventory.devices = std::move(gpus);
  for (auto& instance : instances) inventory.devices.push_back(std::move(instance));
  return inventory;
}

}  // namespace runmon::nvidia
