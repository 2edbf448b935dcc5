// /proc/PID/stat, statm, schedstat, task/TID/children and status fields, and /proc/loadavg's last PID. In
// stat the second field is the command name in parentheses and may itself hold spaces and ')' ("(my (weird)
// cmd)"), so fields are counted from the last ')'. CPU times that would overflow when summed are refused
// here, so no caller has to check a sum.
#include "collectors/linux/parse/procfs_parse.hpp"
#include "collectors/linux/parse/text.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace runmon {

Result<PidStat> ParsePidStat(std::string_view text) {
  const size_t open = text.find('(');
  const size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return Error{"/proc/PID/stat: no command name in parentheses"};
  }
  PidStat stat;
  const auto pid = text::ParseI64(text::Trim(text.substr(0, open)));
  if (!pid || *pid <= 0) return Error{"/proc/PID/stat: bad pid"};
  stat.pid = static_cast<long>(*pid);

  // Fields after ')' start at field 3 (state).
  text::Fields fields(text.substr(close + 1));
  std::string_view field;
  int number = 3;
  bool have_start = false;
  while (fields.Next(field) && number <= 24) {
    switch (number) {
      case 3:
        if (field.size() != 1) return Error{"/proc/PID/stat: bad state"};
        stat.state = field[0];
        break;
      case 4: {
        const auto v = text::ParseI64(field);
        if (!v) return Error{"/proc/PID/stat: bad ppid"};
        stat.ppid = static_cast<long>(*v);
        break;
      }
      case 14:
      case 15: {
        const auto v = text::ParseU64(field);
        if (!v) return Error{"/proc/PID/stat: bad cpu time"};
        (number == 14 ? stat.utime_ticks : stat.stime_ticks) = *v;
        break;
      }
      case 16:
      case 17: {
        // Signed in the kernel's format, never negative: each is at most INT64_MAX, so their sum fits.
        const auto v = text::ParseI64(field);
        if (!v || *v < 0) return Error{"/proc/PID/stat: bad children cpu time"};
        stat.children_cpu_ticks += static_cast<uint64_t>(*v);
        break;
      }
      case 20: {
        const auto v = text::ParseI64(field);
        if (!v || *v < 0) return Error{"/proc/PID/stat: bad thread count"};
        stat.num_threads = static_cast<long>(*v);
        break;
      }
      case 22: {
        const auto v = text::ParseU64(field);
        if (!v) return Error{"/proc/PID/stat: bad start time"};
        stat.start_time_ticks = *v;
        have_start = true;
        break;
      }
      case 24: {
        // Resident pages, as statm's second field counts them; a bad value is no value, not a bad line.
        const auto v = text::ParseI64(field);
        if (v && *v >= 0) stat.rss_pages = static_cast<uint64_t>(*v);
        break;
      }
      default:
        break;
    }
    ++number;
  }
  if (!have_start) return Error{"/proc/PID/stat: truncated"};
  if (stat.utime_ticks > UINT64_MAX - stat.stime_ticks) return Error{"/proc/PID/stat: cpu time overflows"};
  return stat;
}

Result<uint64_t> ParsePidStatmResidentPages(std::string_view text) {
  text::Fields fields(text);
  std::string_view size, resident;
  if (!fields.Next(size) || !fields.Next(resident)) return Error{"/proc/PID/statm: truncated"};
  const auto pages = text::ParseU64(resident);
  if (!pages) return Error{"/proc/PID/statm: bad resident field"};
  return *pages;
}

std::optional<uint64_t> PagesToBytes(uint64_t pages, uint64_t page_bytes) {
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(pages, page_bytes, &bytes)) return std::nullopt;
  return bytes;
}

Result<uint64_t> ParsePidSchedstatRuntimeNs(std::string_view text) {
  text::Fields fields(text);
  std::string_view runtime, wait, slices, extra;
  if (!fields.Next(runtime) || !fields.Next(wait) || !fields.Next(slices) || fields.Next(extra)) {
    return Error{"/proc/PID/schedstat: expected 3 fields"};
  }
  const auto ns = text::ParseU64(runtime);
  if (!ns || !text::ParseU64(wait) || !text::ParseU64(slices)) return Error{"/proc/PID/schedstat: bad field"};
  return *ns;
}

Result<long> ParseLoadavgLastPid(std::string_view text) {
  text::Fields fields(text);
  std::string_view field, last;
  size_t count = 0;
  while (fields.Next(field)) {
    last = field;
    ++count;
  }
  if (count != 5) return Error{"/proc/loadavg: expected 5 fields"};
  const auto pid = text::ParseI64(last);
  if (!pid || *pid < 0 || *pid > INT32_MAX)
    return Error{fmt::format("/proc/loadavg: bad last pid '{}'", last)};
  return static_cast<long>(*pid);
}

Result<std::vector<long>> ParseChildrenList(std::string_view text) {
  std::vector<long> pids;
  text::Fields fields(text);
  std::string_view field;
  while (fields.Next(field)) {
    const auto pid = text::ParseI64(field);
    if (!pid || *pid <= 0 || *pid > INT32_MAX)
      return Error{fmt::format("children list: bad pid '{}'", field)};
    pids.push_back(static_cast<long>(*pid));
  }
  return pids;
}

Result<unsigned> ParseCpuListCount(std::string_view text) {
  text = text::Trim(text);
  if (text.empty()) return Error{"empty CPU list"};
  // Ranges are merged, so a CPU listed twice counts once.
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (;;) {
    const size_t comma = text.find(',');
    const std::string_view range = text.substr(0, comma);
    const size_t dash = range.find('-');
    const auto first = text::ParseU64(range.substr(0, dash));
    const auto last = dash == std::string_view::npos ? first : text::ParseU64(range.substr(dash + 1));
    if (!first || !last || *last < *first || *last >= (1u << 20)) {
      return Error{fmt::format("bad CPU range '{}'", range)};
    }
    ranges.emplace_back(*first, *last);
    if (ranges.size() > (1u << 16)) return Error{"CPU list too long"};
    if (comma == std::string_view::npos) break;
    text = text.substr(comma + 1);
  }
  std::sort(ranges.begin(), ranges.end());
  uint64_t count = 0;
  uint64_t covered_to = 0;  // one past the highest CPU counted so far
  for (const auto& [first, last] : ranges) {
    const uint64_t from = std::max(first, covered_to);
    if (last + 1 > from) count += last + 1 - from;
    covered_to = std::max(covered_to, last + 1);
  }
  return static_cast<unsigned>(count);
}

std::optional<std::string_view> FindColonField(std::string_view text, std::string_view key) {
  text::Lines lines(text);
  std::string_view line;
  while (lines.Next(line)) {
    if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == ':') {
      return text::Trim(line.substr(key.size() + 1));
    }
  }
  return std::nullopt;
}

std::optional<std::string_view> FindEnvironValue(std::string_view environ, std::string_view name) {
  while (!environ.empty()) {
    const size_t end = environ.find('\0');
    const std::string_view entry = environ.substr(0, end);
    if (entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=') {
      return entry.substr(name.size() + 1);
    }
    if (end == std::string_view::npos) break;
    environ.remove_prefix(end + 1);
  }
  return std::nullopt;
}

}  // namespace runmon
