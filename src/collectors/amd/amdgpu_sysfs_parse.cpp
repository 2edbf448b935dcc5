// The amdgpu sysfs value parsers (amdgpu_sysfs_parse.hpp).
#include "collectors/amd/amdgpu_sysfs_parse.hpp"

#include <charconv>
#include <optional>
#include <string>

#include "collectors/linux/parse/text.hpp"

namespace runmon::amd {
namespace {

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// "800Mhz" (the kernel's spelling) or "800MHz": the number.
std::optional<uint64_t> ParseMegahertz(std::string_view field) {
  if (field.size() < 4 || !EqualsIgnoringCase(field.substr(field.size() - 3), "mhz")) return std::nullopt;
  return text::ParseU64(field.substr(0, field.size() - 3));
}

}  // namespace

std::optional<unsigned> ParseCardName(std::string_view name) {
  if (!name.starts_with("card") || name.size() == 4) return std::nullopt;
  name.remove_prefix(4);
  if (name.size() > 1 && name.front() == '0') return std::nullopt;  // "card03" is not card3's second name
  unsigned number = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), number);
  if (ec != std::errc() || end != name.data() + name.size()) return std::nullopt;
  return number;
}

Result<uint64_t> ParseSysfsUnsigned(std::string_view text) {
  const std::string_view value = text::Trim(text);
  if (value.empty()) return Error{"empty"};
  if (auto parsed = text::ParseU64(value)) return *parsed;
  return Error{"not a non-negative integer: '" + std::string(value.substr(0, 40)) + "'"};
}

Result<uint32_t> ParsePciId(std::string_view text) {
  const std::string_view value = text::Trim(text);
  if (value.size() < 3 || value.size() > 10 || value[0] != '0' || (value[1] != 'x' && value[1] != 'X')) {
    return Error{"not a PCI id: '" + std::string(value.substr(0, 40)) + "'"};
  }
  uint32_t id = 0;
  const char* end = value.data() + value.size();
  const auto [stop, ec] = std::from_chars(value.data() + 2, end, id, 16);
  if (ec != std::errc() || stop != end) return Error{"not a PCI id: '" + std::string(value) + "'"};
  return id;
}

Result<DpmLevels> ParseDpmLevels(std::string_view text) {
  text::Lines lines(text);
  std::string_view line;
  DpmLevels levels;
  while (lines.Next(line)) {
    line = text::Trim(line);
    if (line.empty()) continue;
    text::Fields fields(line);
    std::string_view level, frequency, mark, extra;
    if (!fields.Next(level) || !fields.Next(frequency) || level.size() < 2 || level.back() != ':') {
      return Error{"not a DPM level line: '" + std::string(line.substr(0, 60)) + "'"};
    }
    const auto megahertz = ParseMegahertz(frequency);
    const std::string_view name = level.substr(0, level.size() - 1);
    const bool deep_sleep = name == "S";
    if (!megahertz) return Error{"not a frequency: '" + std::string(frequency.substr(0, 40)) + "'"};
    if (!deep_sleep && !text::ParseU64(name))
      return Error{"not a DPM level: '" + std::string(name.substr(0, 20)) + "'"};
    if (!deep_sleep) levels.mhz.push_back(static_cast<double>(*megahertz));
    if (!fields.Next(mark)) continue;
    if (mark != "*" || fields.Next(extra)) {
      return Error{"not a DPM level line: '" + std::string(line.substr(0, 60)) + "'"};
    }
    if (levels.current) return Error{"two current DPM levels"};
    levels.current = static_cast<double>(*megahertz);
  }
  if (levels.mhz.empty() && !levels.current) return Error{"no DPM levels"};
  return levels;
}

Result<double> ParseCurrentDpmLevelMhz(std::string_view text) {
  auto levels = ParseDpmLevels(text);
  if (!levels) return Error{levels.error()};
  if (!levels->current) return Error{"no current DPM level (no line marked '*')"};
  return *levels->current;
}

}  // namespace runmon::amd
