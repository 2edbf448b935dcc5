// The per-tick sysfs reads of one card (amdgpu_sampling.hpp). Values that cannot be true (a busy share
// over 100, more VRAM in use than there is, a temperature or power no card reaches) are refused here with
// the tools' own rules (tool_values.hpp DropImpossibleValues), as the parsers refuse malformed text.
#include "collectors/amd/amdgpu_sampling.hpp"

#include <cerrno>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "collectors/amd/amdgpu_sysfs_parse.hpp"
#include "collectors/amd/tool_values.hpp"

namespace runmon::amd {
namespace {

std::optional<double> AsDouble(std::optional<uint64_t> value) {
  return value ? std::optional<double>(static_cast<double>(*value)) : std::nullopt;
}

}  // namespace

CardSampler::FilePtr CardSampler::Open(const std::filesystem::path& path, Generated generated) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return nullptr;
  auto file = std::make_unique<File>();
  file->file = KeptOpenFile(path, generated);
  return file;
}

CardSampler::CardSampler(const AmdCard& card)
    : vram_total_bytes_(card.vram_total_bytes), gtt_total_bytes_(card.gtt_total_bytes) {
  const auto& dir = card.device_dir;
  busy_ = Open(dir / "gpu_busy_percent");
  memory_busy_ = Open(dir / "mem_busy_percent");
  vram_used_ = Open(dir / "mem_info_vram_used");
  gtt_used_ = Open(dir / "mem_info_gtt_used");
  sclk_ = Open(dir / "pp_dpm_sclk", Generated::kInRecords);
  mclk_ = Open(dir / "pp_dpm_mclk", Generated::kInRecords);
  memory_overdrive_ = Open(dir / "pp_mclk_od");
  if (!card.hwmon) return;
  const HwmonFiles& hwmon = *card.hwmon;
  for (const auto& [sensor, path] : hwmon.temperatures) temperatures_.emplace_back(sensor, Open(path));
  if (hwmon.power) power_ = Open(*hwmon.power);
  if (hwmon.power_cap) power_cap_ = Open(*hwmon.power_cap);
  if (hwmon.fan_rpm) fan_rpm_ = Open(*hwmon.fan_rpm);
  if (hwmon.pwm) pwm_ = Open(*hwmon.pwm);
  if (hwmon.pwm_enable) pwm_enable_ = Open(*hwmon.pwm_enable);
  if (hwmon.energy) energy_ = Open(*hwmon.energy);
  fan_max_rpm_ = hwmon.fan_max_rpm;
  pwm_max_ = hwmon.pwm_max;
}

void CardSampler::Fail(File& file, const std::string& why, std::vector<std::string>& problems) {
  if (file.reported) return;
  file.reported = true;
  problems.push_back(FileError(file.file.path(), why));
}

template <typename Parse>
auto CardSampler::ReadParsed(const FilePtr& file, Parse&& parse, std::vector<std::string>& problems)
    -> std::optional<std::remove_cvref_t<decltype(*parse(std::string_view()))>> {
  if (!file) return std::nullopt;
  auto text = file->file.Read();
  if (!text) {
    Fail(*file, text.error(), problems);
    return std::nullopt;
  }
  auto value = parse(*text);
  if (!value) {
    Fail(*file, value.error(), problems);
    return std::nullopt;
  }
  return *value;
}

std::optional<uint64_t> CardSampler::ReadUnsigned(const FilePtr& file, std::vector<std::string>& problems) {
  return ReadParsed(file, ParseSysfsUnsigned, problems);
}

std::optional<double> CardSampler::ReadDpm(const FilePtr& file, std::vector<std::string>& problems) {
  return ReadParsed(file, ParseCurrentDpmLevelMhz, problems);
}

CardValues CardSampler::Sample(std::vector<std::string>& problems) {
  CardValues values;
  values.busy_percent = AsDouble(ReadUnsigned(busy_, problems));
  values.memory_busy_percent = AsDouble(ReadUnsigned(memory_busy_, problems));
  values.vram_total_bytes = vram_total_bytes_;
  values.vram_used_bytes = ReadUnsigned(vram_used_, problems);
  values.gtt_total_bytes = gtt_total_bytes_;
  values.gtt_used_bytes = ReadUnsigned(gtt_used_, problems);
  values.sclk_mhz = ReadDpm(sclk_, problems);
  values.mclk_mhz = ReadDpm(mclk_, problems);
  values.memory_overdrive_percent = AsDouble(ReadUnsigned(memory_overdrive_, problems));
  for (const auto& [sensor, file] : temperatures_) {
    const auto millidegrees = ReadUnsigned(file, problems);
    if (!millidegrees) continue;
    const double celsius = static_cast<double>(*millidegrees) / 1000.0;
    switch (sensor) {
      case TempSensor::kEdge:
        values.temp_edge_celsius = celsius;
        break;
      case TempSensor::kJunction:
        values.temp_junction_celsius = celsius;
        break;
      case TempSensor::kMemory:
        values.temp_memory_celsius = celsius;
        break;
    }
  }
  if (auto microwatts = ReadUnsigned(power_, problems))
    values.power_watts = static_cast<double>(*microwatts) / 1e6;
  if (auto microwatts = ReadUnsigned(power_cap_, problems); microwatts && *microwatts > 0) {
    values.power_cap_watts = static_cast<double>(*microwatts) / 1e6;
  }
  if (auto rpm = ReadUnsigned(fan_rpm_, problems)) {
    values.fan_rpm = static_cast<double>(*rpm);  // over fan1_max: a share over 100, dropped below
    if (fan_max_rpm_ && *fan_max_rpm_ > 0)
      values.fan_percent = 100.0 * static_cast<double>(*rpm) / static_cast<double>(*fan_max_rpm_);
  }
  // nvtop's rule: the PWM duty cycle when fan control is on (pwm1_enable 1 manual, 2 auto), else RPM/max.
  if (auto enable = ReadUnsigned(pwm_enable_, problems); enable && *enable != 0) {
    if (auto pwm = ReadUnsigned(pwm_, problems)) {
      const double maximum = static_cast<double>(pwm_max_.value_or(255));
      if (maximum > 0 && static_cast<double>(*pwm) <= maximum)
        values.fan_percent = 100.0 * static_cast<double>(*pwm) / maximum;
    }
  }
  values.energy_microjoules = AsDouble(ReadUnsigned(energy_, problems));
  DropImpossibleValues(values);  // what no card reads (a 900,000 °C edge, 99 MW) never leaves runmon
  return values;
}

}  // namespace runmon::amd
