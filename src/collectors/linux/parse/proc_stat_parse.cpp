// /proc/stat: the aggregate "cpu" line, the "cpuN" lines and "btime". The tick columns are user, nice,
// system, idle, iowait, irq, softirq, steal, guest, guest_nice; guest time is already counted in user
// and nice, so it is not added again. Older kernels print fewer columns; at least four are required.
#include "collectors/linux/parse/procfs_parse.hpp"
#include "collectors/linux/parse/text.hpp"

#include <fmt/format.h>

namespace runmon {
namespace {

constexpr size_t kMaxCpus = 65536;

std::optional<CpuTimes> ParseCpuColumns(text::Fields fields) {
  uint64_t column[8] = {};
  size_t count = 0;
  std::string_view field;
  while (count < 8 && fields.Next(field)) {
    const auto value = text::ParseU64(field);
    if (!value) return std::nullopt;
    column[count++] = *value;
  }
  if (count < 4) return std::nullopt;
  CpuTimes t;
  const uint64_t busy_parts[] = {column[0], column[1], column[2], column[5], column[6], column[7]};
  for (uint64_t part : busy_parts) {
    if (t.busy > UINT64_MAX - part) return std::nullopt;
    t.busy += part;
  }
  const uint64_t idle = column[3];
  const uint64_t iowait = column[4];
  if (idle > UINT64_MAX - t.busy || iowait > UINT64_MAX - t.busy - idle) return std::nullopt;
  t.total = t.busy + idle + iowait;
  return t;
}

}  // namespace

Result<ProcStat> ParseProcStat(std::string_view text) {
  ProcStat stat;
  bool saw_aggregate = false;
  text::Lines lines(text);
  std::string_view line;
  while (lines.Next(line)) {
    text::Fields fields(line);
    std::string_view name;
    if (!fields.Next(name)) continue;
    if (name == "cpu") {
      const auto times = ParseCpuColumns(fields);
      if (!times) return Error{"malformed aggregate cpu line"};
      stat.all = *times;
      saw_aggregate = true;
    } else if (name.starts_with("cpu")) {
      const auto index = text::ParseU64(name.substr(3));
      if (!index || *index >= kMaxCpus) return Error{fmt::format("bad CPU name '{}'", name)};
      const auto times = ParseCpuColumns(fields);
      if (!times) return Error{fmt::format("malformed {} line", name)};
      if (stat.per_cpu.size() <= *index) stat.per_cpu.resize(*index + 1);
      stat.per_cpu[*index] = *times;
    } else if (name == "btime") {
      std::string_view value;
      if (fields.Next(value)) stat.boot_time_seconds = text::ParseU64(value);
    }
  }
  if (!saw_aggregate) return Error{"no aggregate cpu line"};
  return stat;
}

}  // namespace runmon
