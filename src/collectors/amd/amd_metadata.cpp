// The AMD metadata (amd_metadata.hpp). Strings follow rocm-smi's where W&B copies them from it: the SKU is
// at most six characters after the VBIOS part number's first '-' ("113-D65209-073" -> "D65209"), as rocm-smi
// derives it; the unique id is printed as rocm-smi prints it ("0x1f9de0957d137942"); the
// clock ranges are the lowest and highest DPM levels ("500Mhz - 1700Mhz"); the maximum power is the cap in
// watts. A fact the card does not have is left out.
#include "collectors/amd/amd_metadata.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include <fmt/format.h>

#include "collectors/amd/amdgpu_sysfs_parse.hpp"
#include "collectors/linux/parse/text.hpp"
#include "host/file_reader.hpp"

namespace runmon::amd {
namespace {

std::string Sku(const std::string& vbios_version) {
  const size_t first = vbios_version.find('-');
  if (first == std::string::npos) return {};
  const size_t second = vbios_version.find('-', first + 1);
  const size_t length = second == std::string::npos ? std::string::npos : second - first - 1;
  return vbios_version.substr(first + 1, length).substr(0, 6);
}

// sysfs writes the unique id as 16 hex digits; rocm-smi prints it as Python's hex() does: "0x", lower case,
// no leading zeros. Anything else is left out.
std::string UniqueId(const std::string& sysfs_text) {
  if (sysfs_text.empty() || sysfs_text.size() > 16) return {};
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(sysfs_text.data(), sysfs_text.data() + sysfs_text.size(), value, 16);
  if (ec != std::errc() || end != sysfs_text.data() + sysfs_text.size()) return {};
  return fmt::format("{:#x}", value);
}

std::string ClockRange(const std::filesystem::path& path) {
  const auto text = ReadOptionalFile(path, nullptr);
  if (!text) return {};
  auto levels = ParseDpmLevels(*text);
  if (!levels || levels->mhz.empty()) return {};
  const auto [low, high] = std::minmax_element(levels->mhz.begin(), levels->mhz.end());
  return fmt::format("{}Mhz - {}Mhz", *low, *high);
}

std::string Series(const AmdCard& card) {
  if (!card.product_name.empty()) return card.product_name;
  return fmt::format("AMD GPU (1002:{:04x})", card.device_id);
}

void SetIfAny(nlohmann::json& object, const char* name, const std::string& value) {
  if (!value.empty()) object[name] = value;
}

}  // namespace

nlohmann::json DescribeCards(const HostPaths& paths, const std::vector<AmdCard>& cards, gpu::HostGpus host) {
  nlohmann::json meta = nlohmann::json::object();
  if (cards.empty()) return meta;
  nlohmann::json gpu_amd = nlohmann::json::array();
  nlohmann::json devices = nlohmann::json::array();
  for (const AmdCard& card : cards) {
    nlohmann::json info = {{"id", std::to_string(card.key_index)},
                           {"series", Series(card)},
                           {"model", fmt::format("0x{:04x}", card.device_id)},
                           {"vendor", "Advanced Micro Devices, Inc. [AMD/ATI]"}};
    SetIfAny(info, "uniqueId", UniqueId(card.unique_id));
    SetIfAny(info, "vbiosVersion", card.vbios_version);
    SetIfAny(info, "performanceLevel", ReadSysfsText(card.device_dir / "power_dpm_force_performance_level"));
    SetIfAny(info, "gpuOverdrive", ReadSysfsText(card.device_dir / "pp_sclk_od"));
    SetIfAny(info, "gpuMemoryOverdrive", ReadSysfsText(card.device_dir / "pp_mclk_od"));
    if (card.hwmon && card.hwmon->power_cap) {
      if (auto cap = ReadOptionalParsed(*card.hwmon->power_cap, ParseSysfsUnsigned, nullptr);
          cap && *cap > 0) {
        info["maxPower"] = fmt::format("{:.1f}", static_cast<double>(*cap) / 1e6);
      }
    }
    SetIfAny(info, "sku", Sku(card.vbios_version));
    SetIfAny(info, "sclkRange", ClockRange(card.device_dir / "pp_dpm_sclk"));
    SetIfAny(info, "mclkRange", ClockRange(card.device_dir / "pp_dpm_mclk"));
    gpu_amd.push_back(info);

    nlohmann::json device = {{"key", fmt::format("gpu.{}", card.key_index)},
                             {"card", fmt::format("card{}", card.card_number)},
                             {"name", Series(card)}};
    SetIfAny(device, "pciBusId", card.pci_address);
    if (card.vram_total_bytes) device["memoryTotal"] = std::to_string(*card.vram_total_bytes);
    if (card.gtt_total_bytes) device["gttTotal"] = std::to_string(*card.gtt_total_bytes);
    SetIfAny(device, "serialNumber", card.serial_number);
    SetIfAny(device, "memoryVendor", card.vram_vendor);
    if (card.kfd_gpu_id) device["kfdGpuId"] = *card.kfd_gpu_id;
    devices.push_back(device);
  }
  meta["gpu_count"] = host.nvidia > 0 ? host.nvidia + host.amd : static_cast<unsigned>(cards.size());
  if (host.nvidia == 0) meta["gpu"] = Series(cards.front());
  meta["gpu_amd"] = gpu_amd;
  nlohmann::json amd = {{"devices", devices}};
  if (auto version = DriverVersion(paths)) amd["driverVersion"] = *version;
  meta["runmon"] = {{"amd", amd}};
  return meta;
}

nlohmann::json DescribeToolCards(const std::vector<ToolCard>& cards, unsigned first_index,
                                 const std::optional<std::vector<unsigned>>& device_ids) {
  nlohmann::json meta = nlohmann::json::object();
  nlohmann::json gpu_amd = nlohmann::json::array();
  nlohmann::json devices = nlohmann::json::array();
  std::string first_series;
  for (size_t i = 0; i < cards.size(); ++i) {
    const ToolCard& card = cards[i];
    const auto index = first_index + static_cast<unsigned>(i);
    if (!Selected(device_ids, index)) continue;
    if (gpu_amd.empty()) first_series = card.series;
    nlohmann::json info = {{"id", std::to_string(index)}};
    SetIfAny(info, "uniqueId", card.unique_id);
    SetIfAny(info, "vbiosVersion", card.vbios_version);
    SetIfAny(info, "performanceLevel", card.performance_level);
    SetIfAny(info, "gpuOverdrive", card.gpu_overdrive);
    SetIfAny(info, "gpuMemoryOverdrive", card.memory_overdrive);
    SetIfAny(info, "maxPower", card.max_power);
    SetIfAny(info, "series", card.series);
    SetIfAny(info, "model", card.model);
    SetIfAny(info, "vendor", card.vendor);
    SetIfAny(info, "sku", card.sku);
    SetIfAny(info, "sclkRange", card.sclk_range);
    SetIfAny(info, "mclkRange", card.mclk_range);
    gpu_amd.push_back(info);
    nlohmann::json device = {{"key", fmt::format("gpu.{}", index)}, {"source", "tool"}};
    if (card.pci_bus) device["pciBusId"] = *card.pci_bus;
    if (card.values.vram_total_bytes) device["memoryTotal"] = std::to_string(*card.values.vram_total_bytes);
    devices.push_back(device);
  }
  if (gpu_amd.empty()) return meta;
  meta["gpu_count"] = first_index > 0 ? first_index + static_cast<unsigned>(cards.size())
                                      : static_cast<unsigned>(gpu_amd.size());
  if (first_index == 0 && !first_series.empty()) meta["gpu"] = first_series;
  meta["gpu_amd"] = gpu_amd;
  meta["runmon"] = {{"amd", {{"devices", devices}}}};
  return meta;
}

}  // namespace runmon::amd
