// The PCI scan of tpu_chips.hpp.
#include "collectors/tpu/tpu_chips.hpp"

#include <array>
#include <set>
#include <vector>

#include "collectors/amd/amdgpu_sysfs_parse.hpp"
#include "host/file_reader.hpp"

namespace runmon::tpu {
namespace {

namespace fs = std::filesystem;

constexpr std::array<TpuChipType, 7> kChipTypes = {{
    {.name = "v2",
     .device_id = 0x0027,
     .subsystem_device_id = 0x004e,
     .hbm_gib = 8,
     .devices_per_chip = 2,
     .duty_cycle_fanout = 2},
    {.name = "v3",
     .device_id = 0x0027,
     .subsystem_device_id = 0x004f,
     .hbm_gib = 16,
     .devices_per_chip = 2,
     .duty_cycle_fanout = 2},
    {.name = "v4", .device_id = 0x005e, .hbm_gib = 32},
    {.name = "v5e", .device_id = 0x0063, .hbm_gib = 16},
    {.name = "v5p", .device_id = 0x0062, .hbm_gib = 95},
    {.name = "v6e", .device_id = 0x006f, .hbm_gib = 32},
    {.name = "7x", .device_id = 0x0076, .hbm_gib = 192, .devices_per_chip = 2},
}};

std::optional<std::uint32_t> PciId(const fs::path& path) {
  return ReadOptionalParsed(path, amd::ParsePciId, nullptr);
}

// "0000:00:05.1" -> "0000:00:05": the slot, without the function number.
std::string PciSlot(const std::string& address) {
  const size_t dot = address.rfind('.');
  return dot == std::string::npos ? address : address.substr(0, dot);
}

}  // namespace

std::span<const TpuChipType> TpuChipTypes() {
  return kChipTypes;
}

const TpuChipType* FindChipType(std::uint32_t device_id, std::optional<std::uint32_t> subsystem_device_id) {
  for (const TpuChipType& type : kChipTypes) {
    if (type.device_id != device_id) continue;
    if (type.subsystem_device_id && type.subsystem_device_id != subsystem_device_id) continue;
    return &type;
  }
  return nullptr;
}

TpuChips ScanTpuChips(const HostPaths& paths) {
  TpuChips chips;
  const fs::path devices = paths.Sys("bus/pci/devices");
  auto names = ListDirectory(devices);
  if (!names) return chips;
  std::vector<std::set<std::string>> slots_by_type(kChipTypes.size());
  for (const std::string& name : *names) {
    const fs::path device = devices / name;
    if (PciId(device / "vendor") != kGoogleVendorId) continue;
    const auto device_id = PciId(device / "device");
    if (!device_id) continue;
    const TpuChipType* type = FindChipType(*device_id, PciId(device / "subsystem_device"));
    if (type == nullptr) continue;
    slots_by_type[static_cast<size_t>(type - kChipTypes.data())].insert(PciSlot(name));
  }
  for (size_t i = 0; i < kChipTypes.size(); ++i) {
    const auto count = static_cast<unsigned>(slots_by_type[i].size());
    if (count > chips.chip_count) {
      chips.type = &kChipTypes[i];
      chips.chip_count = count;
    }
  }
  for (size_t i = 0; i < kChipTypes.size(); ++i) {
    if (&kChipTypes[i] != chips.type && !slots_by_type[i].empty()) {
      chips.other_types[std::string(kChipTypes[i].name)] = static_cast<unsigned>(slots_by_type[i].size());
    }
  }
  return chips;
}

}  // namespace runmon::tpu
