// The invariants every AMD tool parser keeps (rocm_smi_json_fuzz.cpp, amd_smi_json_fuzz.cpp): no value that
// cannot be true leaves a parser (shares within 0-100 %, nothing negative or not finite, used memory within
// its total, temperatures within what silicon survives) and a PCI address is in sysfs's spelling.
#pragma once

#include <cctype>
#include <cmath>
#include <optional>

#include "collectors/amd/amd_card_reading.hpp"
#include "collectors/amd/tool_values.hpp"
#include "fuzz_check.hpp"

namespace runmon::fuzz {

inline void CheckRange(const std::optional<double>& value, double low, double high) {
  if (value) FUZZ_CHECK(std::isfinite(*value) && *value >= low && *value <= high);
}

inline void CheckToolCard(const amd::ToolCard& card) {
  const amd::CardValues& v = card.values;
  CheckRange(v.busy_percent, 0, 100);
  CheckRange(v.memory_busy_percent, 0, 100);
  CheckRange(v.vram_used_percent, 0, 100);
  CheckRange(v.fan_percent, 0, 100);
  CheckRange(v.memory_overdrive_percent, 0, 100);
  CheckRange(v.power_watts, 0, 10'000);
  CheckRange(v.power_cap_watts, 1e-9, 10'000);
  CheckRange(v.temp_edge_celsius, -273.15, 200);
  CheckRange(v.temp_junction_celsius, -273.15, 200);
  CheckRange(v.temp_memory_celsius, -273.15, 200);
  CheckRange(v.sclk_mhz, 0, 100'000);
  CheckRange(v.mclk_mhz, 0, 100'000);
  CheckRange(v.fan_rpm, 0, 100'000);
  if (v.energy_microjoules) FUZZ_CHECK(std::isfinite(*v.energy_microjoules) && *v.energy_microjoules >= 0);
  if (v.vram_used_bytes && v.vram_total_bytes) FUZZ_CHECK(*v.vram_used_bytes <= *v.vram_total_bytes);
  if (v.gtt_used_bytes && v.gtt_total_bytes) FUZZ_CHECK(*v.gtt_used_bytes <= *v.gtt_total_bytes);
  if (card.pci_bus) {
    // Normalizing is idempotent and gives lower-case "DDDD:BB:DD.F".
    FUZZ_CHECK(amd::NormalizePciBus(*card.pci_bus) == card.pci_bus);
    for (char c : *card.pci_bus) FUZZ_CHECK(!std::isupper(static_cast<unsigned char>(c)));
  }
  for (const std::string* text :
       {&card.unique_id, &card.series, &card.model, &card.vendor, &card.max_power}) {
    FUZZ_CHECK(text->empty() || (!HasSpace(text->substr(0, 1)) && !HasSpace(text->substr(text->size() - 1))));
  }
}

}  // namespace runmon::fuzz
