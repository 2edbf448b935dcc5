// What the host knows about the processes on the GPUs (see host_process_reader.hpp).
#include "collectors/linux/host_process_reader.hpp"

#include <algorithm>
#include <string_view>

#include "collectors/linux/parse/process_identity_parse.hpp"
#include "host/file_reader.hpp"

namespace runmon {
namespace {

constexpr double kPasswdRereadSeconds = 60;

std::string PidFile(long pid, std::string_view name) {
  std::string relative = std::to_string(pid);
  relative += '/';
  relative += name;
  return relative;
}

}  // namespace

const std::optional<PidStat>& HostProcessReader::Stat(long pid) {
  auto [it, inserted] = stats_this_read_.try_emplace(pid);
  if (!inserted) return it->second;
  const auto text = ReadFileToString(options_.paths.Proc(PidFile(pid, "stat")));
  if (!text) return it->second;
  auto stat = ParsePidStat(*text);
  if (!stat || stat->pid != pid) return it->second;
  it->second = *stat;
  if (auto comm = ParsePidStatComm(*text)) comms_this_read_[pid] = std::string(*comm);
  return it->second;
}

std::string HostProcessReader::UserName(unsigned uid, double now_seconds) {
  const bool stale =
      passwd_ && passwd_->count(uid) == 0 && now_seconds - passwd_read_seconds_ >= kPasswdRereadSeconds;
  if (!passwd_ || stale) {
    const auto text = ReadOptionalFile(options_.paths.Root("etc/passwd"), nullptr);
    passwd_ = text ? ParsePasswdNames(*text) : std::unordered_map<unsigned, std::string>{};
    passwd_read_seconds_ = now_seconds;
  }
  if (auto it = passwd_->find(uid); it != passwd_->end()) return it->second;
  return std::to_string(uid);
}

const HostProcessReader::Identity& HostProcessReader::IdentityOf(long pid, const PidStat& stat) {
  identities_used_.insert(pid);
  auto it = identities_.find(pid);
  if (it != identities_.end() && it->second.start_time_ticks == stat.start_time_ticks) return it->second;
  Identity identity;
  identity.start_time_ticks = stat.start_time_ticks;
  if (const auto status = ReadFileToString(options_.paths.Proc(PidFile(pid, "status")))) {
    if (auto uid = ParsePidStatusRealUid(*status)) identity.user = UserName(*uid, now_seconds_);
  }
  if (const auto cmdline = ReadFileToString(options_.paths.Proc(PidFile(pid, "cmdline")))) {
    identity.command = FormatCommandLine(*cmdline, options_.max_command_bytes);
    identity.runmon_run = IsRunmonRunCommand(SplitCmdline(*cmdline, 2));
  }
  if (identity.command.empty()) {
    const auto comm = comms_this_read_.find(pid);
    if (comm != comms_this_read_.end()) {
      identity.command = "[" + FormatCommandLine(comm->second, options_.max_command_bytes) + "]";
    }
  }
  return identities_[pid] = std::move(identity);
}

std::optional<RunMembership> HostProcessReader::RunOf(const PidStat& stat) {
  long below = stat.pid;  // the chain's process just below `current`
  long current = stat.ppid;
  for (int step = 0; step < kMaxAncestors && current > 1 && current != below; ++step) {
    const std::optional<PidStat>& ancestor = Stat(current);
    if (!ancestor) return std::nullopt;  // the chain is broken (an ancestor exited just now)
    if (IdentityOf(current, *ancestor).runmon_run) {
      RunMembership run;
      run.runmon_pid = current;
      run.child_pid = below;
      if (const std::optional<PidStat>& child = Stat(below))
        run.child_command = IdentityOf(below, *child).command;
      return run;
    }
    below = current;
    current = ancestor->ppid;
  }
  return std::nullopt;
}

std::map<long, HostProcess> HostProcessReader::Read(const std::vector<long>& pids, double now_seconds) {
  now_seconds_ = now_seconds;
  stats_this_read_.clear();
  comms_this_read_.clear();
  identities_used_.clear();
  std::map<long, HostProcess> found;
  std::unordered_map<long, CpuReading> cpu_now;
  for (long pid : pids) {
    if (pid <= 0 || found.count(pid) != 0) continue;
    const std::optional<PidStat> stat = Stat(pid);
    if (!stat) continue;  // gone
    HostProcess process;
    process.pid = pid;
    process.ppid = stat->ppid;
    const Identity& identity = IdentityOf(pid, *stat);
    process.user = identity.user;
    process.command = identity.command;
    const CpuReading reading{stat->start_time_ticks, stat->CpuTicks(), now_seconds};
    if (auto before = cpu_.find(pid);
        before != cpu_.end() && before->second.start_time_ticks == reading.start_time_ticks &&
        reading.ticks >= before->second.ticks && now_seconds > before->second.seconds) {
      const double used =
          static_cast<double>(reading.ticks - before->second.ticks) / options_.ticks_per_second;
      process.cpu_percent = 100.0 * used / (now_seconds - before->second.seconds);
    }
    cpu_now[pid] = reading;
    // stat's resident pages are statm's: one file fewer to open per process and listing.
    if (stat->rss_pages) {
      process.rss_bytes = PagesToBytes(*stat->rss_pages, options_.page_bytes);
    } else if (const auto statm = ReadFileToString(options_.paths.Proc(PidFile(pid, "statm")))) {
      if (auto pages = ParsePidStatmResidentPages(*statm)) {
        process.rss_bytes = PagesToBytes(*pages, options_.page_bytes);
      }
    }
    process.run = RunOf(*stat);
    found.emplace(pid, std::move(process));
  }
  cpu_ = std::move(cpu_now);
  std::erase_if(identities_, [&](const auto& entry) { return identities_used_.count(entry.first) == 0; });
  return found;
}

}  // namespace runmon
