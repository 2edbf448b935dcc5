// Start-up facts shared by the collectors. The logical CPU count comes from sys/devices/system/cpu/online,
// falling back to the cpuN lines of /proc/stat; the memory total from /proc/meminfo.
#include <unistd.h>

#include "collectors/linux/linux_collectors.hpp"
#include "collectors/linux/parse/procfs_parse.hpp"
#include "host/file_reader.hpp"

namespace runmon {

HostFacts DetectHostFacts(const HostPaths& paths, const Settings& settings, std::optional<long> pid) {
  HostFacts facts;
  if (auto online = ReadFileToString(paths.Sys("devices/system/cpu/online"))) {
    if (auto count = ParseCpuListCount(*online)) facts.logical_cpus = *count;
  }
  if (facts.logical_cpus == 0) {
    if (auto text = ReadFileToString(paths.Proc("stat"))) {
      if (auto stat = ParseProcStat(*text)) {
        for (const auto& cpu : stat->per_cpu) facts.logical_cpus += cpu.has_value() ? 1 : 0;
      }
    }
  }
  if (auto text = ReadFileToString(paths.Proc("meminfo"))) {
    if (auto info = ParseMeminfo(*text)) facts.memory_total_bytes = info->total_bytes;
  }
  if (!settings.no_cgroup) {
    facts.cgroup = DetectCgroupLimits(paths, pid ? std::to_string(*pid) : "self", facts.logical_cpus);
    // A process that is already gone (or not visible) leaves the monitor's own cgroup as the best guess.
    if (pid && facts.cgroup.leaf.empty())
      facts.cgroup = DetectCgroupLimits(paths, "self", facts.logical_cpus);
  }
  const long ticks = ::sysconf(_SC_CLK_TCK);
  if (ticks > 0) facts.clock_ticks_per_second = ticks;
  const long page = ::sysconf(_SC_PAGESIZE);
  if (page > 0) facts.page_size_bytes = page;
  return facts;
}

}  // namespace runmon
