// /proc/meminfo: "Name:   value kB" lines. Values without a unit are taken as bytes (none exist today
// among the fields read, but HugePages_* are plain counts and are skipped).
#include "collectors/linux/parse/procfs_parse.hpp"
#include "collectors/linux/parse/text.hpp"

namespace runmon {

std::optional<uint64_t> Meminfo::Available() const {
  if (available_bytes) return available_bytes;
  if (!free_bytes || !buffers_bytes || !cached_bytes) return std::nullopt;
  uint64_t sum = *free_bytes;
  for (uint64_t part : {*buffers_bytes, *cached_bytes}) {
    if (part > UINT64_MAX - sum) return std::nullopt;
    sum += part;
  }
  return sum;
}

Result<Meminfo> ParseMeminfo(std::string_view text) {
  Meminfo info;
  bool have_total = false;
  text::Lines lines(text);
  std::string_view line;
  while (lines.Next(line)) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, colon);
    std::optional<uint64_t>* target = nullptr;
    std::optional<uint64_t> total;
    if (name == "MemTotal")
      target = &total;
    else if (name == "MemAvailable")
      target = &info.available_bytes;
    else if (name == "MemFree")
      target = &info.free_bytes;
    else if (name == "Buffers")
      target = &info.buffers_bytes;
    else if (name == "Cached")
      target = &info.cached_bytes;
    else
      continue;

    text::Fields fields(line.substr(colon + 1));
    std::string_view number, unit;
    if (!fields.Next(number)) return Error{"missing value"};
    const auto value = text::ParseU64(number);
    if (!value) return Error{"bad value"};
    uint64_t multiplier = 1;
    if (fields.Next(unit)) {
      if (unit != "kB") return Error{"unknown unit"};
      multiplier = 1024;
    }
    if (*value > UINT64_MAX / multiplier) return Error{"value out of range"};
    *target = *value * multiplier;
    if (target == &total) {
      info.total_bytes = *total;
      have_total = true;
    }
  }
  if (!have_total || info.total_bytes == 0) return Error{"no MemTotal"};
  return info;
}

}  // namespace runmon
