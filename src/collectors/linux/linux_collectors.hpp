// The Linux host and process collectors, and how the facts they share (CPU count, memory total, cgroup
// limits) are detected once at start-up. Each factory returns a collector reading only through ctx.paths.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "collectors/collector_context.hpp"

namespace runmon {

// How much a kernel counter grew between two readings. A counter that went backwards was reset (a device
// or interface that came back, a wrap) and counts from zero.
inline uint64_t CounterIncrease(uint64_t now, uint64_t before) {
  return now >= before ? now - before : now;
}

// Reads the facts; `pid` selects whose cgroup and affinity apply ("self" when unset). Files that exist but
// cannot be read or parsed are left out and handed to `report`.
HostFacts DetectHostFacts(const HostPaths& paths, const Settings& settings, std::optional<long> pid,
                          const ProblemReporter& report = {});

std::unique_ptr<Collector> MakeHostCpuCollector(const CollectorContext& ctx);
std::unique_ptr<Collector> MakeMemoryCollector(const CollectorContext& ctx);
std::unique_ptr<Collector> MakeDiskUsageCollector(const CollectorContext& ctx);
std::unique_ptr<Collector> MakeDiskIoCollector(const CollectorContext& ctx);
std::unique_ptr<Collector> MakeNetworkCollector(const CollectorContext& ctx);
std::unique_ptr<Collector> MakeProcessTreeCollector(const CollectorContext& ctx);
std::unique_ptr<Collector> MakeCgroupCollector(const CollectorContext& ctx);
std::unique_ptr<Collector> MakeSelfCostCollector(const CollectorContext& ctx);
// Null when the context has no remote_write_counts.
std::unique_ptr<Collector> MakeRemoteWriteStatusCollector(const CollectorContext& ctx);

// The machine's host name (empty when it cannot be read).
std::string HostName();

// Static metadata in W&B's wandb-metadata.json layout plus runmon's additions (metrics.md A.3, B 11.4).
// `environment` holds "NAME=VALUE" strings (scheduler identity comes from SLURM_*, RANK, ...).
nlohmann::json ProbeHostMetadata(const CollectorContext& ctx, const std::vector<std::string>& environment);

}  // namespace runmon
