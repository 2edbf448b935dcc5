// Detection of the resource limits that apply to a process through its cgroups (v2, v1 and hybrid
// hosts). Unlike W&B, which reads only the leaf of the v2 hierarchy, runmon walks the parent chain and
// keeps the tightest limit (metrics.md A.2.9): a pod limit set on the parent binds the container too.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "host/file_reader.hpp"
#include "host/host_paths.hpp"

namespace runmon {

struct CgroupLimits {
  int memory_version = 0;  // 0: no memory limit found; else the hierarchy version it came from
  std::optional<uint64_t> memory_limit_bytes;
  std::filesystem::path memory_usage_file;   // usage against that limit (memory.current / usage_in_bytes)
  std::optional<double> cpu_quota;           // CPUs, from the tightest quota / period on the chain
  std::optional<unsigned> affinity_cpus;     // Cpus_allowed_list, only when narrower than the host
  std::filesystem::path cpu_stat_file;       // cpu.stat of the cgroup that holds the quota (throttling)
  std::filesystem::path memory_events_file;  // v2 memory.events or v1 memory.oom_control of the leaf
  std::string leaf;                          // the process's cgroup path, for metadata

  // The smaller positive of quota and affinity, or nullopt.
  std::optional<double> CpuLimit() const;
  bool LimitsDetected() const { return memory_limit_bytes.has_value() || CpuLimit().has_value(); }
};

// `pid_dir` is "self" or a PID: the process whose cgroup, mountinfo and status are read. An affinity mask
// counts as a limit only when `host_logical_cpus` is known (not 0) and the mask is narrower. Files that
// exist but cannot be read or parsed are skipped and handed to `report`.
CgroupLimits DetectCgroupLimits(const HostPaths& paths, const std::string& pid_dir,
                                unsigned host_logical_cpus, const ProblemReporter& report = {});

}  // namespace runmon
