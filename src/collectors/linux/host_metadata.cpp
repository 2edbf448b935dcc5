// Static facts about the machine, probed once per run, in W&B's wandb-metadata.json layout (metrics.md
// B 11.4): os, host, cpu_count (physical cores), cpu_count_logical, memory.total and disk.{path}.total/used
// (64-bit integers as JSON strings, as protobuf-JSON writes them), slurm (W&B's rule, in
// cluster/job_identity.hpp). runmon's additions (CPU model, OS name, cgroup limits, scheduler identity) sit
// under "runmon" so W&B's own fields keep their meaning.
// The physical core count is the number of distinct core_cpus_list (or thread_siblings_list) sets in the
// CPU topology, so it is right on Arm too, where /proc/cpuinfo has no core ids; a topology whose sets do not
// add up to the logical CPUs is not used (cpuinfo's core ids, else the logical count, are). The logical count
// is cpuinfo's, else the start-up facts' (sysfs online or present CPUs: old ARM kernels' cpuinfo has no
// per-CPU entries). A file that exists but cannot be read or parsed is left out and reported (ctx.warn).
#include <gnu/libc-version.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cluster/job_identity.hpp"
#include "collectors/linux/linux_collectors.hpp"
#include "collectors/linux/parse/procfs_parse.hpp"
#include "collectors/linux/parse/text.hpp"
#include "core/utf8.hpp"
#include "host/file_reader.hpp"

namespace runmon {
namespace {

// Distinct core sibling lists of the CPUs in the topology, or 0 when they do not account for exactly the
// `logical_cpus` online CPUs (a partial or inconsistent tree: a CPU without its topology, a core counted on
// CPUs that are not there): then another source counts better.
unsigned CountPhysicalCores(const HostPaths& paths, unsigned logical_cpus, const ProblemReporter& report) {
  auto entries = ListDirectory(paths.Sys("devices/system/cpu"));
  if (!entries) return 0;
  std::set<std::string> cores;
  unsigned covered_cpus = 0;
  for (const auto& name : *entries) {
    if (name.size() < 4 || !name.starts_with("cpu") ||
        !std::all_of(name.begin() + 3, name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    const auto topology = paths.Sys("devices/system/cpu/" + name + "/topology");
    auto list_file = topology / "core_cpus_list";
    auto siblings = ReadOptionalFile(list_file, report);
    if (!siblings) {
      list_file = topology / "thread_siblings_list";
      siblings = ReadOptionalFile(list_file, report);
    }
    if (!siblings) continue;  // offline CPUs have no topology
    // Cores on different packages can share sibling lists only if they share CPUs, so the list identifies the
    // core.
    const std::string list(text::Trim(*siblings));
    if (!cores.insert(list).second) continue;
    const auto count = ParseCpuListCount(list);
    if (!count) {
      if (report) report(FileError(list_file, count.error()));
      return 0;
    }
    covered_cpus += *count;
  }
  if (logical_cpus != 0 && covered_cpus != logical_cpus) return 0;
  return static_cast<unsigned>(cores.size());
}

std::string OsString() {
  utsname names{};
  if (::uname(&names) != 0) return "Linux";
  return fmt::format("{}-{}-{}-with-glibc{}", names.sysname, names.release, names.machine,
                     gnu_get_libc_version());
}

}  // namespace

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return {};
  return name;
}

nlohmann::json ProbeHostMetadata(const CollectorContext& ctx, const std::vector<std::string>& environment) {
  nlohmann::json meta = nlohmann::json::object();
  meta["os"] = OsString();
  if (auto host = HostName(); !host.empty()) meta["host"] = host;

  const CpuInfo cpuinfo =
      ReadOptionalParsed(ctx.paths.Proc("cpuinfo"), ParseCpuinfo, ctx.warn).value_or(CpuInfo{});
  const unsigned logical = cpuinfo.logical_count != 0 ? cpuinfo.logical_count : ctx.facts.logical_cpus;
  unsigned physical = CountPhysicalCores(ctx.paths, logical, ctx.warn);
  if (physical == 0) physical = cpuinfo.physical_count;
  if (physical == 0) physical = logical;
  const long cpu_count = ctx.settings.cpu_count.value_or(physical);
  const long cpu_count_logical = ctx.settings.cpu_logical_count.value_or(logical);
  if (cpu_count > 0) meta["cpu_count"] = cpu_count;
  if (cpu_count_logical > 0) meta["cpu_count_logical"] = cpu_count_logical;
  if (ctx.facts.memory_total_bytes > 0)
    meta["memory"] = {{"total", std::to_string(ctx.facts.memory_total_bytes)}};

  nlohmann::json disk = nlohmann::json::object();
  for (const auto& path : ctx.settings.disk_paths) {
    if (auto usage = ctx.stat_filesystem(path)) {
      disk[path] = {{"total", std::to_string(usage->total_bytes)},
                    {"used", std::to_string(usage->used_bytes)}};
    }
  }
  if (!disk.empty()) meta["disk"] = disk;
  if (ctx.settings.gpu_count) meta["gpu_count"] = *ctx.settings.gpu_count;
  if (ctx.settings.gpu_type) meta["gpu"] = *ctx.settings.gpu_type;

  const cluster::SlurmMetadata slurm = cluster::SlurmVariables(cluster::EnvironmentFromStrings(environment));
  if (slurm.left_out > 0 && ctx.warn) {
    ctx.warn(fmt::format("{} SLURM_* variables left out of the metadata (past {}, or values over {} bytes)",
                         slurm.left_out, cluster::kMaxSlurmEntries, cluster::kMaxSlurmValueBytes));
  }
  if (!slurm.entries.empty()) meta["slurm"] = slurm.entries;
  nlohmann::json scheduler = nlohmann::json::object();
  static const std::pair<std::string_view, std::string_view> kSchedulerVariables[] = {
      {"RANK", "rank"},
      {"LOCAL_RANK", "localRank"},
      {"WORLD_SIZE", "worldSize"},
      {"LOCAL_WORLD_SIZE", "localWorldSize"},
      {"GROUP_RANK", "groupRank"},
      {"SLURM_JOB_ID", "slurmJobId"},
      {"SLURM_PROCID", "slurmProcId"},
      {"SLURM_NODEID", "slurmNodeId"},
      {"SLURM_JOB_NAME", "slurmJobName"}};
  for (const auto& entry : environment) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string_view name = std::string_view(entry).substr(0, eq);
    for (const auto& [variable, field] : kSchedulerVariables) {
      // Valid UTF-8, or the metadata's JSON could not be written.
      if (name == variable)
        scheduler[std::string(field)] = ToValidUtf8(std::string_view(entry).substr(eq + 1));
    }
  }

  nlohmann::json extra = nlohmann::json::object();
  if (!cpuinfo.model_name.empty()) extra["cpuModel"] = cpuinfo.model_name;
  if (auto text = ReadOptionalFile(ctx.paths.etc / "os-release", ctx.warn)) {
    if (auto pretty = FindOsReleaseValue(*text, "PRETTY_NAME")) extra["osName"] = *pretty;
  }
  if (!scheduler.empty()) extra["scheduler"] = scheduler;
  const auto& cgroup = ctx.facts.cgroup;
  if (!cgroup.leaf.empty()) {
    nlohmann::json c = {{"path", cgroup.leaf}};
    if (cgroup.memory_limit_bytes) c["memoryLimitBytes"] = std::to_string(*cgroup.memory_limit_bytes);
    if (auto cpus = cgroup.CpuLimit()) c["cpuLimit"] = *cpus;
    extra["cgroup"] = c;
  }
  meta["runmon"] = extra;
  return meta;
}

}  // namespace runmon
