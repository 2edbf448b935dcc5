// /proc/diskstats: "major minor name reads merged sectors_read ms writes merged sectors_written ...".
// Kernels print 14, 18 or 20 columns; only the first ten are needed. Sector counts are in 512-byte units
// regardless of the device's logical block size.
#include "collectors/linux/parse/procfs_parse.hpp"
#include "collectors/linux/parse/text.hpp"

#include <fmt/format.h>

namespace runmon {

Result<std::vector<DiskStat>> ParseDiskstats(std::string_view text) {
  std::vector<DiskStat> disks;
  text::Lines lines(text);
  std::string_view line;
  while (lines.Next(line)) {
    if (text::Trim(line).empty()) continue;
    text::Fields fields(line);
    std::string_view column[10];
    size_t count = 0;
    while (count < 10 && fields.Next(column[count])) ++count;
    if (count < 10) return Error{"truncated line"};
    const auto major = text::ParseU64(column[0]);
    const auto minor = text::ParseU64(column[1]);
    const auto read = text::ParseU64(column[5]);
    const auto written = text::ParseU64(column[9]);
    if (!major || !minor || !read || !written || *major > UINT32_MAX || *minor > UINT32_MAX) {
      return Error{fmt::format("malformed line for '{}'", column[2])};
    }
    disks.push_back(DiskStat{static_cast<unsigned>(*major), static_cast<unsigned>(*minor),
                             std::string(column[2]), *read, *written});
  }
  return disks;
}

}  // namespace runmon
