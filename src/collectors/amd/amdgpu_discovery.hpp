// Finding the AMD GPUs under the sys root (accelerators.md §3.1): the amdgpu driver must be live
// (module/amdgpu/initstate), and a card is a class/drm/cardN entry (connectors such as card0-DP-1 and the
// renderD* nodes are not cards) whose PCI device has vendor 0x1002 and is bound to the amdgpu driver (a
// card0 may be simpledrm's, another vendor's or the old radeon driver's): gpu::AmdgpuCardNumbers, the walk
// the GPU index rule counts with too. Cards are keyed in card-number
// order (card10 after card2), from the index the GPU index rule gives AMD (gpu/gpu_index.hpp). Each card's
// static facts are read here, once; which of its per-tick files exist is decided here too, so a file the
// card does not have is never looked for again (its key is absent, never 0).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "host/file_reader.hpp"
#include "host/host_paths.hpp"

namespace runmon::amd {

// A hwmon temperature sensor of a card: temp<N>_input and what its label says it measures.
enum class TempSensor { kEdge, kJunction, kMemory };

struct HwmonFiles {
  std::filesystem::path dir = {};                                               // device/hwmon/hwmonM
  std::vector<std::pair<TempSensor, std::filesystem::path>> temperatures = {};  // labelled sensors, m°C
  std::optional<std::filesystem::path> power = {};  // power1_average, else power1_input (Linux 6.6+), µW
  std::optional<std::filesystem::path> power_cap = {};
  std::optional<std::filesystem::path> fan_rpm = {};               // fan1_input
  std::optional<uint64_t> fan_max_rpm = {};                        // fan1_max
  std::optional<std::filesystem::path> pwm = {}, pwm_enable = {};  // pwm1 (0..pwm1_max), pwm1_enable
  std::optional<uint64_t> pwm_max = {};                            // pwm1_max (255 when absent)
  std::optional<std::filesystem::path> energy = {};                // energy1_input, µJ
};

struct AmdCard {
  unsigned card_number = 0;      // N of class/drm/cardN
  unsigned key_index = 0;        // i of gpu.{i}
  std::string pci_address = {};  // "0000:03:00.0"
  std::filesystem::path device_dir = {};
  std::optional<HwmonFiles> hwmon = {};  // none: the card has no hwmon directory
  // Static facts (empty or unset when the card does not have them).
  uint32_t device_id = 0, subsystem_vendor_id = 0, subsystem_device_id = 0, revision = 0;
  std::string unique_id = {}, vbios_version = {}, product_name = {}, product_number = {}, serial_number = {},
              vram_vendor = {};
  std::optional<uint64_t> vram_total_bytes = {}, gtt_total_bytes = {};
  std::optional<uint32_t> kfd_gpu_id = {};  // the KFD topology node's gpu_id with this PCI address
};

struct CardDiscovery {
  std::vector<AmdCard> cards = {};
  std::string absent_reason = {};          // when `cards` is empty: why
  bool driver_live = false;                // module/amdgpu/initstate says live (a tool may still find cards)
  unsigned amdgpu_cards = 0;               // amdgpu's cards in class/drm, selected or not
  std::vector<std::string> problems = {};  // files that exist but could not be read (said once)
};

// The cards, keyed from `first_index`; `device_ids` (x_stats_gpu_device_ids) keeps only those key indices.
CardDiscovery DiscoverCards(const HostPaths& paths, unsigned first_index,
                            const std::optional<std::vector<unsigned>>& device_ids);

// Whether `device_ids` (x_stats_gpu_device_ids; unset: all) selects the key index.
bool Selected(const std::optional<std::vector<unsigned>>& device_ids, unsigned key_index);

// A one-value sysfs file, trimmed; empty when absent or unreadable (said to `report`).
std::string ReadSysfsText(const std::filesystem::path& path, const ProblemReporter& report = nullptr);

// The amdgpu driver's version (module/amdgpu/version: set for the packaged DKMS driver, absent in-tree).
std::optional<std::string> DriverVersion(const HostPaths& paths);

}  // namespace runmon::amd
