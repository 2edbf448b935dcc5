// cgroup files: /proc/PID/cgroup membership lines, v2 cpu.max and memory.max, v1 memory.limit_in_bytes,
// and the "key value" files (cpu.stat, memory.events, memory.oom_control).
#include "collectors/linux/parse/procfs_parse.hpp"
#include "collectors/linux/parse/text.hpp"

#include <fmt/format.h>

namespace runmon {

Result<std::vector<CgroupMembership>> ParseProcPidCgroup(std::string_view text) {
  std::vector<CgroupMembership> entries;
  text::Lines lines(text);
  std::string_view line;
  while (lines.Next(line)) {
    if (text::Trim(line).empty()) continue;
    const size_t first = line.find(':');
    const size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) return Error{"malformed line"};
    const auto id = text::ParseI64(line.substr(0, first));
    if (!id || *id < 0) return Error{"bad hierarchy id"};
    CgroupMembership entry;
    entry.hierarchy_id = static_cast<long>(*id);
    std::string_view controllers = line.substr(first + 1, second - first - 1);
    while (!controllers.empty()) {
      const size_t comma = controllers.find(',');
      const std::string_view name = controllers.substr(0, comma);
      // "name=systemd" marks a named hierarchy without controllers; keep it as written.
      if (!name.empty()) entry.controllers.emplace_back(name);
      controllers = comma == std::string_view::npos ? std::string_view() : controllers.substr(comma + 1);
    }
    entry.path = std::string(line.substr(second + 1));
    if (entry.path.empty() || entry.path.front() != '/') return Error{"path is not absolute"};
    entries.push_back(std::move(entry));
  }
  return entries;
}

Result<std::optional<double>> ParseCgroupCpuMax(std::string_view text) {
  text::Fields fields(text);
  std::string_view quota, period;
  if (!fields.Next(quota)) return Error{"empty"};
  if (quota == "max") return std::optional<double>();
  if (!fields.Next(period)) return Error{"no period"};
  const auto q = text::ParseU64(quota);
  const auto p = text::ParseU64(period);
  if (!q || !p || *p == 0) return Error{fmt::format("malformed '{}'", text::Trim(text))};
  if (*q == 0) return std::optional<double>();
  return std::optional<double>(static_cast<double>(*q) / static_cast<double>(*p));
}

Result<std::optional<uint64_t>> ParseCgroupMemoryLimit(std::string_view text) {
  const std::string_view value = text::Trim(text);
  if (value == "max" || value.empty()) return std::optional<uint64_t>();
  const auto bytes = text::ParseU64(value);
  if (!bytes) {
    // v1 prints -1 for "unlimited" in some places.
    if (value == "-1") return std::optional<uint64_t>();
    return Error{fmt::format("malformed '{}'", value)};
  }
  if (*bytes == 0 || *bytes >= (uint64_t{1} << 62)) return std::optional<uint64_t>();
  return std::optional<uint64_t>(*bytes);
}

std::optional<uint64_t> FindKeyedValue(std::string_view text, std::string_view key) {
  text::Lines lines(text);
  std::string_view line;
  while (lines.Next(line)) {
    text::Fields fields(line);
    std::string_view name, value;
    if (fields.Next(name) && name == key && fields.Next(value)) return text::ParseU64(value);
  }
  return std::nullopt;
}

}  // namespace runmon
