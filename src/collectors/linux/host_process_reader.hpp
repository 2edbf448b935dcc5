// What the host knows about a few processes named by PID (those a GPU driver lists, for `runmon leet
// symon`'s process table): owner, CPU use, resident memory, command line, and whether the process belongs
// to a `runmon run`. Reads /proc/PID/stat, statm, status and cmdline under the HostPaths (never the real
// /proc by name), and the root's etc/passwd for user names.
//   - CPU is % of one core: the growth of utime + stime between two reads of the same process (the same PID
//     and start time) over the wall time between them; absent on the first read of a process.
//   - The owner is the real uid's name, else the uid as a number (a uid passwd does not name, a container
//     whose passwd is not the host's). passwd is read when first needed and again, at most once a minute,
//     when a uid is not in it.
//   - The command line is escaped and cut (process_identity_parse.hpp); one without a command line (a kernel
//     thread, a zombie) shows stat's name in brackets, as ps does. Owner and command line are read once per
//     process (PID and start time) while it is asked about.
//   - The run rule: a process belongs to a run when one of its ancestors (the ppid chain, at most 64 steps)
//     is a `runmon run` process (IsRunmonRunCommand); the run's child is the ancestor just below it (or the
//     process itself), whose command line is the run's command.
// A process that vanished between the driver's list and these reads (its stat cannot be read) is left out
// quietly; a file other than stat that cannot be read leaves that value out.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "host/host_paths.hpp"

namespace runmon {

struct RunMembership {
  long runmon_pid = 0;        // the `runmon run` process
  long child_pid = 0;         // its child that is this process or one of its ancestors
  std::string child_command;  // that child's command line (formatted)
};

struct HostProcess {
  long pid = 0;
  long ppid = 0;
  std::string user;                   // name, else the numeric uid; empty when status could not be read
  std::optional<double> cpu_percent;  // of one core, since the previous read
  std::optional<uint64_t> rss_bytes;
  std::string command;
  std::optional<RunMembership> run;
};

struct HostProcessOptions {
  HostPaths paths;
  double ticks_per_second = 100;  // USER_HZ
  uint64_t page_bytes = 4096;
  size_t max_command_bytes = 1024;
};

class HostProcessReader {
 public:
  static constexpr int kMaxAncestors = 64;

  explicit HostProcessReader(HostProcessOptions options) : options_(std::move(options)) {}

  // Reads `pids` now; `now_seconds` is a steady clock's time (for CPU %). Gone processes are not in the
  // answer. What was kept about processes not asked about this time is forgotten.
  std::map<long, HostProcess> Read(const std::vector<long>& pids, double now_seconds);

 private:
  struct Identity {  // read once per process
    uint64_t start_time_ticks = 0;
    std::string user;
    std::string command;
    bool runmon_run = false;
  };
  struct CpuReading {
    uint64_t start_time_ticks = 0;
    uint64_t ticks = 0;
    double seconds = 0;
  };

  const std::optional<PidStat>& Stat(long pid);
  const Identity& IdentityOf(long pid, const PidStat& stat);
  std::optional<RunMembership> RunOf(const PidStat& stat);
  std::string UserName(unsigned uid, double now_seconds);

  HostProcessOptions options_;
  double now_seconds_ = 0;
  std::unordered_map<long, Identity> identities_;
  std::unordered_map<long, CpuReading> cpu_;
  std::unordered_map<long, std::optional<PidStat>> stats_this_read_;  // ancestors are shared
  std::unordered_map<long, std::string> comms_this_read_;
  std::unordered_set<long> identities_used_;
  std::optional<std::unordered_map<unsigned, std::string>> passwd_;
  double passwd_read_seconds_ = 0;
};

}  // namespace runmon
