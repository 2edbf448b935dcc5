// Parses /proc/loadavg (see loadavg_parse.hpp).
#include "collectors/linux/loadavg/loadavg_parse.hpp"

#include <optional>
#include <string>

#include "collectors/linux/parse/text.hpp"

namespace runmon {
namespace {

// "12.34": digits, '.', two digits (the kernel's "%lu.%02lu").
std::optional<double> ParseLoad(std::string_view field) {
  const size_t point = field.find('.');
  if (point == std::string_view::npos || point == 0 || field.size() - point != 3) return std::nullopt;
  const auto whole = text::ParseU64(field.substr(0, point));
  const auto hundredths = text::ParseU64(field.substr(point + 1));
  // ParseU64 takes no sign. A load beyond 2^40 tasks cannot be true (nor exactly represented below).
  if (!whole || !hundredths || *whole > (uint64_t{1} << 40)) return std::nullopt;
  return static_cast<double>(*whole) + static_cast<double>(*hundredths) / 100.0;
}

}  // namespace

Result<LoadAverages> ParseLoadAverages(std::string_view text) {
  text::Fields fields(text);
  double values[3] = {};
  for (double& value : values) {
    std::string_view field;
    if (!fields.Next(field)) return Error{"fewer than three load averages"};
    const auto load = ParseLoad(field);
    if (!load) return Error{"not a load average: \"" + std::string(field.substr(0, 32)) + "\""};
    value = *load;
  }
  return LoadAverages{values[0], values[1], values[2]};
}

}  // namespace runmon
