// /proc/net/dev: two header lines, then "  iface: rx_bytes rx_packets ... (8 rx columns) tx_bytes ...".
// Interface names may contain ':' only before the last one ("eth0:1" aliases are not listed separately
// by modern kernels), so the name ends at the last ':' before the numbers.
#include "collectors/linux/parse/procfs_parse.hpp"
#include "collectors/linux/parse/text.hpp"

#include <fmt/format.h>

namespace runmon {

Result<std::vector<NetDevStat>> ParseNetDev(std::string_view text) {
  std::vector<NetDevStat> devices;
  text::Lines lines(text);
  std::string_view line;
  while (lines.Next(line)) {
    const size_t colon = line.rfind(':');
    if (colon == std::string_view::npos) continue;  // header lines
    const std::string_view name = text::Trim(line.substr(0, colon));
    if (name.empty() || name.find('|') != std::string_view::npos) continue;
    text::Fields fields(line.substr(colon + 1));
    std::string_view column[9];
    size_t count = 0;
    while (count < 9 && fields.Next(column[count])) ++count;
    if (count < 9) return Error{fmt::format("truncated line for '{}'", name)};
    const auto rx = text::ParseU64(column[0]);
    const auto tx = text::ParseU64(column[8]);
    if (!rx || !tx) return Error{fmt::format("malformed line for '{}'", name)};
    devices.push_back(NetDevStat{std::string(name), *rx, *tx});
  }
  return devices;
}

}  // namespace runmon
