// Reads /proc/PID/cgroup and /proc/PID/mountinfo to find the process's cgroup directories, then walks from
// the leaf up to each hierarchy's mount point:
//  - v2 (the "0::" entry, first cgroup2 mount): memory.max / memory.current, cpu.max, cpu.stat,
//    memory.events. A bind-mounted sub-tree (containers) has a mount root that is stripped from the path.
//  - v1: the hierarchy carrying the "memory" controller (memory.limit_in_bytes, memory.usage_in_bytes,
//    memory.oom_control) and the one carrying "cpu" (cpu.cfs_quota_us / cpu.cfs_period_us, cpu.stat).
// On hybrid hosts a controller lives in exactly one hierarchy, so v2 is tried first for each resource and
// v1 only when v2 has no file for it. Directories outside the mount (above a namespace's root) are not
// visible and so not read. Files that are absent are simply not there on this host; one that exists but
// cannot be read or parsed is reported and skipped.
#include "collectors/linux/cgroup_limits.hpp"

#include <algorithm>
#include <vector>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "collectors/linux/parse/text.hpp"
#include "host/file_reader.hpp"

namespace runmon {
namespace {

// The directories from the leaf up to the mount point (inclusive), leaf first, or empty when the cgroup
// path is not under the mount's root.
std::vector<std::filesystem::path> ChainUnderMount(const HostPaths& paths, const Mount& mount,
                                                   const std::string& cgroup_path) {
  std::string relative;
  if (mount.root == "/") {
    relative = cgroup_path;
  } else if (cgroup_path == mount.root) {
    relative = "/";
  } else if (cgroup_path.starts_with(mount.root + "/")) {
    relative = cgroup_path.substr(mount.root.size());
  } else {
    return {};
  }
  // A cgroup outside the reader's cgroup namespace reads "/../sibling": it is not under this mount.
  for (const auto& part : std::filesystem::path(relative)) {
    if (part == "..") return {};
  }
  const std::filesystem::path base = paths.MapMountPoint(mount.mount_point);
  std::vector<std::filesystem::path> chain;
  std::filesystem::path rel = std::filesystem::path(relative).relative_path();
  for (;;) {
    chain.push_back(rel.empty() ? base : base / rel);
    if (rel.empty()) break;
    rel = rel.parent_path();
    if (chain.size() > 256) break;  // no real hierarchy is that deep
  }
  return chain;
}

bool HasController(const Mount& mount, std::string_view controller) {
  std::string_view rest = mount.super_options;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    if (rest.substr(0, comma) == controller) return true;
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return false;
}

struct MemoryFound {
  uint64_t limit;
  std::filesystem::path usage_file;
};

// Tightest memory limit along a chain, reading `limit_name` and pairing it with `usage_name`.
std::optional<MemoryFound> TightestMemory(const std::vector<std::filesystem::path>& chain,
                                          const char* limit_name, const char* usage_name, bool* any_file,
                                          const ProblemReporter& report) {
  std::optional<MemoryFound> best;
  for (const auto& dir : chain) {
    const auto text = ReadOptionalFile(dir / limit_name, report);
    if (!text) continue;
    *any_file = true;
    const auto limit = ParseCgroupMemoryLimit(*text);
    if (!limit.ok() && report) report(FileError(dir / limit_name, limit.error()));
    if (!limit.ok() || !limit->has_value()) continue;
    if (!best || **limit < best->limit) best = MemoryFound{**limit, dir / usage_name};
  }
  return best;
}

}  // namespace

std::optional<double> CgroupLimits::CpuLimit() const {
  std::optional<double> limit = cpu_quota;
  if (affinity_cpus && *affinity_cpus > 0 && (!limit || *affinity_cpus < *limit)) {
    limit = static_cast<double>(*affinity_cpus);
  }
  if (limit && *limit <= 0) return std::nullopt;
  return limit;
}

CgroupLimits DetectCgroupLimits(const HostPaths& paths, const std::string& pid_dir,
                                unsigned host_logical_cpus, const ProblemReporter& report) {
  CgroupLimits limits;
  const std::filesystem::path pid_path = paths.proc / pid_dir;

  // Affinity narrower than the host counts as a CPU limit (cpusets, taskset). Without the host's count
  // nothing says it is narrower: a mask of every CPU is no limit.
  if (const auto status = ReadOptionalFile(pid_path / "status", report); status && host_logical_cpus > 0) {
    if (const auto list = FindColonField(*status, "Cpus_allowed_list")) {
      const auto count = ParseCpuListCount(*list);
      if (count.ok() && *count > 0 && *count < host_logical_cpus) limits.affinity_cpus = *count;
    }
  }

  const auto memberships = ReadOptionalParsed(pid_path / "cgroup", ParseProcPidCgroup, report);
  const auto mounts = ReadOptionalParsed(pid_path / "mountinfo", ParseMountinfo, report);
  if (!memberships || !mounts) return limits;

  std::vector<std::filesystem::path> v2_chain;
  std::vector<std::filesystem::path> v1_memory_chain, v1_cpu_chain;
  std::string v2_path, v1_memory_path, v1_cpu_path;
  for (const auto& entry : *memberships) {
    if (entry.hierarchy_id == 0 && entry.controllers.empty()) {
      v2_path = entry.path;
      const auto mount =
          std::find_if(mounts->begin(), mounts->end(), [](const Mount& m) { return m.fs_type == "cgroup2"; });
      if (mount != mounts->end()) v2_chain = ChainUnderMount(paths, *mount, entry.path);
      continue;
    }
    for (const auto& controller : entry.controllers) {
      if (controller != "memory" && controller != "cpu") continue;
      for (const auto& mount : *mounts) {
        if (mount.fs_type != "cgroup" || !HasController(mount, controller)) continue;
        auto chain = ChainUnderMount(paths, mount, entry.path);
        if (chain.empty()) continue;
        (controller == "memory" ? v1_memory_chain : v1_cpu_chain) = std::move(chain);
        (controller == "memory" ? v1_memory_path : v1_cpu_path) = entry.path;
        break;
      }
    }
  }

  // Memory: v2 first, v1 when v2 has no memory controller files.
  bool v2_memory_files = false, v1_memory_files = false;
  if (auto found = TightestMemory(v2_chain, "memory.max", "memory.current", &v2_memory_files, report)) {
    limits.memory_version = 2;
    limits.memory_limit_bytes = found->limit;
    limits.memory_usage_file = found->usage_file;
  } else if (!v2_memory_files) {
    if (auto v1 = TightestMemory(v1_memory_chain, "memory.limit_in_bytes", "memory.usage_in_bytes",
                                 &v1_memory_files, report)) {
      limits.memory_version = 1;
      limits.memory_limit_bytes = v1->limit;
      limits.memory_usage_file = v1->usage_file;
    }
  }
  if (!v2_chain.empty() && std::filesystem::exists(v2_chain.front() / "memory.events")) {
    limits.memory_events_file = v2_chain.front() / "memory.events";
  } else if (!v1_memory_chain.empty()) {
    limits.memory_events_file = v1_memory_chain.front() / "memory.oom_control";
  }

  // CPU quota: v2 cpu.max, else v1 cfs quota / period.
  bool v2_cpu_files = false;
  for (const auto& dir : v2_chain) {
    const auto text = ReadOptionalFile(dir / "cpu.max", report);
    if (!text) continue;
    v2_cpu_files = true;
    const auto quota = ParseCgroupCpuMax(*text);
    if (!quota.ok() && report) report(FileError(dir / "cpu.max", quota.error()));
    if (!quota.ok() || !quota->has_value()) continue;
    if (!limits.cpu_quota || **quota < *limits.cpu_quota) {
      limits.cpu_quota = **quota;
      limits.cpu_stat_file = dir / "cpu.stat";
    }
  }
  if (!v2_cpu_files) {
    for (const auto& dir : v1_cpu_chain) {
      const auto quota_text = ReadOptionalFile(dir / "cpu.cfs_quota_us", report);
      const auto period_text = ReadOptionalFile(dir / "cpu.cfs_period_us", report);
      if (!quota_text || !period_text) continue;
      const auto quota = text::ParseI64(text::Trim(*quota_text));
      const auto period = text::ParseI64(text::Trim(*period_text));
      if ((!quota || !period) && report) {
        report(FileError(dir / (quota ? "cpu.cfs_period_us" : "cpu.cfs_quota_us"), "not a number"));
      }
      if (!quota || !period || *quota <= 0 || *period <= 0) continue;
      const double cpus = static_cast<double>(*quota) / static_cast<double>(*period);
      if (!limits.cpu_quota || cpus < *limits.cpu_quota) {
        limits.cpu_quota = cpus;
        limits.cpu_stat_file = dir / "cpu.stat";
      }
    }
  }
  // The path shown as the process's cgroup: the one whose controllers govern it. On hybrid hosts the
  // unified hierarchy often carries no controller and its path ("/") says nothing.
  const bool v2_governs = v2_memory_files || v2_cpu_files;
  if (limits.memory_version == 1 || (!v2_governs && !v1_memory_path.empty())) {
    limits.leaf = v1_memory_path;
  } else if (!v2_governs && !v1_cpu_path.empty()) {
    limits.leaf = v1_cpu_path;
  } else {
    limits.leaf = v2_path;
  }
  return limits;
}

}  // namespace runmon
