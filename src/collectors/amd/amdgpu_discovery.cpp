// The card walk (amdgpu_discovery.hpp). What each file holds and which kernels have it: accelerators.md
// §3.2-§3.3. The PCI address comes from the device's uevent (PCI_SLOT_NAME), else from where the device
// symlink leads, so a tree copied without its symlinks resolved still names its cards.
#include "collectors/amd/amdgpu_discovery.hpp"

#include <algorithm>
#include <map>
#include <system_error>

#include <fmt/format.h>

#include "collectors/amd/amdgpu_process_share.hpp"
#include "collectors/amd/amdgpu_sysfs_parse.hpp"
#include "collectors/gpu/gpu_index.hpp"
#include "collectors/linux/parse/text.hpp"
#include "host/file_reader.hpp"

namespace runmon::amd {
namespace {

namespace fs = std::filesystem;

bool Exists(const fs::path& path) {
  std::error_code error;
  return fs::exists(path, error);
}

std::optional<fs::path> IfExists(const fs::path& path) {
  return Exists(path) ? std::optional<fs::path>(path) : std::nullopt;
}

std::string PciAddress(const fs::path& device_dir, const ProblemReporter& report) {
  if (const auto uevent = ReadOptionalFile(device_dir / "uevent", report)) {
    text::Lines lines(*uevent);
    std::string_view line;
    while (lines.Next(line)) {
      if (line.starts_with("PCI_SLOT_NAME=")) return std::string(text::Trim(line.substr(14)));
    }
  }
  std::error_code error;
  const fs::path resolved = fs::canonical(device_dir, error);
  return error ? std::string() : resolved.filename().string();
}

std::optional<TempSensor> SensorOf(std::string_view label) {
  if (label == "edge") return TempSensor::kEdge;
  if (label == "junction") return TempSensor::kJunction;
  if (label == "mem") return TempSensor::kMemory;
  return std::nullopt;
}

std::optional<uint64_t> ReadUnsigned(const fs::path& path, const ProblemReporter& report) {
  return ReadOptionalParsed(path, ParseSysfsUnsigned, report);
}

// The card's hwmon directory (device/hwmon/hwmonM: the one named amdgpu, else the first), or none.
std::optional<HwmonFiles> FindHwmon(const fs::path& device_dir, const ProblemReporter& report) {
  auto names = ListDirectory(device_dir / "hwmon");
  if (!names) return std::nullopt;
  std::vector<std::string> candidates;
  for (const auto& name : *names) {
    if (name.starts_with("hwmon")) candidates.push_back(name);
  }
  if (candidates.empty()) return std::nullopt;
  std::sort(candidates.begin(), candidates.end());
  fs::path dir = device_dir / "hwmon" / candidates.front();
  for (const auto& name : candidates) {
    if (ReadSysfsText(device_dir / "hwmon" / name / "name", report) == "amdgpu") {
      dir = device_dir / "hwmon" / name;
      break;
    }
  }
  HwmonFiles files{.dir = dir};
  for (int sensor = 1; sensor <= 8; ++sensor) {
    const auto input = IfExists(dir / fmt::format("temp{}_input", sensor));
    if (!input) continue;
    const auto kind = SensorOf(ReadSysfsText(dir / fmt::format("temp{}_label", sensor), report));
    if (kind) files.temperatures.emplace_back(*kind, *input);
  }
  files.power = IfExists(dir / "power1_average");
  if (!files.power) files.power = IfExists(dir / "power1_input");
  files.power_cap = IfExists(dir / "power1_cap");
  files.fan_rpm = IfExists(dir / "fan1_input");
  files.fan_max_rpm = ReadUnsigned(dir / "fan1_max", report);
  files.pwm = IfExists(dir / "pwm1");
  files.pwm_enable = IfExists(dir / "pwm1_enable");
  files.pwm_max = ReadUnsigned(dir / "pwm1_max", report);
  files.energy = IfExists(dir / "energy1_input");
  return files;
}

uint32_t ReadPciId(const fs::path& path, const ProblemReporter& report) {
  return ReadOptionalParsed(path, ParsePciId, report).value_or(0);
}

AmdCard DescribeCard(unsigned number, const fs::path& device_dir, const ProblemReporter& report) {
  AmdCard card{.card_number = number, .device_dir = device_dir};
  card.pci_address = PciAddress(device_dir, report);
  card.hwmon = FindHwmon(device_dir, report);
  card.device_id = ReadPciId(device_dir / "device", report);
  card.subsystem_vendor_id = ReadPciId(device_dir / "subsystem_vendor", report);
  card.subsystem_device_id = ReadPciId(device_dir / "subsystem_device", report);
  card.revision = ReadPciId(device_dir / "revision", report);
  card.unique_id = ReadSysfsText(device_dir / "unique_id", report);
  card.vbios_version = ReadSysfsText(device_dir / "vbios_version", report);
  card.product_name = ReadSysfsText(device_dir / "product_name", report);
  card.product_number = ReadSysfsText(device_dir / "product_number", report);
  card.serial_number = ReadSysfsText(device_dir / "serial_number", report);
  card.vram_vendor = ReadSysfsText(device_dir / "mem_info_vram_vendor", report);
  card.vram_total_bytes = ReadUnsigned(device_dir / "mem_info_vram_total", report);
  card.gtt_total_bytes = ReadUnsigned(device_dir / "mem_info_gtt_total", report);
  return card;
}

}  // namespace

CardDiscovery DiscoverCards(const HostPaths& paths, unsigned first_index,
                            const std::optional<std::vector<unsigned>>& device_ids) {
  CardDiscovery found;
  const ProblemReporter report = [&found](const std::string& problem) { found.problems.push_back(problem); };
  const fs::path initstate = paths.Sys("module/amdgpu/initstate");
  const auto state = ReadOptionalFile(initstate, report);
  if (!state) {
    found.absent_reason = "the amdgpu driver is not loaded (no " + initstate.string() + ")";
    return found;
  }
  if (text::Trim(*state) != "live") {
    found.absent_reason = fmt::format("the amdgpu driver is not ready ({} reads '{}')", initstate.string(),
                                      std::string(text::Trim(*state)).substr(0, 40));
    return found;
  }
  found.driver_live = true;
  const fs::path drm = paths.Sys("class/drm");
  auto numbers = gpu::AmdgpuCardNumbers(paths);
  if (!numbers) {
    found.absent_reason = "amdgpu is loaded but " + drm.string() + " cannot be read: " + numbers.error();
    return found;
  }
  found.amdgpu_cards = static_cast<unsigned>(numbers->size());
  const std::map<std::string, uint32_t> kfd_gpu_ids = ReadKfdGpuIds(paths);
  unsigned next_index = first_index;
  for (unsigned number : *numbers) {
    const fs::path device_dir = gpu::DrmCardDevice(paths, number);
    const unsigned key_index = next_index++;
    if (!Selected(device_ids, key_index)) continue;
    AmdCard card = DescribeCard(number, device_dir, report);
    card.key_index = key_index;
    if (auto it = kfd_gpu_ids.find(card.pci_address); it != kfd_gpu_ids.end()) card.kfd_gpu_id = it->second;
    found.cards.push_back(std::move(card));
  }
  if (found.cards.empty()) {
    found.absent_reason = found.amdgpu_cards == 0
                              ? "amdgpu is loaded but drives no card under " + drm.string()
                              : "no AMD GPU is selected by x_stats_gpu_device_ids";
  }
  return found;
}

bool Selected(const std::optional<std::vector<unsigned>>& device_ids, unsigned key_index) {
  return !device_ids || std::find(device_ids->begin(), device_ids->end(), key_index) != device_ids->end();
}

std::string ReadSysfsText(const fs::path& path, const ProblemReporter& report) {
  const auto text = ReadOptionalFile(path, report);
  return text ? std::string(text::Trim(*text)) : std::string();
}

std::optional<std::string> DriverVersion(const HostPaths& paths) {
  const auto text = ReadOptionalFile(paths.Sys("module/amdgpu/version"), nullptr);
  if (!text || text::Trim(*text).empty()) return std::nullopt;
  return std::string(text::Trim(*text));
}

}  // namespace runmon::amd
