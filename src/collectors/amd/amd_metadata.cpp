// The AMD metadata (amd_metadata.hpp). Strings follow rocm-smi's where W&B copies them from it: the SKU is
// the middle part of the VBIOS part number ("113-D65209-073" -> "D65209"), as rocm_smi_lib derives it; the
// clock ranges are the lowest and highest DPM levels ("500Mhz - 1700Mhz"); the maximum power is the cap in
// watts. A fact the card does not have is left out.
#include "collectors/amd/amd_metadata.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "collectors/amd/amdgpu_sysfs_parse.hpp"
#include "collectors/linux/parse/text.hpp"
#include "host/file_reader.hpp"

namespace runmon::amd {
namespace {

std::string ReadWord(const std::filesystem::path& path) {
  const auto text = ReadOptionalFile(path, nullptr);
  return text ? std::string(text::Trim(*text)) : std::string();
}

std::string Sku(const std::string& vbios_version) {
  const size_t first = vbios_version.find('-');
  if (first == std::string::npos) return {};
  const size_t second = vbios_version.find('-', first + 1);
  if (second == std::string::npos || second == first + 1) return {};
  return vbios_version.substr(first + 1, second - first - 1);
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

nlohmann::json DescribeCards(const HostPaths& paths, const std::vector<AmdCard>& cards,
                             unsigned first_index) {
  nlohmann::json meta = nlohmann::json::object();
  if (cards.empty()) return meta;
  nlohmann::json gpu_amd = nlohmann::json::array();
  nlohmann::json devices = nlohmann::json::array();
  for (const AmdCard& card : cards) {
    nlohmann::json info = {{"id", std::to_string(card.key_index)},
                           {"series", Series(card)},
                           {"model", fmt::format("0x{:04x}", card.device_id)},
                           {"vendor", "Advanced Micro Devices, Inc. [AMD/ATI]"}};
    SetIfAny(info, "uniqueId", card.unique_id);
    SetIfAny(info, "vbiosVersion", card.vbios_version);
    SetIfAny(info, "performanceLevel", ReadWord(card.device_dir / "power_dpm_force_performance_level"));
    SetIfAny(info, "gpuOverdrive", ReadWord(card.device_dir / "pp_sclk_od"));
    SetIfAny(info, "gpuMemoryOverdrive", ReadWord(card.device_dir / "pp_mclk_od"));
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
  meta["gpu_count"] = first_index + static_cast<unsigned>(cards.size());
  if (first_index == 0) meta["gpu"] = Series(cards.front());
  meta["gpu_amd"] = gpu_amd;
  nlohmann::json amd = {{"devices", devices}};
  if (auto version = DriverVersion(paths)) amd["driverVersion"] = *version;
  meta["runmon"] = {{"amd", amd}};
  return meta;
}

}  // namespace runmon::amd
