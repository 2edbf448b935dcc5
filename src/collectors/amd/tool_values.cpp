// Numbers, plausibility checks and PCI addresses shared by the rocm-smi and amd-smi parsers (see
// tool_values.hpp).
#include "collectors/amd/tool_values.hpp"

#include <cctype>
#include <cmath>
#include <limits>

#include "collectors/linux/parse/text.hpp"

namespace runmon::amd {
namespace {

// Past these a reading is a broken sensor or a misparse, not a GPU: no board draws 10 kW, clocks a core at
// 100 GHz or spins a fan at 100 000 RPM; silicon does not run at 200 °C.
constexpr double kMaxPowerWatts = 10'000;
constexpr double kMaxClockMhz = 100'000;
constexpr double kMaxFanRpm = 100'000;
constexpr double kMaxCelsius = 200;
constexpr double kAbsoluteZeroCelsius = -273.15;

void KeepIf(std::optional<double>& value, double low, double high) {
  if (value && !(std::isfinite(*value) && *value >= low && *value <= high)) value.reset();
}

void KeepPercent(std::optional<double>& value) {
  KeepIf(value, 0, 100);
}

void KeepCelsius(std::optional<double>& value) {
  if (value && !(std::isfinite(*value) && *value > kAbsoluteZeroCelsius && *value <= kMaxCelsius))
    value.reset();
}

void KeepUsedWithinTotal(std::optional<uint64_t>& used, const std::optional<uint64_t>& total) {
  if (used && total && *used > *total) used.reset();
}

bool IsHex(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

bool AllHex(std::string_view s) {
  for (char c : s) {
    if (!IsHex(c)) return false;
  }
  return !s.empty();
}

}  // namespace

std::optional<double> ParseToolNumber(std::string_view text, std::initializer_list<std::string_view> units) {
  text = text::Trim(text);
  if (text.size() >= 2 && text.front() == '(' && text.back() == ')')
    text = text::Trim(text.substr(1, text.size() - 2));
  for (std::string_view unit : units) {
    if (text.size() > unit.size() && text.ends_with(unit)) {
      text = text::Trim(text.substr(0, text.size() - unit.size()));
      break;
    }
  }
  return text::ParseDecimal(text);
}

std::optional<uint64_t> ParseToolBytes(std::string_view text) {
  return text::ParseU64(text::Trim(text));
}

std::optional<uint64_t> BytesFromDouble(double value) {
  // 2^63 is exact as a double; every double below it that is whole converts exactly.
  if (!std::isfinite(value) || value < 0 || value >= 9223372036854775808.0 || value != std::floor(value)) {
    return std::nullopt;
  }
  return static_cast<uint64_t>(value);
}

std::optional<std::string> NormalizePciBus(std::string_view text) {
  text = text::Trim(text);
  std::string domain = "0000";
  const size_t first_colon = text.find(':');
  if (first_colon == std::string_view::npos) return std::nullopt;
  if (text.find(':', first_colon + 1) != std::string_view::npos) {
    // Linux domains are 4 hex digits, more behind a VMD controller ("10000:e1:00.0").
    const std::string_view given = text.substr(0, first_colon);
    if (given.size() < 4 || given.size() > 8 || !AllHex(given)) return std::nullopt;
    domain = std::string(given);
    text.remove_prefix(first_colon + 1);
  }
  // "BB:DD.F"
  if (text.size() != 7 || text[2] != ':' || text[5] != '.' || !AllHex(text.substr(0, 2)) ||
      !AllHex(text.substr(3, 2)) || text[6] < '0' || text[6] > '7') {
    return std::nullopt;
  }
  std::string out = domain + ":" + std::string(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void DropImpossibleValues(CardValues& values) {
  KeepPercent(values.busy_percent);
  KeepPercent(values.memory_busy_percent);
  KeepPercent(values.vram_used_percent);
  KeepPercent(values.fan_percent);
  KeepPercent(values.memory_overdrive_percent);
  KeepUsedWithinTotal(values.vram_used_bytes, values.vram_total_bytes);
  KeepUsedWithinTotal(values.gtt_used_bytes, values.gtt_total_bytes);
  KeepIf(values.power_watts, 0, kMaxPowerWatts);
  // A cap of 0 W is what a board without one reports: it cannot be the denominator of a share.
  KeepIf(values.power_cap_watts, 1e-9, kMaxPowerWatts);
  KeepCelsius(values.temp_edge_celsius);
  KeepCelsius(values.temp_junction_celsius);
  KeepCelsius(values.temp_memory_celsius);
  KeepIf(values.sclk_mhz, 0, kMaxClockMhz);
  KeepIf(values.mclk_mhz, 0, kMaxClockMhz);
  KeepIf(values.fan_rpm, 0, kMaxFanRpm);
  KeepIf(values.energy_microjoules, 0, std::numeric_limits<double>::max());
}

std::string MetadataText(std::string_view text) {
  text = text::Trim(text);
  if (text.starts_with("N/A") || text == "Unsupported" || text == "Unknown") return {};
  return std::string(text);
}

}  // namespace runmon::amd
