// The Linux host and process collectors, and the facts they share (CPU count, memory total, cgroup limits),
// detected once at start-up. Each factory returns a collector reading only through ctx.paths.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "collectors/collector.hpp"
#include "collectors/linux/cgroup_limits.hpp"

namespace runmon {

// How much a kernel counter grew between two readings. A counter that went backwards was reset (a device
// or interface that came back, a wrap) and counts from zero.
inline uint64_t CounterIncrease(uint64_t now, uint64_t before) {
  return now >= before ? now - before : now;
}

struct HostFacts {
  unsigned logical_cpus = 0;  // online (else present) logical CPUs (0 when unknown)
  uint64_t memory_total_bytes = 0;
  CgroupLimits cgroup;  // empty with x_stats_no_cgroup
  long clock_ticks_per_second = 100;
  long page_size_bytes = 4096;
};

// statvfs of one path, in bytes.
struct FilesystemUsage {
  uint64_t total_bytes = 0;
  uint64_t used_bytes = 0;
  uint64_t available_bytes = 0;  // to unprivileged users (f_bavail)
};
using FilesystemStatFunction = std::function<Result<FilesystemUsage>(const std::string& path)>;
Result<FilesystemUsage> StatFilesystem(const std::string& path);

struct LinuxCollectorContext {
  HostPaths paths;
  Settings settings;
  HostFacts facts;
  Clocks clocks;
  std::optional<long> pid;  // the monitored process, when process metrics are on
  FilesystemStatFunction stat_filesystem = StatFilesystem;
  // Accelerators: the run's CUDA_VISIBLE_DEVICES (for CUDA ordinals), where a collector that learns facts
  // only once it runs (GPU names, UUIDs) hands them over, and where a collector that was asked for
  // explicitly but cannot start says why.
  std::optional<std::string> cuda_visible_devices;
  std::function<void(const nlohmann::json&)> publish_metadata;
  std::function<void(const std::string&)> warn;
  // Where a collector hands over a run config item (a W&B config record): the OpenMetrics collectors' index
  // -> labels tables under "_runmon.openmetrics" (spec/metrics.md A.2.7). May be null (runmon sample); called
  // from the collectors' lanes, one call at a time.
  std::function<void(const std::string& key, const nlohmann::json& value)> publish_config;
};

// Reads the facts; `pid` selects whose cgroup and affinity apply ("self" when unset). Files that exist but
// cannot be read or parsed are left out and handed to `report`.
HostFacts DetectHostFacts(const HostPaths& paths, const Settings& settings, std::optional<long> pid,
                          const ProblemReporter& report = {});

std::unique_ptr<Collector> MakeHostCpuCollector(const LinuxCollectorContext& ctx);
std::unique_ptr<Collector> MakeMemoryCollector(const LinuxCollectorContext& ctx);
std::unique_ptr<Collector> MakeDiskUsageCollector(const LinuxCollectorContext& ctx);
std::unique_ptr<Collector> MakeDiskIoCollector(const LinuxCollectorContext& ctx);
std::unique_ptr<Collector> MakeNetworkCollector(const LinuxCollectorContext& ctx);
std::unique_ptr<Collector> MakeProcessTreeCollector(const LinuxCollectorContext& ctx);
std::unique_ptr<Collector> MakeCgroupCollector(const LinuxCollectorContext& ctx);
std::unique_ptr<Collector> MakeSelfCostCollector(const LinuxCollectorContext& ctx);

// The machine's host name (empty when it cannot be read).
std::string HostName();

// Static metadata in W&B's wandb-metadata.json layout plus runmon's additions (metrics.md A.3, B 11.4).
// `environment` holds "NAME=VALUE" strings (scheduler identity comes from SLURM_*, RANK, ...).
nlohmann::json ProbeHostMetadata(const LinuxCollectorContext& ctx,
                                 const std::vector<std::string>& environment);

}  // namespace runmon
