// One AMD GPU's values at one instant, in runmon's units, whichever source gave them: the kernel's sysfs
// and hwmon files (amdgpu_sampling.hpp) or a vendor tool's JSON (rocm_smi_parse.hpp, amd_smi_parse.hpp).
// Every field is optional: a value the source does not have stays unset and its key is left out, never 0.
// The collector takes each field from sysfs and only where sysfs lacks it from the latest tool reading.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace runmon::amd {

struct CardValues {
  std::optional<double> busy_percent;         // gpu_busy_percent; rocm-smi "GPU use (%)"
  std::optional<double> memory_busy_percent;  // mem_busy_percent: memory controller busy, not memory in use
  std::optional<uint64_t> vram_used_bytes;
  std::optional<uint64_t> vram_total_bytes;
  std::optional<double> vram_used_percent;  // when a tool gives the share but not the bytes
  std::optional<uint64_t> gtt_used_bytes;   // system memory mapped for the GPU (most of an APU's memory)
  std::optional<uint64_t> gtt_total_bytes;
  std::optional<double> power_watts;      // average socket power, else current socket power
  std::optional<double> power_cap_watts;  // the power limit in force
  std::optional<double> temp_edge_celsius;
  std::optional<double> temp_junction_celsius;
  std::optional<double> temp_memory_celsius;
  std::optional<double> sclk_mhz;  // current graphics/compute clock
  std::optional<double> mclk_mhz;  // current memory clock
  std::optional<double> fan_percent;
  std::optional<double> fan_rpm;
  std::optional<double> energy_microjoules;  // cumulative, since the driver loaded
  std::optional<double> memory_overdrive_percent;
};

// A tool's view of one card: where it is (to pair it with the card sysfs found) and its values.
struct ToolCard {
  std::optional<std::string> pci_bus;  // "0000:03:00.0", lower case, when the tool says it
  std::optional<unsigned> tool_index;  // rocm-smi's card<N> / amd-smi's "gpu": the tool's own numbering
  CardValues values;
  // Static facts for the metadata, as the tool spells them (empty when absent).
  std::string unique_id, vbios_version, series, model, vendor, sku, performance_level, gpu_overdrive,
      memory_overdrive, max_power, sclk_range, mclk_range;
};

}  // namespace runmon::amd
