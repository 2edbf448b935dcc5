// Which TPU chips the host has, from its PCI functions (metrics.md B §7.1, accelerators.md §1.6): Google's
// vendor id 0x1ae0 and the device id (and, for 0x0027, the subsystem id that tells v2 from v3) name the
// generation. Google's other PCI devices (the gVNIC network card) match no row and are not TPUs. The
// scan is what decides whether the family runs at all: without a chip nothing connects to the runtime
// service and libtpu is never loaded (its constructors crash on hosts without a TPU).
//
// A chip is counted once per PCI slot (domain:bus:device): chips whose cores are separate PCI functions
// of one slot are one chip, where W&B counts functions. When generations are mixed the most common one is
// the host's (as W&B does; ties go to the table's earlier row), and the others are named in the metadata.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "host/host_paths.hpp"

namespace runmon::tpu {

struct TpuChipType {
  std::string_view name = {};                             // "v5e"
  std::uint32_t device_id = 0;                            // PCI device id
  std::optional<std::uint32_t> subsystem_device_id = {};  // only where the device id is shared (v2, v3)
  unsigned hbm_gib = 0;                                   // per chip
  unsigned devices_per_chip = 1;
  // How many devices one per-chip value (the duty cycle) stands for: 2 on v2/v3; 7x reports per device.
  unsigned duty_cycle_fanout = 1;
};

inline constexpr std::uint32_t kGoogleVendorId = 0x1ae0;

// Every generation runmon knows, in the table's order.
std::span<const TpuChipType> TpuChipTypes();

// The generation of a Google PCI function, or nullptr (another Google device, an unknown id).
const TpuChipType* FindChipType(std::uint32_t device_id, std::optional<std::uint32_t> subsystem_device_id);

struct TpuChips {
  const TpuChipType* type = nullptr;                 // nullptr: no TPU
  unsigned chip_count = 0;                           // chips of `type`
  std::map<std::string, unsigned> other_types = {};  // other generations found: name -> chips (not used)
  unsigned device_count() const { return type == nullptr ? 0 : chip_count * type->devices_per_chip; }
};

// The PCI functions under paths' sys tree (bus/pci/devices/*). A function whose ids cannot be read is
// skipped; a missing tree is no TPU.
TpuChips ScanTpuChips(const HostPaths& paths);

}  // namespace runmon::tpu
