// Parses rocm-smi's JSON into ToolCards (see rocm_smi_parse.hpp for the spellings and why each is taken).
#include "collectors/amd/rocm_smi_parse.hpp"

#include "collectors/amd/amdgpu_sysfs_parse.hpp"

#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "collectors/amd/tool_values.hpp"

namespace runmon::amd {
namespace {

using nlohmann::json;

// The first of `names` the card has.
const json* Field(const json& card, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const auto it = card.find(name);
    if (it != card.end()) return &*it;
  }
  return nullptr;
}

// rocm-smi prints every value as a string; a number is taken as well.
std::optional<double> Number(const json& card, std::initializer_list<const char*> names,
                             std::initializer_list<std::string_view> units = {}) {
  const json* value = Field(card, names);
  if (value == nullptr) return std::nullopt;
  if (value->is_number()) return value->get<double>();
  if (value->is_string()) return ParseToolNumber(value->get_ref<const std::string&>(), units);
  return std::nullopt;
}

std::optional<uint64_t> Bytes(const json& card, const char* name) {
  const json* value = Field(card, {name});
  if (value == nullptr) return std::nullopt;
  if (value->is_number()) return BytesFromDouble(value->get<double>());
  if (value->is_string()) return ParseToolBytes(value->get_ref<const std::string&>());
  return std::nullopt;
}

std::string Text(const json& card, std::initializer_list<const char*> names) {
  const json* value = Field(card, names);
  if (value == nullptr) return {};
  if (value->is_string()) return MetadataText(value->get_ref<const std::string&>());
  if (value->is_number()) return value->dump();
  return {};
}

ToolCard ReadCard(unsigned number, const json& card) {
  ToolCard out;
  out.tool_index = number;
  if (const json* bus = Field(card, {"PCI Bus"}); bus != nullptr && bus->is_string()) {
    out.pci_bus = NormalizePciBus(bus->get_ref<const std::string&>());
  }
  CardValues& v = out.values;
  v.busy_percent = Number(card, {"GPU use (%)"});
  v.memory_busy_percent = Number(card, {"GPU Memory Read/Write Activity (%)", "GPU memory use (%)"});
  v.vram_used_percent = Number(card, {"GPU Memory Allocated (VRAM%)"});
  v.vram_total_bytes = Bytes(card, "VRAM Total Memory (B)");
  v.vram_used_bytes = Bytes(card, "VRAM Total Used Memory (B)");
  v.gtt_total_bytes = Bytes(card, "GTT Total Memory (B)");
  v.gtt_used_bytes = Bytes(card, "GTT Total Used Memory (B)");
  v.power_watts = Number(card, {"Average Graphics Package Power (W)"});
  if (!v.power_watts) v.power_watts = Number(card, {"Current Socket Graphics Package Power (W)"});
  v.power_cap_watts = Number(card, {"Max Graphics Package Power (W)"});
  v.temp_edge_celsius = Number(card, {"Temperature (Sensor edge) (C)", "Temperature (Sensor edge) (c)"});
  v.temp_junction_celsius =
      Number(card, {"Temperature (Sensor junction) (C)", "Temperature (Sensor junction) (c)"});
  v.temp_memory_celsius = Number(card, {"Temperature (Sensor memory) (C)", "Temperature (Sensor mem) (c)"});
  v.sclk_mhz = Number(card, {"sclk clock speed:"}, {"Mhz", "MHz"});
  v.mclk_mhz = Number(card, {"mclk clock speed:"}, {"Mhz", "MHz"});
  v.fan_percent = Number(card, {"Fan speed (%)", "Fan Speed (%)"});
  v.fan_rpm = Number(card, {"Fan RPM"});
  v.energy_microjoules = Number(card, {"Accumulated Energy (uJ)"});
  v.memory_overdrive_percent = Number(card, {"GPU Memory OverDrive value (%)"});
  DropImpossibleValues(v);

  out.unique_id = Text(card, {"Unique ID"});
  out.vbios_version = Text(card, {"VBIOS version"});
  out.series = Text(card, {"Card Series", "Card series"});
  out.model = Text(card, {"Card Model", "Card model"});
  out.vendor = Text(card, {"Card Vendor", "Card vendor"});
  out.sku = Text(card, {"Card SKU"});
  out.performance_level = Text(card, {"Performance Level"});
  out.gpu_overdrive = Text(card, {"GPU OverDrive value (%)"});
  out.memory_overdrive = Text(card, {"GPU Memory OverDrive value (%)"});
  out.max_power = Text(card, {"Max Graphics Package Power (W)"});
  out.sclk_range = Text(card, {"Valid sclk range"});
  out.mclk_range = Text(card, {"Valid mclk range"});
  return out;
}

}  // namespace

Result<std::vector<ToolCard>> ParseRocmSmiJson(std::string_view text) {
  const json document = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return Error{"rocm-smi: output is not valid JSON"};
  if (!document.is_object()) return Error{"rocm-smi: output is not a JSON object"};
  std::vector<ToolCard> cards;
  for (const auto& [key, card] : document.items()) {
    const auto number = ParseCardName(key);
    if (!number || !card.is_object()) continue;
    cards.push_back(ReadCard(*number, card));
  }
  std::sort(cards.begin(), cards.end(),
            [](const ToolCard& a, const ToolCard& b) { return *a.tool_index < *b.tool_index; });
  return cards;
}

}  // namespace runmon::amd
