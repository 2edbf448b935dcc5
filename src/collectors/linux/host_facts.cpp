// Start-up facts shared by the collectors. The logical CPU count comes from sys/devices/system/cpu/online,
// falling back to the cpuN lines of /proc/stat and then to sys/devices/system/cpu/present (a container or
// an old kernel may lack some of them); the memory total from /proc/meminfo; each vendor's GPUs for the
// GPU index rule (gpu/gpu_index.hpp), counted once here for both GPU families. A count that cannot be read
// stays 0, "unknown", so nothing is measured against it. A file that exists but cannot be read or parsed is
// reported, never waited on (file_reader.hpp).
#include <unistd.h>

#include "collectors/gpu/gpu_index.hpp"
#include "collectors/linux/linux_collectors.hpp"
#include "collectors/linux/parse/procfs_parse.hpp"
#include "host/file_reader.hpp"

namespace runmon {
namespace {

unsigned CpuListCount(const std::filesystem::path& path, const ProblemReporter& report) {
  return ReadOptionalParsed(path, ParseCpuListCount, report).value_or(0);
}

}  // namespace

HostFacts DetectHostFacts(const HostPaths& paths, const Settings& settings, std::optional<long> pid,
                          const ProblemReporter& report) {
  HostFacts facts;
  facts.logical_cpus = CpuListCount(paths.Sys("devices/system/cpu/online"), report);
  if (facts.logical_cpus == 0) {
    if (auto stat = ReadOptionalParsed(paths.Proc("stat"), ParseProcStat, report)) {
      for (const auto& cpu : stat->per_cpu) facts.logical_cpus += cpu.has_value() ? 1 : 0;
    }
  }
  if (facts.logical_cpus == 0)
    facts.logical_cpus = CpuListCount(paths.Sys("devices/system/cpu/present"), report);
  if (auto info = ReadOptionalParsed(paths.Proc("meminfo"), ParseMeminfo, report)) {
    facts.memory_total_bytes = info->total_bytes;
  }
  if (!settings.no_cgroup) {
    facts.cgroup = DetectCgroupLimits(paths, pid ? std::to_string(*pid) : "self", facts.logical_cpus, report);
    // A process that is already gone (or not visible) leaves the monitor's own cgroup as the best guess.
    if (pid && facts.cgroup.leaf.empty())
      facts.cgroup = DetectCgroupLimits(paths, "self", facts.logical_cpus, report);
  }
  facts.gpus = gpu::CountHostGpus(paths);
  const long ticks = ::sysconf(_SC_CLK_TCK);
  if (ticks > 0) facts.clock_ticks_per_second = ticks;
  const long page = ::sysconf(_SC_PAGESIZE);
  if (page > 0) facts.page_size_bytes = page;
  return facts;
}

}  // namespace runmon
