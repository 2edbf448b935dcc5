// Static facts about the machine, probed once per run, in W&B's wandb-metadata.json layout (metrics.md
// B 11.4): os, host, cpu_count (physical cores), cpu_count_logical, memory.total and disk.{path}.total/used
// (64-bit integers as JSON strings, as protobuf-JSON writes them), slurm. runmon's additions (CPU model,
// OS name, cgroup limits, scheduler identity) sit under "runmon" so W&B's own fields keep their meaning.
// The physical core count is the number of distinct core_cpus_list (or thread_siblings_list) sets in the
// CPU topology, so it is right on Arm too, where /proc/cpuinfo has no core ids.
#include <gnu/libc-version.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collectors/linux/linux_collectors.hpp"
#include "collectors/linux/parse/procfs_parse.hpp"
#include "collectors/linux/parse/text.hpp"
#include "host/file_reader.hpp"

namespace runmon {
namespace {

unsigned CountPhysicalCores(const HostPaths& paths) {
  auto entries = ListDirectory(paths.Sys("devices/system/cpu"));
  if (!entries) return 0;
  std::set<std::string> cores;
  for (const auto& name : *entries) {
    if (name.size() < 4 || !name.starts_with("cpu") ||
        !std::all_of(name.begin() + 3, name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    const auto topology = paths.Sys("devices/system/cpu/" + name + "/topology");
    auto siblings = ReadFileToString(topology / "core_cpus_list");
    if (!siblings) siblings = ReadFileToString(topology / "thread_siblings_list");
    if (!siblings) continue;
    // Cores on different packages can share sibling lists only if they share CPUs, so the list identifies the
    // core.
    cores.insert(std::string(text::Trim(*siblings)));
  }
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

nlohmann::json ProbeHostMetadata(const LinuxCollectorContext& ctx,
                                 const std::vector<std::string>& environment) {
  nlohmann::json meta = nlohmann::json::object();
  meta["os"] = OsString();
  if (auto host = HostName(); !host.empty()) meta["host"] = host;

  CpuInfo cpuinfo;
  if (auto text = ReadFileToString(ctx.paths.Proc("cpuinfo"))) {
    if (auto parsed = ParseCpuinfo(*text)) cpuinfo = *parsed;
  }
  unsigned physical = CountPhysicalCores(ctx.paths);
  if (physical == 0) physical = cpuinfo.physical_count;
  unsigned logical = cpuinfo.logical_count != 0 ? cpuinfo.logical_count : ctx.facts.logical_cpus;
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

  nlohmann::json slurm = nlohmann::json::object();
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
    const std::string value = entry.substr(eq + 1);
    if (name.starts_with("SLURM_") && name.size() > 6) {
      std::string key(name.substr(6));
      std::transform(key.begin(), key.end(), key.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      slurm[key] = value;
    }
    for (const auto& [variable, field] : kSchedulerVariables) {
      if (name == variable) scheduler[std::string(field)] = value;
    }
  }
  if (!slurm.empty()) meta["slurm"] = slurm;

  nlohmann::json extra = nlohmann::json::object();
  if (!cpuinfo.model_name.empty()) extra["cpuModel"] = cpuinfo.model_name;
  if (auto text = ReadFileToString(ctx.paths.etc / "os-release")) {
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
