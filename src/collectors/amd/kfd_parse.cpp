// KFD's sysfs files (see kfd_parse.hpp).
#include "collectors/amd/kfd_parse.hpp"

#include <fmt/format.h>

#include "collectors/linux/parse/text.hpp"

namespace runmon::amd {

Result<KfdNodeProperties> ParseKfdNodeProperties(std::string_view text) {
  KfdNodeProperties properties;
  text::Lines lines(text);
  std::string_view line;
  while (lines.Next(line)) {
    text::Fields fields(line);
    std::string_view name, value, extra;
    if (!fields.Next(name)) continue;
    std::optional<uint64_t>* target = nullptr;
    if (name == "location_id")
      target = &properties.location_id;
    else if (name == "domain")
      target = &properties.domain;
    else
      continue;
    if (!fields.Next(value) || fields.Next(extra)) return Error{std::string(name) + ": expected one value"};
    const auto number = text::ParseU64(value);
    if (!number) return Error{std::string(name) + ": not an unsigned integer"};
    *target = *number;
  }
  return properties;
}

std::optional<std::string> KfdNodePciAddress(const KfdNodeProperties& properties) {
  if (!properties.location_id || !properties.domain) return std::nullopt;
  const uint64_t location = *properties.location_id & 0xffff;
  const uint64_t devfn = location & 0xff;
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", *properties.domain, location >> 8, devfn >> 3, devfn & 7);
}

}  // namespace runmon::amd
