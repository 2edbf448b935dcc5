// Pure parsers for the kernel files the Linux collectors read. Each takes the file's text and returns typed
// values or an Error; none touches the filesystem, so unit tests and fuzzers drive them directly.
// Optional kernel fields are std::optional: "not reported" is kept apart from 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace runmon {

// /proc/stat "cpu" lines, in USER_HZ ticks.
struct CpuTimes {
  uint64_t busy = 0;   // user + nice + system + irq + softirq + steal
  uint64_t total = 0;  // busy + idle + iowait (guest time is already inside user and nice)
};
struct ProcStat {
  CpuTimes all;
  std::vector<std::optional<CpuTimes>> per_cpu;  // index = CPU number; offline CPUs are nullopt
  std::optional<uint64_t> boot_time_seconds;     // "btime"
};
Result<ProcStat> ParseProcStat(std::string_view text);

// /proc/PID/stat. comm may contain spaces and parentheses: fields are counted from the last ')'. A stat whose
// CPU times cannot be summed in 64 bits, or with a negative cutime or cstime, is an error.
struct PidStat {
  long pid = 0;
  char state = '?';
  long ppid = 0;
  uint64_t utime_ticks = 0;
  uint64_t stime_ticks = 0;
  uint64_t children_cpu_ticks = 0;  // cutime + cstime: CPU of children this process has reaped
  long num_threads = 0;
  uint64_t start_time_ticks = 0;      // since boot; with pid, identifies a process across PID reuse
  std::optional<uint64_t> rss_pages;  // field 24 (absent in a line cut after the start time)

  uint64_t CpuTicks() const { return utime_ticks + stime_ticks; }  // never overflows (checked when parsed)
};
Result<PidStat> ParsePidStat(std::string_view text);

// /proc/PID/statm: resident pages (second field).
Result<uint64_t> ParsePidStatmResidentPages(std::string_view text);
// pages x page size, nullopt when the product does not fit in 64 bits.
std::optional<uint64_t> PagesToBytes(uint64_t pages, uint64_t page_bytes);

// /proc/PID/schedstat "RUNTIME_NS WAIT_NS TIMESLICES": nanoseconds on a CPU of that one task (for
// /proc/PID, the main thread alone, not the thread group).
Result<uint64_t> ParsePidSchedstatRuntimeNs(std::string_view text);

// /proc/loadavg "0.00 0.01 0.05 1/123 4567": the last field, the PID most recently handed out in the
// PID namespace of that proc mount. It changes whenever any process or thread is created.
Result<long> ParseLoadavgLastPid(std::string_view text);

// /proc/PID/task/TID/children: space-separated PIDs.
Result<std::vector<long>> ParseChildrenList(std::string_view text);

// A CPU list such as "0-3,8,10-11" (Cpus_allowed_list, cpuset.cpus.effective): the number of distinct CPUs.
Result<unsigned> ParseCpuListCount(std::string_view text);

// The value of "Key:" in a "Key:\tvalue" file (/proc/PID/status), trimmed; nullopt when absent.
std::optional<std::string_view> FindColonField(std::string_view text, std::string_view key);

// The value of variable `name` in /proc/PID/environ ("NAME=value" entries, each ended by a NUL; the last
// one may lack it), or nullopt when it is not there.
std::optional<std::string_view> FindEnvironValue(std::string_view environ, std::string_view name);

// /proc/meminfo, in bytes.
struct Meminfo {
  uint64_t total_bytes = 0;
  std::optional<uint64_t> available_bytes;  // MemAvailable (Linux >= 3.14)
  std::optional<uint64_t> free_bytes;
  std::optional<uint64_t> buffers_bytes;
  std::optional<uint64_t> cached_bytes;
  // MemAvailable, or an estimate from MemFree + Buffers + Cached on kernels without it.
  std::optional<uint64_t> Available() const;
};
Result<Meminfo> ParseMeminfo(std::string_view text);

// /proc/diskstats.
struct DiskStat {
  unsigned major = 0;
  unsigned minor = 0;
  std::string name;
  uint64_t sectors_read = 0;  // always 512-byte units, whatever the device's sector size
  uint64_t sectors_written = 0;
};
Result<std::vector<DiskStat>> ParseDiskstats(std::string_view text);

// /proc/net/dev.
struct NetDevStat {
  std::string name;
  uint64_t rx_bytes = 0;
  uint64_t tx_bytes = 0;
};
Result<std::vector<NetDevStat>> ParseNetDev(std::string_view text);

// /proc/PID/mountinfo. Paths are unescaped (\040 -> ' ').
struct Mount {
  unsigned major = 0;
  unsigned minor = 0;
  std::string root;  // the mounted directory inside its filesystem (bind mounts)
  std::string mount_point;
  std::string fs_type;
  std::string source;
  std::string super_options;
};
Result<std::vector<Mount>> ParseMountinfo(std::string_view text);

// /proc/PID/cgroup: "hierarchy-id:controller,list:/path".
struct CgroupMembership {
  long hierarchy_id = 0;
  std::vector<std::string> controllers;  // empty for the unified (v2) hierarchy
  std::string path;
};
Result<std::vector<CgroupMembership>> ParseProcPidCgroup(std::string_view text);

// cgroup v2 cpu.max "QUOTA PERIOD": CPUs (quota / period), nullopt for "max".
Result<std::optional<double>> ParseCgroupCpuMax(std::string_view text);

// cgroup v2 memory.max and v1 memory.limit_in_bytes: bytes, nullopt for "max" and for v1's "unlimited"
// (any value of 2^62 or more, which the kernel prints as a page-aligned LONG_MAX). 0 and an empty file are
// taken as "no limit" too, as W&B does: a limit of 0 cannot be a denominator.
Result<std::optional<uint64_t>> ParseCgroupMemoryLimit(std::string_view text);

// A file of "key value" lines (cpu.stat, memory.events, memory.oom_control): the value of `key`.
std::optional<uint64_t> FindKeyedValue(std::string_view text, std::string_view key);

// /proc/cpuinfo of any architecture (see cpuinfo_parse.cpp). An error only when it names neither a CPU
// count nor a model.
struct CpuInfo {
  std::string model_name;       // "model name" (x86), else the architecture's nearest field; may be empty
  unsigned logical_count = 0;   // "processor" entries, else a declared total; 0 when the file gives none
  unsigned physical_count = 0;  // distinct (physical id, core id) pairs; 0 when the file lacks them
};
Result<CpuInfo> ParseCpuinfo(std::string_view text);

// /etc/os-release style "KEY=value" or KEY="value" (shell quoting: \" \\ \$ \` escapes): the value of `key`.
std::optional<std::string> FindOsReleaseValue(std::string_view text, std::string_view key);

}  // namespace runmon
