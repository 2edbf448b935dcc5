// Parses amd-smi's `metric --json` and `list --json` (see amd_smi_parse.hpp for the shapes across releases).
#include "collectors/amd/amd_smi_parse.hpp"

#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "collectors/amd/tool_values.hpp"

namespace runmon::amd {
namespace {

using nlohmann::json;
using Path = std::initializer_list<const char*>;

// The value at `path` (object keys from the card down), or null.
const json* At(const json& card, Path path) {
  const json* at = &card;
  for (const char* key : path) {
    if (!at->is_object()) return nullptr;
    const auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

// A number as amd-smi prints it: plain (6.0), {"value": n, "unit": "u"} (6.1+), or "N/A".
struct Quantity {
  double value = 0;
  std::string unit;  // empty when the release prints none
};

std::optional<double> PlainNumber(const json& value) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) return ParseToolNumber(value.get_ref<const std::string&>());
  return std::nullopt;
}

std::optional<Quantity> QuantityAt(const json& card, std::initializer_list<Path> paths) {
  for (const Path& path : paths) {
    const json* at = At(card, path);
    if (at == nullptr) continue;
    if (at->is_object()) {
      const json* value = At(*at, {"value"});
      const json* unit = At(*at, {"unit"});
      if (value == nullptr) return std::nullopt;
      auto number = PlainNumber(*value);
      if (!number) return std::nullopt;
      Quantity out{*number, {}};
      if (unit != nullptr) {
        if (!unit->is_string()) return std::nullopt;
        out.unit = unit->get<std::string>();
      }
      return out;
    }
    if (auto number = PlainNumber(*at)) return Quantity{*number, {}};
    return std::nullopt;  // the first spelling present decides, "N/A" included
  }
  return std::nullopt;
}

struct UnitScale {
  std::string_view unit;
  double scale;
};

// The quantity in the unit the table's scales convert to; the empty unit is what a release without units
// meant. A unit not in the table leaves the value unset.
std::optional<double> Convert(const std::optional<Quantity>& quantity,
                              std::initializer_list<UnitScale> table) {
  if (!quantity) return std::nullopt;
  for (const UnitScale& row : table) {
    if (row.unit == quantity->unit) return quantity->value * row.scale;
  }
  return std::nullopt;
}

std::optional<double> Percent(const json& card, std::initializer_list<Path> paths) {
  return Convert(QuantityAt(card, paths), {{"", 1}, {"%", 1}});
}

std::optional<double> Watts(const json& card, std::initializer_list<Path> paths) {
  return Convert(QuantityAt(card, paths), {{"", 1}, {"W", 1}, {"mW", 1e-3}});
}

std::optional<double> Megahertz(const json& card, std::initializer_list<Path> paths) {
  return Convert(QuantityAt(card, paths), {{"", 1}, {"MHz", 1}, {"Mhz", 1}, {"GHz", 1e3}});
}

std::optional<double> Celsius(const json& card, std::initializer_list<Path> paths) {
  return Convert(QuantityAt(card, paths), {{"", 1}, {"C", 1}});
}

std::optional<double> Microjoules(const json& card, std::initializer_list<Path> paths) {
  return Convert(QuantityAt(card, paths), {{"", 1e6}, {"J", 1e6}, {"mJ", 1e3}, {"uJ", 1}, {"\u00b5J", 1}});
}

// amd-smi's "MB" is bytes // 2^20.
std::optional<uint64_t> Bytes(const json& card, std::initializer_list<Path> paths) {
  constexpr double kKiB = 1024.0;
  auto bytes =
      Convert(QuantityAt(card, paths),
              {{"", kKiB * kKiB}, {"MB", kKiB * kKiB}, {"B", 1}, {"KB", kKiB}, {"GB", kKiB * kKiB * kKiB}});
  if (!bytes) return std::nullopt;
  return BytesFromDouble(std::round(*bytes));
}

std::optional<unsigned> GpuNumber(const json& card) {
  const json* gpu = At(card, {"gpu"});
  if (gpu == nullptr || !gpu->is_number_integer()) return std::nullopt;
  if (gpu->is_number_unsigned()) {
    const auto n = gpu->get<uint64_t>();
    if (n <= 0xFFFF) return static_cast<unsigned>(n);
    return std::nullopt;
  }
  const auto n = gpu->get<int64_t>();
  if (n >= 0 && n <= 0xFFFF) return static_cast<unsigned>(n);
  return std::nullopt;
}

ToolCard ReadCard(const json& card) {
  ToolCard out;
  out.tool_index = GpuNumber(card);
  CardValues& v = out.values;
  v.busy_percent = Percent(card, {{"usage", "gfx_activity"}, {"usage", "gfx_usage"}});
  v.memory_busy_percent = Percent(card, {{"usage", "umc_activity"}, {"usage", "mem_usage"}});
  v.vram_total_bytes = Bytes(card, {{"mem_usage", "total_vram"}});
  v.vram_used_bytes = Bytes(card, {{"mem_usage", "used_vram"}});
  v.gtt_total_bytes = Bytes(card, {{"mem_usage", "total_gtt"}});
  v.gtt_used_bytes = Bytes(card, {{"mem_usage", "used_gtt"}});
  v.power_watts = Watts(card, {{"power", "socket_power"}, {"power", "current_power"}});
  // 6.0 printed hwmon's power1_cap as read: microwatts, without a unit.
  v.power_cap_watts =
      Convert(QuantityAt(card, {{"power", "power_limit"}}), {{"", 1e-6}, {"W", 1}, {"uW", 1e-6}});
  v.temp_edge_celsius = Celsius(card, {{"temperature", "edge"}});
  v.temp_junction_celsius = Celsius(card, {{"temperature", "hotspot"}});
  v.temp_memory_celsius = Celsius(card, {{"temperature", "mem"}});
  v.sclk_mhz =
      Megahertz(card, {{"clock", "gfx_0", "clk"}, {"clock", "gfx", "clk"}, {"clock", "gfx", "cur_clk"}});
  v.mclk_mhz =
      Megahertz(card, {{"clock", "mem_0", "clk"}, {"clock", "MEM", "clk"}, {"clock", "MEM", "cur_clk"}});
  v.fan_percent = Percent(card, {{"fan", "usage"}});
  v.fan_rpm = Convert(QuantityAt(card, {{"fan", "rpm"}}), {{"", 1}, {"RPM", 1}});
  v.energy_microjoules = Microjoules(card, {{"energy", "total_energy_consumption"}});
  v.memory_overdrive_percent = Percent(card, {{"mem_overdrive"}});
  DropImpossibleValues(v);
  return out;
}

// A list of per-GPU objects, or (6.0, one GPU) a lone object.
Result<json> ParseDocument(std::string_view text, std::string_view command) {
  json document = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return Error{"amd-smi " + std::string(command) + ": output is not valid JSON"};
  if (document.is_object()) return json::array({std::move(document)});
  if (!document.is_array()) return Error{"amd-smi " + std::string(command) + ": output is not a JSON list"};
  return document;
}

}  // namespace

Result<std::vector<ToolCard>> ParseAmdSmiMetricJson(std::string_view text) {
  auto document = ParseDocument(text, "metric");
  if (!document) return Error{document.error()};
  std::vector<ToolCard> cards;
  for (const json& card : *document) {
    if (card.is_object()) cards.push_back(ReadCard(card));
  }
  return cards;
}

Result<std::vector<AmdSmiListEntry>> ParseAmdSmiListJson(std::string_view text) {
  auto document = ParseDocument(text, "list");
  if (!document) return Error{document.error()};
  std::vector<AmdSmiListEntry> entries;
  for (const json& gpu : *document) {
    if (!gpu.is_object()) continue;
    const auto number = GpuNumber(gpu);
    const json* bdf = At(gpu, {"bdf"});
    if (!number || bdf == nullptr || !bdf->is_string()) continue;
    auto bus = NormalizePciBus(bdf->get_ref<const std::string&>());
    if (!bus) continue;
    AmdSmiListEntry entry{*number, std::move(*bus), {}};
    if (const json* uuid = At(gpu, {"uuid"}); uuid != nullptr && uuid->is_string()) {
      entry.uuid = MetadataText(uuid->get_ref<const std::string&>());
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

void AssignPciBuses(std::vector<ToolCard>& cards, const std::vector<AmdSmiListEntry>& list) {
  for (ToolCard& card : cards) {
    if (!card.tool_index) continue;
    for (const AmdSmiListEntry& entry : list) {
      if (entry.gpu == *card.tool_index) card.pci_bus = entry.pci_bus;
    }
  }
}

}  // namespace runmon::amd
