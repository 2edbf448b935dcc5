// Container truth (metrics.md A.3): cgroup.memory.limitMB and cgroup.cpu.limit (the limits detected at
// start), cgroup.cpu.throttledPercent (share of the interval's scheduler periods in which the quota
// throttled the cgroup, from cpu.stat) and cgroup.memory.oomKills (memory.events oom_kill, or v1
// memory.oom_control). Keys appear only where the limit or file exists; a file that exists but cannot be
// read is reported (the other keys still come).
#include "collectors/linux/cgroup/cgroup_metrics.hpp"
#include "collectors/linux/linux_collectors.hpp"
#include "collectors/linux/parse/procfs_parse.hpp"
#include "host/file_reader.hpp"

namespace runmon {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

class CgroupCollector final : public Collector {
 public:
  explicit CgroupCollector(const CollectorContext& ctx) : limits_(ctx.facts.cgroup) {
    if (!limits_.cpu_stat_file.empty())
      cpu_stat_file_ = KeptOpenFile(limits_.cpu_stat_file, Generated::kWhole);
    if (!limits_.memory_events_file.empty())
      events_file_ = KeptOpenFile(limits_.memory_events_file, Generated::kWhole);
  }

  std::string_view Name() const override { return cgroup_metrics::kMemoryLimit.source; }

  Status Collect(const Tick&, MetricBatch& out) override {
    if (limits_.memory_limit_bytes) {
      out.Add(cgroup_metrics::kMemoryLimit, static_cast<double>(*limits_.memory_limit_bytes) / kMiB);
    }
    if (auto cpus = limits_.CpuLimit()) out.Add(cgroup_metrics::kCpuLimit, *cpus);
    std::string problems;
    // A file that went away with its cgroup is simply left out; one that cannot be read is reported.
    auto read = [&problems](KeptOpenFile& file) -> std::optional<std::string_view> {
      auto text = file.Read();
      if (text) return *text;
      if (!IsGoneErrno(file.last_errno())) problems += (problems.empty() ? "" : "; ") + text.error();
      return std::nullopt;
    };
    if (!limits_.cpu_stat_file.empty()) {
      if (auto text = read(cpu_stat_file_)) {
        const auto periods = FindKeyedValue(*text, "nr_periods");
        const auto throttled = FindKeyedValue(*text, "nr_throttled");
        if (periods && throttled) {
          if (have_previous_ && *periods > last_periods_ && *throttled >= last_throttled_) {
            out.Add(cgroup_metrics::kThrottledPercent, 100.0 *
                                                           static_cast<double>(*throttled - last_throttled_) /
                                                           static_cast<double>(*periods - last_periods_));
          } else if (have_previous_ && *periods == last_periods_) {
            out.Add(cgroup_metrics::kThrottledPercent, 0.0);  // no period ran: the cgroup was idle
          }
          last_periods_ = *periods;
          last_throttled_ = *throttled;
          have_previous_ = true;
        }
      }
    }
    if (!limits_.memory_events_file.empty()) {
      if (auto text = read(events_file_)) {
        if (auto kills = FindKeyedValue(*text, "oom_kill"))
          out.Add(cgroup_metrics::kOomKills, static_cast<double>(*kills));
      }
    }
    if (!problems.empty()) return Error{problems};
    return OkStatus();
  }

 private:
  CgroupLimits limits_;
  KeptOpenFile cpu_stat_file_;
  KeptOpenFile events_file_;
  bool have_previous_ = false;
  uint64_t last_periods_ = 0, last_throttled_ = 0;
};

}  // namespace

std::unique_ptr<Collector> MakeCgroupCollector(const CollectorContext& ctx) {
  return std::make_unique<CgroupCollector>(ctx);
}

}  // namespace runmon
