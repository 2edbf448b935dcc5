// The metric definitions. Keys are spelled exactly as W&B's system metrics (metrics.md A.1), plus the
// runmon additions of A.3; units are fixed per key (A.2.6).
#include "core/catalog.hpp"

#include <array>

#include <fmt/format.h>

namespace runmon {
namespace {

constexpr std::array kDefinitions = {
    // CPU
    MetricDefinition{
        "cpu", "Process CPU", "%", MetricKind::kGauge, "process",
        "CPU time used by the monitored process tree during the last interval (descendants "
        "that exited during it included, through their parent's reaped-children time), divided by "
        "(interval x CPUs available to the process: the smallest of the cgroup quota, the "
        "affinity mask and the logical CPU count), x 100; 0-100. The first sample uses the "
        "average since the process started."},
    MetricDefinition{"proc.cpu.threads", "Process threads", "count", MetricKind::kGauge, "process",
                     "Threads of the monitored process tree (sum of /proc/PID/stat num_threads)."},
    MetricDefinition{"cpu_percent", "Host CPU", "%", MetricKind::kGauge, "cpu",
                     "Host CPU busy time during the last interval, all CPUs (/proc/stat); 0-100."},
    MetricDefinition{"cpu.{i}.cpu_percent", "Core CPU", "%", MetricKind::kGauge, "cpu",
                     "Busy time of logical CPU i during the last interval (opt-in: --per-core)."},
    // Memory
    MetricDefinition{"proc.memory.rssMB", "Process RSS", "MiB", MetricKind::kGauge, "process",
                     "Resident set size of the monitored process tree (sum of /proc/PID/statm resident)."},
    MetricDefinition{"proc.memory.percent", "Process memory", "%", MetricKind::kGauge, "process",
                     "Process tree RSS as a percentage of the memory limit: the cgroup limit when one "
                     "applies, else total RAM."},
    MetricDefinition{"memory_percent", "System memory", "%", MetricKind::kGauge, "memory",
                     "Memory in use: cgroup usage / cgroup limit when a limit applies, else "
                     "(MemTotal - MemAvailable) / MemTotal; x 100."},
    MetricDefinition{"proc.memory.availableMB", "Available memory", "MiB", MetricKind::kGauge, "memory",
                     "Memory still available to the run (system-wide despite the prefix): cgroup limit - "
                     "usage when a limit applies, else MemAvailable."},
    // Disk
    MetricDefinition{"disk.{path}.usagePercent", "Disk usage", "%", MetricKind::kGauge, "disk",
                     "Used share of the filesystem holding the configured path (df semantics: blocks "
                     "reserved for root are left out of the denominator)."},
    MetricDefinition{"disk.{path}.usageGB", "Disk used", "GiB", MetricKind::kGauge, "disk",
                     "Space used on the filesystem holding the configured path."},
    MetricDefinition{"disk.in", "Disk read", "MiB", MetricKind::kSinceStart, "disk",
                     "MiB read since the first sample, summed over the block devices behind the "
                     "configured paths (/proc/diskstats sectors x 512)."},
    MetricDefinition{"disk.out", "Disk written", "MiB", MetricKind::kSinceStart, "disk",
                     "MiB written since the first sample, summed over the devices behind the configured "
                     "paths."},
    MetricDefinition{"disk.readMBPerSec", "Disk read rate", "MiB/s", MetricKind::kRate, "disk",
                     "Read throughput during the last interval over the devices behind the configured "
                     "paths."},
    MetricDefinition{"disk.writeMBPerSec", "Disk write rate", "MiB/s", MetricKind::kRate, "disk",
                     "Write throughput during the last interval over the devices behind the configured "
                     "paths."},
    MetricDefinition{"disk.{dev}.in", "Device read", "MiB", MetricKind::kSinceStart, "disk",
                     "MiB read from block device dev since the first sample."},
    MetricDefinition{"disk.{dev}.out", "Device written", "MiB", MetricKind::kSinceStart, "disk",
                     "MiB written to block device dev since the first sample."},
    // Network
    MetricDefinition{"network.sent", "Network sent", "bytes", MetricKind::kSinceStart, "network",
                     "Bytes sent since the first sample, all interfaces including loopback."},
    MetricDefinition{"network.recv", "Network received", "bytes", MetricKind::kSinceStart, "network",
                     "Bytes received since the first sample, all interfaces including loopback."},
    MetricDefinition{"network.sentBytesPerSec", "Network send rate", "bytes/s", MetricKind::kRate, "network",
                     "Bytes sent per second during the last interval."},
    MetricDefinition{"network.recvBytesPerSec", "Network receive rate", "bytes/s", MetricKind::kRate,
                     "network", "Bytes received per second during the last interval."},
    // cgroup
    MetricDefinition{"cgroup.memory.limitMB", "cgroup memory limit", "MiB", MetricKind::kGauge, "cgroup",
                     "The tightest memory limit along the monitored process's cgroup and its parents "
                     "(v2 memory.max or v1 memory.limit_in_bytes)."},
    MetricDefinition{"cgroup.cpu.limit", "cgroup CPU limit", "CPUs", MetricKind::kGauge, "cgroup",
                     "CPUs available to the process: the smaller of the tightest CPU quota along the "
                     "cgroup chain (quota / period) and the affinity mask when it is narrower than the "
                     "host."},
    MetricDefinition{"cgroup.cpu.throttledPercent", "CPU throttled", "%", MetricKind::kGauge, "cgroup",
                     "Share of the scheduler periods of the last interval in which the cgroup was "
                     "throttled (cpu.stat nr_throttled / nr_periods)."},
    MetricDefinition{"cgroup.memory.oomKills", "OOM kills", "count", MetricKind::kGauge, "cgroup",
                     "Processes killed by the OOM killer in the cgroup since it was created "
                     "(memory.events oom_kill)."},
    // NVIDIA GPUs (NVML). gpu.process.{i}.* first: gpu.{i}.* would match those keys too.
    MetricDefinition{
        "gpu.process.{i}.gpu", "GPU utilization (run)", "%", MetricKind::kGauge, "nvidia",
        "SM utilization of the monitored process tree's own processes on GPU i since the last "
        "sample (NVML process utilization samples, summed over the tree, at most 100). Absent where "
        "NVML gives no per-process samples (MIG)."},
    MetricDefinition{"gpu.process.{i}.memoryAllocatedBytes", "GPU memory (run)", "bytes", MetricKind::kGauge,
                     "nvidia", "GPU memory used by the monitored process tree's own processes on GPU i."},
    MetricDefinition{"gpu.process.{i}.memoryAllocated", "GPU memory (run)", "%", MetricKind::kGauge, "nvidia",
                     "The tree's GPU memory as a share of GPU i's total memory."},
    MetricDefinition{
        "gpu.process.{i}.memory", "GPU memory access (run)", "%", MetricKind::kGauge, "nvidia",
        "GPU i's memory access share (device-wide), present while the monitored tree uses GPU i."},
    MetricDefinition{"gpu.process.{i}.temp", "GPU temperature (run)", "°C", MetricKind::kGauge, "nvidia",
                     "GPU i's temperature (device-wide), present while the monitored tree uses GPU i."},
    MetricDefinition{"gpu.process.{i}.powerWatts", "GPU power (run)", "W", MetricKind::kGauge, "nvidia",
                     "GPU i's power (device-wide), present while the monitored tree uses GPU i."},
    MetricDefinition{"gpu.process.{i}.enforcedPowerLimitWatts", "GPU power limit (run)", "W",
                     MetricKind::kGauge, "nvidia",
                     "GPU i's power limit (device-wide), present while the monitored tree uses GPU i."},
    MetricDefinition{
        "gpu.process.{i}.powerPercent", "GPU power (run)", "%", MetricKind::kGauge, "nvidia",
        "GPU i's power as a share of its limit (device-wide), present while the monitored tree uses "
        "GPU i."},
    MetricDefinition{
        "gpu.{i}.gpu", "GPU utilization", "%", MetricKind::kGauge, "nvidia",
        "Share of the last sample period (1/6 s to 1 s, by product) in which a kernel ran on GPU i."},
    MetricDefinition{"gpu.{i}.memory", "GPU memory access", "%", MetricKind::kGauge, "nvidia",
                     "Share of the last sample period in which GPU i's memory was read or written (not "
                     "memory in use)."},
    MetricDefinition{"gpu.{i}.memoryAllocated", "GPU memory used", "%", MetricKind::kGauge, "nvidia",
                     "Memory in use on GPU i as a share of its total (memory info v2 when the driver has it: "
                     "without the driver's reservation, as nvidia-smi shows it)."},
    MetricDefinition{"gpu.{i}.memoryAllocatedBytes", "GPU memory used", "bytes", MetricKind::kGauge, "nvidia",
                     "Memory in use on GPU i."},
    MetricDefinition{"gpu.{i}.temp", "GPU temperature", "°C", MetricKind::kGauge, "nvidia",
                     "GPU i's die temperature."},
    MetricDefinition{"gpu.{i}.powerWatts", "GPU power", "W", MetricKind::kGauge, "nvidia",
                     "Power drawn by GPU i and its circuitry (a 1 s average on Ampere and newer except "
                     "GA100)."},
    MetricDefinition{"gpu.{i}.enforcedPowerLimitWatts", "GPU power limit", "W", MetricKind::kGauge, "nvidia",
                     "GPU i's effective power limit after all limiters."},
    MetricDefinition{"gpu.{i}.powerPercent", "GPU power", "%", MetricKind::kGauge, "nvidia",
                     "powerWatts / enforcedPowerLimitWatts x 100."},
    MetricDefinition{"gpu.{i}.smClock", "SM clock", "MHz", MetricKind::kGauge, "nvidia",
                     "GPU i's current SM clock."},
    MetricDefinition{"gpu.{i}.memoryClock", "Memory clock", "MHz", MetricKind::kGauge, "nvidia",
                     "GPU i's current memory clock."},
    MetricDefinition{"gpu.{i}.graphicsClock", "Graphics clock", "MHz", MetricKind::kGauge, "nvidia",
                     "GPU i's current graphics clock."},
    MetricDefinition{"gpu.{i}.correctedMemoryErrors", "Corrected ECC errors", "count", MetricKind::kGauge,
                     "nvidia",
                     "Corrected (single-bit) device memory errors since the driver loaded (volatile)."},
    MetricDefinition{"gpu.{i}.unCorrectedMemoryErrors", "Uncorrected ECC errors", "count", MetricKind::kGauge,
                     "nvidia",
                     "Uncorrected (double-bit) device memory errors since the driver loaded (volatile). "
                     "W&B spells it uncorrectedMemoryErrors."},
    MetricDefinition{"gpu.{i}.encoderUtilization", "Encoder utilization", "%", MetricKind::kGauge, "nvidia",
                     "Video encoder utilization of GPU i."},
    MetricDefinition{"gpu.{i}.fanSpeed", "Fan speed", "%", MetricKind::kGauge, "nvidia",
                     "Intended speed of fan 0 as a share of its maximum; can exceed 100. Absent on passively "
                     "cooled boards."},
    MetricDefinition{
        "gpu.{i}.clocksEventReasons", "Clock event reasons", "bitmask", MetricKind::kGauge, "nvidia",
        "Why GPU i's clocks are held back: NVML's bits (1 idle, 2 application clocks, 4 software "
        "power cap, 8 hardware slowdown, 0x10 sync boost, 0x20 software thermal, 0x40 hardware "
        "thermal, 0x80 power brake, 0x100 display clock)."},
    MetricDefinition{"gpu.{i}.energyJoules", "GPU energy", "J", MetricKind::kSinceStart, "nvidia",
                     "Energy GPU i consumed since the first sample."},
    MetricDefinition{"gpu.{i}.smActive", "SM active", "%", MetricKind::kGauge, "nvidia",
                     "GPM (Hopper and newer): share of time SMs were busy, between the last two samples."},
    MetricDefinition{"gpu.{i}.smOccupancy", "SM occupancy", "%", MetricKind::kGauge, "nvidia",
                     "GPM: warps resident on SMs as a share of the maximum."},
    MetricDefinition{"gpu.{i}.pipeTensorActive", "Tensor pipes active", "%", MetricKind::kGauge, "nvidia",
                     "GPM: share of time any tensor pipe was busy."},
    MetricDefinition{"gpu.{i}.pipeTensorHmmaActive", "Tensor HMMA active", "%", MetricKind::kGauge, "nvidia",
                     "GPM: share of time the HMMA tensor pipe was busy."},
    MetricDefinition{"gpu.{i}.dramActive", "DRAM active", "%", MetricKind::kGauge, "nvidia",
                     "GPM: memory bandwidth used as a share of the maximum."},
    MetricDefinition{"gpu.{i}.pipeFp64Active", "FP64 pipes active", "%", MetricKind::kGauge, "nvidia",
                     "GPM: share of time the FP64 pipes were busy."},
    MetricDefinition{"gpu.{i}.pipeFp32Active", "FP32 pipes active", "%", MetricKind::kGauge, "nvidia",
                     "GPM: share of time the FP32 pipes were busy."},
    MetricDefinition{"gpu.{i}.pipeFp16Active", "FP16 pipes active", "%", MetricKind::kGauge, "nvidia",
                     "GPM: share of time the FP16 pipes were busy."},
    MetricDefinition{"gpu.{i}.pcieTxBytes", "PCIe sent", "bytes/s", MetricKind::kRate, "nvidia",
                     "GPM: PCIe bytes sent per second (NVML gives MiB/s; runmon reports bytes/s)."},
    MetricDefinition{"gpu.{i}.pcieRxBytes", "PCIe received", "bytes/s", MetricKind::kRate, "nvidia",
                     "GPM: PCIe bytes received per second."},
    MetricDefinition{"gpu.{i}.nvlinkTxBytes", "NVLink sent", "bytes/s", MetricKind::kRate, "nvidia",
                     "GPM: NVLink bytes sent per second over all links."},
    MetricDefinition{"gpu.{i}.nvlinkRxBytes", "NVLink received", "bytes/s", MetricKind::kRate, "nvidia",
                     "GPM: NVLink bytes received per second over all links."},
    // The monitor itself
    MetricDefinition{"runmon.cpuPercent", "runmon CPU", "%", MetricKind::kGauge, "runmon",
                     "CPU used by runmon itself during the last interval, as a percentage of one CPU."},
    MetricDefinition{"runmon.rssMB", "runmon RSS", "MiB", MetricKind::kGauge, "runmon",
                     "Resident set size of runmon itself."},
    MetricDefinition{
        "runmon.sampleMillis", "runmon sample time", "ms", MetricKind::kGauge, "runmon",
        "Wall time this sampling pass took, from its tick until its last lane returned (or its deadline)."},
};

}  // namespace

std::span<const MetricDefinition> MetricCatalog() {
  return kDefinitions;
}

bool KeyMatchesPattern(std::string_view key, std::string_view pattern) {
  // Iterative glob where each {x} placeholder matches one or more characters.
  size_t k = 0, p = 0;
  size_t star_p = std::string_view::npos, star_k = 0;
  while (k < key.size()) {
    if (p < pattern.size() && pattern[p] == '{') {
      const size_t close = pattern.find('}', p);
      if (close == std::string_view::npos) return false;
      star_p = close + 1;
      star_k = k + 1;  // the placeholder takes at least one character
      k = star_k;
      p = star_p;
      continue;
    }
    if (p < pattern.size() && pattern[p] == key[k]) {
      ++k;
      ++p;
      continue;
    }
    if (star_p != std::string_view::npos) {
      k = ++star_k;
      p = star_p;
      if (k > key.size()) return false;
      continue;
    }
    return false;
  }
  // A trailing placeholder needs one character, which the key no longer has.
  return p == pattern.size();
}

const MetricDefinition* FindMetricDefinition(std::string_view key) {
  for (const auto& definition : kDefinitions) {
    if (KeyMatchesPattern(key, definition.pattern)) return &definition;
  }
  return nullptr;
}

std::string_view MetricKindName(MetricKind kind) {
  switch (kind) {
    case MetricKind::kGauge:
      return "gauge";
    case MetricKind::kSinceStart:
      return "since start";
    case MetricKind::kRate:
      return "rate";
  }
  return "gauge";
}

std::string RenderCatalogMarkdown() {
  std::string out =
      "# Metrics\n\n"
      "Generated from the metric catalog (`src/core/catalog.cpp`) by `runmon catalog --markdown`; do not "
      "edit by hand.\n\n"
      "Keys are spelled as W&B's system metrics. `{path}` is a configured disk path used verbatim "
      "(`disk./.usageGB`), `{dev}` a block device name (`disk.nvme0n1.in`), `{i}` an index. A value that "
      "cannot be read is left out of the sample, never written as 0.\n\n"
      "| Key | Title | Unit | Kind | Source | Description |\n"
      "|---|---|---|---|---|---|\n";
  for (const auto& d : kDefinitions) {
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", d.pattern, d.title, d.unit,
                       MetricKindName(d.kind), d.source, d.description);
  }
  return out;
}

}  // namespace runmon
